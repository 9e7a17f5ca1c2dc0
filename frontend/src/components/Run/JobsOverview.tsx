import { useMemo, useState } from "react";
import type { JobSummary, RunRead, RunSeries } from "../../client/types";
import { latencyUnitNs } from "../../lib/compare";
import { formatBytes, formatNs, latencyScale, sig3, toMBps } from "../../lib/format";
import { depthCapNote, isShortJob, MIN_RUNTIME_S } from "../../lib/workload";
import { SortableTable, type SortColumn } from "../Table/SortableTable";
import { KeyFigures } from "./KeyFigures";
import { LatencyPercentiles } from "./LatencyPercentiles";
import { NotStated } from "./NotStated";
import { ThroughputChart } from "./ThroughputChart";

/** Jobs a run page opens by default: a few (quick's three) show their charts at once; a big
 * preset (kernel-help's 110) opens none and draws only what is asked. */
export const OPEN_BY_DEFAULT = 4;
export const JOBS_PER_PAGE = 25;

type Row = {
  job: JobSummary;
  iops: number;
  bw: number;
  mean: number | null;
  p99: number | null;
  iodepth: number | null;
  ioengine: string | null;
  /** the settings the imported file did not state: shown "—", never a default */
  unstated: readonly string[];
};

function both(job: JobSummary, f: (d: NonNullable<JobSummary["read"]>) => number | null) {
  const v = [job.read, job.write]
    .filter((d) => d != null)
    .map(f)
    .filter((x): x is number => x != null);
  return v.length ? v : null;
}

export function jobRows(run: Pick<RunRead, "jobs" | "workload">): Row[] {
  const spec = new Map((run.workload.jobs ?? []).map((j) => [j.name, j]));
  return run.jobs.map((job) => {
    const s = spec.get(job.name);
    const means = both(job, (d) => d.lat_mean_ns);
    const p99s = both(job, (d) => d.clat_p99_ns);
    return {
      job,
      iops: (job.read?.iops ?? 0) + (job.write?.iops ?? 0),
      bw: (job.read?.bw_bytes ?? 0) + (job.write?.bw_bytes ?? 0),
      mean: means ? Math.max(...means) : null,
      p99: p99s ? Math.max(...p99s) : null,
      iodepth: s?.iodepth ?? null,
      ioengine: s?.ioengine ?? null,
      unstated: s?.unstated ?? [],
    };
  });
}

/** One job's figures and charts: drawn only when its row is opened. */
function JobDetail({
  run,
  job,
  series,
}: {
  run: RunRead;
  job: JobSummary;
  series: RunSeries | undefined;
}) {
  const points = series?.jobs.find((s) => s.job_index === job.job_index)?.points ?? [];
  return (
    <div className="card" data-testid="job-result" data-job={job.name}>
      <h3 style={{ marginTop: 0 }}>
        {job.name}{" "}
        <span className="muted small">
          {job.rw} · {formatBytes(job.bs_bytes)} · {formatNs(job.runtime_ns)}
        </span>
      </h3>
      <KeyFigures job={job} />
      <div className="chart-grid" style={{ gridTemplateColumns: "repeat(2, minmax(0, 1fr))" }}>
        <div className="chart" data-testid="run-chart">
          <p className="small muted">Per second: throughput and IOPS</p>
          <ThroughputChart points={points} />
        </div>
        <LatencyPercentiles runId={run.id} job={job.name} />
      </div>
    </div>
  );
}

/**
 * A run's jobs as one sortable table, 25 to a page, each row opening its detail (key figures,
 * per-second chart, latency percentiles) below the table: a 110-job run is a table the width of the
 * window, not 110 cards. One latency unit for the whole table (the typical job's), MB/s for
 * throughput. A job shorter than the short-run rule is marked in its row.
 */
