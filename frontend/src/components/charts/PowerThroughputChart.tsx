import {
  Area,
  CartesianGrid,
  ComposedChart,
  Legend,
  Line,
  ReferenceArea,
  ResponsiveContainer,
  Tooltip,
  XAxis,
  YAxis,
} from "recharts";
import type { PhaseBand, PowerChartRow } from "../../lib/energy";
import { phaseLabel } from "../../lib/energy";
import { sig3 } from "../../lib/format";
import { RATE_AXIS } from "../../lib/series";
import { niceTicks, tickNumber } from "./axis";

const MBPS = RATE_AXIS.mbps;

const POWER = "#D55E00"; // vermilion and blue (Okabe and Ito): apart for colour-blind readers
const THROUGHPUT = "#0072B2";
const PHASE_FILL: Record<string, string> = {
  idle_before: "#e5e7eb",
  load: "#fef3c7",
  idle_after: "#e5e7eb",
};

interface Props {
  /** Rows in display units: W for power, MB/s for throughput, seconds since the load started. */
  rows: PowerChartRow[];
  phases: PhaseBand[];
  /** Shown in the legend so a modelled series never passes for a measurement. */
  powerName: string;
  height?: number;
  width?: number;
}

/**
 * Power over time (mean line with its min–max band, left axis, W) with throughput (right
 * axis, MB/s) on the same time axis; idle and load phases are shaded.
 */
export function PowerThroughputChart({ rows, phases, powerName, height = 300, width }: Props) {
  const hasThroughput = rows.some((r) => r.mbps !== undefined);
  const xs = rows.map((r) => r.t_s);
  const ticks = niceTicks(Math.min(...xs), Math.max(...xs));
  const chart = (
    <ComposedChart
      data={rows}
      margin={{ top: 8, right: 24, bottom: 24, left: 24 }}
      width={width}
      height={width ? height : undefined}
    >
      <CartesianGrid stroke="#e5e7eb" strokeDasharray="3 3" />
      {phases.map((p) => (
        <ReferenceArea
          key={p.name}
          yAxisId="power"
          x1={p.x1}
          x2={p.x2}
          fill={PHASE_FILL[p.name] ?? "#f3f4f6"}
          fillOpacity={0.6}
          ifOverflow="extendDomain"
          label={{ value: phaseLabel(p.name), position: "insideTop", fontSize: 11 }}
        />
      ))}
      <XAxis
        dataKey="t_s"
        type="number"
        domain={["dataMin", "dataMax"]}
        ticks={ticks.length > 1 ? ticks : undefined}
        tickFormatter={(v: number) => sig3(v)}
        label={{ value: "time since load start (s)", position: "insideBottom", offset: -14 }}
      />
      <YAxis
        yAxisId="power"
        tickFormatter={tickNumber}
        stroke={POWER}
        domain={["auto", "auto"]}
        label={{
          value: "Power (W)",
          angle: -90,
          position: "insideLeft",
          offset: -12,
          style: { textAnchor: "middle" },
        }}
      />
      {hasThroughput && (
        <YAxis
          yAxisId="mbps"
          orientation="right"
          tickFormatter={tickNumber}
          stroke={THROUGHPUT}
          label={{
            value: `${MBPS.label} (${MBPS.unit})`,
            angle: 90,
            position: "insideRight",
            offset: -12,
            style: { textAnchor: "middle" },
          }}
        />
      )}
      <Tooltip
        formatter={(value, name) => {
          if (Array.isArray(value))
            return [`${sig3(Number(value[0]))}–${sig3(Number(value[1]))} W`, name];
          const unit = name === MBPS.label ? MBPS.unit : "W";
          return [`${sig3(Number(value))} ${unit}`, name];
        }}
        labelFormatter={(v) => `t = ${sig3(Number(v))} s`}
      />
      <Legend
        verticalAlign="top"
        itemSorter={null}
        wrapperStyle={{ fontSize: 12, paddingBottom: 4 }}
      />
      <Area
        yAxisId="power"
        dataKey="w_band"
        name="Power min–max"
        stroke="none"
        fill={POWER}
        fillOpacity={0.18}
        connectNulls
        isAnimationActive={false}
      />
      <Line
        yAxisId="power"
        dataKey="w_mean"
        name={powerName}
        stroke={POWER}
        dot={false}
        strokeWidth={2}
        connectNulls
        isAnimationActive={false}
      />
      {hasThroughput && (
        <Line
          yAxisId="mbps"
          dataKey="mbps"
          name={MBPS.label}
          stroke={THROUGHPUT}
          dot={false}
          strokeWidth={1.5}
          connectNulls
          isAnimationActive={false}
        />
      )}
    </ComposedChart>
  );
  if (width) return chart;
  return (
    <ResponsiveContainer width="100%" height={height}>
      {chart}
    </ResponsiveContainer>
  );
}
