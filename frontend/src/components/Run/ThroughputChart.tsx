import type { SeriesPoint } from "../../client/types";
import { RATE_AXIS, toThroughputSeries } from "../../lib/series";
import { DualAxisLineChart } from "../charts/DualAxisLineChart";
import { colorAt } from "../charts/palette";

/** Per-second throughput (MB/s, left) and IOPS (right) of one job. */
export function ThroughputChart({ points, width }: { points: SeriesPoint[]; width?: number }) {
  const data = toThroughputSeries(points).map((p) => ({ ...p }));
  if (data.length === 0) return <p className="muted">No per-second samples.</p>;
  return (
    <DualAxisLineChart
      data={data}
      width={width}
      x={{ key: "t_s", label: "time", unit: "s" }}
      left={{
        key: "mbps",
        name: RATE_AXIS.mbps.label,
        unit: RATE_AXIS.mbps.unit,
        color: colorAt(0),
      }}
      right={{
        key: "iops",
        name: RATE_AXIS.iops.label,
        unit: RATE_AXIS.iops.unit,
        color: colorAt(1),
      }}
    />
  );
}
