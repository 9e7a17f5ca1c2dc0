import { useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useEffect, useState } from "react";
import { Link, useNavigate } from "react-router-dom";
import { PasswordPair, passwordErrors } from "../components/Account/PasswordPair";
import { type Errors, formErrorsFrom } from "../components/Field";
import { setToken } from "../lib/auth";
import { ApiError } from "../lib/errors";
import { confirmPasswordReset, requestPasswordReset } from "../queries/auth";

/** The link's token from the fragment (`#token=`), which never reaches a server. */
export function fragmentToken(): string | null {
  return new URLSearchParams(window.location.hash.replace(/^#/, "")).get("token");
}

/** Once read, the token leaves the address bar (and the history a reload or a screenshot shows). */
export function useForgetFragment() {
  useEffect(() => {
    if (window.location.hash) {
      window.history.replaceState(window.history.state, "", window.location.pathname);
    }
  }, []);
}

/**
 * /reset-password, no login. Without a token: ask for a reset mail (the answer is the same whether
 * or not the address has an account; a server without mail says to ask an instance administrator).
 * With `#token=` (a mailed link or an administrator's): choose the new password; every session of
 * the account ends and this browser is signed in (docs/adr/0026).
 */
export function ResetPassword() {
  const [token] = useState(fragmentToken);
  useForgetFragment();
  return (
    <div className="login-page">
      <div className="card login-card invite-card" data-testid="reset-page">
        <h1 className="brand big">
          io<strong>watt</strong>
        </h1>
        {token ? <ChoosePassword token={token} /> : <AskForMail />}
      </div>
    </div>
  );
}

function AskForMail() {
  const [email, setEmail] = useState("");
  const [sent, setSent] = useState<string | null>(null);
  const [formError, setFormError] = useState<string | null>(null);
  const [noMail, setNoMail] = useState(false);
  const [busy, setBusy] = useState(false);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setFormError(null);
    try {
      setSent((await requestPasswordReset(email.trim())).message);
    } catch (err) {
      setNoMail(err instanceof ApiError && err.code === "mail_not_configured");
      setFormError(formErrorsFrom(err, {}).formError);
    } finally {
      setBusy(false);
    }
  };
  if (sent)
    return (
      <div data-testid="reset-sent">
        <h2>Check your mail</h2>
        <p>{sent.charAt(0).toUpperCase() + sent.slice(1)}.</p>
        <Link to="/login" className="btn">
          Back to sign in
        </Link>
      </div>
    );
  return (
    <form onSubmit={submit} data-testid="reset-request" noValidate>
      <h2>Choose a new password</h2>
      <p className="muted small">
        We mail a link to the address of your account. Opening it lets you choose a new password; it
        also takes back an account someone else made with your address.
      </p>
      <label className="field">
        <span>E-mail</span>
        <input
          name="email"
          type="email"
          autoComplete="username"
          required
          value={email}
          onChange={(e) => setEmail(e.target.value)}
        />
      </label>
      {formError && (
        <div
          className="alert alert-error"
          role="alert"
          data-testid="form-error"
          data-no-mail={noMail}
        >
          {formError}
        </div>
      )}
      <div className="actions">
        <button type="submit" className="btn btn-primary" disabled={busy || email.trim() === ""}>
          {busy ? "Sending…" : "Mail me a link"}
        </button>
        <Link to="/login" className="btn btn-ghost">
          Back to sign in
        </Link>
      </div>
    </form>
  );
}

function ChoosePassword({ token }: { token: string }) {
  const navigate = useNavigate();
  const qc = useQueryClient();
  const [password, setPassword] = useState("");
  const [confirm, setConfirm] = useState("");
  const [errors, setErrors] = useState<Errors>({});
  const [formError, setFormError] = useState<string | null>(null);
  const [gone, setGone] = useState(false);
  const [busy, setBusy] = useState(false);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setFormError(null);
    const client = passwordErrors(password, confirm);
    setErrors(client);
    if (Object.keys(client).length > 0) return;
    setBusy(true);
    try {
      const s = await confirmPasswordReset(token, password);
      qc.clear();
      setToken(s.access_token);
      navigate("/", { replace: true });
    } catch (err) {
      setGone(err instanceof ApiError && err.code === "account_token_gone");
      const r = formErrorsFrom(err, { password: "password" });
      setErrors(r.errors);
      setFormError(r.formError);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form onSubmit={submit} data-testid="reset-choose" noValidate>
      <h2>Choose a new password</h2>
      <p className="muted small">
        The link works once. Every session and API token of the account ends when you save: whoever
        used it before is signed out, and the account's e-mail address counts as yours.
      </p>
      <PasswordPair
        password={password}
        confirm={confirm}
        onPassword={setPassword}
        onConfirm={setConfirm}
        errors={errors}
      />
      {formError && (
        <div className="alert alert-error" role="alert" data-testid="form-error">
          {formError}
          {gone && (
            <>
              {" "}
              <Link to="/reset-password" reloadDocument>
                Ask for a new link
              </Link>
              .
            </>
          )}
        </div>
      )}
      <button type="submit" className="btn btn-primary" disabled={busy} data-testid="reset-save">
        {busy ? "Saving…" : "Save and sign in"}
      </button>
    </form>
  );
}
