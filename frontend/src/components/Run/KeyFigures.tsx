import type { DirSummary, JobSummary } from "../../client/types";
import {
  formatBytes,
  formatIops,
  formatNs,
  formatPercent,
  formatThroughput,
} from "../../lib/format";

function DirRow({ dir, label }: { dir: DirSummary; label: string }) {
  return (
    <tr>
      <th scope="row">{label}</th>
      <td className="num">{formatIops(dir.iops)}</td>
      <td className="num">{formatThroughput(dir.bw_bytes)}</td>
      <td className="num">{formatNs(dir.lat_mean_ns)}</td>
      <td className="num">{formatNs(dir.clat_p50_ns)}</td>
      <td className="num">{formatNs(dir.clat_p99_ns)}</td>
      <td className="num">{formatNs(dir.clat_p999_ns)}</td>
      <td className="num">{formatNs(dir.clat_max_ns)}</td>
      <td className="num">{formatBytes(dir.io_bytes)}</td>
    </tr>
  );
}

/** The headline numbers of one job, per direction, every figure with its unit. */
export function KeyFigures({ job }: { job: JobSummary }) {
  return (
    <div className="key-figures" data-testid="key-figures">
      <table className="table compact">
        <thead>
          <tr>
            <th />
            <th className="num">IOPS</th>
            <th className="num">Throughput</th>
            <th className="num">Lat mean</th>
            <th className="num">p50</th>
            <th className="num">p99</th>
            <th className="num">p99.9</th>
            <th className="num">max</th>
            <th className="num">I/O total</th>
          </tr>
        </thead>
        <tbody>
          {job.read && <DirRow dir={job.read} label="read" />}
          {job.write && <DirRow dir={job.write} label="write" />}
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
    </div>
  );
}
