import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { Link } from "react-router-dom";
import { PasswordPair, passwordErrors } from "../../components/Account/PasswordPair";
import { type Errors, Field, FormFooter, formErrorsFrom } from "../../components/Field";
import { QueryState } from "../../components/QueryState";
import { errorMessage } from "../../lib/errors";
import { formatRelative, formatTimestamp } from "../../lib/format";
import {
  apiTokensQuery,
  changeEmail,
  changePassword,
  meQuery,
  revokeApiToken,
  sendEmailVerification,
} from "../../queries/auth";
import { keys } from "../../queries/keys";

/**
 * Settings → Account: the signed-in account's address and whether its owner proved it. An
 * unproven address (an account made from an invitation) is never linked to single sign-on; a
 * verification mail proves it when its link is opened while signed in here (docs/adr/0026).
 */
export function Account() {
  const me = useQuery(meQuery());
  const send = useMutation({ mutationFn: sendEmailVerification });
  if (!me.data) return <QueryState isPending={me.isPending} error={me.error} />;
  const u = me.data;
  return (
    <section data-testid="account-page">
      <h1>Account</h1>
      <div className="card">
        <dl className="facts">
          <dt>Name</dt>
          <dd>{u.display_name}</dd>
          <dt>E-mail</dt>
          <dd data-testid="account-email">
            {u.email}{" "}
            {u.email_verified ? (
              <span className="badge badge-succeeded" data-testid="email-verified">
                verified
              </span>
            ) : (
              <span className="badge badge-cancelled" data-testid="email-unverified">
                not verified
              </span>
            )}
          </dd>
          <dt>Password</dt>
          <dd>
            {u.password_set ? "set" : "none: you sign in with single sign-on"} ·{" "}
            <Link to="/reset-password">
              {u.password_set ? "forgot it? reset it by mail" : "choose one by mail"}
            </Link>
          </dd>
          <dt>Instance role</dt>
          <dd>{u.is_instance_admin ? "instance administrator" : "user"}</dd>
        </dl>
        {!u.email_verified && (
          <div className="alert alert-warn small" data-testid="verify-prompt">
            <p>
              Nobody has proved yet that {u.email} belongs to whoever holds this account, so single
              sign-on will not link to it by that address. Mail yourself a link and open it while
              signed in here.
            </p>
            {send.data ? (
              <p data-testid="verify-sent">
                Sent to {send.data.email}; the link works until{" "}
                {formatTimestamp(send.data.expires_at)}.
              </p>
            ) : (
              <button
                type="button"
                className="btn"
                data-testid="send-verification"
                disabled={send.isPending}
                onClick={() => send.mutate()}
              >
                {send.isPending ? "Sending…" : "Mail me a verification link"}
              </button>
            )}
            {send.error && (
              <p role="alert" className="alert alert-error" data-testid="verify-error">
                {errorMessage(send.error)}
              </p>
            )}
          </div>
        )}
      </div>
      {u.password_set && <ChangePassword />}
      {u.password_set && <ChangeEmail current={u.email} />}
      <Sessions />
    </section>
  );
}

/** The current password and a new one, twice; the account's other browser sessions end. */
function ChangePassword() {
  const qc = useQueryClient();
  const [current, setCurrent] = useState("");
  const [password, setPassword] = useState("");
  const [confirm, setConfirm] = useState("");
  const [errors, setErrors] = useState<Errors>({});
  const [formError, setFormError] = useState<string | null>(null);
  const change = useMutation({
    mutationFn: changePassword,
    onSuccess: () => {
      setCurrent("");
      setPassword("");
      setConfirm("");
      qc.invalidateQueries({ queryKey: keys.auth.tokens() });
    },
    onError: (err) => {
      const r = formErrorsFrom(err, { current_password: "current", new_password: "password" });
      setErrors(r.errors);
      setFormError(r.formError);
    },
  });
  function submit(e: FormEvent) {
    e.preventDefault();
    const client = passwordErrors(password, confirm);
    setErrors(client);
    setFormError(null);
    if (Object.keys(client).length === 0)
      change.mutate({ current_password: current, new_password: password });
  }
  return (
    <form className="card form" onSubmit={submit} data-testid="password-form" noValidate>
      <h2>Change password</h2>
      <div className="form-grid">
        <Field label="Current password" name="current" errors={errors}>
          <input
            id="f-current"
            type="password"
            autoComplete="current-password"
            value={current}
            onChange={(e) => setCurrent(e.target.value)}
          />
        </Field>
        <PasswordPair
          password={password}
          confirm={confirm}
          onPassword={setPassword}
          onConfirm={setConfirm}
          errors={errors}
        />
      </div>
      {change.data && (
        <p className="alert alert-info small" data-testid="password-changed">
          Password changed. {change.data.sessions_revoked} other browser session
          {change.data.sessions_revoked === 1 ? " was" : "s were"} signed out; this one and your API
          tokens stay.
        </p>
      )}
      <FormFooter
        error={formError}
        pending={change.isPending}
        label="Change password"
        pendingLabel="Changing…"
        testId="change-password"
      />
    </form>
  );
}

