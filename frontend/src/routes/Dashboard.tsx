import { useQueries, useQuery } from "@tanstack/react-query";
import { Link } from "react-router-dom";
import type { CompareRead, RunStatus } from "../client/types";
import { QueryState } from "../components/QueryState";
import { pickLikeRuns } from "../lib/compare";
import { DEFAULT_STATE } from "../lib/compareState";
import { useCan, useListTeam } from "../lib/role";
import { agentsQuery } from "../queries/agents";
import { compareQuery } from "../queries/compare";
import { runsQuery } from "../queries/runs";
import { CompareCharts } from "./Compare";
import { matchCount, RunsTable } from "./Runs";

const COUNTED: RunStatus[] = ["queued", "running", "succeeded", "failed"];
const RECENT_SUCCEEDED = 30;
const COMPARED = 6;

/** The compared runs with the newest run's fingerprint (all of them when comparable). */
function likeNewest(cmp: CompareRead, ids: string[]): string[] {
  if (cmp.comparability.verdict !== "not_comparable") return ids;
  const fps = cmp.comparability.fingerprints;
  const newest = fps[ids[ids.length - 1] ?? ""];
  return ids.filter((id) => fps[id] === newest);
}

export function Dashboard() {
  const can = useCan();
  // the switcher's team (every team under "All my teams"), as the lists
  const { teamId: team_id, ready } = useListTeam();
  const agents = useQuery({ ...agentsQuery(team_id), enabled: ready });
  const counts = useQueries({
    queries: COUNTED.map((status) => ({
      // a count: neither the run's figures nor its live chart's reports (polled while one is active)
      ...runsQuery({ status, limit: 1, team_id, jobs: false, samples: false }),
      enabled: ready,
    })),
  });
  // the runs table (as the runs page's): no job's figures, an active run's bar without its reports
  const latest = useQuery({
    ...runsQuery({ limit: 8, team_id, jobs: false, samples: false }),
    enabled: ready,
  });
  const succeeded = useQuery({
    ...runsQuery({ status: "succeeded", limit: RECENT_SUCCEEDED, team_id }),
    enabled: ready,
  });
  // The newest like-for-like group (same workload), oldest first so it is the baseline.
  const ids = pickLikeRuns(succeeded.data?.items ?? [], COMPARED).map((r) => r.id);
  const first = useQuery(compareQuery({ ...DEFAULT_STATE, runs: ids }));
  // When the server's fingerprint still tells them apart, keep the runs like the newest one.
  const like = first.data ? likeNewest(first.data, ids) : ids;
  const narrowed = useQuery({
    ...compareQuery({ ...DEFAULT_STATE, runs: like }),
    enabled: like.length >= 2 && like.length < ids.length,
  });
  const cmp = like.length < ids.length ? narrowed : first;
  const shown = like.length < ids.length ? like : ids;

  const online = agents.data?.items.filter((a) => a.online).length;
  return (
    <section>
      <h1>Dashboard</h1>
      <div className="stats" data-testid="stats">
        <Link to="/agents" className="stat card">
          <span className="stat-value">
            {online ?? "…"}
            <span className="muted"> / {agents.data?.total ?? "…"}</span>
          </span>
          <span className="stat-label">agents online</span>
        </Link>
        {COUNTED.map((status, i) => (
          <Link to={`/runs?status=${status}`} className="stat card" key={status}>
            <span className="stat-value">{counts[i]?.data ? matchCount(counts[i].data) : "…"}</span>
            <span className="stat-label">{status} runs</span>
          </Link>
        ))}
      </div>

      <h2>Latest succeeded runs compared</h2>
      <QueryState isPending={succeeded.isPending} error={succeeded.error ?? cmp.error} />
      {succeeded.data && (ids.length < 2 || shown.length < 2) && (
        <p className="muted">
          Two succeeded runs of the same workload are needed for a comparison.
          {can("run.create") && (
            <>
              {" "}
              <Link to="/runs/new">Queue a run</Link>.
            </>
          )}
        </p>
      )}
      {cmp.data && shown.length >= 2 && (
        <div data-testid="dashboard-compare">
          <CompareCharts data={cmp.data} />
          <p className="small">
            <Link to={`/compare?runs=${shown.join(",")}`}>Open this comparison</Link> (every metric,
            its change against the oldest run)
          </p>
        </div>
      )}

      <div className="page-head">
        <h2>Latest runs</h2>
        <Link to="/runs">All runs →</Link>
      </div>
      <QueryState isPending={latest.isPending} error={latest.error} />
      {latest.data && latest.data.items.length > 0 && <RunsTable runs={latest.data.items} />}
      {latest.data && latest.data.items.length === 0 && <p className="muted">No runs yet.</p>}
    </section>
  );
}
