import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { errorMessage } from "../../lib/errors";
import { formatRelative, formatTimestamp } from "../../lib/format";
import type { Role, TeamRole } from "../../lib/role";
import { keys } from "../../queries/keys";
import { createInvitation, invitationsQuery, revokeInvitation } from "../../queries/teams";
import { ConfirmDialog } from "../ConfirmDialog";
import { type Errors, Field, formErrorsFrom } from "../Field";
import { QueryState } from "../QueryState";
import { ScrollBox } from "../ScrollBox";
import { OnceSecret } from "../Secret";
import { FormDialog } from "./FormDialog";
import { ROLE_HELP } from "./Members";

const ROLES: readonly Role[] = ["viewer", "member", "admin"];

interface Created {
  email: string;
  role: Role;
  url: string;
  expires_at: string;
  mailed: boolean;
}

/** Admin: invite by link (the URL is shown once), the team's invitations with their state, revoke. */
export function Invitations({ team }: { team: TeamRole }) {
  const qc = useQueryClient();
  const q = useQuery(invitationsQuery(team.id));
  const [inviting, setInviting] = useState(false);
  const [created, setCreated] = useState<Created | null>(null);
  const [revoking, setRevoking] = useState<{ id: string; email: string } | null>(null);

  const revoke = useMutation({
    mutationFn: (id: string) => revokeInvitation(team.id, id),
    onSuccess: () => {
      setRevoking(null);
      qc.invalidateQueries({ queryKey: keys.teams.invitations(team.id) });
    },
  });

  return (
    <div data-testid="invitations">
      {created ? (
        <OnceSecret
          title={`Invitation for ${created.email} (${created.role})`}
          secret={created.url}
          onDone={() => setCreated(null)}
        >
          <p className="small">
            Send this link to {created.email}: it works once, until{" "}
            {formatTimestamp(created.expires_at)}, and lets them set a name and password and join “
            {team.name}” as {created.role}.
            {created.mailed && " It was also sent to them by e-mail."}
          </p>
        </OnceSecret>
      ) : (
        <div className="actions">
          <button
            type="button"
            className="btn btn-primary"
            data-testid="invite"
            onClick={() => setInviting(true)}
          >
            Invite someone
          </button>
        </div>
      )}
      <QueryState isPending={q.isPending} error={q.error} />
      {q.data && q.data.items.length === 0 && <p className="muted">No invitations yet.</p>}
      {q.data && q.data.items.length > 0 && (
        <ScrollBox label="Invitations">
          <table className="table" data-testid="invitations-table">
            <thead>
              <tr>
                <th>E-mail</th>
                <th>Role</th>
                <th>Invited by</th>
                <th>Created</th>
                <th>Expires</th>
                <th>State</th>
                <th>
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {q.data.items.map((i) => (
                <tr
                  key={i.id}
                  data-testid="invitation-row"
                  data-email={i.email}
                  data-state={i.state}
                >
                  <td>{i.email}</td>
                  <td>{i.role}</td>
                  <td>{i.invited_by ?? "—"}</td>
                  <td title={formatTimestamp(i.created_at)}>{formatRelative(i.created_at)}</td>
                  <td>{formatTimestamp(i.expires_at)}</td>
                  <td>
                    <span className={`badge badge-invitation-${i.state}`}>{i.state}</span>
                  </td>
                  <td>
                    {i.state === "pending" && (
                      <button
                        type="button"
                        className="btn btn-danger btn-small"
                        data-testid="revoke-invitation"
                        onClick={() => {
                          revoke.reset();
                          setRevoking({ id: i.id, email: i.email });
                        }}
                      >
                        Revoke
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </ScrollBox>
      )}
      {inviting && (
        <InviteDialog
          team={team}
          onCancel={() => setInviting(false)}
          onCreated={(c) => {
            setInviting(false);
            setCreated(c);
            qc.invalidateQueries({ queryKey: keys.teams.invitations(team.id) });
          }}
        />
      )}
      {revoking && (
        <ConfirmDialog
          title={`Revoke the invitation for ${revoking.email}?`}
          confirmLabel="Revoke invitation"
          pending={revoke.isPending}
          error={revoke.error ? errorMessage(revoke.error) : null}
          onCancel={() => setRevoking(null)}
          onConfirm={() => revoke.mutate(revoking.id)}
        >
          <p>The link stops working at once: opening it says it was revoked.</p>
        </ConfirmDialog>
      )}
    </div>
  );
}

function InviteDialog({
  team,
  onCancel,
  onCreated,
}: {
  team: TeamRole;
  onCancel: () => void;
  onCreated: (c: Created) => void;
}) {
  const [email, setEmail] = useState("");
  const [role, setRole] = useState<Role>("member");
  const [errors, setErrors] = useState<Errors>({});
  const [formError, setFormError] = useState<string | null>(null);
  const [pending, setPending] = useState(false);
  const submit = async () => {
    setErrors({});
    setFormError(null);
    if (!/^[^\s@]+@[^\s@]+$/.test(email.trim())) {
      setErrors({
        email: { message: "an e-mail address, like ana@example.com", source: "client" },
      });
      return;
    }
    setPending(true);
    try {
      const r = await createInvitation(team.id, email.trim(), role);
      onCreated({
        email: r.email,
        role: r.role,
        url: r.url,
        expires_at: r.expires_at,
        mailed: r.mailed,
      });
    } catch (err) {
      const r = formErrorsFrom(err, { email: "email", role: "role" });
      setErrors(r.errors);
      setFormError(r.formError);
    } finally {
      setPending(false);
    }
  };
  return (
    <FormDialog
      title={`Invite someone to “${team.name}”`}
      testId="invite-dialog"
      error={formError}
      pending={pending}
      label="Create invitation link"
      pendingLabel="Creating…"
      onSubmit={submit}
      onCancel={onCancel}
    >
      <div className="form-grid">
        <Field label="E-mail" name="email" errors={errors}>
          <input
            id="f-email"
            type="email"
            value={email}
            onChange={(e) => setEmail(e.target.value)}
            placeholder="ana@example.com"
          />
        </Field>
        <Field label="Role" name="role" errors={errors} hint={ROLE_HELP[role]}>
          <select id="f-role" value={role} onChange={(e) => setRole(e.target.value as Role)}>
            {ROLES.map((r) => (
              <option key={r} value={r}>
                {r}
              </option>
            ))}
          </select>
        </Field>
      </div>
      <p className="muted small">
        You get a link to send them (no mail server needed; it is e-mailed too when the server has
        SMTP configured).
      </p>
    </FormDialog>
  );
}
