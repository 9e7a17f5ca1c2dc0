// Shaping of GET /compare answers for tables and charts. The server returns columns (a run,
// or a group of repeats), one value per column per metric, ratios to the baseline column and
// repeat statistics; this module turns them into unit-normalised chart rows and table cells.
import type { components } from "../client/schema";
import type { CompareMetric, CompareRead, RunRead } from "../client/types";
import { energyScale, latencyScale, MISSING, sig3, toMBps } from "./format";
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
  /** One row per job × metric; one numeric field per column, keyed "c0", "c1", …, and where the
   * column's 95 % confidence interval is known (repeats grouped in a column) "c0_err": the
   * distances [below, above] the value, for error bars, and "c0_n" the count of repeats */
  rows: BarRow[];
  series: { key: string; label: string }[];
  log: boolean | "auto";
}

function seriesOf(cmp: Pick<CompareRead, "columns" | "runs" | "group_by">) {
  return columnLabels(cmp).map((label, i) => ({ key: `c${i}`, label }));
}

export type BarRow = Record<string, string | number | null | [number, number]>;

type Stats = CompareMetric["stats"][number];

function rowOf(
  category: string,
  values: (number | null)[],
  scale: (v: number) => number,
  stats?: Stats[],
): BarRow {
  const row: BarRow = { category };
  values.forEach((v, i) => {
    row[`c${i}`] = v === null ? null : scale(v);
    const st = stats?.[i];
    if (v !== null && st && st.ci95_low != null && st.ci95_high != null && st.n >= 2) {
      const shown = scale(v);
      row[`c${i}_err`] = [
        Math.max(0, shown - scale(st.ci95_low)),
        Math.max(0, scale(st.ci95_high) - shown),
      ];
      row[`c${i}_n`] = st.n;
    }
  });
  return row;
}

function maxOf(values: (number | null)[][]): number {
  const all = values.flat().filter((v): v is number => v !== null);
  return all.length ? Math.max(...all.map(Math.abs)) : 0;
}

/**
 * A latency whose unit (latencyScale) a table or chart shows all its latencies in: the largest
 * value's unit, one unit smaller while the smallest would read under 0.01 there and the largest
 * stays under 1,000,000 (one slow run among 30 once turned the others into "0.001 ms";
 * now 1 µs beside 5 ms reads "1" and "5,000" µs).
 */
export function latencyUnitNs(values: (number | null | undefined)[][]): number {
  const all = values
    .flat()
    .filter((v): v is number => typeof v === "number" && Number.isFinite(v) && v !== 0)
    .map(Math.abs);
  if (all.length === 0) return 0;
  const lo = Math.min(...all);
  const hi = Math.max(...all);
  let d = latencyScale(hi).divisor;
  while (d > 1 && lo / d < 0.01 && hi / (d / 1e3) < 1e6) d /= 1e3;
  return d;
}

/** Grouped bar-chart data per headline metric kind, values converted to display units. */
export function compareBarCharts(cmp: CompareRead): BarChartData[] {
  const series = seriesOf(cmp);
  const out: BarChartData[] = [];
  for (const { kind, title, shows } of HEADLINES) {
    const picked: {
      category: string;
      values: (number | null)[];
      unit: string;
      stats: Stats[];
    }[] = [];
    for (const job of cmp.jobs) {
      const metrics = job.metrics.filter((m) => shows(m) && m.values.some((v) => v !== null));
      for (const m of metrics) {
        picked.push({
          category: metrics.length > 1 ? `${job.name} ${side(m)}` : job.name,
          values: m.values,
          unit: m.unit,
          stats: m.stats,
        });
      }
    }
    if (picked.length === 0) continue;
    // file workloads (PostMark, vdbench): their rates are operations per second, not I/Os
    const fileOps = kind === "iops" && picked.every((p) => p.unit === "op/s");
    let unit = fileOps ? "op/s" : "IOPS";
    let scale = (v: number) => v;
    if (kind === "throughput") {
      unit = "MB/s";
      scale = toMBps;
    } else if (kind === "p99") {
      const s = latencyScale(latencyUnitNs(picked.map((p) => p.values)));
      unit = s.unit;
      scale = (v) => v / s.divisor;
    }
    out.push({
      kind,
      title: fileOps ? "Operation rate" : title,
      unit,
      rows: picked.map((p) => rowOf(p.category, p.values, scale, p.stats)),
      series,
      // Latency on a labelled log axis, as latency spans decades. Rates on a linear axis (a log
      // axis draws 81× barely longer than 1.5×) unless they span over 100× (a disk beside RAM:
      // its bars were slivers); the chart's switch changes either.
      log: kind === "p99" ? true : "auto",
    });
  }
  return out;
}

