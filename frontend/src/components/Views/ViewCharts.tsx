import { fromBaseUnit } from "../../lib/format";
import type { ViewChart, ViewTable } from "../../queries/views";
import { tickNumber } from "../charts/axis";
import { MultiLineChart } from "../charts/MultiLineChart";

/** Powers of two across the data, for doubling sweeps (block sizes, thread counts). */
function pow2Ticks(xs: number[]): number[] | undefined {
  const pos = xs.filter((x) => x > 0);
  if (pos.length === 0) return undefined;
  const lo = Math.floor(Math.log2(Math.min(...pos)));
  const hi = Math.ceil(Math.log2(Math.max(...pos)));
  return Array.from({ length: hi - lo + 1 }, (_, i) => 2 ** (lo + i));
}

function kib(v: number): string {
  if (v >= 1024) return `${v / 1024} MiB`;
  return `${v} KiB`;
}

/** A chart point; `n`, `ci95_low`, `ci95_high`: a mean of repeats and its 95 % interval. */
type Point = ViewChart["series"][number]["points"][number];

/**
 * The report's figures: one chart per figure, each as tall as its legend needs, so the plot keeps
 * its height whatever the number of runs. Points come in base units (B, B/s, ns) and are drawn
 * in the units the view prints (`shown`: KiB, MB/s, µs), as the report's figure.
 */
export function ViewCharts({
  charts,
  shown = {},
}: {
  charts: ViewChart[];
  shown?: ViewTable["display_units"];
}) {
  if (charts.length === 0) return null;
  return (
    <div
      style={{
        display: "grid",
        gridTemplateColumns: "repeat(auto-fit, minmax(560px, 1fr))",
        gap: "1rem",
      }}
    >
      {charts.map((c) => {
        const xUnit = shown[c.x.unit] ?? c.x.unit;
        const yUnit = shown[c.y.unit] ?? c.y.unit;
        const series = c.series.map((s) => ({
          ...s,
          points: s.points.map((p: Point) => {
            const y = fromBaseUnit(p.y, c.y.unit, yUnit);
            const lo = p.ci95_low ?? null;
            const hi = p.ci95_high ?? null;
            // a mean of repeats: its 95 % interval as an error bar; a single figure has none
            const err: [number, number] | undefined =
              lo !== null && hi !== null && (p.n ?? 1) >= 2
                ? [
                    Math.max(0, y - fromBaseUnit(lo, c.y.unit, yUnit)),
                    Math.max(0, fromBaseUnit(hi, c.y.unit, yUnit) - y),
                  ]
                : undefined;
            return { x: fromBaseUnit(p.x, c.x.unit, xUnit), y, err, n: p.n };
          }),
        }));
        const xs = series.flatMap((s) => s.points.map((p) => p.x));
        const ticks = c.x.log ? pow2Ticks(xs) : undefined;
        const legendRows = Math.ceil(c.series.length / 3);
        return (
          <div className="card" key={c.key} data-testid={`view-chart-${c.key}`}>
            <h3 style={{ marginTop: 0 }}>{c.title}</h3>
            <p className="muted small" data-testid="interval-note">
              {series.some((s) => s.points.some((p) => p.err))
                ? "Bars: the 95 % confidence interval of a mean of repeats."
                : "Each point is one measurement: no repeats, no interval."}
            </p>
            <MultiLineChart
              intervals
              height={320 + legendRows * 20}
              x={{
                label: c.x.label,
                unit: xUnit,
                log: c.x.log,
                ticks,
                format: xUnit === "KiB" ? kib : tickNumber,
              }}
              y={{ label: c.y.label, unit: yUnit, log: c.y.log }}
              series={series.map((s, i) => ({
                key: `${c.key}-${i}`,
                label: s.label,
                dashed: s.dashed,
                points: s.points,
                color: Math.floor(
                  i / (c.series.length > 1 && c.series.some((x) => x.dashed) ? 2 : 1),
                ),
              }))}
            />
          </div>
        );
      })}
    </div>
  );
}
