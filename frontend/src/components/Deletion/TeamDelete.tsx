import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useId, useState } from "react";
import { useNavigate } from "react-router-dom";
import { saveBlob } from "../../lib/download";
import { errorMessage } from "../../lib/errors";
import { deleteTeam, exportTeam } from "../../queries/deletion";
import { Modal } from "../Modal";

/** "Export team data": the whole team as a zip of JSON and CSV (admins; docs/teams.md § Export). */
export function ExportTeamButton({ teamId }: { teamId: string }) {
  const exp = useMutation({
    mutationFn: () => exportTeam(teamId),
    onSuccess: ({ blob, filename }) => saveBlob(blob, filename),
  });
  return (
    <>
      <button
        type="button"
        className="btn"
        data-testid="export-team"
        disabled={exp.isPending}
        onClick={() => exp.mutate()}
      >
        {exp.isPending ? "Exporting…" : exp.isSuccess ? "Exported ✓" : "Export team data"}
      </button>
      {exp.error && <div className="alert alert-error">{errorMessage(exp.error)}</div>}
    </>
  );
}

/**
 * Deleting a team: the dialog offers its export first, then asks for the team's name typed again
 * (the server checks it too: 422 on confirm_name). Admins only; the caller hides it from others.
 */
export function TeamDeleteButton({ teamId, teamName }: { teamId: string; teamName: string }) {
  const [open, setOpen] = useState(false);
  const [typed, setTyped] = useState("");
  const inputId = useId();
  const titleId = useId();
  const qc = useQueryClient();
  const navigate = useNavigate();
  const del = useMutation({
    mutationFn: () => deleteTeam(teamId, typed),
    onSuccess: () => {
      setOpen(false);
      qc.invalidateQueries();
      navigate("/");
    },
  });
  return (
    <>
      <button
        type="button"
        className="btn btn-danger"
        data-testid="delete-team"
        onClick={() => {
          setTyped("");
          del.reset();
          setOpen(true);
        }}
      >
        Delete team
      </button>
      {open && (
        <Modal labelledBy={titleId} testId="delete-team-dialog" onClose={() => setOpen(false)}>
          <form
            className="form"
            onSubmit={(e) => {
              e.preventDefault();
              if (typed === teamName) del.mutate();
            }}
          >
            <h3 id={titleId}>Delete the team {teamName}?</h3>
            <p>
              Every run with its results, power samples and energy, every agent, device,
              environment, workload, campaign, comment and share link of the team goes, and its
              audit log. Its people keep their accounts. This cannot be undone.
            </p>
            <p>
              <strong>1.</strong> Export the team's data first (a zip of JSON and CSV):{" "}
              <ExportTeamButton teamId={teamId} />
            </p>
            <label htmlFor={inputId}>
              <strong>2.</strong> Type the team's name, <span className="mono">{teamName}</span>, to
              confirm:
            </label>
            <input
              id={inputId}
              value={typed}
              autoComplete="off"
              onChange={(e) => setTyped(e.target.value)}
              data-testid="delete-team-name"
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
                disabled={typed !== teamName || del.isPending}
                data-testid="delete-team-confirm"
              >
                Delete the team
              </button>
            </div>
          </form>
        </Modal>
      )}
    </>
  );
}

/** The Team page's last card, for admins: export the team's data, or delete the team. */
export function TeamDangerZone({ teamId, teamName }: { teamId: string; teamName: string }) {
  return (
    <section className="card danger-zone" data-testid="team-danger-zone">
      <h2>Export or delete the team</h2>
      <p className="muted small">
        The export is a zip of JSON and CSV with everything of the team: members, agents, devices,
        environments, workloads, campaigns, runs with every engine document, power samples, energy,
        comments, share links and the audit log (no tokens or passwords). Deleting the team removes
        all of it; its people keep their accounts.
      </p>
      <div className="actions">
        <ExportTeamButton teamId={teamId} />
        <TeamDeleteButton teamId={teamId} teamName={teamName} />
      </div>
    </section>
  );
}
