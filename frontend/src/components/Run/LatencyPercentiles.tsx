import { useQuery } from "@tanstack/react-query";
import { errorMessage } from "../../lib/errors";
import { latencyChart, ninesLabel } from "../../lib/latency";
import { latencyQuery } from "../../queries/compare";
import { MultiLineChart } from "../charts/MultiLineChart";

/** One job's completion-latency percentile curve from the engine's histogram (fio's log-linear
 * bins, GET /compare/latency for this one run): x in nines (p50 … p99.999, log of 1 − p), y log. */
export function LatencyPercentiles({ runId, job }: { runId: string; job: string }) {
  const q = useQuery(latencyQuery([runId], job, "none"));
  if (q.error) return <p className="muted">Latency percentiles: {errorMessage(q.error)}</p>;
  if (!q.data) return <p className="muted">Loading latency percentiles…</p>;
  const chart = latencyChart(q.data, new Map(q.data.columns.map((c) => [c.key, "this run"])));
  if (chart.series.length === 0) {
    return <p className="muted">No latency histogram stored for {job}.</p>;
  }
  const samples = q.data.curves.reduce((a, c) => a + c.samples, 0);
  return (
    <div className="chart" data-testid="latency-percentiles">
      <p className="small muted">
        Completion latency by percentile ({samples.toLocaleString("en-US")} I/Os in the histogram;
        read solid, write dashed)
      </p>
      <MultiLineChart
        series={chart.series.map((s) => ({
          ...s,
          label: s.key.endsWith("-write") ? "write" : "read",
        }))}
        x={{ label: "percentile", unit: "", ticks: chart.ticks, format: ninesLabel }}
        y={{ label: "Latency", unit: chart.unit, log: true }}
      />
    </div>
  );
}
