import {
  CartesianGrid,
  ErrorBar,
  Line,
  LineChart,
  ResponsiveContainer,
  Tooltip,
  XAxis,
  YAxis,
} from "recharts";
import { sig3 } from "../../lib/format";
import { niceTicks, tickNumber } from "./axis";
import { type ErrorDistances, tooltipValue } from "./interval";
import { colorAt, lineDash } from "./palette";
import { SeriesKey } from "./SeriesKey";

interface LineSeries {
  key: string;
  label: string;
  /** Points already in display units (x in the x axis' unit, y in the y axis' unit); `err` where
   * y is a mean of repeats: its 95 % interval as distances [below, above] (an error bar), `n` how
   * many. */
  points: { x: number; y: number; err?: ErrorDistances; n?: number }[];
  dashed?: boolean;
  /** Palette index, so a column keeps its colour across charts. */
  color?: number;
}

export interface Axis {
  label: string;
  unit: string;
  log?: boolean;
  /** Explicit ticks (e.g. powers of two for block sizes); formatted by `format`. */
  ticks?: number[];
  format?: (v: number) => string;
}

interface Props {
  series: LineSeries[];
  x: Axis;
  y: Axis;
  /** Whole chart height (the key is outside it, below): the plot keeps ≥ 200 px. */
  height?: number;
  width?: number;
  /** The key below the chart (HTML, outside the plot); off where a shared run key is shown. */
  legend?: boolean;
  /** The points are figures that may be means of repeats: the tooltip gives each one's 95 %
   * interval or says it has none (off for samples: per-second series, percentile curves). */
  intervals?: boolean;
}

function decadeTicks(values: number[]): { domain: [number, number]; ticks: number[] } | null {
  const pos = values.filter((v) => v > 0);
  if (pos.length === 0) return null;
  const lo = Math.floor(Math.log10(Math.min(...pos)));
  const hi = Math.max(lo + 1, Math.ceil(Math.log10(Math.max(...pos))));
  return {
    domain: [10 ** lo, 10 ** hi],
    ticks: Array.from({ length: hi - lo + 1 }, (_, i) => 10 ** (lo + i)),
  };
}

function title(a: Axis): string {
  const unit =
    a.unit && a.unit !== a.label ? ` (${a.unit}${a.log ? ", log" : ""})` : a.log ? " (log)" : "";
  return `${a.label}${unit}`;
}

/** Lines over a numeric x axis, each with its own points; log axes where asked. */
export function MultiLineChart({
  series,
  x,
  y,
  height = 300,
  width,
  legend = true,
  intervals = false,
}: Props) {
  const ys = series.flatMap((s) => s.points.map((p) => p.y));
  const xs = series.flatMap((s) => s.points.map((p) => p.x));
  const yLog = y.log ? decadeTicks(ys) : null;
  const xLog = x.log && !x.ticks ? decadeTicks(xs) : null;
  const xFmt = x.format ?? ((v: number) => sig3(v));
  // All x values print alike (every run's single per-second sample near t = 1 s): "dataMin" ..
  // "dataMax" is a sliver and every tick reads "1"; widen to whole units around them.
  const xLo = Math.min(...xs);
  const xHi = Math.max(...xs);
  const xDomain: [number, number] | [string, string] =
    !x.log && xs.length > 0 && xFmt(xLo) === xFmt(xHi)
      ? [Math.floor(xLo), Math.max(Math.ceil(xHi), Math.floor(xLo) + 1)]
      : ["dataMin", "dataMax"];
  // a linear axis over the data's range: round-numbered ticks (15k, 20k, …), not Recharts' even
  // split of min..max (15453, 21953, …)
  const xNice =
    !x.log && !x.ticks && typeof xDomain[0] === "string" && xs.length > 1
      ? niceTicks(xLo, xHi, 6)
      : [];
  const chart = (
    <LineChart
      margin={{ top: 8, right: 24, bottom: 24, left: 24 }}
      width={width}
      height={width ? height : undefined}
    >
      <CartesianGrid stroke="#e5e7eb" strokeDasharray="3 3" />
      <XAxis
        dataKey="x"
        type="number"
        scale={x.log ? "log" : "auto"}
        domain={xLog ? xLog.domain : xDomain}
        ticks={x.ticks ?? xLog?.ticks ?? (xNice.length >= 2 ? xNice : undefined)}
        allowDataOverflow={!!x.log}
        tickFormatter={xFmt}
        allowDuplicatedCategory={false}
        label={{ value: title(x), position: "insideBottom", offset: -14 }}
      />
      <YAxis
        dataKey="y"
        type="number"
        scale={yLog ? "log" : "auto"}
        domain={yLog ? yLog.domain : [0, "auto"]}
        ticks={yLog?.ticks}
        allowDataOverflow={!!yLog}
        tickFormatter={y.format ?? tickNumber}
        label={{
          value: title(y),
          angle: -90,
          position: "insideLeft",
          offset: -12,
          style: { textAnchor: "middle" },
        }}
      />
      <Tooltip
        formatter={(value, name, item) => {
          if (!intervals) return [`${sig3(Number(value))} ${y.unit}`, name];
          const p = (item?.payload ?? {}) as LineSeries["points"][number];
          return [tooltipValue(value, y.unit, p.err, p.n), name];
        }}
        labelFormatter={(v) => `${x.label} ${xFmt(Number(v))}${x.format ? "" : ` ${x.unit}`}`}
      />
      {series.map((s, i) => (
        <Line
          key={s.key}
          data={s.points}
          dataKey="y"
          name={s.label}
          stroke={colorAt(s.color ?? i)}
          strokeDasharray={lineDash(s.dashed, s.color ?? i)}
          dot={s.points.length <= 30}
          strokeWidth={2}
          isAnimationActive={false}
        >
          {s.points.some((p) => p.err) && (
            <ErrorBar dataKey="err" width={4} strokeWidth={1.5} stroke="#374151" direction="y" />
          )}
        </Line>
      ))}
    </LineChart>
  );
  const key = legend ? (
    <SeriesKey
      items={series.map((s, i) => ({
        key: s.key,
        label: s.label,
        color: s.color ?? i,
        dashed: s.dashed,
        line: true,
      }))}
    />
  ) : null;
  if (width)
    return (
      <>
        {chart}
        {key}
      </>
    );
  return (
    <>
      <ResponsiveContainer width="100%" height={height}>
        {chart}
      </ResponsiveContainer>
      {key}
    </>
  );
}