/**
 * A column's change against the baseline (docs/contracts.md §5 `Change`): the server builds the
 * phrase ("133× lower latency") and the verdict from the metric's `kind` and `better`; the UI
 * shows them and never re-derives them.
 */
export type Change = components["schemas"]["Change"];

/** The change of column `i` against the baseline; null for the baseline and missing values. */
export function changeAt(m: Pick<CompareMetric, "changes">, i: number): Change | null {
  return m.changes[i] ?? null;
}

/**
 * How much better (positive) or worse (negative) a change is, on a linear scale that starts at
 * "same": factor − 1, so 133× lower latency is 132 and 1.5× faster 0.5 (a log axis would draw
 * 81× barely longer than 1.5×).
 */
export function changeScore(c: Change): number {
  if (c.verdict === "same") return 0;
  const f = c.factor ?? Math.max(c.ratio, c.ratio > 0 ? 1 / c.ratio : 1);
  return (c.verdict === "better" ? 1 : -1) * (f - 1);
}

export interface ChangeChartData {
  kind: string;
  title: string;
  rows: { label: string; score: number; phrase: string; verdict: Change["verdict"] }[];
}

/**
 * One change chart per headline metric family (IOPS, throughput, p99 latency): a bar per other
 * column (and job/direction), its length the change against the baseline (changeScore), its
 * label the server's phrase. Rates and latencies never share an axis. `job` keeps one job's
 * bars (the page's job selector), so 30 runs make 29 bars, not 29 per job.
 */
export function changeCharts(cmp: CompareRead, job?: string): ChangeChartData[] {
  const labels = columnLabels(cmp);
  const base = cmp.columns.findIndex((c) => c.is_baseline);
  const others = cmp.columns.map((_, i) => i).filter((i) => i !== base);
  if (others.length === 0) return [];
  const out: ChangeChartData[] = [];
  for (const h of HEADLINES) {
    const jobs = job ? cmp.jobs.filter((j) => j.name === job) : cmp.jobs;
    const picked = jobs.flatMap((j) => {
      const ms = j.metrics.filter((m) => h.shows(m));
      return ms.map((m) => ({
        m,
        what: ms.length > 1 || jobs.length > 1 ? `${j.name} ${side(m)}` : "",
      }));
    });
    const rows = picked.flatMap(({ m, what }) =>
      others.flatMap((i) => {
        const c = changeAt(m, i);
        if (!c) return [];
        const label = what ? `${labels[i] ?? ""} · ${what}` : (labels[i] ?? "");
        return [{ label, score: changeScore(c), phrase: c.phrase, verdict: c.verdict }];
      }),
    );
    if (rows.length === 0) continue;
    // file workloads' rates are operations per second (as compareBarCharts titles them)
    const fileOps = h.kind === "iops" && picked.every(({ m }) => m.unit === "op/s");
    out.push({
      kind: `change-${h.kind}`,
      title: `${fileOps ? "Operation rate" : h.title}: change vs ${labels[base] ?? "the baseline"}${job ? ` · ${job}` : ""}`,
      rows,
    });
  }
  return out;
}

