import { type ReactNode, useEffect, useId, useRef } from "react";

/** A modal yes/no for actions that cannot be undone (revoking an agent or a token). */
export function ConfirmDialog({
  title,
  children,
  confirmLabel,
  pending = false,
  error,
  onConfirm,
  onCancel,
}: {
  title: string;
  children: ReactNode;
  confirmLabel: string;
  pending?: boolean;
  error?: string | null;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  const titleId = useId();
  const cancel = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    cancel.current?.focus();
  }, []);
  return (
    <div className="dialog-backdrop">
      <div
        className="dialog card"
        role="dialog"
        aria-modal="true"
        aria-labelledby={titleId}
        data-testid="confirm-dialog"
        onKeyDown={(e) => {
          if (e.key === "Escape") onCancel();
        }}
      >
        <h3 id={titleId}>{title}</h3>
        <div>{children}</div>
        {error && (
          <div className="alert alert-error" role="alert">
            {error}
          </div>
        )}
        <div className="actions">
          <button type="button" className="btn" onClick={onCancel} ref={cancel}>
            Cancel
          </button>
          <button
            type="button"
            className="btn btn-destroy"
            disabled={pending}
            onClick={onConfirm}
            data-testid="confirm-action"
          >
            {confirmLabel}
          </button>
        </div>
      </div>
    </div>
  );
}
