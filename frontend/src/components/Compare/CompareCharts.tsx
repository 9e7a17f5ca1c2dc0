import { useQueries, useQuery } from "@tanstack/react-query";
import { memo, type ReactNode, useState } from "react";
import type { components } from "../../client/schema";
import type { CompareRead } from "../../client/types";
import { changeCharts, columnLabels, compareBarCharts } from "../../lib/compare";
import type { CompareState } from "../../lib/compareState";
import { errorMessage } from "../../lib/errors";
import { latencyChart, ninesLabel } from "../../lib/latency";
import { RATE_AXIS, type Rate, toThroughputSeries } from "../../lib/series";
import { detectSweeps, pow2Ticks, sweepAxis, sweepLines } from "../../lib/sweep";
import { latencyQuery } from "../../queries/compare";
import { runSeriesQuery } from "../../queries/runs";
import { ChangeBarChart, changeChartHeight } from "../charts/ChangeBarChart";
import { GroupedBarChart, PLOT_HEIGHT, usesLog } from "../charts/GroupedBarChart";
import { LazyMount } from "../charts/LazyMount";
import { MultiLineChart } from "../charts/MultiLineChart";
import { SeriesKey } from "../charts/SeriesKey";
import "../Table/table.css";

/**
 * The compared columns with their colours, once for all charts of the page: charts draw no
 * legend of their own, so their plots keep their height with 2 or 50 runs.
 */
export const RunKey = memo(function RunKey({ data }: { data: CompareRead }) {
  const labels = columnLabels(data);
  return (
    <SeriesKey
      title={data.group_by === "none" ? "Runs" : "Columns"}
      items={data.columns.map((c, i) => ({
        key: c.key,
        label: `${labels[i] ?? c.label}${c.is_baseline ? " (baseline)" : ""}`,
        color: i,
      }))}
    />
  );
});

type Scale = "auto" | "linear" | "log";

/** One headline metric's bars with its scale switch: by default log where the bars span over
 * 100× (a disk beside RAM) or for latency, else linear; error bars where columns have intervals. */
function BarChartCard({ c }: { c: ReturnType<typeof compareBarCharts>[number] }) {
  const [scale, setScale] = useState<Scale>("auto");
  const log = scale === "auto" ? c.log : scale === "log";
  const drawnLog = usesLog(c.rows, c.series, log);
  const autoLog = usesLog(c.rows, c.series, c.log);
  const errors = c.rows.some((r) => Object.keys(r).some((k) => k.endsWith("_err")));
  return (
    <div
      className="card chart"
      data-testid="compare-chart"
      data-kind={c.kind}
      data-scale={drawnLog ? "log" : "linear"}
    >
      <h3>{c.title}</h3>
      <div className="chart-controls">
        <label>
          Scale
          <select
            value={scale}
            onChange={(e) => setScale(e.target.value as Scale)}
            data-testid="chart-scale"
            aria-label={`${c.title} scale`}
          >
            <option value="auto">auto ({autoLog ? "log" : "linear"})</option>
            <option value="linear">linear</option>
            <option value="log">log</option>
          </select>
        </label>
        {errors && <span className="muted small">whiskers: 95 % confidence interval</span>}
      </div>
      <LazyMount minHeight={PLOT_HEIGHT + 86}>
        <GroupedBarChart
          rows={c.rows}
          categoryKey="category"
          series={c.series}
          valueLabel={c.title}
          unit={c.unit}
          log={log}
          legend={false}
        />
      </LazyMount>
    </div>
  );
}

/** Grouped bars per headline metric (IOPS, MB/s, p99), one bar per column. */
export const BarCharts = memo(function BarCharts({ data }: { data: CompareRead }) {
  const charts = compareBarCharts(data);
  if (charts.length === 0) return <p className="muted">No comparable figures.</p>;
  return (
    <div className="chart-grid">
      {charts.map((c) => (
        <BarChartCard key={c.kind} c={c} />
      ))}
    </div>
  );
});

/**
 * Change against the baseline, a chart per metric family (IOPS, throughput, p99 latency), each
 * bar coloured better/worse with the server's phrase: they change when the baseline does.
 */
export const ChangeCharts = memo(function ChangeCharts({
  data,
  job,
}: {
  data: CompareRead;
  job?: string;
}) {
  const charts = changeCharts(data, job);
  if (charts.length === 0) return null;
  return (
    <div className="change-grid">
      {charts.map((c) => (
        <div className="card chart" key={c.kind} data-testid="compare-chart" data-kind={c.kind}>
          <h3>{c.title}</h3>
          <LazyMount minHeight={changeChartHeight(c.rows.length)}>
            <ChangeBarChart rows={c.rows} />
          </LazyMount>
        </div>
      ))}
    </div>
  );
});

