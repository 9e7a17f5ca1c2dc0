// Per-second series from GET /runs/{id}/series, shaped for the throughput/IOPS chart.
import type { SeriesPoint } from "../client/types";
import { toMBps } from "./format";

export interface ThroughputPoint {
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
