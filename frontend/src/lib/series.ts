// Per-second series from GET /runs/{id}/series, shaped for the throughput/IOPS chart.
import type { SeriesPoint } from "../client/types";
import { toMBps } from "./format";

/** The two per-second rates the UI charts, with their axis names and display units. */
export type Rate = "mbps" | "iops";
export const RATE_AXIS: Record<Rate, { label: string; unit: string }> = {
  mbps: { label: "Throughput", unit: "MB/s" },
  iops: { label: "IOPS", unit: "IOPS" },
};

interface ThroughputPoint {
  t_s: number;
  mbps: number;
  iops: number;
}

/** Read + write per second, throughput in decimal MB/s. */
export function toThroughputSeries(points: SeriesPoint[]): ThroughputPoint[] {
  return points.map((p) => ({
    t_s: p.t_s,
    mbps: toMBps((p.read_bw_bytes ?? 0) + (p.write_bw_bytes ?? 0)),
    iops: (p.read_iops ?? 0) + (p.write_iops ?? 0),
  }));
}

/**
 * The whole run's throughput on one time axis: jobs run one after another, so each job's
 * points (seconds since its own start) are shifted by the length of the jobs before it.
 * Approximate by the setup time between jobs, which the series does not record.
 */
export function runThroughputTimeline(
  jobs: { job_index: number; points: SeriesPoint[] }[],
): { t_s: number; mbps: number }[] {
  let offset = 0;
  const out: { t_s: number; mbps: number }[] = [];
  for (const job of [...jobs].sort((a, b) => a.job_index - b.job_index)) {
    for (const p of toThroughputSeries(job.points)) out.push({ t_s: p.t_s + offset, mbps: p.mbps });
    offset += job.points.at(-1)?.t_s ?? 0;
  }
  return out;
}
