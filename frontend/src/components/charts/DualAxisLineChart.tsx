import {
  CartesianGrid,
  Line,
  LineChart,
  ResponsiveContainer,
  Tooltip,
  XAxis,
  YAxis,
} from "recharts";
import { sig3 } from "../../lib/format";
import { tickNumber, timeTicks } from "./axis";

interface AxisSeries {
  /** Field of each data point holding this series, already in `unit`. */
  key: string;
  name: string;
  unit: string;
  color: string;
}

interface Props {
  data: Record<string, number>[];
  x: { key: string; label: string; unit: string };
  left: AxisSeries;
  right: AxisSeries;
  height?: number;
  /** Fixed width for tests; the chart fills its container otherwise. */
  width?: number;
}

/** "Throughput (MB/s)"; a series whose name is its unit ("IOPS") is not repeated. */
function axisTitle(s: AxisSeries): string {
  return s.name === s.unit ? s.name : `${s.name} (${s.unit})`;
}

/**
 * Each axis' title as HTML above its own axis, after a swatch of its line's colour (it doubles as
 * the key; the text stays in the text colour: an orange title failed contrast on white). A
 * rotated title outside the right axis sat in the gutter between two side-by-side charts and
 * read as the next chart's label; above the axis it cannot belong to anything else.
 */
function AxisTitles({ left, right }: { left: AxisSeries; right: AxisSeries }) {
  return (
    <div className="dual-axis-titles" data-testid="dual-axis-titles">
      <span className="dual-axis-title" data-axis="left">
        <span className="swatch-line" style={{ background: left.color }} />
        {axisTitle(left)} <span className="muted">(left axis)</span>
      </span>
      <span className="dual-axis-title" data-axis="right">
        <span className="swatch-line" style={{ background: right.color }} />
        {axisTitle(right)} <span className="muted">(right axis)</span>
      </span>
    </div>
  );
}

/** Two lines sharing an x axis, each on its own labelled y axis (e.g. MB/s and IOPS over time). */
export function DualAxisLineChart({ data, x, left, right, height = 280, width }: Props) {
  // a time axis in seconds gets round ticks (0, 30, 60 s; minutes when long), from a round time
  const xs = data.map((d) => d[x.key]).filter((v): v is number => Number.isFinite(v));
  const time = x.unit === "s" && xs.length > 1 ? timeTicks(Math.min(...xs), Math.max(...xs)) : null;
  const timed = time && time.ticks.length > 1 ? time : null;
  const chart = (
    <LineChart
      data={data}
      margin={{ top: 8, right: 8, bottom: 24, left: 8 }}
      width={width}
      height={width ? height : undefined}
    >
      <CartesianGrid stroke="#e5e7eb" strokeDasharray="3 3" />
      <XAxis
        dataKey={x.key}
        type="number"
        domain={[timed?.ticks[0] ?? "dataMin", "dataMax"]}
        ticks={timed?.ticks}
        allowDecimals={false}
        interval={0}
        tickFormatter={(v: number) => (timed ? timed.format(v) : sig3(v))}
        label={{
          value: `${x.label} (${timed ? timed.unit : x.unit})`,
          position: "insideBottom",
          offset: -14,
        }}
      />
      <YAxis yAxisId="left" interval={0} tickFormatter={tickNumber} stroke={left.color} />
      <YAxis
        yAxisId="right"
        orientation="right"
        interval={0}
        tickFormatter={tickNumber}
        stroke={right.color}
      />
      <Tooltip
        formatter={(value, name) => {
          const unit = name === left.name ? left.unit : right.unit;
          return [`${sig3(Number(value))} ${unit}`, name];
        }}
        labelFormatter={(v) => `t = ${sig3(Number(v))} ${x.unit}`}
      />
      <Line
        yAxisId="left"
        type="monotone"
        dataKey={left.key}
        name={left.name}
        stroke={left.color}
        dot={false}
        strokeWidth={2}
        isAnimationActive={false}
      />
      <Line
        yAxisId="right"
        type="monotone"
        dataKey={right.key}
        name={right.name}
        stroke={right.color}
        dot={false}
        strokeWidth={2}
        isAnimationActive={false}
      />
    </LineChart>
  );
  const titles = <AxisTitles left={left} right={right} />;
  if (width)
    return (
      <div className="dual-axis-chart">
        {titles}
        {chart}
      </div>
    );
  return (
    <div className="dual-axis-chart">
      {titles}
      <ResponsiveContainer width="100%" height={height}>
        {chart}
      </ResponsiveContainer>
    </div>
  );
}
