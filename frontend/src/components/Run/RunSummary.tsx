import type { components } from "../../client/schema";
import type { JobSummary, RunRead } from "../../client/types";
import { KIND_LABEL, kindOf, specOf } from "../../lib/fileWorkload";
import { formatBytes, formatCount, formatIops, formatNs, formatThroughput } from "../../lib/format";
import { dbHeadline } from "../DbWorkload/DbRunPanels";
import { NotStated } from "./NotStated";

export type RunSystem = components["schemas"]["RunSystem"];
export type RunFlag = components["schemas"]["RunValidityFlag"];

const CACHE_TEXT: Record<RunSystem["cache"], string> = {
  direct: "direct I/O (O_DIRECT, page cache bypassed)",
  buffered: "buffered I/O (through the page cache)",
  mixed: "some jobs direct, some through the page cache",
  unstated: "—",
};

/** Which fact of the header each validity flag qualifies (it is shown beside that fact). */
const FLAG_PLACE: Record<string, "summary" | "host" | "device" | "interface" | "cache"> = {
  short_run: "summary",
  virtualized: "host",
  unconditioned_ssd: "device",
  above_line_rate: "interface",
  working_set_below_ram: "cache",
  buffered_device: "cache",
};

export function placeOf(flag: string): "summary" | "host" | "device" | "interface" | "cache" {
  return FLAG_PLACE[flag] ?? "summary";
}

/** "41.2k IOPS, 169 MB/s, p99 123 µs" for one job (read + write together). */
export function jobHeadline(job: JobSummary): string {
  const dirs = [job.read, job.write].filter((d) => d != null);
  const iops = dirs.reduce((a, d) => a + d.iops, 0);
  const bw = dirs.reduce((a, d) => a + d.bw_bytes, 0);
  const p99 = Math.max(...dirs.map((d) => d.clat_p99_ns ?? 0));
  const parts = [formatIops(iops), formatThroughput(bw)];
  if (p99 > 0) parts.push(`p99 ${formatNs(p99)}`);
  return parts.join(", ");
}

/** The one line a shared link leads with: what ran where and what it measured. */
export function summaryLine(run: RunRead, sys: RunSystem | undefined): string {
  const targets = run.targets ?? [];
  const multi = targets.length > 1;
  // a multi-target run's system facts are its first target's: the line names every target's device
  const where = multi
    ? `${targets.length} targets (${[...new Set(targets.map((t) => t.device_name ?? t.target_path))].join(" + ")})`
    : (sys?.device_model ?? sys?.device_name ?? run.device_name ?? run.target_path);
  const how = multi ? "" : [sys?.interface, sys?.fstype].filter(Boolean).join(", ");
  const cache =
    !sys || sys.cache === "unstated"
      ? null
      : sys.cache === "mixed"
        ? "mixed cache modes"
        : `${sys.cache} I/O`;
  const kind = kindOf(specOf(run));
  const njobs = (run.workload.jobs ?? []).length;
  const db = dbHeadline(run); // TPC-H / heap-B-tree: its own figures, not jobs[0]'s
  const what = db
    ? db.what
    : kind === "block"
      ? `${run.preset ? `${run.preset}: ` : ""}${njobs} job${njobs === 1 ? "" : "s"}`
      : KIND_LABEL[kind];
  const head = `${what} on ${where}${how ? ` (${how})` : ""}${cache ? `, ${cache}` : ""}${sys?.hostname ? `, host ${sys.hostname}` : ""}`;
  const fw = run.file_workload;
  if (fw) {
    // a file workload's headline: its own rate (PostMark's transactions, vdbench's operations)
    const rate = fw.postmark
      ? `${formatCount(fw.postmark.transactions_per_s)} transactions/s`
      : `${formatCount(fw.vdbench?.rate_total ?? 0)} ops/s`;
    return `${head}: ${rate}, read ${formatThroughput(fw.read_bw_bytes)}, write ${formatThroughput(fw.write_bw_bytes)}`;
  }
  if (db) return `${head}: ${db.figures}`;
  if (run.jobs.length === 0) return `${head}: ${run.status}`;
  const shown = run.jobs.slice(0, 3).map((j) => `${j.name} ${jobHeadline(j)}`);
  const more = run.jobs.length > 3 ? `; +${run.jobs.length - 3} more jobs below` : "";
  return `${head}: ${shown.join("; ")}${more}`;
}

