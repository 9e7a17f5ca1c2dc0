import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useId, useState } from "react";
import { useNavigate } from "react-router-dom";
import { clearToken } from "../../lib/auth";
import { errorMessage } from "../../lib/errors";
import { meQuery } from "../../queries/auth";
import { deleteAccount } from "../../queries/deletion";

/**
 * "Delete my account", confirmed with the password (or, for an account without one, the e-mail).
 * The server refuses the last admin of a team with other members and the only member of a team
 * (409, naming the teams); comments stay, by "deleted user".
 */
export function DeleteAccount() {
  const me = useQuery(meQuery());
  const [open, setOpen] = useState(false);
  const [secret, setSecret] = useState("");
  const id = useId();
  const qc = useQueryClient();
  const navigate = useNavigate();
  const hasPassword = me.data?.password_set ?? true;
  const del = useMutation({
    mutationFn: () => deleteAccount(hasPassword ? { password: secret } : { confirm_email: secret }),
    onSuccess: () => {
      clearToken();
      qc.clear();
      navigate("/login");
    },
  });
  if (!me.data) return null;
  return (
    <section className="card" data-testid="delete-account">
      <h2>Delete my account</h2>
      <p className="muted small">
        Your tokens and memberships go; runs and campaigns you queued stay with their teams and your
        comments stay, signed “deleted user”. A team's last admin hands over first; a team's only
        member deletes the team first.
      </p>
      {!open ? (
        <button
          type="button"
          className="btn btn-danger"
          onClick={() => setOpen(true)}
          data-testid="delete-account-open"
        >
          Delete my account…
        </button>
      ) : (
        <form
          className="form"
          onSubmit={(e) => {
            e.preventDefault();
            if (secret) del.mutate();
          }}
        >
          <label htmlFor={id}>
            {hasPassword ? "Your password" : `Type your e-mail (${me.data.email}) to confirm`}
          </label>
          <input
            id={id}
            type={hasPassword ? "password" : "email"}
            autoComplete={hasPassword ? "current-password" : "off"}
            value={secret}
            onChange={(e) => setSecret(e.target.value)}
            data-testid="delete-account-secret"
          />
          {del.error && (
            <div className="alert alert-error" role="alert">
              {errorMessage(del.error)}
            </div>
          )}
          <div className="actions">
            <button type="button" className="btn" onClick={() => setOpen(false)}>
              Cancel
            </button>
            <button
              type="submit"
              className="btn btn-destroy"
              disabled={!secret || del.isPending}
              data-testid="delete-account-confirm"
            >
              Delete my account
            </button>
          </div>
        </form>
      )}
    </section>
  );
}
