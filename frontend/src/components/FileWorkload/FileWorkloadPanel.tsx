import type { ValidityFlag } from "../../client/types";
import {
  type FileIntervals,
  type FileWorkloadSummary,
  formatScale,
  intervalSeries,
  type PostmarkReport,
  timeUnitFor,
} from "../../lib/fileWorkload";
import { formatBytes, formatCount, formatNs, formatThroughput, sig3 } from "../../lib/format";
import { GroupedBarChart } from "../charts/GroupedBarChart";
import { MultiLineChart } from "../charts/MultiLineChart";
import "./fileWorkload.css";

/** Operations per second: 12_345 → "12.3k/s". */
export function formatRate(perS: number | null | undefined): string {
  if (perS == null || !Number.isFinite(perS)) return "—";
  return `${formatCount(perS)}/s`;
}

/** A CPU share to three significant digits: 0 → "0 %", 19.73 → "19.7 %" (never "0.00 %"). */
export function formatCpuPct(pct: number | null | undefined): string {
  if (pct == null || !Number.isFinite(pct)) return "—";
  return `${sig3(pct)} %`;
}

/**
 * The validity flag `cache_resident` beside the figures it qualifies: the file set fits in the
 * host's RAM and is not opened O_DIRECT, so the rates may be the page cache's.
 */
export function CacheFlag({ flag }: { flag: ValidityFlag | undefined }) {
  if (!flag) return null;
  return (
    <span
      className="cache-flag"
      data-testid="cache-resident"
      data-flag={flag.flag}
      title={flag.message}
    >
      ⚠ {flag.message}
    </span>
  );
}

function Figure({ label, value, testId }: { label: string; value: string; testId?: string }) {
  return (
    <div className="figure" data-testid={testId}>
      <span className="figure-label">{label}</span>
      <span className="figure-value">{value}</span>
    </div>
  );
}