function Flags({ flags, testid }: { flags: RunFlag[]; testid: string }) {
  if (flags.length === 0) return null;
  return (
    <>
      {flags.map((f) => (
        <span
          key={f.flag}
          className="badge validity"
          data-testid={testid}
          data-flag={f.flag}
          title={f.message}
          style={{ marginLeft: "0.4rem" }}
        >
          ⚠ {f.message}
        </span>
      ))}
    </>
  );
}

/** The run page's header: the one-line summary, then the system, each validity flag beside the
 * fact it qualifies (the figures, the host, the device, its interface, the cache mode). */
export function RunSummary({ run, sys }: { run: RunRead; sys: RunSystem | undefined }) {
  const flags = sys?.validity ?? [];
  const at = (place: ReturnType<typeof placeOf>) => flags.filter((f) => placeOf(f.flag) === place);
  const host = sys
    ? [
        sys.hostname,
        sys.distro,
        sys.cpu_model,
        sys.mem_bytes != null ? `${formatBytes(sys.mem_bytes)} RAM` : null,
      ]
        .filter(Boolean)
        .join(" · ")
    : null;
  const device = sys
    ? [
        sys.device_model ?? sys.device_name,
        sys.media,
        sys.device_kind !== sys.media ? sys.device_kind : null,
      ]
        .filter(Boolean)
        .join(" · ")
    : null;
  const fs = sys?.fstype
    ? `${sys.fstype}${sys.mountpoint ? ` on ${sys.mountpoint}` : ""}${sys.mount_options ? ` (${sys.mount_options})` : ""}`
    : null;
  return (
    <div className="card" data-testid="run-summary">
      <p data-testid="run-summary-line" style={{ margin: "0 0 0.6rem", fontSize: "1.05rem" }}>
        {summaryLine(run, sys)}
        <Flags flags={at("summary")} testid="validity-flag" />
      </p>
      <dl className="facts" data-testid="run-system">
        <dt>Host</dt>
        <dd data-testid="system-host">
          {host || run.agent_name}
          {sys?.virtualization && sys.virtualization !== "none" && (
            <span className="muted"> · virtualised ({sys.virtualization})</span>
          )}
          <Flags flags={at("host")} testid="validity-flag" />
        </dd>
        <dt>Kernel</dt>
        <dd className="mono" data-testid="system-kernel">
          {sys?.kernel ?? "unknown"}
        </dd>
        <dt>{(run.targets?.length ?? 0) > 1 ? "Device (first target)" : "Device"}</dt>
        <dd data-testid="system-device">
          {device || "unknown"}
          <Flags flags={at("device")} testid="validity-flag" />
        </dd>
        <dt>Interface</dt>
        <dd data-testid="system-interface">
          {sys?.interface ?? "unknown"}
          <Flags flags={at("interface")} testid="validity-flag" />
        </dd>
        <dt>File system</dt>
        <dd className="mono small" data-testid="system-fs">
          {fs ?? (run.target_path.startsWith("/dev/") ? "none (raw block device)" : "unknown")}
        </dd>
        <dt>Cache mode</dt>
        <dd data-testid="system-cache">
          {sys?.cache === "unstated" ? <NotStated /> : sys ? CACHE_TEXT[sys.cache] : "…"}
          <Flags flags={at("cache")} testid="validity-flag" />
        </dd>
      </dl>
    </div>
  );
}
