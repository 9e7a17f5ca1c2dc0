import { keepPreviousData, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { Link, useNavigate, useSearchParams } from "react-router-dom";
import { isActive, RUN_STATUSES, type RunRead } from "../client/types";
import { TierBadge } from "../components/Energy/TierBadge";
import { QueryState } from "../components/QueryState";
import { ProgressBar } from "../components/Run/ProgressBar";
import { StatusBadge } from "../components/Run/StatusBadge";
import { workloadTag } from "../lib/compare";
import { energyStateShort, energyStateText } from "../lib/energy";
import { formatEnergy, formatRelative, formatSeconds, formatTimestamp } from "../lib/format";
import { useCan } from "../lib/role";
import { describeWorkload } from "../lib/workload";
import { runQuery, runsQuery } from "../queries/runs";

const PAGE = 50;

function duration(r: RunRead): string {
  if (!r.started_at) return "—";
  // A run still going counts up to now; a finished one without an end time has none.
  const end = r.finished_at ? Date.parse(r.finished_at) : isActive(r.status) ? Date.now() : null;
  if (end === null) return "—";
  return formatSeconds((end - Date.parse(r.started_at)) / 1000);
}

/** A run's total energy with its meter tier, or why there is none. */
function EnergyCell({ energy }: { energy: RunRead["energy"] }) {
  if (energy.status === "ok") {
    return (
      <>
        {formatEnergy(energy.total_j)} <TierBadge energy={energy} />
      </>
    );
  }
  return (
    <span className="muted small" title={energyStateText(energy)}>
      {energyStateShort(energy)}
    </span>
  );
}

export function RunsTable({
  runs,
  selected,
  onToggle,
}: {
  runs: RunRead[];
  selected?: Set<string>;
  onToggle?: (id: string) => void;
}) {
  const qc = useQueryClient();
  return (
    <table className="table" data-testid="runs-table">
      <thead>
        <tr>
          {onToggle && <th aria-label="Select" />}
          <th>Run</th>
          <th>Status</th>
          <th>Agent</th>
          <th>Target</th>
          <th>Workload</th>
          <th>Created</th>
          <th className="num">Duration</th>
          <th className="num">Energy</th>
        </tr>
      </thead>
      <tbody>
        {runs.map((r) => (
          <tr
            key={r.id}
            data-testid="run-row"
            data-run-id={r.id}
            data-status={r.status}
            data-jobs={r.workload.jobs.map((j) => j.name).join(",")}
            data-energy={r.energy.status}
            data-workload={workloadTag(r)}
            onMouseEnter={() => qc.prefetchQuery(runQuery(r.id))}
          >
            {onToggle && (
              <td>
                <input
                  type="checkbox"
                  aria-label={`Select run ${r.name ?? r.id}`}
                  data-testid="run-select"
                  checked={selected?.has(r.id) ?? false}
                  onChange={() => onToggle(r.id)}
                />
              </td>
            )}
            <td>
              <Link to={`/runs/${r.id}`} data-testid="run-link">
                {r.name?.trim() ? r.name : <span className="mono">#{r.id.slice(0, 8)}</span>}
              </Link>
            </td>
            <td>
              <div className="status-cell">
                <StatusBadge status={r.status} />
                {r.status === "running" && r.progress && (
                  <ProgressBar percent={r.progress.percent} />
                )}
              </div>
            </td>
            <td className="nowrap">{r.agent_name ?? "—"}</td>
            <td className="mono small">{r.target_path}</td>
            <td className="small">{describeWorkload(r.workload)}</td>
            <td className="nowrap" title={formatTimestamp(r.created_at)}>
              {formatRelative(r.created_at)}
            </td>
            <td className="num">{duration(r)}</td>
            <td className="num nowrap" data-testid="run-energy">
              <EnergyCell energy={r.energy} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function Runs() {
  const [params, setParams] = useSearchParams();
  const navigate = useNavigate();
  const can = useCan();
  const statusParam = params.get("status");
  const status = RUN_STATUSES.find((s) => s === statusParam);
  const offset = Math.max(0, Number(params.get("offset") ?? 0) || 0);
  const q = useQuery({
    ...runsQuery({ status, limit: PAGE, offset }),
    placeholderData: keepPreviousData,
  });
  const [selected, setSelected] = useState<Set<string>>(new Set());

  const toggle = (id: string) =>
    setSelected((prev) => {
      const next = new Set(prev);
      if (next.has(id)) next.delete(id);
      else next.add(id);
      return next;
    });

  const setParam = (key: string, value: string | null) => {
    const next = new URLSearchParams(params);
    if (value === null) next.delete(key);
    else next.set(key, value);
    if (key !== "offset") next.delete("offset");
    setParams(next);
  };

  const total = q.data?.total ?? 0;
  return (
    <section>
      <div className="page-head">
        <h1>Runs</h1>
        <div className="actions">
          <label className="inline">
            Status{" "}
            <select
              value={status ?? ""}
              onChange={(e) => setParam("status", e.target.value || null)}
              data-testid="status-filter"
            >
              <option value="">all</option>
              {RUN_STATUSES.map((s) => (
                <option key={s} value={s}>
                  {s}
                </option>
              ))}
            </select>
          </label>
          <button
            type="button"
            className="btn"
            disabled={selected.size < 2}
            data-testid="compare-button"
            onClick={() => navigate(`/compare?runs=${[...selected].join(",")}`)}
            title="Select two or more runs to compare"
          >
            Compare{selected.size > 0 ? ` (${selected.size})` : ""}
          </button>
          <Link to="/compare/devices" className="btn">
            Compare devices
          </Link>
          {can("run.create") && (
            <Link to="/runs/new" className="btn btn-primary" data-testid="new-run">
              New run
            </Link>
          )}
        </div>
      </div>
      <QueryState isPending={q.isPending} error={q.error} />
      {q.data && q.data.items.length === 0 && <p className="muted">No runs yet.</p>}
      {q.data && q.data.items.length > 0 && (
        <>
          <RunsTable runs={q.data.items} selected={selected} onToggle={toggle} />
          <div className="pager">
            <span className="muted">
              {offset + 1}–{Math.min(offset + PAGE, total)} of {total}
            </span>
            <button
              type="button"
              className="btn btn-small"
              disabled={offset === 0}
              onClick={() => setParam("offset", String(Math.max(0, offset - PAGE)))}
            >
              Previous
            </button>
            <button
              type="button"
              className="btn btn-small"
              disabled={offset + PAGE >= total}
              onClick={() => setParam("offset", String(offset + PAGE))}
            >
              Next
            </button>
          </div>
        </>
      )}
    </section>
  );
}
