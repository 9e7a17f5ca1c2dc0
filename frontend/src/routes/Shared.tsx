// The page a share link opens (/s/:token), without login: the frozen view read-only, with the
// team's name and date, CSV/JSON export of what is shown, and no way into the rest of the app
// (no navigation, no login prompt, no link to a run page). Its only API calls are
// /api/v1/shared/<token>[/export.*] (tests/browser/share.mjs records every request to prove it).
import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { useParams } from "react-router-dom";
import type { CompareRead } from "../client/types";
import {
  BarCharts,
  ChangeCharts,
  LatencyCurves,
  RunKey,
  SweepCharts,
} from "../components/Compare/CompareCharts";
import { autoLayout, MetricTable } from "../components/Compare/CompareTable";
import { EnergyCompare } from "../components/Compare/EnergyCompare";
import { CompareRunsTable } from "../components/Compare/RunsTable";
import { SharedReview } from "../components/Share/SharedReview";
import { columnLabels } from "../lib/compare";
import { saveText } from "../lib/download";
import { envFilterLabel } from "../lib/envFacets";
import { ApiError, errorMessage } from "../lib/errors";
import { type SharedView, sharedExport, sharedViewQuery } from "../queries/sharing";

function formatDay(iso: string): string {
  return new Date(iso).toLocaleDateString(undefined, {
    year: "numeric",
    month: "long",
    day: "numeric",
    timeZone: "UTC",
  });
}

function titleOf(v: SharedView): string {
  if (v.title) return v.title;
  if (v.kind === "review")
    return v.review ? `Review ${v.review.name} (version ${v.review.version})` : "Review";
  if (v.kind === "campaign" && v.campaign) return `Campaign ${v.campaign.name}`;
  if (v.kind === "run" && v.comparison?.runs[0]) return v.comparison.runs[0].name;
  const n = v.comparison?.runs.length ?? 0;
  return `Comparison of ${n} run${n === 1 ? "" : "s"}`;
}

/** "1 run of this comparison was deleted", said of the link's kind. */
export function deletedNote(v: Pick<SharedView, "kind" | "runs_deleted">): string | null {
  const n = v.runs_deleted;
  if (n === 0) return null;
  const of =
    v.kind === "run" ? "The run of this link" : `${n} run${n === 1 ? "" : "s"} of this ${v.kind}`;
  return `${of} ${n === 1 ? "was" : "were"} deleted since it was shared.`;
}

function Gone({ error }: { error: unknown }) {
  const expired = error instanceof ApiError && error.status === 410;
  const gone = error instanceof ApiError && (error.status === 404 || error.status === 410);
  return (
    <div className="shared-gone card" data-testid="shared-gone">
      <h1>{expired ? "This link has expired" : "This link is not available"}</h1>
      <p>
        {gone
          ? expired
            ? errorMessage(error)
            : "It does not exist or was revoked by the team that shared it."
          : `The shared view could not be loaded: ${errorMessage(error)}`}
      </p>
      <p className="muted small">Ask whoever sent it for a new link.</p>
    </div>
  );
}

function Exports({ token }: { token: string }) {
  const [note, setNote] = useState<string | null>(null);
  const get = async (format: "csv" | "json") => {
    try {
      const text = await sharedExport(token, format);
      saveText(`iowatt-shared.${format}`, format === "csv" ? "text/csv" : "application/json", text);
      setNote(null);
    } catch (e) {
      setNote(`${format.toUpperCase()}: ${errorMessage(e)}`);
    }
  };
  return (
    <div className="actions">
      <button type="button" className="btn" data-testid="shared-csv" onClick={() => get("csv")}>
        Download CSV
      </button>
      <button type="button" className="btn" data-testid="shared-json" onClick={() => get("json")}>
        Download JSON
      </button>
      {note && <span className="muted small">{note}</span>}
    </div>
  );
}

type SharedComparison = NonNullable<SharedView["comparison"]>;
type SharedRun = SharedComparison["runs"][number];

/** A shared comparison in the shape of the compare page's answer, for its components. A link
 * carries no team, agent, device, environment or user ids, no target path and no vdbench
 * parameter file (backend/sharing): those are empty here, and no component on this page reads
 * them. */
export function asCompareRead(c: SharedComparison): CompareRead {
  const run = (r: SharedRun): CompareRead["runs"][number] => ({
    ...r,
    team_id: "",
    agent_id: "",
    agent_name: "",
    device_id: null,
    environment_id: null,
    workload_id: null,
    created_by: null,
    target_path: "",
    assigned_at: null,
    attempt: 1,
    cancel_requested: false,
    destructive: false,
    error: null,
    file_workload: null,
    idle_s: null,
    meter: null,
    preset: null,
    progress: null,
    source: "agent",
    tags: [],
    energy: { ...r.energy, meter_name: null, reason: null, source: null },
    workload: {
      ...r.workload,
      vdbench: r.workload.vdbench && { ...r.workload.vdbench, parameters: "" },
    },
  });
  return { ...c, runs: c.runs.map(run), filtered_out: [] };
}

