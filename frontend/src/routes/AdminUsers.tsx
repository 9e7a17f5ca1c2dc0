import { useMutation, useQuery } from "@tanstack/react-query";
import { useState } from "react";
import type { AdminUserRead, ResetLinkCreated } from "../client/types";
import { ConfirmDialog } from "../components/ConfirmDialog";
import { QueryState } from "../components/QueryState";
import { ScrollBox } from "../components/ScrollBox";
import { OnceSecret } from "../components/Secret";
import { errorMessage } from "../lib/errors";
import { formatTimestamp } from "../lib/format";
import { adminUsersQuery, issueResetLink } from "../queries/auth";

/**
 * /admin/users (instance administrators): the server's accounts, and a one-use reset link for one
 * of them, to hand to the address's real owner over a channel you trust: the way back when someone
 * made an account with another person's address and the server sends no mail (docs/adr/0026).
 */
export function AdminUsers() {
  const [q, setQ] = useState("");
  const users = useQuery(adminUsersQuery(q.trim()));
  const [target, setTarget] = useState<AdminUserRead | null>(null);
  const [link, setLink] = useState<{ user: AdminUserRead; made: ResetLinkCreated } | null>(null);
  const issue = useMutation({
    mutationFn: (u: AdminUserRead) => issueResetLink(u.id),
    onSuccess: (made, user) => {
      setTarget(null);
      setLink({ user, made });
    },
  });
  return (
    <section data-testid="admin-users">
      <h1>Users</h1>
      <p className="muted">
        Every account on this server (you are an instance administrator). A reset link lets its
        holder choose the account's password: every session of the account ends when it is used, and
        the address counts as proven. Give it only to the address's owner.
      </p>
      {link && (
        <OnceSecret
          title={`Reset link for ${link.user.email}`}
          secret={link.made.url}
          onDone={() => setLink(null)}
        >
          <p className="small">
            It works once, until {formatTimestamp(link.made.expires_at)}. A newer link voids this
            one.
          </p>
        </OnceSecret>
      )}
      <label className="field">
        <span>Find</span>
        <input
          type="search"
          placeholder="part of an e-mail or a name"
          value={q}
          onChange={(e) => setQ(e.target.value)}
          data-testid="users-search"
        />
      </label>
      <QueryState isPending={users.isPending} error={users.error} />
      {users.data && (
        <ScrollBox label="Users">
          <table className="table" data-testid="users-table">
            <thead>
              <tr>
                <th>E-mail</th>
                <th>Name</th>
                <th>Address</th>
                <th>Sign-in</th>
                <th className="num">Teams</th>
                <th>Since</th>
                <th>
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {users.data.items.map((u) => (
                <tr key={u.id} data-testid="user-row">
                  <td>
                    {u.email}
                    {u.is_instance_admin && (
                      <>
                        {" "}
                        <span className="badge badge-assigned">instance admin</span>
                      </>
                    )}
                    {!u.is_active && (
                      <>
                        {" "}
                        <span className="badge badge-cancelled">deactivated</span>
                      </>
                    )}
                  </td>
                  <td>{u.display_name}</td>
                  <td>
                    {u.email_verified ? (
                      <span className="badge badge-succeeded">verified</span>
                    ) : (
                      <span
                        className="badge badge-cancelled"
                        title="its owner never proved this address"
                      >
                        not verified
                      </span>
                    )}
                  </td>
                  <td>
                    {[u.password_set && "password", u.sso_linked && "single sign-on"]
                      .filter(Boolean)
                      .join(", ") || "none"}
                  </td>
                  <td className="num">{u.team_count}</td>
                  <td>{formatTimestamp(u.created_at)}</td>
                  <td>
                    <button
                      type="button"
                      className="btn btn-small"
                      disabled={!u.is_active}
                      data-testid="issue-reset-link"
                      onClick={() => setTarget(u)}
                    >
                      Issue reset link
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </ScrollBox>
      )}
      {users.data && users.data.total > users.data.items.length && (
        <p className="muted small">
          {users.data.items.length} of {users.data.total}: narrow the search to find others.
        </p>
      )}
      {target && (
        <ConfirmDialog
          title={`Issue a reset link for ${target.email}?`}
          confirmLabel="Issue link"
          pending={issue.isPending}
          error={issue.error ? errorMessage(issue.error) : null}
          onConfirm={() => issue.mutate(target)}
          onCancel={() => setTarget(null)}
        >
          <p>
            Whoever opens the link chooses the password of this account and signs out everyone using
            it now. Hand it to the person who receives mail at {target.email}.
          </p>
        </ConfirmDialog>
      )}
    </section>
  );
}
