import { keepPreviousData, useQuery, useQueryClient } from "@tanstack/react-query";
import { useCallback, useMemo, useState } from "react";
import { Link, useNavigate, useSearchParams } from "react-router-dom";
import { isActive, type RunRead } from "../client/types";
import { TierBadge } from "../components/Energy/TierBadge";
import { QueryState } from "../components/QueryState";
import { OriginBadge } from "../components/Run/OriginBadge";
import { ProgressBar } from "../components/Run/ProgressBar";
import { RunFilterBar } from "../components/Run/RunFilterBar";
import { TagChips } from "../components/Run/RunTags";
import { StatusBadge } from "../components/Run/StatusBadge";
import { WorkloadCell } from "../components/Run/WorkloadCell";
import { workloadTag } from "../lib/compare";
import { energyStateShort, energyStateText } from "../lib/energy";
import { formatEnergy, formatRelative, formatSeconds, formatTimestamp } from "../lib/format";
import { useCan, useListTeam } from "../lib/role";
import {
  filtersFromParams,
  filtersToParams,
  isFiltered,
  NO_FILTERS,
  type RunFilters,
  toQuery,
  withFilter,
} from "../lib/runFilters";
import { runQuery, runsQuery } from "../queries/runs";

const PAGE = 50;

function duration(r: RunRead): string {
  if (!r.started_at) return "—";
  // A run still going counts up to now; a finished one without an end time has none.
  const end = r.finished_at ? Date.parse(r.finished_at) : isActive(r.status) ? Date.now() : null;
  if (end === null) return "—";
  // an imported file or published figures that state no duration: not a run of 0 s
  if (r.origin && end === Date.parse(r.started_at)) return "—";
  return formatSeconds((end - Date.parse(r.started_at)) / 1000);
}

/** A running run's share done, as its page shows it: the server's whole-run share (the report's own
 * percent is the current job's: a run in the 5th of its 80 jobs read 87 % here and 6 % on its page). */
function runPercent(r: RunRead): number {
  return r.progress?.run_percent ?? 0;
}

/** How many runs match as the list counts them: exact, or "1,000+" when more match than the server
 * counts (it stops at the page's offset + 1,000: an exact count at a million runs costs seconds). */
export function matchCount(page: { total: number; total_exact: boolean }): string {
  return `${page.total.toLocaleString("en")}${page.total_exact === false ? "+" : ""}`;
}

