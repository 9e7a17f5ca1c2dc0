import { type ReactNode, useId, useRef } from "react";
import { Modal } from "./Modal";

/** A modal yes/no for actions that cannot be undone (revoking an agent or a token). Cancel has
 * the focus when it opens, so Enter does not destroy anything by accident. */
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
  return (
    <Modal labelledBy={titleId} testId="confirm-dialog" initialFocus={cancel} onClose={onCancel}>
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
    </Modal>
  );
}
