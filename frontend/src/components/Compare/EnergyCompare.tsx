import type { CompareRead } from "../../client/types";
import { columnLabels, columnRuns, columnTiers, energyBarCharts } from "../../lib/compare";
import { energyStateShort } from "../../lib/energy";
import { formatEnergy, formatRatio, formatSeconds, formatWatts } from "../../lib/format";
import { GroupedBarChart } from "../charts/GroupedBarChart";
import { TierBadge } from "../Energy/TierBadge";
import { ScrollBox } from "../ScrollBox";
import { MetricTable, type TableLayout } from "./CompareTable";

function TierCell({ data, runIds }: { data: CompareRead; runIds: string[] }) {
  const tiers = columnTiers(data, runIds);
  const states = [
    ...new Set(
      columnRuns(data, runIds)
        .filter((r) => r.energy.status !== "ok")
        .map((r) => energyStateShort(r.energy)),
    ),
  ];
  return (
    <>
      {tiers.map((t) => (
        <TierBadge key={t.tier} energy={t} />
      ))}
      {states.map((st) => (
        <span key={st} className="muted small">
          {" "}
          {st}
        </span>
      ))}
    </>
  );
}

/**
 * Energy and carbon side by side: bars (energy per run, J/GB, IOPS/W, CO2), the paper's
 * table (non-load W, W under load, run time, energy = run time × W, ratio) and every figure.
 */
export function EnergyCompare({
  data,
  showCharts,
  layout = "metrics",
}: {
  data: CompareRead;
  showCharts: boolean;
  layout?: TableLayout;
}) {
  const labels = columnLabels(data);
  if (data.energy.length === 0) {
    return (
      <div className="card" data-testid="energy-compare-empty">
        <p className="muted">
          No energy figures: none of these runs was measured with a wattmeter (or their energy is
          still being computed). Meters per column:
        </p>
        <ul className="small">
          {data.columns.map((c, i) => (
            <li key={c.key}>
              {labels[i]}: <TierCell data={data} runIds={c.run_ids} />
            </li>
          ))}
        </ul>
      </div>
    );
  }
  const by = new Map(data.energy.map((m) => [m.key, m]));
  const idle = by.get("idle_w");
  const load = by.get("load_w_mean");
  const time = by.get("runtime_s");
  const energy = by.get("total_j");
  const base = data.columns.findIndex((c) => c.is_baseline);
  const charts = energyBarCharts(data);
  return (
    <>
      {showCharts && charts.length > 0 && (
        <div className="chart-grid">
          {charts.map((c) => (
            <div className="card chart" key={c.kind} data-testid="energy-chart">
              <h3>{c.title}</h3>
              <GroupedBarChart
                rows={c.rows}
                categoryKey="category"
                series={c.series}
                valueLabel={c.title}
                unit={c.unit}
                log={c.log}
                legend={false}
              />
            </div>
          ))}
        </div>
      )}
      <div className="card">
        <h3>Power and energy (as in the HDD vs DRAM-SSD paper)</h3>
        <ScrollBox label="power and energy per run">
          <table className="table compact" data-testid="energy-paper-table">
            <thead>
              <tr>
                <th>Column</th>
                <th>Meter</th>
                <th className="num">Non-load power</th>
                <th className="num">Power under load</th>
                <th className="num">Run time</th>
                <th className="num">Energy = run time × W</th>
                <th className="num ratio">Ratio to {labels[base]}</th>
              </tr>
            </thead>
            <tbody>
              {data.columns.map((c, i) => (
                <tr key={c.key}>
                  <th scope="row">
                    {labels[i]}
                    {c.is_baseline && <span className="muted small"> (baseline)</span>}
                  </th>
                  <td>
                    <TierCell data={data} runIds={c.run_ids} />
                  </td>
                  <td className="num">{formatWatts(idle?.values[i])}</td>
                  <td className="num">{formatWatts(load?.values[i])}</td>
                  <td className="num">{formatSeconds(time?.values[i])}</td>
                  <td className="num">{formatEnergy(energy?.values[i])}</td>
                  <td className="num ratio">{formatRatio(energy?.ratios[i])}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </ScrollBox>
      </div>
      <div className="card">
        <h3>Energy and carbon, every figure</h3>
        <MetricTable
          data={data}
          labels={labels}
          metrics={data.energy}
          testId="energy-table"
          layout={layout}
        />
      </div>
    </>
  );
}
