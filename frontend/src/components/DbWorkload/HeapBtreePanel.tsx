import { formatCount, formatPercent, sig3 } from "../../lib/format";
import { MultiLineChart } from "../charts/MultiLineChart";
import {
  columnLabel,
  type HeapBtreeSummary,
  sweepGrid,
  sweepRows,
  sweepSeries,
} from "./dbWorkload";
import "./dbWorkload.css";

const pct = (x: number) => `${Math.round(x * 100)} %`;

/**
 * A heap/B-tree run's cache sweep (the P3608 report's Table 3): operations per second over the
 * cache fraction per structure and operation (log where they span two orders of magnitude), hit ratio
 * and device reads, and the table with the 100 %/10 % ratios.
 */
export function HeapBtreePanel({ summary }: { summary: HeapBtreeSummary }) {
  const rows = sweepRows(summary);
  if (rows.length === 0) return null;
  const ops = sweepSeries(rows, "ops_per_s");
  const hits = sweepSeries(rows, "hit_ratio");
  const reads = sweepSeries(rows, "device_reads");
  const grid = sweepGrid(rows);
  const x = { label: "Cache fraction", unit: "%", format: pct, ticks: grid.fractions };
  return (
    <div className="card" data-testid="heap-btree-panel">
      <h3 style={{ marginTop: 0 }}>Cache sweep: heap vs B-tree</h3>
      <div className="db-charts">
        <div data-testid="sweep-ops" data-log={ops.log ? "true" : "false"}>
          <h4>Operations per second</h4>
          <MultiLineChart
            series={ops.series}
            x={x}
            y={{ label: "Operations", unit: "op/s", log: ops.log }}
          />
        </div>
        <div data-testid="sweep-hits">
          <h4>Hit ratio</h4>
          <MultiLineChart series={hits.series} x={x} y={{ label: "Hit ratio", unit: "%" }} />
        </div>
        <div data-testid="sweep-reads" data-log={reads.log ? "true" : "false"}>
          <h4>Device reads (8 KiB pages)</h4>
          <MultiLineChart
            series={reads.series}
            x={x}
            y={{ label: "Device reads", unit: "pages", log: reads.log }}
          />
        </div>
      </div>
      <h4>Table 3's layout</h4>
      <div className="scroll-x">
        <table className="table compact" data-testid="sweep-table">
          <thead>
            <tr>
              <th>Cache</th>
              {grid.columns.map((c) => (
                <th key={c} className="num" colSpan={2}>
                  {columnLabel(c)}
                </th>
              ))}
            </tr>
            <tr>
              <th />
              {grid.columns.map((c) => (
                <th key={c} className="num small" colSpan={2}>
                  op/s · hit ratio
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {grid.fractions.map((f) => (
              <tr key={f} data-fraction={f}>
                <th scope="row">{pct(f)}</th>
                {grid.columns.map((c) => {
                  const r = grid.value(f, c);
                  return [
                    <td key={`${c}o`} className="num">
                      {r?.ops_per_s != null ? formatCount(r.ops_per_s) : "—"}
                    </td>,
                    <td key={`${c}h`} className="num muted">
                      {r?.hit_ratio != null ? formatPercent(r.hit_ratio * 100) : "—"}
                    </td>,
                  ];
                })}
              </tr>
            ))}
            <tr data-testid="sweep-ratio">
              <th scope="row">100/10 %</th>
              {grid.columns.map((c) => {
                const v = grid.ratio(c);
                return (
                  <td key={c} className="num" colSpan={2}>
                    {v == null ? "—" : `${sig3(v)}×`}
                  </td>
                );
              })}
            </tr>
          </tbody>
        </table>
      </div>
    </div>
  );
}
