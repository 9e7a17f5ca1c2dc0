import { useQuery } from "@tanstack/react-query";
import { memo, useState } from "react";
import { Link, useSearchParams } from "react-router-dom";
import type { CompareRead } from "../client/types";
import { CommentThread } from "../components/Comments/CommentThread";
import { ComparabilityPanel } from "../components/Compare/ComparabilityPanel";
import {
  BarCharts,
  ChangeCharts,
  LatencyChart,
  RunKey,
  SeriesChart,
  SweepCharts,
} from "../components/Compare/CompareCharts";
import { autoLayout, MetricTable } from "../components/Compare/CompareTable";
import { EnergyCompare } from "../components/Compare/EnergyCompare";
import { CompareRunsTable } from "../components/Compare/RunsTable";
import { LazyMount } from "../components/charts/LazyMount";
import { EnvironmentFilters } from "../components/Environment/EnvironmentFilters";
import { GoneRuns } from "../components/GoneRuns";
import { QueryState } from "../components/QueryState";
import { ShareButton } from "../components/Share/ShareButton";
import { columnLabels, columnValidity, runLabels, unmatchedJobs } from "../lib/compare";
import {
  CHARTS,
  type ChartKind,
  type CompareState,
  FINGERPRINTS,
  GROUP_BY,
  GROUP_LABEL,
  parseCompareState,
  TABLE_LAYOUTS,
  type TableLayoutChoice,
  toSearchParams,
} from "../lib/compareState";
import { saveText } from "../lib/download";
import { errorMessage } from "../lib/errors";
import { comparisonKey } from "../queries/comments";
import { compareCsv, compareQuery } from "../queries/compare";

/** The headline bar charts with their run key (the dashboard shows them too). Drawn again only
 * when the comparison is another one: not at each poll of the dashboard's run lists, nor when
 * the compare page's table or chart choices change (the charts below are memoised the same way). */
export const CompareCharts = memo(function CompareCharts({ data }: { data: CompareRead }) {
  return (
    <>
      <RunKey data={data} />
      <BarCharts data={data} />
    </>
  );
});

const TABLE_LABEL: Record<TableLayoutChoice, string> = {
  auto: "auto",
  metrics: "metrics as rows",
  runs: "runs as rows",
};

const CHART_LABEL: Record<ChartKind, string> = {
  bars: "Bars",
  sweep: "Sweeps",
  latency: "Latency percentiles",
  series: "Per second",
  energy: "Energy",
};

function ShareBar({ state, data }: { state: CompareState; data?: CompareRead }) {
  const [note, setNote] = useState<string | null>(null);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(window.location.href);
      setNote("Link copied");
    } catch {
      setNote("Copy the address below");
    }
  };
  const csv = async () => {
    try {
      saveText("iowatt-compare.csv", "text/csv", await compareCsv(state));
      setNote(null);
    } catch (e) {
      setNote(`CSV: ${errorMessage(e)}`);
    }
  };
  return (
    <div className="actions">
      {/* no dead controls: while the page shows an error (a deleted or foreign run) there is
          nothing to copy or download */}
      <button
        type="button"
        className="btn"
        onClick={copy}
        disabled={!data}
        data-testid="copy-link"
        title="This page's address holds the whole view"
      >
        Copy link
      </button>
      <button
        type="button"
        className="btn"
        onClick={csv}
        disabled={!data}
        data-testid="download-csv"
      >
        Download CSV
      </button>
      <Link
        className="btn"
        to={`/views?runs=${state.runs.join(",")}`}
        data-testid="named-views"
        title="The published reports' tables (CrystalDiskMark grid, DiskSpd sweep, …) for these runs"
      >
        Named views
      </Link>
      <button
        type="button"
        className="btn"
        disabled={!data}
        data-testid="download-json"
        onClick={() =>
          data && saveText("iowatt-compare.json", "application/json", JSON.stringify(data, null, 2))
        }
      >
        Download JSON
      </button>
      {note && (
        <span className="muted small" data-testid="share-note">
          {note}
        </span>
      )}
    </div>
  );
}

