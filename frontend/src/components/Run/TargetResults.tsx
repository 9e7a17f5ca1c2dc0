import { Link } from "react-router-dom";
import type { JobSummary, RunRead } from "../../client/types";
import { compareHref } from "../../lib/compareState";
import { formatIops, formatNs, formatThroughput } from "../../lib/format";
import { ScrollBox } from "../ScrollBox";

type Figures = { iops: number; bw: number; mean: number | null; p99: number | null };

/** One job's read + write rates and its worst latency (what the jobs table shows per job). */
export function figuresOf(job: JobSummary | undefined): Figures | null {
  if (!job) return null;
  const dirs = [job.read, job.write].filter((d) => d != null);
  const worst = (f: (d: (typeof dirs)[number]) => number | null) => {
    const v = dirs.map(f).filter((x): x is number => x != null);
    return v.length ? Math.max(...v) : null;
  };
  return {
    iops: dirs.reduce((s, d) => s + d.iops, 0),
    bw: dirs.reduce((s, d) => s + d.bw_bytes, 0),
    mean: worst((d) => d.lat_mean_ns),
    p99: worst((d) => d.clat_p99_ns),
  };
}

function Cells({ f }: { f: Figures | null }) {
  return (
    <>
      <td className="num">{formatIops(f?.iops)}</td>
      <td className="num">{formatThroughput(f?.bw)}</td>
      <td className="num">{formatNs(f?.mean)}</td>
      <td className="num">{formatNs(f?.p99)}</td>
    </>
  );
}

/** The run page's Target fact: the one target, or each target of a multi-target run in order;
 * a run whose file named none (an import) says so rather than leave the line empty. */
export function RunTargets({ run }: { run: Pick<RunRead, "target_path" | "targets" | "origin"> }) {
  const targets = run.targets ?? [];
  if (targets.length > 1)
    return (
      <span data-testid="run-targets">
        {targets.length} at the same time:
        {targets.map((t) => (
          <span key={t.target_index} className="mono block">
            {t.target_path}
          </span>
        ))}
      </span>
    );
  if (!run.target_path)
    return <span className="muted">{run.origin ? "not stated by the imported file" : "—"}</span>;
  return <span className="mono">{run.target_path}</span>;
}

/** Above a multi-target run's jobs: their figures are the targets' combined. */
export function CombinedCaption({ run }: { run: Pick<RunRead, "targets" | "jobs"> }) {
  const n = run.targets?.length ?? 0;
  if (n < 2 || run.jobs.length === 0) return null;
  return (
    <p className="small muted" data-testid="combined-caption">
      Each job below: the {n} targets <strong>combined</strong> (each target's own figures are in
      Per target above).
    </p>
  );
}

/** A multi-target run's results: per job, each target's figures and the combined row (the
 * run's own `jobs`: bytes and I/Os summed, rates over the longest target's runtime, latency
 * percentiles merged from the targets' histograms or not combined). Nothing for one target. */
export function TargetResults({
  run,
}: {
  run: Pick<RunRead, "id" | "jobs" | "targets" | "combined">;
}) {
  const targets = run.targets ?? [];
  if (targets.length === 0 || run.jobs.length === 0) return null;
  const combined = run.combined;
  return (
    <div className="card" data-testid="target-results">
      <h3>Per target ({targets.length} at the same time)</h3>
      <ScrollBox label="each target's results and the combined row">
        <table className="table">
          <thead>
            <tr>
              <th>Job</th>
              <th>Target</th>
              <th className="num">IOPS</th>
              <th className="num">Throughput</th>
              <th className="num">Mean latency</th>
              <th className="num">p99 latency</th>
              <th>Compare</th>
            </tr>
          </thead>
          <tbody>
            {run.jobs.map((job) => (
              <JobRows key={job.job_index} runId={run.id} job={job} targets={targets} />
            ))}
          </tbody>
        </table>
      </ScrollBox>
      <p className="muted small" data-testid="combined-note">
        Combined: {combined?.rates ?? "bytes and I/Os summed over the targets"}.{" "}
        {combined?.latency === "not_combined"
          ? "Latency percentiles are not combined: a target gave no latency histogram (each target's own are above)."
          : "Latency percentiles from the targets' histograms merged."}{" "}
        Energy: {combined?.energy ?? "the host's, not split between targets"}.
      </p>
    </div>
  );
}

function JobRows({
  runId,
  job,
  targets,
}: {
  runId: string;
  job: JobSummary;
  targets: NonNullable<RunRead["targets"]>;
}) {
  return (
    <>
      {targets.map((t, k) => (
        <tr key={t.target_index} data-testid="target-row">
          {k === 0 && <td rowSpan={targets.length + 1}>{job.name}</td>}
          <td className="mono">
            {t.target_path}
            {t.device_name && <span className="muted"> · {t.device_name}</span>}
          </td>
          <Cells f={figuresOf(t.jobs.find((j) => j.job_index === job.job_index))} />
          <td>
            <Link
              to={compareHref({ runs: [runId], targets: [`${runId}:${t.target_index}`] })}
              title="compare this target's own figures with other runs (add them on the compare page)"
            >
              this target
            </Link>
          </td>
        </tr>
      ))}
      <tr data-testid="combined-row" className="combined-row">
        <td title="bytes and I/Os summed; bytes/s and IOPS over the longest target's runtime">
          <strong>combined</strong> <span className="muted small">({targets.length} targets)</span>
        </td>
        <Cells f={figuresOf(job)} />
        <td>
          <Link to={compareHref({ runs: [runId] })}>combined</Link>
        </td>
      </tr>
    </>
  );
}
