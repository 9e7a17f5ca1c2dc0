import {
  Bar,
  BarChart,
  CartesianGrid,
  Cell,
  ReferenceLine,
  ResponsiveContainer,
  Tooltip,
  XAxis,
  YAxis,
} from "recharts";
import { sig3 } from "../../lib/format";

// Blue for better and vermilion for worse (Okabe and Ito), not green beside red: a reader without
// red-green vision tells them apart; the bar's side and its phrase say it too.
export const VERDICT_COLOR = { better: "#0072B2", worse: "#D55E00", same: "#6b7280" } as const;
type Verdict = keyof typeof VERDICT_COLOR;

export interface ChangeRow {
  /** What changed (a run or group, and the job/direction when there are several). */
  label: string;
  /** How much better (> 0) or worse (< 0): factor − 1 on a linear axis; 0 is "same". */
  score: number;
  /** The server's direction-aware phrase, e.g. "133× lower latency". */
  phrase: string;
  verdict: Verdict;
}

const ROW = 26;
const MIN_PLOT = 220;

/** The chart's height for a number of rows (the plot never below MIN_PLOT). */
export function changeChartHeight(rows: number): number {
  return Math.max(MIN_PLOT, rows * ROW) + 48;
}

/** Axis ticks in factors: 0 is 1× (same), 132 is 133× better, −1 is 2× worse. */
function factorTick(v: number): string {
  if (v === 0) return "same";
  return `${sig3(Math.abs(v) + 1)}×`;
}

function PhraseTick(props: {
  x?: number | string;
  y?: number | string;
  payload?: { value?: string; index?: number };
  rows: ChangeRow[];
}) {
  const row = props.rows[props.payload?.index ?? -1];
  return (
    <text
      x={Number(props.x ?? 0) + 6}
      y={Number(props.y ?? 0)}
      dy={4}
      fontSize={12}
      fill={VERDICT_COLOR[row?.verdict ?? "same"]}
      fontWeight={600}
    >
      {row?.phrase ?? ""}
    </text>
  );
}

/**
 * Direction-aware change against a baseline, one horizontal bar per row: right and green is
 * better, left and red is worse, whatever the metric's direction (a 133× latency improvement is
 * the longest bar, not the shortest). The axis is linear in factor − 1; each bar's phrase is on
 * the right. The height grows with the rows, so the plot never shrinks below MIN_PLOT.
 */
export function ChangeBarChart({ rows, width }: { rows: ChangeRow[]; width?: number }) {
  const scores = rows.map((r) => r.score);
  const lo = Math.min(0, ...scores);
  const hi = Math.max(0, ...scores);
  const pad = (hi - lo) * 0.04 || 1;
  const domain: [number, number] = [lo < 0 ? lo - pad : 0, hi > 0 ? hi + pad : lo < 0 ? pad : 1];
  const height = changeChartHeight(rows.length);
  const labelWidth = Math.min(260, 20 + 7 * Math.max(...rows.map((r) => r.label.length), 4));
  const phraseWidth = Math.min(220, 20 + 7 * Math.max(...rows.map((r) => r.phrase.length), 4));
  const data = rows.map((r, i) => ({ ...r, idx: i }));
  const chart = (
    <BarChart
      data={data}
      layout="vertical"
      margin={{ top: 18, right: 8, bottom: 4, left: 8 }}
      width={width}
      height={width ? height : undefined}
      barCategoryGap={3}
    >
      <CartesianGrid stroke="#e5e7eb" strokeDasharray="3 3" horizontal={false} />
      <XAxis type="number" domain={domain} tickFormatter={factorTick} tick={{ fontSize: 11 }} />
      <YAxis
        yAxisId="label"
        type="category"
        dataKey="label"
        width={labelWidth}
        interval={0}
        tick={{ fontSize: 12 }}
      />
      <YAxis
        yAxisId="phrase"
        type="category"
        dataKey="idx"
        orientation="right"
        width={phraseWidth}
        interval={0}
        tick={(p: object) => <PhraseTick {...p} rows={rows} />}
        axisLine={false}
        tickLine={false}
      />
      <ReferenceLine
        x={0}
        yAxisId="label"
        stroke="#374151"
        strokeWidth={1.5}
        label={{ value: "1× (same)", position: "top", fontSize: 11, fill: "#374151" }}
      />
      <Tooltip
        formatter={(_v, _n, item) => [
          (item?.payload as ChangeRow | undefined)?.phrase ?? "",
          "change",
        ]}
      />
      <Bar dataKey="score" yAxisId="label" isAnimationActive={false} name="change">
        {data.map((r) => (
          <Cell key={r.idx} fill={VERDICT_COLOR[r.verdict]} />
        ))}
      </Bar>
    </BarChart>
  );
  // the axis' caption in HTML under the plot: it wraps on a phone (as SVG text it was cut off)
  const caption = (
    <p className="muted small chart-caption" data-testid="change-caption">
      ← worse · times better or worse than the baseline (linear) · better →
    </p>
  );
  if (width)
    return (
      <>
        {chart}
        {caption}
      </>
    );
  return (
    <>
      <ResponsiveContainer width="100%" height={height}>
        {chart}
      </ResponsiveContainer>
      {caption}
    </>
  );
}
