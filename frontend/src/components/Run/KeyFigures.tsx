import type { DirSummary, JobSummary } from "../../client/types";
import { latencyUnitNs } from "../../lib/compare";
import {
  formatBytes,
  formatIops,
  formatPercent,
  formatThroughput,
  latencyScale,
} from "../../lib/format";
import { ScrollBox } from "../ScrollBox";

type Scale = ReturnType<typeof latencyScale>;

const LATENCIES = [
  "lat_mean_ns",
  "clat_p50_ns",
  "clat_p99_ns",
  "clat_p999_ns",
  "clat_max_ns",
] as const;

function lat(v: number | null | undefined, s: Scale): string {
  if (v == null) return "—";
  return (v / s.divisor).toLocaleString("en-US", { maximumSignificantDigits: 3 });
}

function DirRow({ dir, label, scale }: { dir: DirSummary; label: string; scale: Scale }) {
  return (
    <tr>
      <th scope="row">{label}</th>
      <td className="num">{formatIops(dir.iops)}</td>
      <td className="num">{formatThroughput(dir.bw_bytes)}</td>
      {LATENCIES.map((k) => (
        <td className="num" key={k}>
          {lat(dir[k], scale)}
        </td>
      ))}
      <td className="num">{formatBytes(dir.io_bytes)}</td>
    </tr>
  );
}

/** The headline numbers of one job, per direction, every figure with its unit; the latencies in
 * one unit for the table (the typical one's, named in the headers), not ns beside ms. */
export function KeyFigures({ job }: { job: JobSummary }) {
  const dirs = [job.read, job.write].filter((d): d is DirSummary => d != null);
  const scale = latencyScale(latencyUnitNs(dirs.map((d) => LATENCIES.map((k) => d[k]))));
  const u = (
    <>
      {" "}
      <span className="unit-head">({scale.unit})</span>
    </>
  );
  return (
    <ScrollBox label="the run's key figures" className="key-figures" testId="key-figures">
      <table className="table compact">
        <thead>
          <tr>
            <th />
            <th className="num">IOPS</th>
            <th className="num">Throughput</th>
            <th className="num">Lat mean{u}</th>
            <th className="num">p50{u}</th>
            <th className="num">p99{u}</th>
            <th className="num">p99.9{u}</th>
            <th className="num">max{u}</th>
            <th className="num">I/O total</th>
          </tr>
        </thead>
        <tbody>
          {job.read && <DirRow dir={job.read} label="read" scale={scale} />}
          {job.write && <DirRow dir={job.write} label="write" scale={scale} />}
        </tbody>
      </table>
      <p className="muted small">
        CPU: usr {formatPercent(job.usr_cpu_pct)}, sys {formatPercent(job.sys_cpu_pct)}
        {job.kernel_worker_cpu_pct != null && (
          <>
            ,{" "}
            <span
              data-testid="io-uring-workers-cpu"
              title="CPU of io_uring's kernel worker threads (io-wq) serving this job, % of one CPU; not included in usr/sys"
            >
              io_uring workers {formatPercent(job.kernel_worker_cpu_pct)}
            </span>
          </>
        )}{" "}
        · latency percentiles are completion latency (clat)
      </p>
      {job.target_nowait === false && (
        <p className="muted small" data-testid="io-uring-no-nowait">
          target has no nowait support: io_uring ran every request in kernel worker threads
        </p>
      )}
    </ScrollBox>
  );
}