/**
 * How a metric's values are shown in a table: one display unit for the whole row, chosen from
 * its largest value (MB/s for bytes per second, ns/µs/ms/s for latency), so the unit column
 * always names the unit of the figures beside it.
 */
export function metricDisplay(
  m: Pick<CompareMetric, "kind" | "unit" | "values">,
  /** the latency the unit is chosen by (latencyUnitNs of the table's latencies) */
  blockNs?: number,
): {
  unit: string;
  format: (v: number | null | undefined) => string;
} {
  const u = m.unit.toLowerCase();
  const num = (v: number) =>
    Math.abs(v) >= 1000 ? Math.round(v).toLocaleString("en-US") : sig3(v);
  const wrap = (f: (v: number) => string) => (v: number | null | undefined) =>
    v === null || v === undefined || !Number.isFinite(v) ? MISSING : f(v);
  if (u === "b/s" || u === "bytes/s" || m.kind === "bandwidth") {
    return { unit: "MB/s", format: wrap((v) => num(toMBps(v))) };
  }
  if (u === "ns") {
    const s = latencyScale(blockNs ?? latencyUnitNs([m.values]));
    return { unit: s.unit, format: wrap((v) => num(v / s.divisor)) };
  }
  if (u === "s" && maxOf([m.values]) < 1) {
    // a scaled PostMark's elapsed time (17 ms): milliseconds, not "0.0171 s"
    return { unit: "ms", format: wrap((v) => sig3(v * 1e3)) };
  }
  if (u === "ns/op") {
    // CPU time per operation (file workloads): ns, µs or ms per operation
    const s = latencyScale(latencyUnitNs([m.values]));
    return { unit: `${s.unit}/op`, format: wrap((v) => num(v / s.divisor)) };
  }
  if (u === "j") {
    const s = energyScale(maxOf([m.values]));
    return { unit: s.unit, format: wrap((v) => sig3(v / s.divisor)) };
  }
  if (u === "io/s" || u === "iops") return { unit: "IOPS", format: wrap(num) };
  return { unit: m.unit, format: wrap(num) };
}

/**
 * The displays of one table's metrics: as `metricDisplay`, but the latencies of one operation (a
 * direction, or a file workload's operation: its table) share one unit (latencyUnitNs: the
 * largest's, one smaller where the smallest would read under 0.01), so a column of mean, p50, p99
 * and p99.9 reads "1,200, 5.86, 313, 497,000 µs", not ms, µs, µs, ms, and never "0.00586 ms".
 */
export function metricDisplays<
  M extends Pick<CompareMetric, "kind" | "unit" | "values" | "direction">,
>(metrics: M[]): { m: M; d: ReturnType<typeof metricDisplay> }[] {
  const ns = new Map<string, (number | null)[][]>();
  for (const m of metrics) {
    if (m.unit.toLowerCase() !== "ns") continue;
    const k = m.direction ?? "";
    ns.set(k, [...(ns.get(k) ?? []), m.values]);
  }
  const typical = new Map([...ns].map(([k, v]) => [k, latencyUnitNs(v)]));
  return metrics.map((m) => ({ m, d: metricDisplay(m, typical.get(m.direction ?? "")) }));
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
      // grouped repeats' energy has intervals too: whiskers as on the metric bars
      rows: [rowOf(m.label, m.values, (v) => v / divisor, m.stats)],
      series,
      log: "auto",
    });
  };
  add("total_j", "Energy per run", (max) => {
    const s = energyScale(max);
    return [s.unit, s.divisor];
  });
  add("j_per_gb", "Energy per GB", () => ["J/GB", 1]);
  // file runs: the server labels the figure as operations (read/write calls), not IOPS
  const opsPerW = byKey.get("iops_per_w")?.unit === "op/J";
  add("iops_per_w", opsPerW ? "Read/write operations per watt" : "IOPS per watt", () => [
    opsPerW ? "op/s/W" : "IOPS/W",
    1,
  ]);
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
