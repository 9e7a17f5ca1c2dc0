import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { useNavigate } from "react-router-dom";
import { errorMessage } from "../../lib/errors";
import { formatRelative, formatTimestamp } from "../../lib/format";
import { can, type Role, type TeamRole } from "../../lib/role";
import { meQuery } from "../../queries/auth";
import { keys } from "../../queries/keys";
import { changeRole, membersQuery, removeMember } from "../../queries/teams";
import { ConfirmDialog } from "../ConfirmDialog";
import { QueryState } from "../QueryState";
import { ScrollBox } from "../ScrollBox";

const ROLES: readonly Role[] = ["viewer", "member", "admin"];

export const ROLE_HELP: Record<Role, string> = {
  viewer: "reads results",
  member: "queues runs and campaigns, comments, shares links",
  admin: "people, agents, environments, deletion",
};

/** The team's members; admins change roles and remove people; anyone may leave. */
export function Members({ team }: { team: TeamRole }) {
  const qc = useQueryClient();
  const navigate = useNavigate();
  const me = useQuery(meQuery());
  const q = useQuery(membersQuery(team.id));
  const admin = can(team.role, "team.manage");
  const [removing, setRemoving] = useState<{ id: string; name: string; self: boolean } | null>(
    null,
  );
  const [roleError, setRoleError] = useState<string | null>(null);

  const role = useMutation({
    mutationFn: ({ userId, to }: { userId: string; to: Role }) => changeRole(team.id, userId, to),
    onMutate: () => setRoleError(null),
    onSuccess: () => {
      qc.invalidateQueries({ queryKey: keys.teams.members(team.id) });
      qc.invalidateQueries({ queryKey: keys.auth.me() });
    },
    // The 409 last_admin (and a 403) say what is wrong in the server's own words.
    onError: (err) => setRoleError(errorMessage(err)),
  });
  const remove = useMutation({
    mutationFn: (userId: string) => removeMember(team.id, userId),
    onSuccess: async () => {
      const self = removing?.self;
      setRemoving(null);
      qc.invalidateQueries({ queryKey: keys.teams.members(team.id) });
      await qc.invalidateQueries({ queryKey: keys.auth.me() });
      if (self) navigate("/");
    },
  });

  return (
    <div data-testid="members">
      {roleError && (
        <div className="alert alert-error" role="alert" data-testid="role-error">
          {roleError}
        </div>
      )}
      <QueryState isPending={q.isPending} error={q.error} />
      {q.data && (
        <ScrollBox label="Members">
          <table className="table" data-testid="members-table">
            <thead>
              <tr>
                <th>Name</th>
                <th>E-mail</th>
                <th>Role</th>
                <th>Joined</th>
                <th>
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {q.data.map((m) => {
                const self = m.user_id === me.data?.id;
                return (
                  <tr key={m.user_id} data-testid="member-row" data-email={m.email}>
                    <td>
                      {m.display_name}
                      {self && <span className="muted small"> (you)</span>}
                    </td>
                    <td>{m.email}</td>
                    <td>
                      {admin ? (
                        <select
                          aria-label={`Role of ${m.email}`}
                          data-testid="member-role"
                          value={m.role}
                          disabled={role.isPending}
                          onChange={(e) =>
                            role.mutate({ userId: m.user_id, to: e.target.value as Role })
                          }
                        >
                          {ROLES.map((r) => (
                            <option key={r} value={r}>
                              {r}
                            </option>
                          ))}
                        </select>
                      ) : (
                        <span className={`badge badge-role-${m.role}`}>{m.role}</span>
                      )}
                    </td>
                    <td title={formatTimestamp(m.joined_at)}>{formatRelative(m.joined_at)}</td>
                    <td className="actions-cell">
                      {self ? (
                        <button
                          type="button"
                          className="btn btn-small"
                          data-testid="leave-team"
                          onClick={() => {
                            remove.reset();
                            setRemoving({ id: m.user_id, name: m.display_name, self: true });
                          }}
                        >
                          Leave team
                        </button>
                      ) : (
                        admin && (
                          <button
                            type="button"
                            className="btn btn-danger btn-small"
                            data-testid="remove-member"
                            onClick={() => {
                              remove.reset();
                              setRemoving({ id: m.user_id, name: m.display_name, self: false });
                            }}
                          >
                            Remove
                          </button>
                        )
                      )}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </ScrollBox>
      )}
      <p className="muted small">
        Roles: {ROLES.map((r) => `${r} — ${ROLE_HELP[r]}`).join("; ")}. A team always keeps at least
        one admin.
      </p>
      {removing && (
        <ConfirmDialog
          title={removing.self ? `Leave “${team.name}”?` : `Remove ${removing.name}?`}
          confirmLabel={removing.self ? "Leave team" : "Remove member"}
          pending={remove.isPending}
          error={remove.error ? errorMessage(remove.error) : null}
          onCancel={() => setRemoving(null)}
          onConfirm={() => remove.mutate(removing.id)}
        >
          <p>
            {removing.self
              ? "You lose access to the team's runs, agents and results at once. An admin can invite you again."
              : `${removing.name} loses access to the team at once. Their runs and results stay with the team.`}
          </p>
        </ConfirmDialog>
      )}
    </div>
  );
}