function Frozen({ view }: { view: SharedView }) {
  const c = view.comparison;
  if (!c) {
    return (
      <div className="alert alert-info" data-testid="shared-empty">
        {view.kind === "campaign" && !view.campaign
          ? "The campaign of this link was deleted."
          : view.runs_total === 0
            ? "Nothing to show yet: no run of this campaign has finished."
            : view.options.env.length > 0
              ? `No run of this link has an environment with ${view.options.env.map(envFilterLabel).join(" and ")}.`
              : "Every run of this link was deleted since it was shared."}
      </div>
    );
  }
  const data = asCompareRead(c);
  const o = view.options;
  const labels = columnLabels(data);
  const layout = o.table === "auto" ? autoLayout(c.columns.length) : o.table;
  const show = (k: (typeof o.charts)[number]) => o.charts.includes(k);
  const job = o.job && c.jobs.some((j) => j.name === o.job) ? o.job : undefined;
  // runs the link's environment filter left out (deleted runs are counted apart)
  const leftOut = view.runs_total - view.runs_deleted - c.runs.length;
  return (
    <>
      <p className="small" data-testid="shared-verdict">
        {c.comparability.verdict === "comparable"
          ? "✓ Like for like: every run has the same workload fingerprint."
          : c.comparability.verdict === "forced"
            ? "⚠ Compared although the workloads differ (the sharer chose to)."
            : "✗ These runs did not run the same workload: their metrics are not compared."}
      </p>
      {o.env.length > 0 && (
        <p className="small" data-testid="shared-env-filter">
          Only runs whose recorded environment has {o.env.map(envFilterLabel).join(" and ")}
          {leftOut > 0 ? ` (${leftOut} of the runs shared left out)` : ""}.
        </p>
      )}
      <CompareRunsTable
        data={data}
        testId="shared-runs"
        readOnly
        where={{ label: "Environment", cell: (_, i) => c.runs[i]?.environment_name ?? "—" }}
      />
      {c.jobs.length > 0 && (
        <>
          <div className="run-key-bar">
            <RunKey data={data} />
          </div>
          {show("bars") && (
            <>
              <BarCharts data={data} />
              <ChangeCharts data={data} job={c.jobs.length > 1 ? job : undefined} />
            </>
          )}
          {show("sweep") && <SweepCharts data={data} />}
          {view.latency && (
            <div className="chart-grid">
              <LatencyCurves data={data} curves={view.latency} testId="shared-latency" />
            </div>
          )}
          <h2>All metrics</h2>
          {c.jobs.map((j) => (
            <div className="card" key={j.name}>
              <h3>{j.name}</h3>
              <MetricTable
                data={data}
                labels={labels}
                metrics={j.metrics}
                testId="shared-table"
                layout={layout}
              />
            </div>
          ))}
        </>
      )}
      {c.comparability.verdict !== "not_comparable" && (
        <>
          <h2>Energy and carbon</h2>
          <EnergyCompare data={data} showCharts={show("energy")} layout={layout} />
        </>
      )}
    </>
  );
}

export function Shared() {
  const { token = "" } = useParams();
  const q = useQuery(sharedViewQuery(token));
  return (
    <div className="shell shared-shell">
      <header className="topbar">
        <span className="brand">
          io<strong>watt</strong>
        </span>
        <span className="topbar-note">Shared view · read-only</span>
      </header>
      <main className="content" data-testid="shared-page">
        {q.isPending && <p className="muted">Loading…</p>}
        {q.error && <Gone error={q.error} />}
        {q.data && (
          <section>
            <div className="page-head">
              <div>
                <h1 data-testid="shared-title">{titleOf(q.data)}</h1>
                <p className="muted" data-testid="shared-by">
                  Shared by the team <strong>{q.data.team_name}</strong> on{" "}
                  {formatDay(q.data.created_at)}
                  {q.data.shared_by ? ` (${q.data.shared_by})` : ""}
                  {q.data.expires_at ? ` · expires ${formatDay(q.data.expires_at)}` : ""}
                </p>
              </div>
              <Exports token={token} />
            </div>
            {q.data.campaign && (
              <p data-testid="shared-campaign">
                Campaign <strong>{q.data.campaign.name}</strong>: {q.data.campaign.repeats} repeat
                {q.data.campaign.repeats === 1 ? "" : "s"};{" "}
                {Object.entries(q.data.campaign.counts)
                  .map(([s, n]) => `${n} ${s}`)
                  .join(", ")}
                {q.data.campaign.done ? "" : " (still running: the finished runs are shown)"}
              </p>
            )}
            {deletedNote(q.data) && (
              <div className="alert alert-warn" data-testid="shared-deleted">
                {deletedNote(q.data)}
              </div>
            )}
            {q.data.kind === "review" ? (
              <SharedReview review={q.data.review} />
            ) : (
              <Frozen view={q.data} />
            )}
          </section>
        )}
      </main>
    </div>
  );
}
