import { useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { Link, Navigate, useNavigate, useSearchParams } from "react-router-dom";
import { formErrorsFrom } from "../components/Field";
import { setToken, useToken } from "../lib/auth";
import { login } from "../queries/auth";
import { oidcConfigQuery } from "../queries/oidc";

/** Only same-site paths are followed after login. */
function safeNext(next: string | null): string {
  return next?.startsWith("/") && !next.startsWith("//") ? next : "/";
}

export function Login() {
  const token = useToken();
  const [params] = useSearchParams();
  const navigate = useNavigate();
  const qc = useQueryClient();
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const next = safeNext(params.get("next"));
  const oidc = useQuery(oidcConfigQuery()).data;

  if (token) return <Navigate to={next} replace />;

  async function onSubmit(e: FormEvent) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const session = await login(email, password);
      qc.clear();
      setToken(session.access_token);
      navigate(next, { replace: true });
    } catch (err) {
      // No inputs to map onto: every server message is the form's own.
      setError(formErrorsFrom(err, {}).formError);
    } finally {
      setBusy(false);
    }
  }

  return (
    <div className="login-page">
      <form className="card login-card" onSubmit={onSubmit} data-testid="login-form">
        <h1 className="brand big">
          io<strong>watt</strong>
        </h1>
        <p className="muted">Storage benchmark results</p>
        <label className="field">
          <span>Email</span>
          <input
            name="email"
            type="email"
            autoComplete="username"
            required
            value={email}
            onChange={(e) => setEmail(e.target.value)}
          />
        </label>
        <label className="field">
          <span>Password</span>
          <input
            name="password"
            type="password"
            autoComplete="current-password"
            required
            value={password}
            onChange={(e) => setPassword(e.target.value)}
          />
        </label>
        {error && (
          <div className="alert alert-error" role="alert" data-testid="login-error">
            {error}
          </div>
        )}
        <button type="submit" className="btn btn-primary" disabled={busy}>
          {busy ? "Signing in…" : "Sign in"}
        </button>
        <p className="small login-forgot">
          <Link to="/reset-password" data-testid="forgot-password">
            Forgot your password?
          </Link>
        </p>
        {oidc?.enabled && oidc.login_url && (
          <>
            <p className="login-or muted">or</p>
            {/* a page load, not a fetch: the browser goes to the provider and comes back */}
            <a className="btn" href={oidc.login_url} data-testid="oidc-login">
              Sign in with {oidc.display_name}
            </a>
          </>
        )}
      </form>
    </div>
  );
}