/** Block-size and thread sweeps of the workload as lines, x on a log2 axis. */
export const SweepCharts = memo(function SweepCharts({ data }: { data: CompareRead }) {
  const jobs = data.runs[0]?.workload.jobs ?? [];
  const sweeps = detectSweeps(jobs);
  if (sweeps.length === 0) return null;
  const labels = columnLabels(data);
  return (
    <div className="chart-grid" data-testid="sweep-charts">
      {sweeps.flatMap((s) => {
        const axis = sweepAxis(s.param);
        const ticks = pow2Ticks(s.points.map((p) => p.x));
        return (["mbps", "iops"] as const).map((kind) => (
          <div
            className="card chart"
            key={`${s.label}-${s.param}-${kind}`}
            data-testid="sweep-chart"
          >
            <h3>
              {RATE_AXIS[kind].label} vs {axis.label} <span className="muted small">{s.label}</span>
            </h3>
            <LazyMount minHeight={300}>
              <MultiLineChart
                series={sweepLines(s, data.jobs, labels, kind)}
                x={{ label: axis.label, unit: axis.unit, log: true, ticks, format: axis.format }}
                y={RATE_AXIS[kind]}
                legend={false}
              />
            </LazyMount>
          </div>
        ));
      })}
    </div>
  );
});

/** Latency percentile curves from the merged histograms of each column, log axes. */
type LatencyCurveSet = components["schemas"]["LatencyCurves"];

export function LatencyChart({
  data,
  state,
  job,
}: {
  data: CompareRead;
  state: CompareState;
  job: string;
}) {
  const q = useQuery(latencyQuery(state.runs, job, state.groupBy, state.env));
  if (q.error) return <p className="muted">Latency curves: {errorMessage(q.error)}</p>;
  if (!q.data) return <p className="muted">Loading latency curves…</p>;
  return (
    <LatencyCurves
      data={data}
      curves={q.data}
      testId="latency-chart"
      empty={<p className="muted">No latency histograms for {job}.</p>}
    />
  );
}

/** The latency-percentile curves of one job, a line per column: fetched by LatencyChart, or the
 * ones a share link's view carries. */
export function LatencyCurves({
  data,
  curves,
  testId,
  empty = null,
}: {
  data: CompareRead;
  curves: LatencyCurveSet;
  testId: string;
  /** shown when no column has a histogram */
  empty?: ReactNode;
}) {
  const labels = new Map(data.columns.map((c, i) => [c.key, columnLabels(data)[i] ?? c.label]));
  const chart = latencyChart(curves, labels);
  if (chart.series.length === 0) return empty;
  return (
    <div className="card chart" data-testid={testId}>
      <h3>
        Latency percentiles{" "}
        <span className="muted small">{curves.job} · completion latency, merged histograms</span>
      </h3>
      <MultiLineChart
        series={chart.series}
        x={{ label: "percentile", unit: "", ticks: chart.ticks, format: ninesLabel }}
        y={{ label: "Latency", unit: chart.unit, log: true }}
      />
    </div>
  );
}

const MAX_SERIES_RUNS = 12;

/** Per-second throughput or IOPS of one job, one line per run, coloured by its column. */
export const SeriesChart = memo(function SeriesChart({
  data,
  job,
  metric,
}: {
  data: CompareRead;
  job: string;
  metric: Rate;
}) {
  const [all, setAll] = useState(false);
  const runs = all ? data.runs : data.runs.slice(0, MAX_SERIES_RUNS);
  const results = useQueries({
    queries: runs.map((r) => runSeriesQuery(r.id, r.status)),
  });
  const colOf = new Map<string, number>();
  data.columns.forEach((c, i) => {
    for (const id of c.run_ids) colOf.set(id, i);
  });
  const labels = columnLabels(data);
  const series = runs.flatMap((r, i) => {
    const s = results[i]?.data?.jobs.find((j) => j.name === job);
    if (!s || s.points.length === 0) return [];
    const col = colOf.get(r.id) ?? i;
    const label =
      data.group_by === "none"
        ? (labels[col] ?? r.name)
        : `${labels[col]} · ${r.name || r.id.slice(0, 8)}`;
    return [
      {
        key: r.id,
        label,
        color: col,
        points: toThroughputSeries(s.points).map((p) => ({
          x: p.t_s,
          y: metric === "mbps" ? p.mbps : p.iops,
        })),
      },
    ];
  });
  if (results.some((r) => r.isPending)) return <p className="muted">Loading per-second series…</p>;
  if (series.length === 0) return <p className="muted">No per-second samples for {job}.</p>;
  return (
    <div className="card chart" data-testid="series-chart">
      <h3>
        Per second <span className="muted small">{job}</span>
      </h3>
      {data.runs.length > MAX_SERIES_RUNS && (
        <p className="chart-controls" data-testid="series-shown">
          <span>
            showing {runs.length} of {data.runs.length} runs
          </span>
          <button
            type="button"
            className="btn btn-small"
            onClick={() => setAll(!all)}
            data-testid="series-show-all"
          >
            {all ? `Show the first ${MAX_SERIES_RUNS}` : `Show all ${data.runs.length}`}
          </button>
        </p>
      )}
      <MultiLineChart
        series={series}
        x={{ label: "time", unit: "s" }}
        y={RATE_AXIS[metric]}
        legend={data.group_by !== "none"}
      />
    </div>
  );
});
