import { type FormEvent, type ReactNode, useId } from "react";
import { Modal } from "../Modal";

/** A modal form (new team, invite someone): its fields, what went wrong, Cancel and submit. */
export function FormDialog({
  title,
  children,
  error,
  pending,
  label,
  pendingLabel,
  testId,
  onSubmit,
  onCancel,
}: {
  title: string;
  children: ReactNode;
  error: string | null;
  pending: boolean;
  label: string;
  pendingLabel: string;
  /** the dialog's test id; its submit button is `${testId}-submit` */
  testId: string;
  onSubmit: () => void;
  onCancel: () => void;
}) {
  const titleId = useId();
  return (
    <Modal labelledBy={titleId} testId={testId} onClose={onCancel}>
      <form
        className="form"
        noValidate
        onSubmit={(e: FormEvent) => {
          e.preventDefault();
          onSubmit();
        }}
      >
        <h3 id={titleId}>{title}</h3>
        {children}
        {error && (
          <div className="alert alert-error" role="alert" data-testid="form-error">
            {error}
          </div>
        )}
        <div className="actions">
          <button type="button" className="btn" onClick={onCancel}>
            Cancel
          </button>
          <button
            type="submit"
            className="btn btn-primary"
            disabled={pending}
            data-testid={`${testId}-submit`}
          >
            {pending ? pendingLabel : label}
          </button>
        </div>
      </form>
    </Modal>
  );
}
