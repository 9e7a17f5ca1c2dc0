// The host's page cache and write-back of a run (GET /runs/{id}/system `page_cache`, GET
// /runs/{id}/series `memory`): the settings in words and the chart's rows. docs/writeback.md.
import type { components } from "../client/schema";
import { formatBytes, formatSeconds, MISSING } from "./format";

export type PageCache = components["schemas"]["PageCacheRead"];
export type MemorySeries = components["schemas"]["MemorySeries"];

const MIB = 1024 * 1024;

/** One row of the write-back chart: MiB for the page cache, MB/s for throughput, s on x. */
export interface WritebackRow {
  t_s: number;
  dirty_mib?: number;
  writeback_mib?: number;
  limit_mib?: number;
  background_mib?: number;
  mbps?: number;
}

/** The memory samples and the run's throughput on one time axis (seconds since the engine
 * started; throughput: since its first job's start, the jobs one after another). */
export function writebackRows(
  memory: Pick<MemorySeries, "points">,
  throughput: { t_s: number; mbps: number }[],
): WritebackRow[] {
  const mib = (v: number | null | undefined) => (v == null ? undefined : v / MIB);
  const rows: WritebackRow[] = [
    ...memory.points.map((p) => ({
      t_s: p.t_s,
      dirty_mib: mib(p.dirty_bytes),
      writeback_mib: mib(p.writeback_bytes),
      limit_mib: mib(p.dirty_threshold_bytes),
      background_mib: mib(p.background_threshold_bytes),
    })),
    ...throughput.map((p) => ({ t_s: p.t_s, mbps: p.mbps })),
  ];
  return rows.sort((a, b) => a.t_s - b.t_s);
}

/** "20 % of dirtyable memory" / "256 MiB" / unknown: which of the pair rules (the bytes when set). */
export function limitText(
  pct: number | null | undefined,
  bytes: number | null | undefined,
): string {
  if (bytes != null && bytes > 0) return formatBytes(bytes);
  if (pct != null) return `${pct} % of dirtyable memory`;
  return MISSING;
}

/** The settings as the facts list prints them: [label, value, sysctl or sysfs name]. */
export function pageCacheFacts(pc: PageCache): [string, string, string][] {
  const ns = (v: number | null | undefined) => (v == null ? MISSING : formatSeconds(v / 1e9));
  return [
    [
      "Dirty limit",
      limitText(pc.dirty_ratio_pct, pc.dirty_bytes),
      "vm.dirty_ratio / vm.dirty_bytes",
    ],
    [
      "Background write-back from",
      limitText(pc.dirty_background_ratio_pct, pc.dirty_background_bytes),
      "vm.dirty_background_ratio / vm.dirty_background_bytes",
    ],
    ["Dirty data written after", ns(pc.dirty_expire_ns), "vm.dirty_expire_centisecs"],
    ["Flusher wakes every", ns(pc.dirty_writeback_ns), "vm.dirty_writeback_centisecs"],
    [
      "Read-ahead",
      pc.read_ahead_bytes == null ? MISSING : formatBytes(pc.read_ahead_bytes),
      `/sys/block/${pc.device_name ?? "DEV"}/queue/read_ahead_kb`,
    ],
    ["I/O scheduler", pc.scheduler ?? MISSING, "queue/scheduler"],
    ["Write cache", pc.write_cache ?? MISSING, "queue/write_cache"],
  ];
}
