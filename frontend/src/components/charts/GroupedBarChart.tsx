import {
  Bar,
  BarChart,
  CartesianGrid,
  ErrorBar,
  LabelList,
  ResponsiveContainer,
  Tooltip,
  XAxis,
  YAxis,
} from "recharts";
import { tickNumber } from "./axis";
import { tooltipValue } from "./interval";
import { colorAt } from "./palette";
import { SeriesKey } from "./SeriesKey";

/** Height of the plot area alone: axes and the key are added around it, never taken from it. */
export const PLOT_HEIGHT = 240;

interface Props {
  /** One row per category; each series key holds a value already in `unit`, and `KEY_err` where
   * known its 95 % interval as distances [below, above] (drawn as error bars) with `KEY_n` its
   * count of repeats; the tooltip says which figures have no interval. */
  rows: Record<string, string | number | null | [number, number]>[];
  categoryKey: string;
  series: { key: string; label: string }[];
  /** Axis label, e.g. "IOPS" or "p99 latency"; the unit is added in parentheses. */
  valueLabel: string;
  unit: string;
  /**
   * Log scale, for figures that span orders of magnitude (latency); "auto" switches to it when
   * the largest value is over 100× the smallest, so small bars stay visible beside big ones.
   */
  log?: boolean | "auto";
  /** Whole chart height; by default the plot gets PLOT_HEIGHT and the axes their room on top. */
  height?: number;
  width?: number;
  /** The key below the chart (HTML, outside the plot); off where a shared run key is shown. */
  legend?: boolean;
}

/** Whether a chart with `log` ("auto": over 100× between the smallest and largest bar) draws log. */
export function usesLog(
  rows: Props["rows"],
  series: Props["series"],
  log: Props["log"] = false,
): boolean {
  const positive = rows.flatMap((r) =>
    series.map((s) => r[s.key]).filter((v): v is number => typeof v === "number" && v > 0),
  );
  if (positive.length === 0) return false;
  const spread = Math.max(...positive) / Math.min(...positive);
  return log === true || (log === "auto" && spread > 100);
}

/** The one series that has a figure in this row, when only one does (else null). */
export function loneKey(row: Props["rows"][number], series: Props["series"]): string | null {
  const present = series.filter((s) => typeof row[s.key] === "number");
  return present.length === 1 ? (present[0]?.key ?? null) : null;
}

/** Bars grouped by category (a job), one bar per series (a run). */
export function GroupedBarChart({
  rows,
  categoryKey,
  series,
  valueLabel,
  unit,
  log = false,
  height: fixedHeight,
  width,
  legend = true,
}: Props) {
  // Many or long category names are tilted so they never run into each other.
  const tilt =
    rows.length > 4 || rows.some((r) => String(r[categoryKey] ?? "").length * rows.length > 40);
  const axisHeight = tilt ? 70 : 30;
  const height = fixedHeight ?? PLOT_HEIGHT + axisHeight + 16;
  const positive = rows.flatMap((r) =>
    series.map((s) => r[s.key]).filter((v): v is number => typeof v === "number" && v > 0),
  );
  const useLog = usesLog(rows, series, log);
  // Log axes span whole decades with a tick at each power of ten.
  const lo = useLog ? Math.floor(Math.log10(Math.min(...positive))) : 0;
  const hi = useLog ? Math.max(lo + 1, Math.ceil(Math.log10(Math.max(...positive)))) : 0;
  const logTicks = useLog
    ? Array.from({ length: hi - lo + 1 }, (_, i) => 10 ** (lo + i))
    : undefined;
  const title =
    valueLabel === unit
      ? `${unit}${useLog ? " (log)" : ""}`
      : `${valueLabel} (${unit}${useLog ? ", log" : ""})`;
  const chart = (
    <BarChart
      data={rows}
      margin={{ top: 8, right: 16, bottom: 8, left: 24 }}
      width={width}
      height={width ? height : undefined}
    >
      <CartesianGrid stroke="#e5e7eb" strokeDasharray="3 3" vertical={false} />
      <XAxis
        dataKey={categoryKey}
        interval={0}
        tick={{ fontSize: 12 }}
        angle={tilt ? -30 : 0}
        textAnchor={tilt ? "end" : "middle"}
        height={axisHeight}
      />
      <YAxis
        tickFormatter={tickNumber}
        scale={useLog ? "log" : "auto"}
        domain={useLog ? [10 ** lo, 10 ** hi] : [0, "auto"]}
        ticks={logTicks}
        allowDataOverflow={useLog}
        label={{
          value: title,
          angle: -90,
          position: "insideLeft",
          offset: -12,
          style: { textAnchor: "middle" },
        }}
      />
      <Tooltip
        formatter={(value, name, item) => {
          const row = (item?.payload ?? {}) as Props["rows"][number];
          const key = String(item?.dataKey ?? "");
          return [tooltipValue(value, unit, row[`${key}_err`], row[`${key}_n`]), name];
        }}
      />
      {series.map((s, i) => (
        <Bar key={s.key} dataKey={s.key} name={s.label} fill={colorAt(i)} isAnimationActive={false}>
          {series.length > 1 && (
            // a group with one bar (one run of several has the figure: energy from the only
            // metered run) names it on the bar: its colour alone among 30 says nothing
            <LabelList
              position="top"
              fontSize={11}
              valueAccessor={(entry: { payload?: Props["rows"][number] }) =>
                entry.payload && loneKey(entry.payload, series) === s.key ? s.label : undefined
              }
            />
          )}
          {rows.some((r) => Array.isArray(r[`${s.key}_err`])) && (
            <ErrorBar
              dataKey={`${s.key}_err`}
              width={4}
              strokeWidth={1.5}
              stroke="#374151"
              direction="y"
            />
          )}
        </Bar>
      ))}
    </BarChart>
  );
  const key = legend ? (
    <SeriesKey items={series.map((s, i) => ({ key: s.key, label: s.label, color: i }))} />
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
