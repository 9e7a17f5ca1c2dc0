// Shaping of GET /compare answers for tables and charts. The server returns columns (a run,
// or a group of repeats), one value per column per metric, ratios to the baseline column and
// repeat statistics; this module turns them into unit-normalised chart rows and table cells.
import type { CompareMetric, CompareRead, RunRead } from "../client/types";
import { energyScale, latencyScale, toMBps } from "./format";
import { workloadKey } from "./workload";

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

/**
 * Column labels for headers and legends: with group_by=none a column is a run, labelled like
 * a run; otherwise the server's group label, with the number of repeats when more than one.
 */
export function columnLabels(cmp: Pick<CompareRead, "columns" | "runs" | "group_by">): string[] {
  if (cmp.group_by === "none") {
    const byId = new Map(cmp.runs.map((r) => [r.id, r]));
    const runs = cmp.columns.map(
      (c) => byId.get(c.run_ids[0] ?? "") ?? { id: c.key, name: c.label },
    );
    return runLabels(runs);
  }
  const base = cmp.columns.map((c) => (c.label.trim() ? c.label : c.key.slice(0, 12)));
  return base.map((l, i) =>
    base.indexOf(l) !== base.lastIndexOf(l) ? `${l} (${cmp.columns[i]?.key.slice(0, 8)})` : l,
  );
}

/** The headline charts and which metrics they show, by the server's `kind` and `percentile`. */
const HEADLINES = [
  { kind: "iops", title: "IOPS", shows: (m: CompareMetric) => m.kind === "iops" },
  { kind: "throughput", title: "Throughput", shows: (m: CompareMetric) => m.kind === "bandwidth" },
  {
    kind: "p99",
    title: "p99 latency",
    shows: (m: CompareMetric) => m.kind === "latency" && m.percentile === 99,
  },
] as const;

/** A metric's name within its job's chart rows: its I/O direction, or its label. */
function side(m: Pick<CompareMetric, "direction" | "label">): string {
  return m.direction ?? m.label;
}

/** Jobs that some of the compared columns did not run (their cells are empty). */
export function unmatchedJobs(cmp: Pick<CompareRead, "jobs" | "columns">): string[] {
  return cmp.jobs
    .filter((j) => cmp.columns.some((_, i) => j.metrics.every((m) => m.values[i] == null)))
    .map((j) => j.name);
}

interface BarChartData {
  kind: string;
  title: string;
  unit: string;
  /** One row per job × metric; one numeric field per column, keyed "c0", "c1", … */
  rows: Record<string, string | number | null>[];
  series: { key: string; label: string }[];
  log: boolean | "auto";
}

function seriesOf(cmp: Pick<CompareRead, "columns" | "runs" | "group_by">) {
  return columnLabels(cmp).map((label, i) => ({ key: `c${i}`, label }));
}

function rowOf(category: string, values: (number | null)[], scale: (v: number) => number) {
  const row: Record<string, string | number | null> = { category };
  values.forEach((v, i) => {
    row[`c${i}`] = v === null ? null : scale(v);
  });
  return row;
}

function maxOf(values: (number | null)[][]): number {
  const all = values.flat().filter((v): v is number => v !== null);
  return all.length ? Math.max(...all.map(Math.abs)) : 0;
}

