import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { useNavigate } from "react-router-dom";
import { setAllTeams, useCurrentTeam, useListTeam } from "../../lib/role";
import { meQuery } from "../../queries/auth";
import { keys } from "../../queries/keys";
import { createTeam } from "../../queries/teams";
import { type Errors, Field, formErrorsFrom } from "../Field";
import { FormDialog } from "./FormDialog";

const NEW = "__new__";
const ALL = "__all__";

/**
 * The header's team switcher: the current team (kept in localStorage) whose rows the lists show
 * and in which pages create things, the caller's role in it, "All my teams" for a user in 2+
 * teams (lists show every team's rows, each naming its team; new things still go to the team
 * picked last), and "New team…" for those the server lets create teams (IOWATT_TEAM_CREATORS:
 * instance administrators by default; its creator becomes the team's admin).
 */
export function TeamSwitcher() {
  const { team, teams, select } = useCurrentTeam();
  const { all } = useListTeam();
  const [creating, setCreating] = useState(false);
  const mayCreate = useQuery(meQuery()).data?.can_create_teams === true;
  if (teams.length === 0 && !creating) {
    if (!mayCreate) return null;
    return (
      <button
        type="button"
        className="btn btn-ghost"
        data-testid="new-team"
        onClick={() => setCreating(true)}
      >
        New team…
      </button>
    );
  }
  return (
    <>
      <label
        className="team-switcher"
        title={
          all
            ? `Lists show all your teams; new things are created in ${team?.name ?? "your team"}`
            : "Current team: the lists show its rows and new things are created in it"
        }
      >
        <select
          aria-label="Team"
          data-testid="team-switcher"
          value={all ? ALL : (team?.id ?? "")}
          onChange={(e) => {
            if (e.target.value === NEW) setCreating(true);
            else if (e.target.value === ALL) setAllTeams();
            else select(e.target.value);
          }}
        >
          {teams.map((t) => (
            <option key={t.id} value={t.id}>
              {t.name} · {t.role}
            </option>
          ))}
          {teams.length > 1 && <option value={ALL}>All my teams</option>}
          {mayCreate && <option value={NEW}>New team…</option>}
        </select>
      </label>
      {creating && <NewTeamDialog onClose={() => setCreating(false)} onCreated={select} />}
    </>
  );
}

function NewTeamDialog({
  onClose,
  onCreated,
}: {
  onClose: () => void;
  onCreated: (id: string) => void;
}) {
  const qc = useQueryClient();
  const navigate = useNavigate();
  const [name, setName] = useState("");
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
      const t = await createTeam(name.trim());
      await qc.invalidateQueries({ queryKey: keys.auth.me() });
      onCreated(t.id);
      onClose();
      navigate("/team");
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
      title="New team"
      testId="new-team-dialog"
      error={formError}
      pending={pending}
      label="Create team"
      pendingLabel="Creating…"
      onSubmit={submit}
      onCancel={onClose}
    >
      <p className="muted small">You become its admin and can invite people from its page.</p>
      <Field label="Name" name="name" errors={errors}>
        <input id="f-name" value={name} onChange={(e) => setName(e.target.value)} />
      </Field>
    </FormDialog>
  );
}
