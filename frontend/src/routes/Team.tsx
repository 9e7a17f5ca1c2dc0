import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { useSearchParams } from "react-router-dom";
import { TeamDangerZone } from "../components/Deletion/TeamDelete";
import { type Errors, Field, formErrorsFrom } from "../components/Field";
import { QueryState } from "../components/QueryState";
import { AuditLog } from "../components/Team/AuditLog";
import { FormDialog } from "../components/Team/FormDialog";
import { Invitations } from "../components/Team/Invitations";
import { Members } from "../components/Team/Members";
import { can, type TeamRole, useCurrentTeam } from "../lib/role";
import { keys } from "../queries/keys";
import { renameTeam, teamQuery } from "../queries/teams";

type Tab = "members" | "invitations" | "audit";

/** Team settings for the current team (header switcher): members, invitations, audit log. */
export function Team() {
  const { team, isPending } = useCurrentTeam();
  if (isPending) return <p className="muted">Loading…</p>;
  if (!team)
    return (
      <section>
        <h1>Team</h1>
        <p className="muted" data-testid="no-team">
          You are in no team. Ask a team's admin for an invitation link, or, if this server lets you
          create teams, create one from the header (“New team…”).
        </p>
      </section>
    );
  // keyed by team: switching teams resets tabs, dialogs and forms
  return <TeamPage key={team.id} team={team} />;
}

function TeamPage({ team }: { team: TeamRole }) {
  const [params, setParams] = useSearchParams();
  const admin = can(team.role, "team.manage");
  const tabs: { id: Tab; label: string }[] = [
    { id: "members", label: "Members" },
    ...(admin
      ? [
          { id: "invitations" as const, label: "Invitations" },
          { id: "audit" as const, label: "Audit log" },
        ]
      : []),
  ];
  const asked = params.get("tab");
  const tab: Tab = tabs.find((t) => t.id === asked)?.id ?? "members";
  const detail = useQuery(teamQuery(team.id));
  const [renaming, setRenaming] = useState(false);
  return (
    <section data-testid="team-page">
      <div className="page-head">
        <h1>
          {detail.data?.name ?? team.name}{" "}
          <span className={`badge badge-role-${team.role}`} data-testid="my-role">
            {team.role}
          </span>
        </h1>
        {admin && (
          <button
            type="button"
            className="btn"
            data-testid="rename-team"
            onClick={() => setRenaming(true)}
          >
            Rename
          </button>
        )}
      </div>
      <QueryState isPending={false} error={detail.error} />
      {detail.data && (
        <p className="muted small">
          {detail.data.member_count} {detail.data.member_count === 1 ? "member" : "members"}. Runs,
          agents, devices and environments of this team are visible to its members only.
        </p>
      )}
      <div className="tabs" role="tablist">
        {tabs.map((t) => (
          <button
            key={t.id}
            type="button"
            role="tab"
            aria-selected={tab === t.id}
            className={`tab${tab === t.id ? " active" : ""}`}
            data-testid={`tab-${t.id}`}
            onClick={() => setParams(t.id === "members" ? {} : { tab: t.id }, { replace: true })}
          >
            {t.label}
          </button>
        ))}
      </div>
      {tab === "members" && <Members team={team} />}
      {tab === "invitations" && <Invitations team={team} />}
      {tab === "audit" && <AuditLog team={team} />}
      {admin && <TeamDangerZone teamId={team.id} teamName={detail.data?.name ?? team.name} />}
      {renaming && (
        <RenameDialog
          team={team}
          current={detail.data?.name ?? team.name}
          onClose={() => setRenaming(false)}
        />
      )}
    </section>
  );
}

function RenameDialog({
  team,
  current,
  onClose,
}: {
  team: TeamRole;
  current: string;
  onClose: () => void;
}) {
  const qc = useQueryClient();
  const [name, setName] = useState(current);
  const [errors, setErrors] = useState<Errors>({});
  const [formError, setFormError] = useState<string | null>(null);
  const [pending, setPending] = useState(false);
  const submit = async () => {
    setErrors({});
    setFormError(null);
    if (name.trim() === "") {
      setErrors({ name: { message: "name the team", source: "client" } });
      return;
    }
    setPending(true);
    try {
      await renameTeam(team.id, name.trim());
      await Promise.all([
        qc.invalidateQueries({ queryKey: keys.teams.detail(team.id) }),
        qc.invalidateQueries({ queryKey: keys.auth.me() }),
      ]);
      onClose();
    } catch (err) {
      const r = formErrorsFrom(err, { name: "name" });
      setErrors(r.errors);
      setFormError(r.formError);
    } finally {
      setPending(false);
    }
  };
  return (
    <FormDialog
      title="Rename team"
      testId="rename-dialog"
      error={formError}
      pending={pending}
      label="Rename"
      pendingLabel="Renaming…"
      onSubmit={submit}
      onCancel={onClose}
    >
      <Field label="Name" name="name" errors={errors}>
        <input id="f-name" value={name} onChange={(e) => setName(e.target.value)} />
      </Field>
    </FormDialog>
  );
}