export function JobsOverview({
  run,
  series,
  shortByDesign,
}: {
  run: RunRead;
  series: RunSeries | undefined;
  /** the short_run flag's words when the preset is short by design (its rows say "by design") */
  shortByDesign: boolean;
}) {
  const rows = useMemo(() => jobRows(run), [run]);
  // an imported job's runtime of 0 is one its file did not state: not a short job (the server's rule)
  const unstated = (job: JobSummary) => run.origin != null && job.runtime_ns === 0;
  const [open, setOpen] = useState<Set<number>>(
    () => new Set(rows.length <= OPEN_BY_DEFAULT ? rows.map((r) => r.job.job_index) : []),
  );
  const lat = latencyScale(latencyUnitNs([rows.map((r) => r.p99), rows.map((r) => r.mean)]));
  const latText = (v: number | null) =>
    v == null ? "—" : (v / lat.divisor).toLocaleString("en-US", { maximumSignificantDigits: 3 });
  const toggle = (i: number) =>
    setOpen((prev) => {
      const next = new Set(prev);
      if (next.has(i)) next.delete(i);
      else next.add(i);
      return next;
    });
  // rebuilt each render: the open set and the unit are in its cells (110 rows: cheap)
  const columns: SortColumn<Row>[] = [
    {
      id: "job",
      header: "Job",
      value: (r) => r.job.name,
      cell: (r) => (
        <>
          <button
            type="button"
            className="btn btn-small btn-ghost"
            aria-expanded={open.has(r.job.job_index)}
            onClick={() => toggle(r.job.job_index)}
            data-testid="job-toggle"
            title={open.has(r.job.job_index) ? "hide its detail" : "show its figures and charts"}
          >
            {open.has(r.job.job_index) ? "▾" : "▸"}
          </button>{" "}
          <span className="mono small">{r.job.name}</span>
          {isShortJob(r.job) && !unstated(r.job) && (
            <span
              className="badge validity job-short"
              data-testid="job-validity"
              data-flag="short_run"
              title={`ran ${formatNs(r.job.runtime_ns)}, under ${MIN_RUNTIME_S} s${shortByDesign ? ": short by the preset's design" : ": caches and bursts dominate short runs"}`}
            >
              {shortByDesign ? "short by design" : `⚠ under ${MIN_RUNTIME_S} s`}
            </span>
          )}
          {depthCapNote(r) && (
            <span
              className="badge validity job-short"
              data-testid="job-depth-capped"
              title={depthCapNote(r) ?? ""}
            >
              ⚠ depth 1 ({r.ioengine})
            </span>
          )}
        </>
      ),
    },
    {
      id: "rw",
      header: "rw",
      value: (r) => r.job.rw,
      cell: (r) => (r.unstated.includes("rw") ? <NotStated /> : r.job.rw),
    },
    {
      id: "bs",
      header: "bs",
      num: true,
      value: (r) => r.job.bs_bytes,
      cell: (r) => (r.unstated.includes("bs_bytes") ? <NotStated /> : formatBytes(r.job.bs_bytes)),
    },
    {
      id: "qd",
      header: "QD",
      num: true,
      value: (r) => r.iodepth,
      cell: (r) => (r.unstated.includes("iodepth") ? <NotStated /> : r.iodepth),
      title: "iodepth as asked; a synchronous engine (psync) runs at depth 1",
    },
    {
      id: "iops",
      header: "IOPS",
      num: true,
      value: (r) => r.iops,
      cell: (r) => Math.round(r.iops).toLocaleString("en-US"),
    },
    {
      id: "bw",
      header: "Throughput",
      unit: "MB/s",
      num: true,
      value: (r) => r.bw,
      cell: (r) => sig3(toMBps(r.bw)),
      title: "read + write, 10^6 bytes per second",
    },
    {
      id: "mean",
      header: "mean",
      unit: lat.unit,
      num: true,
      value: (r) => r.mean,
      cell: (r) => latText(r.mean),
      title: "mean total latency (the slower direction)",
    },
    {
      id: "p99",
      header: "p99",
      unit: lat.unit,
      num: true,
      value: (r) => r.p99,
      cell: (r) => latText(r.p99),
      title: "99th percentile completion latency (the slower direction)",
    },
    {
      id: "runtime",
      header: "ran",
      num: true,
      value: (r) => r.job.runtime_ns,
      cell: (r) => (unstated(r.job) ? "—" : formatNs(r.job.runtime_ns)),
    },
  ];
  return (
    <section data-testid="jobs-overview">
      <p className="small muted" style={{ margin: "0 0 0.4rem" }}>
        {rows.length} job{rows.length === 1 ? "" : "s"}; sort by any column, ▸ opens a job's figures
        and charts.{" "}
        {rows.length > 1 && (
          <button
            type="button"
            className="btn btn-small btn-ghost"
            onClick={() => setOpen(new Set())}
            data-testid="jobs-close-all"
          >
            Close all
          </button>
        )}
      </p>
      <SortableTable
        rows={rows}
        columns={columns}
        rowKey={(r) => String(r.job.job_index)}
        pageSize={JOBS_PER_PAGE}
        testId="jobs-table"
        label="the run's jobs"
        rowProps={(r) => ({ "data-testid": "job-row", "data-job": r.job.name })}
      />
      {rows
        .filter((r) => open.has(r.job.job_index))
        .map((r) => (
          <JobDetail key={r.job.job_index} run={run} job={r.job} series={series} />
        ))}
    </section>
  );
}
