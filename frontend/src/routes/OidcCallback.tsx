import { useQueryClient } from "@tanstack/react-query";
import { useEffect, useRef, useState } from "react";
import { Link, useNavigate } from "react-router-dom";
import { setToken } from "../lib/auth";
import { ApiError, errorMessage } from "../lib/errors";
import { finishOidcSignIn } from "../queries/oidc";

/** Titles by the server's refusal codes (docs/adr/0017); the body is the server's message. */
const TITLES: Record<string, string> = {
  email_unverified: "Your e-mail address is not verified",
  unknown_account: "No iowatt account uses this e-mail address",
  domain_not_allowed: "This e-mail domain may not sign in here",
  identity_conflict: "This account is linked to another sign-in",
  account_inactive: "This account is deactivated",
  email_missing: "The provider did not share your e-mail address",
  flow_missing: "This sign-in has expired",
  state_mismatch: "This sign-in could not be verified",
  provider_denied: "The sign-in was cancelled at the provider",
  provider_unreachable: "The sign-in provider cannot be reached",
  bad_oidc_code: "This sign-in has expired",
  unavailable: "Sign-in is unavailable right now",
  oidc_unavailable: "Sign-in is unavailable right now",
};

type Outcome = { kind: "working" } | { kind: "refused"; code: string; message: string };

/** What the callback put in the fragment: read once, then removed from the address bar. */
function readFragment(): URLSearchParams {
  const params = new URLSearchParams(window.location.hash.replace(/^#/, ""));
  if (window.location.hash) {
    window.history.replaceState(window.history.state, "", window.location.pathname);
  }
  return params;
}

/**
 * /login/oidc: where the server's OpenID Connect callback sends the browser. With `#code=...` it
 * trades the one-time code for a session and opens the app; with `#error=...` it says why the
 * sign-in was refused (never a login loop: the way back is a link).
 */
export function OidcCallback() {
  const navigate = useNavigate();
  const qc = useQueryClient();
  const [outcome, setOutcome] = useState<Outcome>({ kind: "working" });
  const started = useRef(false);

  useEffect(() => {
    if (started.current) return; // once, also under StrictMode's double effects
    started.current = true;
    const params = readFragment();
    const code = params.get("code");
    const error = params.get("error");
    if (error || !code) {
      setOutcome({
        kind: "refused",
        code: error ?? "flow_missing",
        message: params.get("message") ?? "Nothing to finish here: start the sign-in again.",
      });
      return;
    }
    finishOidcSignIn(code).then(
      (session) => {
        qc.clear();
        setToken(session.access_token);
        navigate("/", { replace: true });
      },
      (err: unknown) => {
        setOutcome({
          kind: "refused",
          code: err instanceof ApiError ? err.code : "error",
          message: errorMessage(err),
        });
      },
    );
  }, [navigate, qc]);

  return (
    <div className="login-page">
      <div className="card login-card" data-testid="oidc-callback">
        <h1 className="brand big">
          io<strong>watt</strong>
        </h1>
        {outcome.kind === "working" ? (
          <p className="muted">Signing in…</p>
        ) : (
          <div data-testid="oidc-refused" data-code={outcome.code}>
            <h2>{TITLES[outcome.code] ?? "The sign-in did not succeed"}</h2>
            <p role="alert" className="alert alert-error">
              {outcome.message}
            </p>
            <Link to="/login" className="btn">
              Back to sign in
            </Link>
          </div>
        )}
      </div>
    </div>
  );
}