export function Compare() {
  const [params, setParams] = useSearchParams();
  const state = parseCompareState(params);
  const q = useQuery(compareQuery(state));
  const update = (patch: Partial<CompareState>) =>
    setParams(toSearchParams({ ...state, ...patch }));

  if (state.runs.length < 2) {
    return (
      <section>
        <h1>Compare</h1>
        <p className="muted">
          Select two or more runs on the <Link to="/runs">runs page</Link> and press Compare, or{" "}
          <Link to="/compare/devices">compare devices</Link> by workload.
        </p>
      </section>
    );
  }

  const data = q.data;
  const labels = data ? columnLabels(data) : [];
  const runNames = data ? runLabels(data.runs) : [];
  // file workloads have no latency histograms or per-second samples: their figures are per
  // operation (the table) and per interval (each run's page)
  const fileRuns = !!data && data.runs.length > 0 && data.runs.every((r) => r.file_workload);
  const runLabel = (id: string) =>
    runNames[data?.runs.findIndex((r) => r.id === id) ?? -1] ?? id.slice(0, 8);
  const jobNames = data?.jobs.map((j) => j.name) ?? [];
  const job = state.job && jobNames.includes(state.job) ? state.job : (jobNames[0] ?? "");
  const baseCol = data?.columns.findIndex((c) => c.is_baseline) ?? 0;
  const show = (c: ChartKind) => state.charts.includes(c);
  const layout = state.table === "auto" ? autoLayout(data?.columns.length ?? 0) : state.table;

  return (
    <section data-testid="compare-page">
      <div className="page-head">
        <h1>
          Compare {state.runs.length} runs
          {data && data.group_by !== "none" && (
            <span className="muted small">
              in {data.columns.length} group{data.columns.length === 1 ? "" : "s"}
            </span>
          )}
        </h1>
        <ShareBar state={state} data={data} />
        {data && (
          <ShareButton
            teamId={data.runs[0]?.team_id}
            share={{
              kind: "comparison",
              target: {
                runs: state.runs,
                baseline: state.baseline,
                group_by: state.groupBy,
                fingerprint: state.fingerprint,
                force: state.force,
                job: state.job,
                charts: state.charts,
                table: state.table,
                series_metric: state.seriesMetric,
                env: state.env,
              },
            }}
            defaultTitle={`Compare ${state.runs.length} runs`}
            warning={
              data.comparability.verdict === "not_comparable"
                ? "These runs did not run the same workload: the shared page will show only the runs table, no metrics compared. Press Compare anyway first to share figures."
                : undefined
            }
          />
        )}
      </div>
      <div className="card controls" data-testid="compare-controls">
        <label className="inline">
          Group by{" "}
          <select
            value={state.groupBy}
            data-testid="group-by"
            onChange={(e) => update({ groupBy: e.target.value as CompareState["groupBy"] })}
          >
            {GROUP_BY.map((g) => (
              <option key={g} value={g}>
                {GROUP_LABEL[g]}
              </option>
            ))}
          </select>
        </label>
        <EnvironmentFilters
          value={state.env}
          onChange={(env) => update({ env })}
          leftOut={data?.filtered_out.length}
        />
        <label className="inline">
          Baseline{" "}
          <select
            data-testid="baseline-select"
            value={data?.columns[baseCol]?.run_ids[0] ?? state.baseline ?? ""}
            disabled={!data}
            onChange={(e) => update({ baseline: e.target.value })}
          >
            {data?.columns.map((c, i) => (
              <option key={c.key} value={c.run_ids[0]}>
                {labels[i]}
              </option>
            ))}
          </select>
        </label>
        <label className="inline">
          Like for like by{" "}
          <select
            value={state.fingerprint}
            data-testid="fingerprint"
            onChange={(e) => update({ fingerprint: e.target.value as CompareState["fingerprint"] })}
          >
            {FINGERPRINTS.map((f) => (
              <option key={f} value={f}>
                {f === "workload" ? "workload" : "workload + host"}
              </option>
            ))}
          </select>
        </label>
        {jobNames.length > 1 && (
          <label className="inline">
            Job{" "}
            <select
              value={job}
              data-testid="job-select"
              onChange={(e) => update({ job: e.target.value })}
            >
              {jobNames.map((n) => (
                <option key={n}>{n}</option>
              ))}
            </select>
          </label>
        )}
        <span className="chart-toggles">
          {CHARTS.map((c) => (
            <label className="inline" key={c}>
              <input
                type="checkbox"
                checked={show(c)}
                data-testid={`chart-toggle-${c}`}
                onChange={() =>
                  update({
                    charts: show(c) ? state.charts.filter((x) => x !== c) : [...state.charts, c],
                  })
                }
              />{" "}
              {CHART_LABEL[c]}
            </label>
          ))}
        </span>
      </div>
      <QueryState isPending={q.isPending} error={q.error} />
      <GoneRuns error={q.error} runs={state.runs} />
      {data && (
        <>
          <ComparabilityPanel
            data={data}
            runLabel={runLabel}
            onForce={(force) => update({ force })}
          />
          <CompareRunsTable
            data={data}
            testId="compare-runs"
            where={{ label: "Agent", cell: (r) => r.agent_name ?? "—" }}
            onRemove={
              state.runs.length > 2
                ? (id) =>
                    update({
                      runs: state.runs.filter((x) => x !== id),
                      baseline: state.baseline === id ? null : state.baseline,
                    })
                : undefined
            }
          />
          {data.suggestions.length > 0 && (
            <div className="alert alert-info" data-testid="suggestions">
              <strong>Suggestions</strong>
              <ul>
                {data.suggestions.map((s) => (
                  <li key={s}>{s}</li>
                ))}
              </ul>
            </div>
          )}
          {unmatchedJobs(data).length > 0 && (
            <div className="alert alert-warn" data-testid="compare-unmatched">
              Not every column ran these jobs: {unmatchedJobs(data).join(", ")}. Jobs are matched by
              name.
            </div>
          )}
          {data.jobs.length > 0 && (
            <>
              <div className="run-key-bar">
                <RunKey data={data} />
              </div>
              {show("bars") && (
                <>
                  <BarCharts data={data} />
                  <ChangeCharts data={data} job={data.jobs.length > 1 ? job : undefined} />
                </>
              )}
              {show("sweep") && <SweepCharts data={data} />}
              <div className="chart-grid">
                {show("latency") && job && !fileRuns && (
                  <LazyMount minHeight={360}>
                    <LatencyChart data={data} state={state} job={job} />
                  </LazyMount>
                )}
                {show("series") && job && !fileRuns && (
                  <div>
                    <LazyMount minHeight={360}>
                      <SeriesChart data={data} job={job} metric={state.seriesMetric} />
                    </LazyMount>
                    <label className="inline small">
                      <input
                        type="checkbox"
                        checked={state.seriesMetric === "iops"}
                        onChange={(e) =>
                          update({ seriesMetric: e.target.checked ? "iops" : "mbps" })
                        }
                      />{" "}
                      IOPS instead of MB/s
                    </label>
                  </div>
                )}
              </div>
              <div className="page-head">
                <h2>All metrics</h2>
                <label className="inline small">
                  Table{" "}
                  <select
                    value={state.table}
                    data-testid="table-layout"
                    onChange={(e) => update({ table: e.target.value as TableLayoutChoice })}
                  >
                    {TABLE_LAYOUTS.map((t) => (
                      <option key={t} value={t}>
                        {t === "auto"
                          ? `auto (${TABLE_LABEL[autoLayout(data.columns.length)]})`
                          : TABLE_LABEL[t]}
                      </option>
                    ))}
                  </select>
                </label>
              </div>
              <p className="muted small">
                Under each value, its change against the baseline ({labels[baseCol]}), green when
                better and red when worse by the metric's direction (hover for the ratio; the CSV
                keeps ratios); "within noise" marks changes whose 95 % confidence intervals overlap
                the baseline's (needs repeats).
              </p>
              {data.jobs.map((j, ji) => {
                const rows = layout === "runs" ? data.columns.length : j.metrics.length;
                const table = (
                  <MetricTable
                    data={data}
                    labels={labels}
                    metrics={j.metrics}
                    testId="compare-table"
                    layout={layout}
                  />
                );
                return (
                  <div className="card" key={j.name}>
                    <h3>{j.name}</h3>
                    {ji === 0 ? (
                      table
                    ) : (
                      <LazyMount minHeight={Math.min(rows * 44 + 40, 720)}>{table}</LazyMount>
                    )}
                  </div>
                );
              })}
            </>
          )}
          {data.comparability.verdict !== "not_comparable" && (
            <>
              <h2>Energy and carbon</h2>
              <EnergyCompare data={data} showCharts={show("energy")} layout={layout} />
            </>
          )}
          {data.columns.some((c) => columnValidity(data, c.run_ids).length > 0) && (
            <p className="muted small">⚠ marks columns with validity flags; hover for details.</p>
          )}
          <CommentThread
            kind="comparison"
            targetKey={comparisonKey(data.runs.map((r) => r.id))}
            teamIds={[...new Set(data.runs.map((r) => r.team_id))]}
          />
        </>
      )}
    </section>
  );
}
