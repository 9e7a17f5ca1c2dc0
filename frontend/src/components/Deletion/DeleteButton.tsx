import { useMutation } from "@tanstack/react-query";
import { type ReactNode, useState } from "react";
import { ApiError, errorMessage } from "../../lib/errors";
import { ConfirmDialog } from "../ConfirmDialog";

/**
 * A "Delete" button that asks first (ADR 0021). `onDelete(force)` calls the API; when the server
 * answers 409 because something still uses the object and `forceLabel` is given, the dialog shows
 * what uses it and offers to delete anyway (force=true detaches those).
 */
export function DeleteButton({
  label,
  title,
  children,
  onDelete,
  onDone,
  forceLabel,
  testId,
  small = true,
}: {
  label: string;
  title: string;
  children: ReactNode;
  onDelete: (force: boolean) => Promise<void>;
  onDone: () => void;
  forceLabel?: string;
  testId: string;
  small?: boolean;
}) {
  const [open, setOpen] = useState(false);
  const [inUse, setInUse] = useState<string | null>(null);
  const del = useMutation({
    mutationFn: (force: boolean) => onDelete(force),
    onSuccess: () => {
      setOpen(false);
      setInUse(null);
      onDone();
    },
    onError: (e) => {
      if (forceLabel && e instanceof ApiError && e.status === 409 && e.code.endsWith("_in_use")) {
        setInUse(e.message);
      }
    },
  });
  return (
    <>
      <button
        type="button"
        className={`btn btn-danger${small ? " btn-small" : ""}`}
        data-testid={testId}
        onClick={() => {
          del.reset();
          setInUse(null);
          setOpen(true);
        }}
      >
        {label}
      </button>
      {open && (
        <ConfirmDialog
          title={title}
          confirmLabel={inUse ? (forceLabel ?? "Delete anyway") : "Delete"}
          pending={del.isPending}
          error={del.error && !inUse ? errorMessage(del.error) : null}
          onConfirm={() => del.mutate(inUse !== null)}
          onCancel={() => setOpen(false)}
        >
          {children}
          <p className="muted">
            This cannot be undone; the team's audit log records who deleted it.
          </p>
          {inUse && (
            <div className="alert alert-info" role="alert" data-testid="delete-in-use">
              {inUse.replace(/, or add \?force=true to /, ", or delete anyway to ")}
            </div>
          )}
        </ConfirmDialog>
      )}
    </>
  );
}
