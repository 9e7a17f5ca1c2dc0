import { useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useEffect, useRef, useState } from "react";
import { Link, useNavigate } from "react-router-dom";
import { setToken } from "../lib/auth";
import { ApiError, errorMessage } from "../lib/errors";
import { finishOidcSignIn, linkOidcAccount } from "../queries/oidc";

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
  bad_oidc_code: "This sign-in has expired or was started in another browser",
  unavailable: "Sign-in is unavailable right now",
  oidc_unavailable: "Sign-in is unavailable right now",
};

type Outcome =
  | { kind: "working" }
  | { kind: "link"; code: string; email: string }
  | { kind: "refused"; code: string; message: string };

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
 * trades the one-time code for a session and opens the app (the server accepts it only from this
 * browser, which holds the sign-in's cookie); with `#link=...&email=...` an account uses the
 * address but its owner never proved it, so it asks for that account's password (docs/adr/0026);
 * with `#error=...` it says why the sign-in was refused (never a login loop: the way back is a link).
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
    const link = params.get("link");
    if (link && !error) {
      setOutcome({ kind: "link", code: link, email: params.get("email") ?? "this address" });
      return;
    }
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
        ) : outcome.kind === "link" ? (
          <LinkStep code={outcome.code} email={outcome.email} />
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

/**
 * The link step: the provider vouches that the person owns `email`, but the iowatt account with
 * that address was made without proof (from an invitation). Whoever knows the account's password
 * links it; anyone else takes the address back by a password reset, which ends the account's
 * sessions (a squatter's too).
 */
function LinkStep({ code, email }: { code: string; email: string }) {
  const navigate = useNavigate();
  const qc = useQueryClient();
  const [password, setPassword] = useState("");
  const [error, setError] = useState<{ code: string; message: string } | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const session = await linkOidcAccount(code, password);
      qc.clear();
      setToken(session.access_token);
      navigate("/", { replace: true });
    } catch (err) {
      setError({ code: err instanceof ApiError ? err.code : "error", message: errorMessage(err) });
    } finally {
      setBusy(false);
    }
  };
  const expired = error?.code === "bad_oidc_code";
  return (
    <form onSubmit={submit} data-testid="oidc-link" noValidate>
      <h2>Link your sign-in to the account of {email}</h2>
      <p>
        An iowatt account uses <strong>{email}</strong>, but nobody has proved yet that the address
        belongs to whoever holds it (it was made from an invitation). If it is yours, enter its
        password once: your single sign-on is then linked to it.
      </p>
      <label className="field">
        <span>Password of the iowatt account</span>
        <input
          name="password"
          type="password"
          autoComplete="current-password"
          value={password}
          onChange={(e) => setPassword(e.target.value)}
          disabled={expired}
        />
      </label>
      {error && (
        <p
          role="alert"
          className="alert alert-error"
          data-testid="oidc-link-error"
          data-code={error.code}
        >
          {error.message}
        </p>
      )}
      <div className="actions">
        {expired ? (
          <Link to="/login" className="btn btn-primary">
            Sign in again
          </Link>
        ) : (
          <button type="submit" className="btn btn-primary" disabled={busy || password === ""}>
            {busy ? "Linking…" : "Link and sign in"}
          </button>
        )}
      </div>
      <p className="muted small" data-testid="oidc-link-not-mine">
        Not your account, or you do not know its password? Someone may have made it with your
        address. <Link to="/reset-password">Take it back</Link> with a reset mail, or ask an
        instance administrator for a reset link. Its sessions end then, and single sign-on links by
        itself.
      </p>
    </form>
  );
}