/** One row per operation: count, rate, response times, bytes. */
function OpTable({ s }: { s: FileWorkloadSummary }) {
  const anyBytes = s.ops.some((o) => o.bytes != null);
  return (
    <>
      <h4>Operations</h4>
      <div className="scroll-x">
        <table className="table compact op-table" data-testid="file-ops">
          <thead>
            <tr>
              <th>Operation</th>
              <th className="num">Count</th>
              <th className="num">Rate</th>
              <th className="num">Resp mean</th>
              <th className="num">p50</th>
              <th className="num">p99</th>
              <th className="num">p99.9</th>
              <th className="num">max</th>
              {anyBytes && <th className="num">Bytes</th>}
            </tr>
          </thead>
          <tbody>
            {s.ops.map((o) => (
              <tr key={o.name} data-op={o.name}>
                <th scope="row">{o.name}</th>
                <td className="num">{formatCount(o.ops)}</td>
                <td className="num">{formatRate(o.rate_per_s)}</td>
                <td className="num">{formatNs(o.resp_mean_ns)}</td>
                <td className="num">{formatNs(o.resp_p50_ns)}</td>
                <td className="num">{formatNs(o.resp_p99_ns)}</td>
                <td className="num">{formatNs(o.resp_p999_ns)}</td>
                <td className="num">{formatNs(o.resp_max_ns)}</td>
                {anyBytes && <td className="num">{formatBytes(o.bytes)}</td>}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {s.mode === "postmark" && (
        <p className="small muted">
          Rates as PostMark reports them: creations and deletions over the whole run, reads and
          appends over the transaction phase. Response: open, every call and close (create, read,
          append) or unlink (delete).
        </p>
      )}
    </>
  );
}

/** Why a PostMark run appended to no file although its transactions asked for appends: PostMark
 * grows a file only up to the size's upper bound, and files made at a fixed size (low = high,
 * Song & Lee's 327 KiB) are already there (a reader saw "50 % appends" beside 0 appended). */
export function appendedNote(
  p: Pick<PostmarkReport, "files_appended" | "transactions" | "size_low_bytes" | "size_high_bytes">,
): string {
  if (
    p.files_appended === 0 &&
    p.transactions > 0 &&
    p.size_low_bytes != null &&
    p.size_low_bytes === p.size_high_bytes
  )
    return `with transactions; none: every file is made at the fixed size ${formatBytes(p.size_high_bytes)} (low = high), and PostMark appends only up to the upper bound, so each append had nothing to add`;
  return "with transactions";
}

/** PostMark's report: times per phase, files by operation, data moved. */
function PostmarkLines({ s, p }: { s: FileWorkloadSummary; p: PostmarkReport }) {
  const rows: [string, string, string][] = [
    ["Total time", formatNs(s.elapsed_ns), ""],
    ["Creation alone", formatNs(p.creation_ns), `${formatCount(p.files_created_alone)} files`],
    [
      "Transactions",
      formatNs(p.transactions_ns),
      `${formatCount(p.transactions)} (${formatRate(p.transactions_per_s)})`,
    ],
    ["Deletion alone", formatNs(p.deletion_ns), `${formatCount(p.files_deleted_alone)} files`],
  ];
  const files: [string, number, string][] = [
    [
      "Created",
      p.files_created,
      `${formatCount(p.files_created_alone)} alone, ${formatCount(p.files_created_mixed)} with transactions`,
    ],
    ["Read", p.files_read, "with transactions"],
    ["Appended", p.files_appended, appendedNote(p)],
    [
      "Deleted",
      p.files_deleted,
      `${formatCount(p.files_deleted_alone)} alone, ${formatCount(p.files_deleted_mixed)} with transactions`,
    ],
  ];
  // a scaled run's phases take milliseconds: plotted in ms, not as 0.015 s ticks
  const phase = timeUnitFor([p.creation_ns, p.transactions_ns, p.deletion_ns]);
  return (
    <div className="chart-grid" style={{ gridTemplateColumns: "repeat(2, minmax(0, 1fr))" }}>
      <div>
        <h4>PostMark report</h4>
        <table className="table compact" data-testid="postmark-report">
          <tbody>
            {rows.map(([k, v, n]) => (
              <tr key={k}>
                <th scope="row">{k}</th>
                <td className="num">{v}</td>
                <td className="small muted">{n}</td>
              </tr>
            ))}
            {files.map(([k, v, n]) => (
              <tr key={k} data-count={k.toLowerCase()}>
                <th scope="row">Files {k.toLowerCase()}</th>
                <td className="num">{v.toLocaleString("en-US")}</td>
                <td className="small muted">{n}</td>
              </tr>
            ))}
            <tr>
              <th scope="row">Data read</th>
              <td className="num">{formatBytes(s.read_bytes)}</td>
              <td className="small muted">{formatThroughput(s.read_bw_bytes)}</td>
            </tr>
            <tr>
              <th scope="row">Data written</th>
              <td className="num">{formatBytes(s.write_bytes)}</td>
              <td className="small muted">{formatThroughput(s.write_bw_bytes)}</td>
            </tr>
          </tbody>
        </table>
        {p.out_of_files && (
          <p className="alert alert-warn small">
            Out of files: every file was deleted before the transactions ended (PostMark prints no
            report then).
          </p>
        )}
        {p.fsync && (
          <p className="small" data-testid="fsync-note">
            fsync after each file written: <strong>not in PostMark</strong> (iowatt's option).
          </p>
        )}
      </div>
      <div className="chart" data-testid="postmark-phases" data-unit={phase.unit}>
        <p className="small muted">Time per phase ({phase.unit})</p>
        <GroupedBarChart
          rows={[
            { phase: "creation", t: p.creation_ns / phase.perNs },
            { phase: "transactions", t: p.transactions_ns / phase.perNs },
            { phase: "deletion", t: p.deletion_ns / phase.perNs },
          ]}
          categoryKey="phase"
          series={[{ key: "t", label: "time" }]}
          valueLabel="time"
          unit={phase.unit}
          legend={false}
        />
      </div>
    </div>
  );
}

/** Response percentiles per operation as bars (µs, log): PostMark has no intervals. */
function ResponseBars({ s }: { s: FileWorkloadSummary }) {
  const rows = s.ops
    .filter((o) => o.resp_mean_ns != null)
    .map((o) => ({
      op: o.name,
      mean: (o.resp_mean_ns ?? 0) / 1e3,
      p99: o.resp_p99_ns == null ? null : o.resp_p99_ns / 1e3,
      max: o.resp_max_ns == null ? null : o.resp_max_ns / 1e3,
    }));
  if (rows.length === 0) return null;
  return (
    <div className="chart" data-testid="file-resp-bars">
      <p className="small muted">Response time per operation</p>
      <GroupedBarChart
        rows={rows}
        categoryKey="op"
        series={[
          { key: "mean", label: "mean" },
          { key: "p99", label: "p99" },
          { key: "max", label: "max" },
        ]}
        valueLabel="response"
        unit="µs"
        log
      />
    </div>
  );
}

/** vdbench's per-interval operation rates and mean response times. */
function IntervalCharts({ fi }: { fi: FileIntervals }) {
  const { rates, resp, respUnit } = intervalSeries(fi);
  if (fi.points.length === 0) return <p className="muted">No intervals reported.</p>;
  if (fi.points.length === 1)
    // one point draws no line: say so instead of two empty charts with a dot at their edge
    return (
      <p className="small muted" data-testid="interval-note">
        One interval{fi.interval_ns ? ` of ${formatNs(fi.interval_ns)}` : ""}: its figures are the
        operations table above. Per-interval charts need two or more (an interval= shorter than
        elapsed=).
      </p>
    );
  const x = { label: "time", unit: "s" };
  // which points are warm-up: the charts draw them, the totals leave them out
  const warm = fi.points.filter((p) => p.warmup).map((p) => p.t_s);
  return (
    <>
      <p className="small muted" data-testid="interval-note">
        {fi.intervals} interval{fi.intervals === 1 ? "" : "s"}
        {fi.interval_ns ? ` of ${formatNs(fi.interval_ns)}` : ""}
        {fi.merged > 1 ? `, ${fi.merged} merged per point` : ""}
        {warm.length > 0
          ? `; the warm-up (${warm.length === 1 ? `the point at ${warm[0]} s` : `points ${warm[0]}–${warm[warm.length - 1]} s`}) is drawn but left out of the totals`
          : ""}
        .
      </p>
      <div className="chart-grid" style={{ gridTemplateColumns: "repeat(2, minmax(0, 1fr))" }}>
        <div className="chart" data-testid="file-rate-chart">
          <p className="small muted">Operation rate per interval</p>
          <MultiLineChart series={rates} x={x} y={{ label: "rate", unit: "ops/s" }} />
        </div>
        <div className="chart" data-testid="file-resp-chart" data-unit={respUnit}>
          <p className="small muted">Mean response time per interval ({respUnit})</p>
          <MultiLineChart
            series={resp}
            x={x}
            y={{ label: "response", unit: respUnit, log: true }}
          />
        </div>
      </div>
    </>
  );
}

/**
 * The run page's file workload result (PostMark, vdbench file set): figures with their units,
 * the operation table, PostMark's report or vdbench's intervals, the scale the run ran at, and
 * the cache-residency flag beside the figures it qualifies.
 */
export function FileWorkloadPanel({
  summary: s,
  intervals,
  validity = [],
}: {
  summary: FileWorkloadSummary;
  intervals: FileIntervals | null | undefined;
  validity?: ValidityFlag[];
}) {
  const cache = validity.find((f) => f.flag === "cache_resident");
  // vdbench's CPU is the host's (as vdbench prints it); PostMark's the engine process's
  const hostCpu = s.mode === "vdbench" && s.host_cpu_total_pct != null;
  const cpuLabel = hostCpu ? "CPU, host (all CPUs)" : "CPU, engine process";
  const cpu = hostCpu
    ? `${formatCpuPct(s.host_cpu_total_pct)} busy · ${formatCpuPct(s.host_cpu_system_pct)} sys`
    : `${formatCpuPct(s.usr_cpu_pct)} usr · ${formatCpuPct(s.sys_cpu_pct)} sys`;
  return (
    <div className="card file-panel" data-testid="file-workload-panel" data-mode={s.mode}>
      <h3 style={{ marginTop: 0 }}>
        {s.mode === "postmark" ? "PostMark" : "vdbench file set"}{" "}
        <span className="badge" data-testid="run-scale">
          scale {s.scale == null ? "as written" : formatScale(s.scale)}
        </span>{" "}
        <span className="muted small">{formatNs(s.elapsed_ns)}</span>
      </h3>
      {s.error && (
        <div className="alert alert-error small">
          <strong>Engine:</strong> <span className="mono">{s.error}</span>
        </div>
      )}
      {cache && (
        <p className="small" data-testid="cache-note">
          <CacheFlag flag={cache} /> It applies to every rate, response time and MB/s below.
        </p>
      )}
      <div className="figures" data-testid="file-figures">
        {s.postmark && (
          <Figure
            label="Transactions"
            value={formatRate(s.postmark.transactions_per_s)}
            testId="fig-transactions"
          />
        )}
        {s.vdbench && (
          <Figure
            label="Operations (open/close excluded)"
            value={formatRate(s.vdbench.rate_total)}
            testId="fig-ops"
          />
        )}
        <Figure label="Read" value={formatThroughput(s.read_bw_bytes)} testId="fig-read" />
        <Figure label="Write" value={formatThroughput(s.write_bw_bytes)} testId="fig-write" />
        <Figure label={cpuLabel} value={cpu} testId="fig-cpu" />
        <Figure
          label="CPU per operation"
          value={s.cpu_ns_per_op == null ? "—" : formatNs(s.cpu_ns_per_op)}
        />
        <Figure
          label={`File set${s.o_direct ? " (O_DIRECT)" : ""}`}
          value={`${formatBytes(s.dataset_bytes)} · ${formatCount(s.files)} files${
            s.directories ? ` · ${formatCount(s.directories)} dirs` : ""
          }`}
          testId="fig-fileset"
        />
        {s.host_mem_bytes != null && (
          <Figure label="Host RAM" value={formatBytes(s.host_mem_bytes)} />
        )}
      </div>
      <OpTable s={s} />
      {s.postmark && <PostmarkLines s={s} p={s.postmark} />}
      {s.postmark && <ResponseBars s={s} />}
      {s.vdbench && (
        <>
          <h4>Per interval</h4>
          {intervals ? (
            <IntervalCharts fi={intervals} />
          ) : (
            <p className="muted">Loading the intervals…</p>
          )}
          <p className="small muted" data-testid="vdbench-shape">
            {s.vdbench.fsd
              .map(
                (f) =>
                  `${f.name}: depth ${f.depth}, width ${f.width}, ${formatCount(f.files)} files per directory → ${formatCount(f.total_files)} files of ${formatBytes(f.total_bytes / Math.max(1, f.total_files))}${f.o_direct ? ", O_DIRECT" : ""}`,
              )
              .join("; ")}
            {" · "}
            {s.vdbench.fwd
              .map(
                (w) =>
                  `${w.name}: ${w.operation}${w.rdpct != null ? ` ${w.rdpct}% read` : ""}, ${w.fileio ?? ""} I/O in ${w.fileselect ?? ""} files, ${w.threads} threads`,
              )
              .join("; ")}
            {" · "}
            fwdrate {s.vdbench.fwdrate}, format {s.vdbench.format ?? "no"}
            {s.vdbench.format_ns ? ` (${formatNs(s.vdbench.format_ns)})` : ""}
            {s.vdbench.exhausted ? " · every fwd ran out of work" : ""}
            {s.vdbench.maxdata_reached ? " · maxdata reached" : ""}
          </p>
        </>
      )}
      <p className="small muted">
        {formatBytes(s.read_bytes)} read, {formatBytes(s.write_bytes)} written over{" "}
        {formatNs(s.elapsed_ns)}
        {s.mode === "vdbench" ? " (measured intervals; the format is not counted)" : ""}.
      </p>
    </div>
  );
}