/** A run's total energy with its meter tier, or why there is none. */
function EnergyCell({ energy }: { energy: RunRead["energy"] }) {
  if (energy.status === "ok") {
    return (
      <>
        <span className="nowrap">{formatEnergy(energy.total_j)}</span> <TierBadge energy={energy} />
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
  // under "All my teams" (the switcher) the list holds every team's runs: name each one's team
  const { all, teamName } = useListTeam();
  return (
    <table className="table" data-testid="runs-table">
      <thead>
        <tr>
          {onToggle && <th aria-label="Select" />}
          <th>Run</th>
          <th>Status</th>
          <th>Host</th>
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
            data-jobs={(r.workload.jobs ?? []).map((j) => j.name).join(",")}
            data-preset={r.preset ?? ""}
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
              {/* a long name at most two lines (at 390 px a 160-character one took 15), whole on hover */}
              <Link
                to={`/runs/${r.id}`}
                data-testid="run-link"
                className="run-name"
                title={r.name?.trim() ? r.name : undefined}
              >
                {r.name?.trim() ? r.name : <span className="mono">#{r.id.slice(0, 8)}</span>}
              </Link>
              <OriginBadge origin={r.origin} />
              {r.source === "import" && !r.origin && (
                <span
                  className="badge badge-import"
                  title="uploaded from outside (POST /api/v1/results), not run by an agent"
                  data-testid="run-imported"
                >
                  uploaded
                </span>
              )}
              {all && (
                <span className="badge badge-team" title="the run's team" data-testid="run-team">
                  {teamName(r.team_id)}
                </span>
              )}
              <TagChips tags={r.tags} small />
            </td>
            <td>
              <div className="status-cell">
                <StatusBadge status={r.status} />
                {r.status === "running" && r.progress && (
                  <ProgressBar percent={runPercent(r)} label={`${r.name}: progress`} />
                )}
              </div>
            </td>
            <td className="nowrap">{r.agent_name ?? "—"}</td>
            <td className="mono small">
              {r.target_path}
              {(r.targets?.length ?? 0) > 1 && (
                <span className="muted nowrap" data-testid="run-more-targets">
                  {" "}
                  +{(r.targets?.length ?? 1) - 1} target{(r.targets?.length ?? 0) > 2 ? "s" : ""}
                </span>
              )}
            </td>
            <td className="small">
              <WorkloadCell run={r} />
            </td>
            <td className="nowrap" title={formatTimestamp(r.created_at)}>
              {formatRelative(r.created_at)}
            </td>
            <td className="num">{duration(r)}</td>
            <td className="num energy-cell" data-testid="run-energy">
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
  const filters = useMemo(() => filtersFromParams(params), [params]);
  // the switcher's team (none under "All my teams"); the key holds it, so switching refetches
  const list = useListTeam();
  const q = useQuery({
    // the table shows no job's figures: the items come without them (jobs=false; a page of 50
    // CrystalDiskMark runs is half the bytes and a quarter of the server's work), and an active run's
    // bar needs none of its live chart's reports (samples=false: ~33 KB a running run, every 2 s)
    ...runsQuery({ ...toQuery(filters, PAGE), team_id: list.teamId, jobs: false, samples: false }),
    enabled: list.ready,
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

  const setFilters = useCallback(
    (f: RunFilters) => setParams(filtersToParams(f), { replace: f.q !== filters.q }),
    [setParams, filters.q],
  );

  const total = q.data?.total ?? 0;
  // a bounded count (total_exact false) is a lower bound: more runs than it follow
  const more = q.data?.total_exact === false;
  const offset = filters.offset;
  const filtered = isFiltered(filters);
  return (
    <section>
      <div className="page-head">
        <h1>Runs</h1>
        <div className="actions">
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
      <RunFilterBar filters={filters} onChange={setFilters} />
      <QueryState isPending={q.isPending} error={q.error} />
      {q.data && q.data.items.length === 0 && (
        <div className="empty-state" data-testid="runs-empty">
          {filtered ? (
            <>
              <p>No runs match these filters.</p>
              <button
                type="button"
                className="btn btn-small"
                onClick={() => setFilters({ ...NO_FILTERS, sort: filters.sort })}
              >
                Clear filters
              </button>
            </>
          ) : offset > 0 ? (
            <p>
              No runs on this page.{" "}
              <button
                type="button"
                className="btn btn-small"
                onClick={() => setFilters(withFilter(filters, "offset", 0))}
              >
                First page
              </button>
            </p>
          ) : (
            <>
              <p>No runs yet.</p>
              {can("run.create") && (
                <p className="small">
                  <Link to="/runs/new">Queue the first one</Link>, or upload a result from CI (POST
                  /api/v1/results with an upload token).
                </p>
              )}
            </>
          )}
        </div>
      )}
      {q.data && q.data.items.length > 0 && (
        <>
          <div
            className={q.isPlaceholderData ? "runs-stale" : undefined}
            aria-busy={q.isFetching}
            data-testid="runs-list"
            data-stale={q.isPlaceholderData ? "1" : "0"}
          >
            <RunsTable runs={q.data.items} selected={selected} onToggle={toggle} />
          </div>
          <div className="pager" data-testid="runs-pager">
            <span
              className="muted"
              data-testid="runs-range"
              title={
                more
                  ? `More than ${total.toLocaleString("en")} runs match (counted up to there)`
                  : undefined
              }
            >
              {offset + 1}–{Math.min(offset + PAGE, total)} of {q.data ? matchCount(q.data) : 0}
              {filtered ? " matching" : ""}
            </span>
            {q.isFetching && <span className="muted small">updating…</span>}
            <button
              type="button"
              className="btn btn-small"
              disabled={offset === 0}
              data-testid="page-prev"
              onClick={() => setFilters(withFilter(filters, "offset", Math.max(0, offset - PAGE)))}
            >
              Previous
            </button>
            <button
              type="button"
              className="btn btn-small"
              disabled={!more && offset + PAGE >= total}
              data-testid="page-next"
              onClick={() => setFilters(withFilter(filters, "offset", offset + PAGE))}
            >
              Next
            </button>
          </div>
        </>
      )}
    </section>
  );
}