/** A new address and the current password; the new address is unverified until proven. */
function ChangeEmail({ current }: { current: string }) {
  const qc = useQueryClient();
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const [errors, setErrors] = useState<Errors>({});
  const [formError, setFormError] = useState<string | null>(null);
  const change = useMutation({
    mutationFn: changeEmail,
    onSuccess: (me) => {
      setEmail("");
      setPassword("");
      qc.setQueryData(keys.auth.me(), me);
    },
    onError: (err) => {
      const r = formErrorsFrom(err, { email: "email", current_password: "email-password" });
      setErrors(r.errors);
      setFormError(r.formError);
    },
  });
  function submit(e: FormEvent) {
    e.preventDefault();
    setErrors({});
    setFormError(null);
    change.mutate({ email, current_password: password });
  }
  return (
    <form className="card form" onSubmit={submit} data-testid="email-form" noValidate>
      <h2>Change e-mail</h2>
      <p className="muted small">
        Now {current}. The new address is not verified until you open the link a verification mail
        sends it; links sent to the old address stop working.
      </p>
      <div className="form-grid">
        <Field label="New e-mail" name="email" errors={errors}>
          <input
            id="f-email"
            type="email"
            autoComplete="email"
            value={email}
            onChange={(e) => setEmail(e.target.value)}
          />
        </Field>
        <Field label="Current password" name="email-password" errors={errors}>
          <input
            id="f-email-password"
            type="password"
            autoComplete="current-password"
            value={password}
            onChange={(e) => setPassword(e.target.value)}
          />
        </Field>
      </div>
      <FormFooter
        error={formError}
        pending={change.isPending}
        label="Change e-mail"
        pendingLabel="Changing…"
        testId="change-email"
      />
    </form>
  );
}

/** The account's browser sessions, this one marked; API tokens are on their own page. */
function Sessions() {
  const qc = useQueryClient();
  const q = useQuery(apiTokensQuery(false));
  const revoke = useMutation({
    mutationFn: revokeApiToken,
    onSuccess: () => qc.invalidateQueries({ queryKey: keys.auth.tokens() }),
  });
  const sessions = q.data?.items.filter((t) => t.kind === "session") ?? [];
  const tokens = q.data ? q.data.items.length - sessions.length : 0;
  return (
    <div className="card" data-testid="sessions">
      <h2>Sessions</h2>
      <QueryState isPending={q.isPending} error={q.error} />
      {q.data && (
        <ul>
          {sessions.map((t) => (
            <li key={t.id} data-testid="session-row">
              Signed in {formatRelative(t.created_at)}
              {t.last_used_at ? `, last used ${formatRelative(t.last_used_at)}` : ""}{" "}
              {t.current ? (
                <span className="badge badge-succeeded" data-testid="session-current">
                  this browser
                </span>
              ) : (
                <button
                  type="button"
                  className="btn btn-small"
                  data-testid="revoke-session"
                  disabled={revoke.isPending}
                  onClick={() => revoke.mutate(t.id)}
                >
                  Sign out
                </button>
              )}
            </li>
          ))}
        </ul>
      )}
      {revoke.error && (
        <p role="alert" className="alert alert-error">
          {errorMessage(revoke.error)}
        </p>
      )}
      <p className="small">
        {tokens} active API token{tokens === 1 ? "" : "s"} ·{" "}
        <Link to="/settings/tokens">see and revoke them in API tokens</Link>
      </p>
    </div>
  );
}
