import { useQuery } from "@tanstack/react-query";
import { Link, useSearchParams } from "react-router-dom";
import type { CompareRead } from "../client/types";
import { GroupedBarChart } from "../components/charts/GroupedBarChart";
import { QueryState } from "../components/QueryState";
import { StatusBadge } from "../components/Run/StatusBadge";
import { compareBarCharts, ratiosToFirst, runLabels, unmatchedJobs } from "../lib/compare";
import { formatRatio, formatWithUnit } from "../lib/format";
import { describeWorkload } from "../lib/workload";
import { compareQuery } from "../queries/compare";

/** Run ids from `?runs=a,b,c`, deduplicated, order kept (the first is the ratio baseline). */
export function parseRunIds(value: string | null): string[] {
  const ids = (value ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  return [...new Set(ids)];
}

export function CompareCharts({ data }: { data: CompareRead }) {
  const charts = compareBarCharts(data);
  if (charts.length === 0) return <p className="muted">No comparable figures.</p>;
  return (
    <div className="chart-grid">
      {charts.map((c) => (
        <div className="card chart" key={c.kind} data-testid="compare-chart">
          <h3>{c.title}</h3>
          <GroupedBarChart
            rows={c.rows}
            categoryKey="category"
            series={c.series}
            valueLabel={c.title}
            unit={c.unit}
            log={c.kind === "p99" ? true : "auto"}
          />
        </div>
      ))}
    </div>
  );
}

function CompareTables({ data }: { data: CompareRead }) {
  const labels = runLabels(data.runs);
  return (
    <>
      {data.jobs.map((job) => (
        <div className="card" key={job.name}>
          <h3>{job.name}</h3>
          <div className="scroll-x">
            <table className="table compact" data-testid="compare-table">
              <thead>
                <tr>
                  <th>Metric</th>
                  {labels.map((l, i) => (
                    <th className="num" key={data.runs[i]?.id ?? l}>
                      {l}
                    </th>
                  ))}
                  {labels.slice(1).map((l, i) => (
                    <th className="num ratio" key={`ratio-${data.runs[i + 1]?.id ?? l}`}>
                      {l} ÷ baseline
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {job.metrics.map((m) => {
                  const ratios = ratiosToFirst(m.values);
                  return (
                    <tr key={m.key}>
                      <th scope="row">{m.label}</th>
                      {m.values.map((v, i) => (
                        <td className="num" key={data.runs[i]?.id ?? i}>
                          {formatWithUnit(v, m.unit)}
                        </td>
                      ))}
                      {ratios.slice(1).map((r, i) => (
                        <td className="num ratio" key={data.runs[i + 1]?.id ?? i}>
                          {formatRatio(r)}
                        </td>
                      ))}
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
        </div>
      ))}
    </>
  );
}

export function Compare() {
  const [params, setParams] = useSearchParams();
  const ids = parseRunIds(params.get("runs"));
  const q = useQuery(compareQuery(ids));

  const remove = (id: string) => {
    const next = new URLSearchParams(params);
    next.set("runs", ids.filter((x) => x !== id).join(","));
    setParams(next);
  };

  if (ids.length < 2) {
    return (
      <section>
        <h1>Compare</h1>
        <p className="muted">
          Select two or more runs on the <Link to="/runs">runs page</Link> and press Compare.
        </p>
      </section>
    );
  }

  const labels = q.data ? runLabels(q.data.runs) : [];
  return (
    <section>
      <div className="page-head">
        <h1>Compare {ids.length} runs</h1>
        <div className="actions">
          <button
            type="button"
            className="btn"
            onClick={() => navigator.clipboard?.writeText(window.location.href)}
            title="This page's address holds the selection; share it"
          >
            Copy link
          </button>
        </div>
      </div>
      <QueryState isPending={q.isPending} error={q.error} />
      {q.data && (
        <>
          <div className="card">
            <table className="table compact" data-testid="compare-runs">
              <thead>
                <tr>
                  <th>Run</th>
                  <th>Status</th>
                  <th>Agent</th>
                  <th>Target</th>
                  <th>Workload</th>
                  <th />
                </tr>
              </thead>
              <tbody>
                {q.data.runs.map((r, i) => (
                  <tr key={r.id}>
                    <td>
                      <Link to={`/runs/${r.id}`}>{labels[i]}</Link>
                      {i === 0 && <span className="muted small"> (baseline)</span>}
                    </td>
                    <td>
                      <StatusBadge status={r.status} />
                    </td>
                    <td>{r.agent_name ?? "—"}</td>
                    <td className="mono small">{r.target_path}</td>
                    <td className="small">{describeWorkload(r.workload)}</td>
                    <td>
                      {ids.length > 2 && (
                        <button
                          type="button"
                          className="btn btn-ghost btn-small"
                          onClick={() => remove(r.id)}
                        >
                          remove
                        </button>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {unmatchedJobs(q.data).length > 0 && (
            <div className="alert alert-warn" data-testid="compare-unmatched">
              Not every run ran these jobs: {unmatchedJobs(q.data).join(", ")}. Runs are matched by
              job name; compare runs of the same workload for ratios.
            </div>
          )}
          <CompareCharts data={q.data} />
          <h2>All metrics</h2>
          <p className="muted small">
            Ratio columns divide each run by the baseline (the first run).
          </p>
          <CompareTables data={q.data} />
        </>
      )}
    </section>
  );
}
