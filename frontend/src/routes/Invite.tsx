import { useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { Link, useNavigate, useParams } from "react-router-dom";
import { PasswordPair, passwordErrors } from "../components/Account/PasswordPair";
import { type Errors, Field, formErrorsFrom } from "../components/Field";
import { ROLE_HELP } from "../components/Team/Members";
import { clearToken, setToken, useToken } from "../lib/auth";
import { ApiError, errorMessage } from "../lib/errors";
import { formatTimestamp } from "../lib/format";
import { setCurrentTeamId } from "../lib/role";
import { meQuery } from "../queries/auth";
import { acceptInvitation, type InvitationPreview, invitationQuery } from "../queries/teams";

const ALIASES = { display_name: "name", password: "password" };

/**
 * /invite/:token, no login needed: who invites whom to which team with which role; set a name and
 * a password to join and be signed in. A used, expired, revoked or unknown link gets a page of its
 * own that says so (never the login page, which could not help).
 */
export function Invite() {
  const { token = "" } = useParams();
  const q = useQuery(invitationQuery(token));
  return (
    <div className="login-page">
      <div className="card login-card invite-card" data-testid="invite-page">
        <h1 className="brand big">
          io<strong>watt</strong>
        </h1>
        {q.isPending && <p className="muted">Loading the invitation…</p>}
        {q.error && <Gone error={q.error} />}
        {q.data && <Join token={token} invitation={q.data} />}
      </div>
    </div>
  );
}

/** Titles by the server's 410/404 codes; the body is the server's message (which says when). */
const GONE_TITLE: Record<string, string> = {
  invitation_used: "Invitation already used",
  invitation_expired: "Invitation expired",
  invitation_revoked: "Invitation revoked",
  invitation_not_found: "Invitation link not valid",
};

function capital(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

function Gone({ error }: { error: unknown }) {
  const code = error instanceof ApiError ? error.code : "error";
  const title =
    GONE_TITLE[code] ??
    (error instanceof ApiError && error.status === 404
      ? GONE_TITLE.invitation_not_found
      : "The invitation could not be loaded");
  return (
    <div data-testid="invite-gone" data-code={code}>
      <h2>{title}</h2>
      <p role="alert" className="alert alert-error">
        {capital(errorMessage(error))}.
      </p>
      <p className="muted small">
        Ask the team's admin for a new invitation link. If you already have an account,{" "}
        <Link to="/login">sign in</Link>.
      </p>
    </div>
  );
}

type Preview = InvitationPreview;

function Join({ token, invitation }: { token: string; invitation: Preview }) {
  const navigate = useNavigate();
  const qc = useQueryClient();
  const session = useToken();
  const me = useQuery({ ...meQuery(), enabled: session !== null });
  const [name, setName] = useState("");
  const [password, setPassword] = useState("");
  const [confirm, setConfirm] = useState("");
  const [errors, setErrors] = useState<Errors>({});
  const [formError, setFormError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const signIn = `/login?next=${encodeURIComponent(`/invite/${token}`)}`;

  const accept = async (body: { display_name?: string; password?: string }) => {
    setBusy(true);
    try {
      const s = await acceptInvitation(token, body);
      qc.clear();
      setCurrentTeamId(invitation.team_id);
      setToken(s.access_token);
      navigate("/runs", { replace: true });
    } catch (err) {
      const r = formErrorsFrom(err, ALIASES);
      setErrors(r.errors);
      setFormError(r.formError);
    } finally {
      setBusy(false);
    }
  };

  const submit = (e: FormEvent) => {
    e.preventDefault();
    setErrors({});
    setFormError(null);
    const client: Errors = {};
    if (name.trim() === "")
      client.name = { message: "your name, as the team sees it", source: "client" };
    Object.assign(client, passwordErrors(password, confirm));
    if (Object.keys(client).length > 0) {
      setErrors(client);
      return;
    }
    void accept({ display_name: name.trim(), password });
  };

  const intro = (
    <div data-testid="invite-summary">
      <h2>Join “{invitation.team_name}”</h2>
      <p>
        {invitation.inviter ? <strong>{invitation.inviter}</strong> : "A team admin"} invites{" "}
        <strong>{invitation.email}</strong> to the team <strong>{invitation.team_name}</strong> as{" "}
        <span className={`badge badge-role-${invitation.role}`} data-testid="invite-role">
          {invitation.role}
        </span>{" "}
        ({ROLE_HELP[invitation.role]}).
      </p>
      <p className="muted small">
        The link works once, until {formatTimestamp(invitation.expires_at)}.
      </p>
    </div>
  );
  const failure = formError && (
    <div className="alert alert-error" role="alert" data-testid="form-error">
      {formError}
    </div>
  );

  if (session && me.isPending)
    return (
      <div>
        {intro}
        <p className="muted">Loading your account…</p>
      </div>
    );
  if (session && me.data) {
    const same = me.data.email.toLowerCase() === invitation.email.toLowerCase();
    return (
      <div>
        {intro}
        {same ? (
          <p className="small">You are signed in as {me.data.email}.</p>
        ) : (
          <p className="alert alert-warn small" data-testid="invite-signed-in">
            You are signed in as {me.data.email}, but this invitation is for {invitation.email}:
            sign out here to accept it.
          </p>
        )}
        {failure}
        <div className="actions">
          {same ? (
            <button
              type="button"
              className="btn btn-primary"
              disabled={busy}
              data-testid="accept-invite"
              onClick={() => void accept({})}
            >
              {busy ? "Joining…" : `Join ${invitation.team_name}`}
            </button>
          ) : (
            <button
              type="button"
              className="btn"
              data-testid="invite-sign-out"
              onClick={() => {
                clearToken();
                qc.clear();
              }}
            >
              Sign out
            </button>
          )}
        </div>
      </div>
    );
  }

  return (
    <form onSubmit={submit} data-testid="invite-form" noValidate>
      {intro}
      {/* the page never knows whether the address has an account (the server does not say) */}
      <p className="small" data-testid="invite-sign-in">
        Already have an account for {invitation.email}? <Link to={signIn}>Sign in</Link> to join
        with it; you come back here. Otherwise, create it:
      </p>
      <Field label="Your name" name="name" errors={errors}>
        <input
          id="f-name"
          name="display_name"
          autoComplete="name"
          value={name}
          onChange={(e) => setName(e.target.value)}
        />
      </Field>
      <Field
        label="E-mail"
        name="email"
        errors={errors}
        hint="the invited address; you sign in with it"
      >
        <input id="f-email" value={invitation.email} readOnly autoComplete="username" />
      </Field>
      <PasswordPair
        password={password}
        confirm={confirm}
        onPassword={setPassword}
        onConfirm={setConfirm}
        errors={errors}
        label="Password"
        hint={false}
      />
      {failure}
      <button type="submit" className="btn btn-primary" disabled={busy} data-testid="accept-invite">
        {busy ? "Joining…" : `Join ${invitation.team_name}`}
      </button>
    </form>
  );
}
