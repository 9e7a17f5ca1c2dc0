import {
  Area,
  Brush,
  CartesianGrid,
  ComposedChart,
  Line,
  ReferenceLine,
  ResponsiveContainer,
  Tooltip,
  XAxis,
  YAxis,
} from "recharts";
import type { MetricName } from "../../client/types";
import { formatTimestamp } from "../../lib/format";
import {
  type Annotation,
  clampLeftOut,
  formatMetric,
  type HistoryRow,
  valueTop,
} from "../../lib/history";
import { colorAt } from "./palette";

interface Props {
  rows: HistoryRow[];
  metric: MetricName;
  annotations: Annotation[];
  /** a run's row clicked (its run page and comparison are offered beside the chart) */
  onPick: (row: HistoryRow) => void;
  height?: number;
}

const LEFT_OUT = "#b45309";
const TOOLTIP = {
  background: "#fff",
  border: "1px solid #d1d5db",
  padding: "6px 8px",
  fontSize: 12,
};

function TooltipBody({ row, metric }: { row: HistoryRow; metric: MetricName }) {
  return (
    <div style={TOOLTIP}>
      <div>{formatTimestamp(row.at)}</div>
      <div>
        {formatMetric(metric, row.y ?? row.left_out)}
        {row.runs > 1 ? ` (mean of ${row.runs} runs)` : ""}
      </div>
      {row.band && (
        <div className="muted">
          {formatMetric(metric, row.band[0])} – {formatMetric(metric, row.band[1])}
        </div>
      )}
      {row.flags.length > 0 && <div>left out: {row.flags.join(", ")}</div>}
    </div>
  );
}

/** A run left out: a dot, or a triangle on the top edge when its value is above the axis. */
function LeftOutDot(props: {
  cx?: number;
  cy?: number;
  index?: number;
  payload?: { off?: boolean };
}) {
  const { cx, cy, index, payload } = props;
  if (cx == null || cy == null) return <g key={`lo-${index}`} />;
  return payload?.off ? (
    <path
      key={`lo-${index}`}
      d={`M${cx},${cy - 2} l5,9 h-10 z`}
      fill={LEFT_OUT}
      stroke={LEFT_OUT}
      data-testid="left-out-off-scale"
    />
  ) : (
    <circle key={`lo-${index}`} cx={cx} cy={cy} r={4} fill={LEFT_OUT} stroke={LEFT_OUT} />
  );
}

/** One metric over a series' runs: valid runs as a line (a band where downsampled), runs left
 * out by their validity flags as separate marks, host-fact changes and changes found as vertical
 * lines; the brush below zooms. */
/** A run's time on the axis: its day, or its day and hour when the whole history is under 3 days. */
function tickOf(rows: HistoryRow[]): (i: number) => string {
  const first = rows[0]?.at ?? "";
  const last = rows[rows.length - 1]?.at ?? "";
  const short = Date.parse(last) - Date.parse(first) < 3 * 86_400_000;
  return (i: number) => {
    const at = rows[i]?.at ?? "";
    return short ? `${at.slice(5, 10)} ${at.slice(11, 16)}` : at.slice(0, 10);
  };
}

export function HistoryChart({ rows, metric, annotations, onPick, height = 360 }: Props) {
  const dots = rows.length <= 60;
  const tick = tickOf(rows);
  const latency = metric.endsWith("_ns");
  // a linear axis follows the valid runs; a run left out far above them sits on its top edge (▲)
  const top = latency ? null : valueTop(rows);
  const data = clampLeftOut(rows, top);
  return (
    <div data-testid="history-chart" style={{ width: "100%", height }}>
      <ResponsiveContainer width="100%" height="100%">
        <ComposedChart
          data={data}
          margin={{ top: 24, right: 24, bottom: 8, left: 16 }}
          onClick={(e) => {
            const i = Number(e?.activeTooltipIndex ?? e?.activeIndex);
            if (Number.isInteger(i) && rows[i]) onPick(rows[i]);
          }}
        >
          <CartesianGrid strokeDasharray="3 3" />
          <XAxis dataKey="i" type="number" domain={["dataMin", "dataMax"]} tickFormatter={tick} />
          <YAxis
            scale={latency ? "log" : "auto"}
            domain={latency ? ["auto", "auto"] : [0, top ?? "auto"]}
            ticks={top != null ? [0, 1, 2, 3, 4, 5].map((k) => (top * k) / 5) : undefined}
            allowDataOverflow={latency}
            width={90}
            tickFormatter={(v: number) => formatMetric(metric, v)}
          />
          <Tooltip
            content={({ active, payload }) => {
              const row = payload?.[0]?.payload as HistoryRow | undefined;
              return active && row ? <TooltipBody row={row} metric={metric} /> : null;
            }}
          />
          <Area
            dataKey="band"
            stroke="none"
            fill={colorAt(0)}
            fillOpacity={0.18}
            isAnimationActive={false}
            connectNulls={false}
          />
          <Line
            dataKey="y"
            stroke={colorAt(0)}
            dot={dots}
            strokeWidth={1.5}
            isAnimationActive={false}
            connectNulls
            name="valid runs"
          />
          <Line
            dataKey="left_out_shown"
            stroke="none"
            dot={LeftOutDot}
            isAnimationActive={false}
            name="left out"
          />
          {annotations.map((a) => (
            <ReferenceLine
              key={`${a.kind}-${a.i}-${a.label}`}
              x={a.i}
              stroke={a.kind === "host" ? "#6b7280" : "#dc2626"}
              strokeDasharray={a.kind === "host" ? "4 3" : undefined}
              label={{ value: a.label, position: "top", fontSize: 11 }}
            />
          ))}
          {rows.length > 20 && (
            <Brush dataKey="i" height={22} travellerWidth={8} tickFormatter={tick} />
          )}
        </ComposedChart>
      </ResponsiveContainer>
    </div>
  );
}
