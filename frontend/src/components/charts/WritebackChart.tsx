import {
  CartesianGrid,
  ComposedChart,
  Legend,
  Line,
  ResponsiveContainer,
  Tooltip,
  XAxis,
  YAxis,
} from "recharts";
import { sig3 } from "../../lib/format";
import type { WritebackRow } from "../../lib/writeback";
import { niceTicks, tickNumber } from "./axis";

// Okabe and Ito: apart for colour-blind readers
const DIRTY = "#D55E00";
const WRITEBACK = "#009E73";
const LIMIT = "#CC79A7";
const BACKGROUND = "#E69F00";
const THROUGHPUT = "#0072B2";

interface Props {
  rows: WritebackRow[];
  height?: number;
  width?: number;
}

/**
 * The page cache while the engine ran: Dirty and Writeback (left axis, MiB) with the kernel's dirty
 * limit and background threshold as dashed lines, and throughput (right axis, MB/s) on the same
 * time axis. A buffered writer runs at memory speed until Dirty meets the limit, then at the
 * device's: the cliff.
 */
export function WritebackChart({ rows, height = 300, width }: Props) {
  const hasThroughput = rows.some((r) => r.mbps !== undefined);
  const hasLimit = rows.some((r) => r.limit_mib !== undefined);
  const xs = rows.map((r) => r.t_s);
  const ticks = niceTicks(Math.min(...xs), Math.max(...xs));
  const line = (key: keyof WritebackRow, name: string, stroke: string, dashed = false) => (
    <Line
      yAxisId="mib"
      dataKey={key}
      name={name}
      stroke={stroke}
      dot={false}
      strokeWidth={dashed ? 1.5 : 2}
      strokeDasharray={dashed ? "6 4" : undefined}
      connectNulls
      isAnimationActive={false}
    />
  );
  const chart = (
    <ComposedChart
      data={rows}
      margin={{ top: 8, right: 24, bottom: 24, left: 24 }}
      width={width}
      height={width ? height : undefined}
    >
      <CartesianGrid stroke="#e5e7eb" strokeDasharray="3 3" />
      <XAxis
        dataKey="t_s"
        type="number"
        domain={["dataMin", "dataMax"]}
        ticks={ticks.length > 1 ? ticks : undefined}
        tickFormatter={(v: number) => sig3(v)}
        label={{
          value: "time since the engine started (s)",
          position: "insideBottom",
          offset: -14,
        }}
      />
      <YAxis
        yAxisId="mib"
        tickFormatter={tickNumber}
        label={{
          value: "Page cache (MiB)",
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
            value: "Throughput (MB/s)",
            angle: 90,
            position: "insideRight",
            offset: -12,
            style: { textAnchor: "middle" },
          }}
        />
      )}
      <Tooltip
        formatter={(value, name) => [
          `${sig3(Number(value))} ${name === "Throughput" ? "MB/s" : "MiB"}`,
          name,
        ]}
        labelFormatter={(v) => `t = ${sig3(Number(v))} s`}
      />
      <Legend
        verticalAlign="top"
        itemSorter={null}
        wrapperStyle={{ fontSize: 12, paddingBottom: 4 }}
      />
      {line("dirty_mib", "Dirty", DIRTY)}
      {line("writeback_mib", "Writeback", WRITEBACK)}
      {hasLimit && line("limit_mib", "Dirty limit", LIMIT, true)}
      {hasLimit && line("background_mib", "Background write-back threshold", BACKGROUND, true)}
      {hasThroughput && (
        <Line
          yAxisId="mbps"
          dataKey="mbps"
          name="Throughput"
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
