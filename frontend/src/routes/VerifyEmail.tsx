import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useRef, useState } from "react";
import { Link } from "react-router-dom";
import { useToken } from "../lib/auth";
import { ApiError, errorMessage } from "../lib/errors";
import { confirmEmailVerification, meQuery } from "../queries/auth";
import { keys } from "../queries/keys";
import { fragmentToken, useForgetFragment } from "./ResetPassword";

const PENDING = "iowatt.verify-email-token";

type Outcome =
  | { kind: "working" }
  | { kind: "done"; email: string }
  | { kind: "failed"; code: string; message: string };

/**
 * /verify-email#token=...: the link of a verification mail. It proves the address only for the
 * account it was sent to, signed in here (a link someone else asked for proves nothing for them,
 * docs/adr/0026). Not signed in: the token waits in this tab while the person signs in.
 */
export function VerifyEmail() {
  const session = useToken();
  const [token] = useState(() => fragmentToken() ?? sessionStorage.getItem(PENDING));
  useForgetFragment();
  useEffect(() => {
    if (token && !session) sessionStorage.setItem(PENDING, token);
  }, [token, session]);
  return (
    <div className="login-page">
      <div className="card login-card invite-card" data-testid="verify-page">
        <h1 className="brand big">
          io<strong>watt</strong>
        </h1>
        <h2>Verify your e-mail address</h2>
        {!token ? (
          <p role="alert" className="alert alert-error">
            This page needs the link from the verification mail: open the whole link again.
          </p>
        ) : session ? (
          <Confirm token={token} />
        ) : (
          <div data-testid="verify-sign-in">
            <p>Sign in to the account the mail was sent to; you come back here to finish.</p>
            <p className="muted small">
              If you have no account on this server, or did not ask for this mail, someone may have
              made an account with your address: <Link to="/reset-password">take it back</Link> with
              a new password.
            </p>
            <Link to="/login?next=/verify-email" className="btn btn-primary">
              Sign in
            </Link>
          </div>
        )}
      </div>
    </div>
  );
}

function Confirm({ token }: { token: string }) {
  const qc = useQueryClient();
  const me = useQuery(meQuery());
  const [outcome, setOutcome] = useState<Outcome>({ kind: "working" });
  const started = useRef(false);
  const email = me.data?.email;
  useEffect(() => {
    if (started.current || email === undefined) return;
    started.current = true;
    confirmEmailVerification(token).then(
      () => {
        sessionStorage.removeItem(PENDING);
        void qc.invalidateQueries({ queryKey: keys.auth.me() });
        setOutcome({ kind: "done", email });
      },
      (err: unknown) => {
        if (!(err instanceof ApiError && err.code === "wrong_account"))
          sessionStorage.removeItem(PENDING);
        setOutcome({
          kind: "failed",
          code: err instanceof ApiError ? err.code : "error",
          message: errorMessage(err),
        });
      },
    );
  }, [token, email, qc]);
  if (outcome.kind === "working") return <p className="muted">Verifying…</p>;
  if (outcome.kind === "done")
    return (
      <div data-testid="verify-done">
        <p className="alert alert-info">{outcome.email} is verified: it is yours on this server.</p>
        <Link to="/" className="btn btn-primary">
          Open iowatt
        </Link>
      </div>
    );
  return (
    <div data-testid="verify-failed" data-code={outcome.code}>
      <p role="alert" className="alert alert-error">
        {outcome.message}
      </p>
      <p className="muted small">
        {outcome.code === "wrong_account"
          ? `You are signed in as ${email}. Sign out, then sign in as the account the mail was sent to.`
          : "Ask for a new mail from your account page."}
      </p>
      <Link to="/settings/account" className="btn">
        Your account
      </Link>
    </div>
  );
}
