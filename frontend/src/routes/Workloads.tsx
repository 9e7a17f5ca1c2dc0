import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { Link, useNavigate, useParams } from "react-router-dom";
import type { WorkloadRead } from "../client/types";
import { DbWorkloadParameters } from "../components/DbWorkload/DbWorkloadSpec";
import { type DbSpecLike, dbSizeText, isDbKind } from "../components/DbWorkload/dbWorkload";
import { DeleteButton } from "../components/Deletion/DeleteButton";
import { FileWorkloadForm } from "../components/FileWorkload/FileWorkloadForm";
import {
  FileSetFacts,
  FileWorkloadParameters,
  KindBadge,
} from "../components/FileWorkload/FileWorkloadSpec";
import { JobfileSpecCard } from "../components/Jobfile/JobfileView";
import { QueryState } from "../components/QueryState";
import {
  baseScale,
  describeFileSet,
  formatScale,
  kindOf,
  presetSource,
  specOf,
  workloadFacts,
} from "../lib/fileWorkload";
import { formatBytes, formatSeconds } from "../lib/format";
import { useCan, useCurrentTeam } from "../lib/role";
import { describeJob } from "../lib/workload";
import { deleteWorkload } from "../queries/deletion";
import { keys } from "../queries/keys";
import { workloadQuery, workloadsQuery } from "../queries/workloads";

/** What a row of the list says about a workload's size: its file set, or its jobs. */
function sizeText(w: WorkloadRead): string {
  const spec = specOf(w);
  const kind = kindOf(spec);
  if (isDbKind(kind)) return dbSizeText(spec as DbSpecLike);
  if (kind === "jobfile") {
    const n = spec.jobfile?.parsed?.jobs.length ?? 0;
    return `${n} job${n === 1 ? "" : "s"} (fio job file)`;
  }
  if (kind === "block")
    return `${(w.spec.jobs ?? []).length} job${(w.spec.jobs ?? []).length === 1 ? "" : "s"}${
      w.spec.passes > 1 ? ` × ${w.spec.passes} passes` : ""
    }`;
  const facts = workloadFacts(w);
  if (!facts) return "file set: when queued";
  const s0 = baseScale(spec);
  return `${describeFileSet(facts)}${s0 !== 1 ? ` (scale ${formatScale(s0)})` : ""}`;
}

/** A preset's report after its name ("postmark-low · Song & Lee's PostMark levels (their Table 1)"). */
function Source({ w }: { w: WorkloadRead }) {
  const source = w.builtin ? presetSource(w.name) : null;
  return source ? (
    <span className="seed-label" data-testid="preset-seed">
      {" "}
      · {source}
    </span>
  ) : null;
}

/** /workloads: the built-in presets and the team's own, with their kind; a form for file ones. */
export function Workloads() {
  const { team } = useCurrentTeam();
  const q = useQuery(workloadsQuery(team?.id));
  const can = useCan();
  const navigate = useNavigate();
  const [creating, setCreating] = useState(false);
  const items = q.data?.items ?? [];
  return (
    <section data-testid="workloads">
      <div className="page-head">
        <h1>Workloads</h1>
        <div className="actions">
          {team && can("workload.create", team.id) && (
            <button
              type="button"
              className="btn"
              onClick={() => setCreating((c) => !c)}
              data-testid="new-file-workload"
            >
              {creating ? "Close the form" : "New file workload"}
            </button>
          )}
        </div>
      </div>
      <p className="muted">
        Built-in presets reproduce the settings of published reports (docs/sources.md); PostMark and
        vdbench file sets run on a directory target, block jobs on a directory, a file or a device.
      </p>
      {creating && team && (
        <FileWorkloadForm teamId={team.id} onCreated={(w) => navigate(`/workloads/${w.id}`)} />
      )}
      <QueryState isPending={q.isPending} error={q.error} />
      {items.length > 0 && (
        <div className="card">
          <table className="table compact" data-testid="workloads-table">
            <thead>
              <tr>
                <th>Workload</th>
                <th>Kind</th>
                <th>Size</th>
                <th>Description</th>
              </tr>
            </thead>
            <tbody>
              {items.map((w) => (
                <tr key={w.id} data-testid="workload-row" data-name={w.name}>
                  <td>
                    <Link to={`/workloads/${w.id}`}>{w.name}</Link>
                    {w.builtin ? <span className="muted small"> (preset)</span> : null}
                    <Source w={w} />
                  </td>
                  <td>
                    <KindBadge spec={specOf(w)} />
                  </td>
                  <td className="small">{sizeText(w)}</td>
                  <td className="small">{w.description}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

/** /workloads/:id: what the workload does, in its report's terms, and a link to run it. */
export function WorkloadPage() {
  const { id = "" } = useParams();
  const q = useQuery(workloadQuery(id));
  const qc = useQueryClient();
  const navigate = useNavigate();
  const { team } = useCurrentTeam();
  const can = useCan();
  const w = q.data;
  if (!w) return <QueryState isPending={q.isPending} error={q.error} />;
  const spec = specOf(w);
  const kind = kindOf(spec);
  const source = w.builtin ? presetSource(w.name) : null;
  return (
    <section data-testid="workload-page">
      <div className="page-head">
        <h1>
          {w.name} <KindBadge spec={spec} />
        </h1>
        <div className="actions">
          <Link className="btn btn-small" to={`/series?workload_id=${w.id}`}>
            Series
          </Link>
          {team && can("run.create", team.id) && (
            <Link className="btn btn-small" to={`/runs/new?workload=${w.id}`} data-testid="run-it">
              New run with it
            </Link>
          )}
          {!w.builtin && team && can("workload.create", team.id) && (
            <DeleteButton
              label="Delete"
              title="Delete this workload?"
              testId="delete-workload"
              onDelete={() => deleteWorkload(w.id)}
              onDone={() => {
                qc.invalidateQueries({ queryKey: keys.workloads.all() });
                navigate("/workloads");
              }}
            >
              <p>
                Runs made from <strong>{w.name}</strong> keep their copy of it.
              </p>
            </DeleteButton>
          )}
        </div>
      </div>
      <div className="card">
        <p style={{ marginTop: 0 }}>{w.description}</p>
        <p className="small muted">
          {w.builtin ? "Built-in preset" : "A team's workload"}
          {source ? `, reproduces ${source}` : ""}.
        </p>
        {!isDbKind(kind) && kind !== "jobfile" && <FileSetFacts workload={w} />}
      </div>
      {kind === "jobfile" && spec.jobfile ? (
        <JobfileSpecCard text={spec.jobfile.text} parse={spec.jobfile.parsed} />
      ) : isDbKind(kind) ? (
        <div className="card">
          <h2 style={{ marginTop: 0 }}>Settings</h2>
          <DbWorkloadParameters spec={spec as DbSpecLike} />
        </div>
      ) : kind === "block" ? (
        <div className="card">
          <h2 style={{ marginTop: 0 }}>Jobs</h2>
          <ul>
            {(w.spec.jobs ?? []).map((j) => (
              <li key={j.name}>
                <strong>{j.name}</strong>: {describeJob(j)}
                {j.runtime_s != null && `, ${formatSeconds(j.runtime_s)}`}
                {`, ${formatBytes(j.size_bytes)}`}
              </li>
            ))}
          </ul>
        </div>
      ) : (
        <div className="card">
          <h2 style={{ marginTop: 0 }}>{kind === "postmark" ? "Settings" : "Parameter file"}</h2>
          <FileWorkloadParameters spec={spec} />
        </div>
      )}
    </section>
  );
}