/** Grouped bar-chart data per headline metric kind, values converted to display units. */
export function compareBarCharts(cmp: CompareRead): BarChartData[] {
  const series = seriesOf(cmp);
  const out: BarChartData[] = [];
  for (const { kind, title, shows } of HEADLINES) {
    const picked: { category: string; values: (number | null)[] }[] = [];
    for (const job of cmp.jobs) {
      const metrics = job.metrics.filter((m) => shows(m) && m.values.some((v) => v !== null));
      for (const m of metrics) {
        picked.push({
          category: metrics.length > 1 ? `${job.name} ${side(m)}` : job.name,
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
      const s = latencyScale(maxOf(picked.map((p) => p.values)));
      unit = s.unit;
      scale = (v) => v / s.divisor;
    }
    out.push({
      kind,
      title,
      unit,
      rows: picked.map((p) => rowOf(p.category, p.values, scale)),
      series,
      log: kind === "p99" ? true : "auto",
    });
  }
  return out;
}

/**
 * The headline metrics as ratios to the baseline column, one bar per other column: this chart
 * changes when the baseline does. Whether above 1 is better is each metric's `better`.
 */
export function ratioBarChart(cmp: CompareRead): BarChartData | null {
  const labels = columnLabels(cmp);
  const base = cmp.columns.findIndex((c) => c.is_baseline);
  const others = cmp.columns.map((_, i) => i).filter((i) => i !== base);
  if (others.length === 0) return null;
  const rows: Record<string, string | number | null>[] = [];
  for (const job of cmp.jobs) {
    for (const m of job.metrics) {
      const headline = HEADLINES.find((h) => h.shows(m));
      if (!headline || m.ratios.every((r) => r === null)) continue;
      const row: Record<string, string | number | null> = {
        category: `${job.name} ${side(m)} ${headline.title}`,
      };
      for (const i of others) row[`c${i}`] = m.ratios[i] ?? null;
      rows.push(row);
    }
  }
  if (rows.length === 0) return null;
  return {
    kind: "ratio",
    title: `Ratio to ${labels[base] ?? "the baseline"}`,
    unit: "×",
    rows,
    series: others.map((i) => ({ key: `c${i}`, label: labels[i] ?? "" })),
    log: "auto",
  };
}

/** The energy bars: energy per run, J/GB, IOPS/W and operational CO2, in display units. */
export function energyBarCharts(cmp: CompareRead): BarChartData[] {
  const series = seriesOf(cmp);
  const byKey = new Map(cmp.energy.map((m) => [m.key, m]));
  const out: BarChartData[] = [];
  const add = (key: string, title: string, unitFor: (max: number) => [string, number]) => {
    const m = byKey.get(key);
    if (!m || m.values.every((v) => v === null)) return;
    const [unit, divisor] = unitFor(maxOf([m.values]));
    out.push({
      kind: key,
      title,
      unit,
      rows: [rowOf(m.label, m.values, (v) => v / divisor)],
      series,
      log: "auto",
    });
  };
  add("total_j", "Energy per run", (max) => {
    const s = energyScale(max);
    return [s.unit, s.divisor];
  });
  add("j_per_gb", "Energy per GB", () => ["J/GB", 1]);
  add("iops_per_w", "IOPS per watt", () => ["IOPS/W", 1]);
  add("operational_gco2e", "CO2 per run", (max) => (max >= 1e3 ? ["kgCO2e", 1e3] : ["gCO2e", 1]));
  add("gco2e_per_tb", "CO2 per TB read and written", (max) =>
    max >= 1e3 ? ["kgCO2e/TB", 1e3] : ["gCO2e/TB", 1],
  );
  return out;
}

/** The runs of a column, in the column's order. */
export function columnRuns(cmp: Pick<CompareRead, "runs">, runIds: string[]): RunRead[] {
  const byId = new Map(cmp.runs.map((r) => [r.id, r]));
  return runIds.map((id) => byId.get(id)).filter((r): r is RunRead => r !== undefined);
}

/** Distinct meter tiers of a column's runs (a column may mix meters; each is shown). */
export function columnTiers(cmp: Pick<CompareRead, "runs">, runIds: string[]): RunRead["energy"][] {
  const seen = new Map<string, RunRead["energy"]>();
  for (const r of columnRuns(cmp, runIds)) {
    if (r.energy.tier && !seen.has(r.energy.tier)) seen.set(r.energy.tier, r.energy);
  }
  return [...seen.values()];
}

/** Validity flags of a column's runs, one entry per flag with the runs' messages. */
export function columnValidity(
  cmp: Pick<CompareRead, "validity">,
  runIds: string[],
): { flag: string; messages: string[] }[] {
  const out = new Map<string, Set<string>>();
  for (const id of runIds) {
    for (const f of cmp.validity[id] ?? []) {
      const set = out.get(f.flag) ?? new Set<string>();
      set.add(f.message);
      out.set(f.flag, set);
    }
  }
  return [...out.entries()].map(([flag, m]) => ({ flag, messages: [...m] }));
}

/**
 * For the dashboard: from runs newest first, the newest group of at least two runs of the
 * same workload (lib/workload.ts workloadKey: the server's fingerprint rule; at most `max`),
 * returned oldest first so the oldest is the baseline.
 */
export function pickLikeRuns<T extends Pick<RunRead, "id" | "workload">>(runs: T[], max = 6): T[] {
  const groups = new Map<string, T[]>();
  for (const r of runs) {
    const k = workloadKey(r.workload);
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

/** A short tag of workloadKey (FNV-1a, 32 bit) for DOM attributes and quick equality. */
export function workloadTag(run: Pick<RunRead, "workload">): string {
  let h = 0x811c9dc5;
  for (const ch of workloadKey(run.workload)) {
    h ^= ch.charCodeAt(0);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16).padStart(8, "0");
}
