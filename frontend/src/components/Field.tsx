import type { ReactNode } from "react";
import { ApiError, errorMessage, fieldErrorsFor } from "../lib/errors";

export type Errors = Record<string, { message: string; source: "client" | "server" }>;

export function Field({
  label,
  name,
  errors,
  children,
  hint,
  className,
}: {
  label: string;
  name: string;
  errors: Errors;
  children: ReactNode;
  hint?: string;
  /** extra classes, e.g. "span-2" for a wide input in a form grid */
  className?: string;
}) {
  const err = errors[name];
  return (
    <label
      className={`field${err ? " has-error" : ""}${className ? ` ${className}` : ""}`}
      htmlFor={`f-${name}`}
    >
      <span>{label}</span>
      {children}
      {hint && !err && <small className="muted">{hint}</small>}
      {err && (
        <small
          className="field-error"
          data-testid={`field-error-${name}`}
          data-source={err.source}
          role="alert"
        >
          {err.message}
        </small>
      )}
    </label>
  );
}

/** The server's 422 field errors mapped onto a form's inputs, plus what fits no input. */
export function formErrorsFrom(
  err: unknown,
  aliases: Record<string, string>,
  /** lists whose items the form shows one by one ("jobs"): errors keep the item's index */
  indexed: readonly string[] = [],
): { errors: Errors; formError: string | null } {
  if (err instanceof ApiError && err.fieldErrors.length > 0) {
    const mapped = fieldErrorsFor(err.fieldErrors, aliases, indexed);
    const errors: Errors = {};
    for (const [k, message] of Object.entries(mapped)) {
      if (k) errors[k] = { message, source: "server" };
    }
    return { errors, formError: mapped[""] ?? (Object.keys(errors).length ? null : err.message) };
  }
  return { errors: {}, formError: errorMessage(err) };
}

/** A form's closing part: what went wrong outside any field, and the submit button. */
export function FormFooter({
  error,
  pending,
  label,
  pendingLabel,
  testId,
  disabled = false,
}: {
  error: string | null | undefined;
  pending: boolean;
  label: string;
  pendingLabel: string;
  testId: string;
  /** the caller cannot submit at all (e.g. a viewer's role), said next to the form */
  disabled?: boolean;
}) {
  return (
    <>
      {error && (
        <div className="alert alert-error" role="alert" data-testid="form-error">
          {error}
        </div>
      )}
      <div className="actions">
        <button
          type="submit"
          className="btn btn-primary"
          disabled={pending || disabled}
          data-testid={testId}
        >
          {pending ? pendingLabel : label}
        </button>
      </div>
    </>
  );
}
