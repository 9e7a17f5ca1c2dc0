import { useMutation, useQuery } from "@tanstack/react-query";
import { Link } from "react-router-dom";
import { QueryState } from "../../components/QueryState";
import { errorMessage } from "../../lib/errors";
import { formatTimestamp } from "../../lib/format";
import { meQuery, sendEmailVerification } from "../../queries/auth";

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
            <Link to="/reset-password">choose a new one by mail</Link>
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
    </section>
  );
}
