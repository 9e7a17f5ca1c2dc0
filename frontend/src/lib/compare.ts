// Shaping of GET /compare answers for tables and charts: ratio columns against the first
// run and unit-normalised bar-chart rows for the headline metrics.
import type { CompareMetric, CompareRead, RunRead } from "../client/types";
import { latencyScale, toMBps } from "./format";

/** Each value divided by the first run's value; null where either side is missing or zero. */
export function ratiosToFirst(values: (number | null)[]): (number | null)[] {
  const base = values[0];
  return values.map((v) =>
    v === null || v === undefined || base === null || base === undefined || base === 0
      ? null
      : v / base,
  );
}

/** A short, stable label for a run in column headers and legends. */
export function runLabel(run: Pick<RunRead, "id" | "name">): string {
  return run.name?.trim() ? run.name : `#${run.id.slice(0, 8)}`;
}

/** Labels made unique by suffixing duplicates with their short id. */
export function runLabels(runs: Pick<RunRead, "id" | "name">[]): string[] {
  const base = runs.map(runLabel);
  return base.map((l, i) =>
    base.indexOf(l) !== base.lastIndexOf(l) ? `${l} (#${runs[i]?.id.slice(0, 8)})` : l,
  );
}

export type MetricKind = "iops" | "throughput" | "p99";

/** Which headline figure a compare metric is, from its key and unit (null for the rest). */
export function metricKind(m: Pick<CompareMetric, "key" | "unit">): MetricKind | null {
  const key = m.key.toLowerCase();
  const unit = m.unit.toLowerCase();
  if (key.includes("iops") || unit === "iops") return "iops";
  if (key.includes("bw") || unit === "bytes/s" || unit === "b/s") return "throughput";
  if (/p99(?![._]?9)/.test(key) && !key.includes("p999")) return "p99";
  return null;
}

/** "read" / "write" from a metric key such as read_iops; the key itself otherwise. */
function direction(key: string): string {
  const d = key.split("_")[0] ?? key;
  return d === "read" || d === "write" ? d : key;
}

/** Jobs that some of the compared runs did not run (their cells are empty). */
export function unmatchedJobs(cmp: CompareRead): string[] {
  return cmp.jobs
    .filter((j) => cmp.runs.some((_, i) => j.metrics.every((m) => m.values[i] == null)))
    .map((j) => j.name);
}

export interface BarChartData {
  kind: MetricKind;
  title: string;
  unit: string;
  /** One row per job × metric; one numeric field per run, keyed "r0", "r1", … */
  rows: Record<string, string | number | null>[];
  series: { key: string; label: string }[];
}

const TITLES: Record<MetricKind, string> = {
  iops: "IOPS",
  throughput: "Throughput",
  p99: "p99 latency",
};

/** Grouped bar-chart data per headline metric kind, values converted to display units. */
export function compareBarCharts(cmp: CompareRead): BarChartData[] {
  const labels = runLabels(cmp.runs);
  const series = labels.map((label, i) => ({ key: `r${i}`, label }));
  const kinds: MetricKind[] = ["iops", "throughput", "p99"];
  const out: BarChartData[] = [];
  for (const kind of kinds) {
    const picked: { category: string; values: (number | null)[] }[] = [];
    for (const job of cmp.jobs) {
      const metrics = job.metrics.filter(
        (m) => metricKind(m) === kind && m.values.some((v) => v !== null),
      );
      for (const m of metrics) {
        picked.push({
          category: metrics.length > 1 ? `${job.name} ${direction(m.key)}` : job.name,
          values: m.values,
        });
      }
    }
    if (picked.length === 0) continue;
    let unit = "IOPS";
    let scale = (v: number) => v;
    if (kind === "throughput") {
      unit = "MB/s";
      scale = toMBps;
    } else if (kind === "p99") {
      const max = Math.max(
        ...picked.flatMap((p) => p.values.filter((v): v is number => v !== null)),
      );
      const s = latencyScale(max);
      unit = s.unit;
      scale = (v) => v / s.divisor;
    }
    const rows = picked.map((p) => {
      const row: Record<string, string | number | null> = { category: p.category };
      p.values.forEach((v, i) => {
        row[`r${i}`] = v === null ? null : scale(v);
      });
      return row;
    });
    out.push({ kind, title: TITLES[kind], unit, rows, series });
  }
  return out;
}

/** The job names of a run's workload, as a key: runs with the same key are like for like. */
export function workloadKey(run: Pick<RunRead, "workload">): string {
  return run.workload.jobs.map((j) => j.name).join("\u0000");
}

/**
 * For the dashboard: from runs newest first, the newest group of at least two runs of the
 * same workload (at most `max`), returned oldest first so the oldest is the baseline.
 */
export function pickLikeRuns<T extends Pick<RunRead, "id" | "workload">>(runs: T[], max = 6): T[] {
  const groups = new Map<string, T[]>();
  for (const r of runs) {
    const k = workloadKey(r);
    const g = groups.get(k) ?? [];
    g.push(r);
    groups.set(k, g);
  }
  // Map keeps first-insertion order, i.e. groups ordered by their newest run.
  for (const g of groups.values()) {
    if (g.length >= 2) return g.slice(0, max).reverse();
  }
  return [];
}
