// Latency percentile curves (GET /compare/latency) shaped for a chart: x is the number of
// nines (p50 → 0.3, p99 → 2, p99.9 → 3) so the tail gets room, y is latency on a log axis.
import type { components } from "../client/schema";
import { latencyUnitNs } from "./compare";
import { latencyScale } from "./format";

type Curves = components["schemas"]["LatencyCurves"];

export function nines(percentile: number): number {
  return -Math.log10(1 - percentile / 100);
}

export const NINES_TICKS = [50, 90, 99, 99.9, 99.99, 99.999].map(nines);

/** "p99.9" from a nines value on the axis. */
export function ninesLabel(x: number): string {
  const p = 100 * (1 - 10 ** -x);
  return `p${Number(p.toFixed(4))}`;
}

export function latencyChart(data: Curves, labels: Map<string, string>) {
  const all = data.curves.flatMap((c) => c.points.map((p) => p.latency_ns));
  // the unit by the smallest latency (no "0.001 ms" ticks), as the compare tables
  const scale = latencyScale(latencyUnitNs([all]));
  const colIndex = new Map(data.columns.map((c, i) => [c.key, i]));
  const directions = new Set(data.curves.map((c) => c.direction));
  const series = data.curves
    .filter((c) => c.points.length > 0)
    .map((c) => ({
      key: `${c.column}-${c.direction}`,
      label: `${labels.get(c.column) ?? c.column}${directions.size > 1 ? ` ${c.direction}` : ""}`,
      dashed: c.direction === "write",
      color: colIndex.get(c.column) ?? 0,
      points: c.points
        .filter((p) => p.percentile < 100 && p.latency_ns > 0)
        .map((p) => ({ x: nines(p.percentile), y: p.latency_ns / scale.divisor })),
    }));
  const maxX = Math.max(0, ...series.flatMap((s) => s.points.map((p) => p.x)));
  return {
    series,
    unit: scale.unit,
    ticks: NINES_TICKS.filter((t) => t <= maxX + 0.01),
  };
}
