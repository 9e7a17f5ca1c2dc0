// A series' history (GET /series/{id}/history) shaped for the history chart: pure, tested.
import type { DetectionRead, HistoryPoint, HostChange, MetricName } from "../client/types";
import { formatIops, formatNs, formatThroughput, sig3 } from "./format";

export const METRICS: { key: MetricName; label: string }[] = [
  { key: "read_iops", label: "Read IOPS" },
  { key: "write_iops", label: "Write IOPS" },
  { key: "read_bw_bytes", label: "Read throughput" },
  { key: "write_bw_bytes", label: "Write throughput" },
  { key: "read_lat_mean_ns", label: "Read mean latency" },
  { key: "write_lat_mean_ns", label: "Write mean latency" },
  { key: "read_clat_p99_ns", label: "Read p99 latency" },
  { key: "write_clat_p99_ns", label: "Write p99 latency" },
];

/** A metric's value as people read it (IOPS, MB/s, µs...). */
export function formatMetric(metric: MetricName, v: number | null | undefined): string {
  if (v == null) return "–";
  if (metric.endsWith("_iops")) return formatIops(v);
  if (metric.endsWith("_bw_bytes")) return formatThroughput(v);
  if (metric.endsWith("_ns")) return formatNs(v);
  return sig3(v);
}

export interface HistoryRow {
  /** position in the history (the x axis: evenly spaced runs, zoomable with the brush) */
  i: number;
  at: string;
  run_id: string;
  runs: number;
  /** the value of a valid run (null where the run is left out) */
  y: number | null;
  /** the value of a run left out by its validity flags (drawn apart, never joined to the line) */
  left_out: number | null;
  /** downsampled: the bucket's low and high (the band) */
  band: [number, number] | null;
  flags: string[];
  segment: string;
}

export function historyRows(points: HistoryPoint[]): HistoryRow[] {
  return points.map((p, i) => ({
    i,
    at: p.at,
    run_id: p.run_id,
    runs: p.runs,
    y: p.excluded.length ? null : p.value,
    left_out: p.excluded.length ? p.value : null,
    band: p.low != null && p.high != null ? [p.low, p.high] : null,
    flags: p.excluded.map((e) => e.flag),
    segment: p.segment,
  }));
}

/** A round number at or above `v` (1, 2, 2.5 or 5 × a power of ten): an axis top with round ticks. */
export function niceCeil(v: number): number {
  if (!(v > 0)) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  const m = [1, 2, 2.5, 5, 10].find((k) => k * p >= v * (1 - 1e-9)) ?? 10;
  return m * p;
}

/** The value axis' top on a linear scale: the valid runs' (their line and band) with room above,
 * so a run left out far above them (a cache-resident run reads 2.5 times faster) does not flatten
 * what the series measures; such a run sits on the top edge (`offScale`). Null: no valid run. */
export function valueTop(rows: HistoryRow[]): number | null {
  let max = 0;
  for (const r of rows) max = Math.max(max, r.y ?? 0, r.band?.[1] ?? 0);
  return max > 0 ? niceCeil(max * 1.15) : null;
}

/** The rows with each left-out value above `top` drawn on the top edge (`left_out_shown`, `off`);
 * the tooltip keeps the run's own value. */
export function clampLeftOut(
  rows: HistoryRow[],
  top: number | null,
): (HistoryRow & { left_out_shown: number | null; off: boolean })[] {
  return rows.map((r) => {
    const off = top != null && r.left_out != null && r.left_out > top;
    return { ...r, left_out_shown: off ? top : r.left_out, off };
  });
}

/** The last valid run before row `i` on the same host facts: what to compare the run with. */
export function previousGood(rows: HistoryRow[], i: number): HistoryRow | null {
  const here = rows[i];
  for (let j = i - 1; j >= 0 && here; j--) {
    const r = rows[j];
    if (r && r.y != null && r.segment === here.segment) return r;
  }
  return null;
}

export interface Annotation {
  i: number;
  kind: "host" | "change";
  label: string;
}

/** Host-fact changes and stored changes placed at the row of their run (or of the bucket that
 * holds it, when downsampled). */
/** The row of a run: its own, or (downsampled) the row of the bucket that holds its time. */
export function rowAt(rows: HistoryRow[], runId: string | null, iso: string): number {
  const exact = rows.findIndex((r) => r.run_id === runId);
  if (exact >= 0) return exact;
  const t = Date.parse(iso);
  let k = 0;
  while (k + 1 < rows.length && Date.parse(rows[k + 1]?.at ?? "") <= t) k++;
  return k;
}

/** The row a link names (`?run=`, as an alert's link does): the run's own row, or the row holding
 * a change found at that run when the history is downsampled; null when neither is there. */
export function linkedRow(
  rows: HistoryRow[],
  runId: string | null,
  detections: DetectionRead[],
): HistoryRow | null {
  if (!runId) return null;
  const own = rows.find((r) => r.run_id === runId);
  if (own) return own;
  const d = detections.find((x) => x.run_id === runId);
  return d ? (rows[rowAt(rows, runId, d.at)] ?? null) : null;
}

export function annotations(
  rows: HistoryRow[],
  hostChanges: HostChange[],
  detections: DetectionRead[],
): Annotation[] {
  const at = (runId: string | null, iso: string): number => rowAt(rows, runId, iso);
  const out: Annotation[] = hostChanges.map((h) => ({
    i: at(h.run_id, h.at),
    kind: "host",
    label: Object.entries(h.changes)
      .map(([k, [a, b]]) => `${k} ${a ?? "?"} → ${b ?? "?"}`)
      .join(", "),
  }));
  for (const d of detections) {
    if (d.status === "dismissed") continue;
    out.push({
      i: at(d.run_id, d.at),
      kind: "change",
      label: `${d.change_pct > 0 ? "+" : ""}${sig3(d.change_pct)} % ${d.direction}`,
    });
  }
  return out.sort((a, b) => a.i - b.i);
}
