import { type Errors, Field } from "../Field";

export const MIN_PASSWORD = 8;

/** The client's own check of a new password and its repetition (the server checks the length too). */
export function passwordErrors(password: string, confirm: string): Errors {
  if (password.length < MIN_PASSWORD)
    return { password: { message: `at least ${MIN_PASSWORD} characters`, source: "client" } };
  if (password !== confirm)
    return { confirm: { message: "the two passwords differ", source: "client" } };
  return {};
}

/** A new password, typed twice ("New password" on a reset; "Password" on a new account). */
export function PasswordPair({
  password,
  confirm,
  onPassword,
  onConfirm,
  errors,
  label = "New password",
  hint = true,
}: {
  password: string;
  confirm: string;
  onPassword: (v: string) => void;
  onConfirm: (v: string) => void;
  errors: Errors;
  label?: string;
  hint?: boolean;
}) {
  return (
    <>
      <Field
        label={label}
        name="password"
        errors={errors}
        hint={hint ? `at least ${MIN_PASSWORD} characters` : undefined}
      >
        <input
          id="f-password"
          name="password"
          type="password"
          autoComplete="new-password"
          value={password}
          onChange={(e) => onPassword(e.target.value)}
        />
      </Field>
      <Field label={`${label} again`} name="confirm" errors={errors}>
        <input
          id="f-confirm"
          name="confirm"
          type="password"
          autoComplete="new-password"
          value={confirm}
          onChange={(e) => onConfirm(e.target.value)}
        />
      </Field>
    </>
  );
}
