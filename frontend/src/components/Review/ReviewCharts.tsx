// The review's two charts: cost (TCO over the horizon) against performance, one point per
// candidate, and the TCO of each candidate stacked as purchase, energy and replacements.
import {
  Bar,
  BarChart,
  CartesianGrid,
  Legend,
  ResponsiveContainer,
  Scatter,
  ScatterChart,
  Tooltip,
  XAxis,
  YAxis,
  ZAxis,
} from "recharts";
import { sig3 } from "../../lib/format";
import type { ReviewRead } from "../../queries/reviews";
import { tickNumber } from "../charts/axis";
import { colorAt } from "../charts/palette";
import { num, perfUnit } from "./units";

/** One point per candidate with both figures; money as numbers only for plotting. */
export function scatterPoints(review: ReviewRead) {
  return review.candidates
    .map((c, i) => ({
      name: c.name,
      perf: num(c.performance_value),
      tco: num(c.tco),
      color: colorAt(i),
    }))
    .filter(
      (p): p is { name: string; perf: number; tco: number; color: string } =>
        p.perf !== null && p.tco !== null,
    );
}

export function tcoRows(review: ReviewRead) {
  return review.candidates.map((c) => ({
    name: c.name,
    purchase: num(c.tco_parts.purchase) ?? 0,
    energy: num(c.tco_parts.energy) ?? 0,
    replacements: num(c.tco_parts.replacements) ?? 0,
  }));
}

export function CostPerformanceScatter({ review }: { review: ReviewRead }) {
  const points = scatterPoints(review);
  const metric = review.candidates[0]?.performance_metric ?? "iops";
  if (points.length === 0)
    return <p className="muted">No candidate has both a TCO and a performance.</p>;
  return (
    <div className="chart" data-testid="cost-scatter">
      <h4>TCO against performance</h4>
      <ResponsiveContainer width="100%" height={340}>
        <ScatterChart margin={{ top: 16, right: 24, bottom: 24, left: 24 }}>
          <CartesianGrid strokeDasharray="3 3" />
          <XAxis
            type="number"
            dataKey="perf"
            name="performance"
            tickFormatter={tickNumber}
            label={{
              value: `performance (${perfUnit(metric)})`,
              position: "insideBottom",
              offset: -12,
            }}
          />
          <YAxis
            type="number"
            dataKey="tco"
            name="TCO"
            tickFormatter={tickNumber}
            label={{
              value: `TCO (${review.currency})`,
              angle: -90,
              position: "insideLeft",
              offset: -12,
            }}
          />
          <ZAxis range={[110, 110]} />
          <Tooltip
            formatter={(v: unknown) => (typeof v === "number" ? sig3(v) : String(v))}
            labelFormatter={() => ""}
          />
          <Legend verticalAlign="bottom" wrapperStyle={{ paddingTop: 24 }} />
          {/* one series per candidate: its colour and name in the key, never labels on top of each other */}
          {points.map((p) => (
            <Scatter
              key={p.name}
              name={p.name}
              data={[p]}
              fill={p.color}
              isAnimationActive={false}
            />
          ))}
        </ScatterChart>
      </ResponsiveContainer>
      <p className="muted small">
        Down and to the right is better: more performance for less money.
      </p>
    </div>
  );
}

export function TcoBars({ review }: { review: ReviewRead }) {
  const rows = tcoRows(review);
  const tilt = rows.length > 4;
  return (
    <div className="chart" data-testid="tco-bars">
      <h4>
        TCO over {sig3(num(review.horizon_years) ?? 0)} years ({review.currency})
      </h4>
      <ResponsiveContainer width="100%" height={360}>
        <BarChart data={rows} margin={{ top: 16, right: 24, bottom: 8, left: tilt ? 48 : 24 }}>
          <CartesianGrid strokeDasharray="3 3" />
          <XAxis
            dataKey="name"
            interval={0}
            angle={tilt ? -25 : 0}
            textAnchor={tilt ? "end" : "middle"}
            height={tilt ? 90 : 30}
          />
          <YAxis tickFormatter={tickNumber} />
          <Tooltip
            formatter={(v: unknown) =>
              typeof v === "number" ? `${sig3(v)} ${review.currency}` : String(v)
            }
          />
          <Legend verticalAlign="top" itemSorter={null} />
          <Bar
            dataKey="purchase"
            stackId="tco"
            name="purchase"
            fill={colorAt(0)}
            isAnimationActive={false}
          />
          <Bar
            dataKey="energy"
            stackId="tco"
            name="energy"
            fill={colorAt(2)}
            isAnimationActive={false}
          />
          <Bar
            dataKey="replacements"
            stackId="tco"
            name="replacements"
            fill={colorAt(1)}
            isAnimationActive={false}
          />
        </BarChart>
      </ResponsiveContainer>
    </div>
  );
}
