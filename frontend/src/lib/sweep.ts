// Block-size and thread sweeps: jobs of one workload that differ only in bs_bytes (or only
// in numjobs) are drawn as lines, x = that parameter on a log axis (the P3608 report's
// Figure 1, the student report's graphs).
import type { CompareMetric, JobSpec } from "../client/types";
import { formatBytes, toMBps } from "./format";
import type { Rate } from "./series";
import { jobKey } from "./workload";

type SweepParam = "bs_bytes" | "numjobs";

interface Sweep {
  param: SweepParam;
  /** What the jobs share, e.g. "randread QD32" — tells two sweeps of one workload apart. */
  label: string;
  /** Jobs in ascending order of the swept parameter. */
  points: { job: string; x: number }[];
}

/** Everything but the swept parameter, as workload identity sees a job (lib/workload.ts). */
function signature(j: JobSpec, param: SweepParam): string {
  return jobKey(j, param);
}

/**
 * Sweeps in a workload: per parameter, jobs grouped by everything else; a group with at
 * least three distinct values of the parameter is a sweep. Block size is tried first, so a
 * job is in at most one sweep.
 */
export function detectSweeps(jobs: JobSpec[], minPoints = 3): Sweep[] {
  const out: (Sweep & { first: JobSpec })[] = [];
  const used = new Set<string>();
  for (const param of ["bs_bytes", "numjobs"] as const) {
    const groups = new Map<string, JobSpec[]>();
    for (const j of jobs) {
      if (used.has(j.name)) continue;
      const k = signature(j, param);
      groups.set(k, [...(groups.get(k) ?? []), j]);
    }
    for (const g of groups.values()) {
      if (g.some((j) => j[param] == null)) continue; // an unstated setting is no point of a sweep
      const xs = new Set(g.map((j) => j[param]));
      if (xs.size < minPoints || xs.size !== g.length) continue;
      for (const j of g) used.add(j.name);
      const first = g[0] as JobSpec;
      // an imported file's unstated settings read "—", never null
      const v = (k: "rw" | "iodepth" | "numjobs", text: string | null) =>
        text === null || first.unstated?.includes(k) ? "—" : text;
      const [rw, qd, threads] = [
        v("rw", first.rw),
        v("iodepth", first.iodepth === null ? null : String(first.iodepth)),
        v("numjobs", first.numjobs === null ? null : String(first.numjobs)),
      ];
      const label =
        param === "bs_bytes"
          ? `${rw} QD${qd}×${threads}`
          : `${rw} ${formatBytes(first.bs_bytes)} QD${qd}`;
      out.push({
        param,
        label,
        first,
        points: g.map((j) => ({ job: j.name, x: j[param] ?? 0 })).sort((a, b) => a.x - b.x),
      });
    }
  }
  return distinguish(out);
}

/** How a job parameter reads in a sweep's title, when sweeps differ by it. */
const DISTINCT: { key: keyof JobSpec; text: (j: JobSpec) => string }[] = [
  {
    key: "direct",
    text: (j) => (j.direct ? "O_DIRECT (page cache off)" : "buffered (page cache on)"),
  },
  { key: "readahead", text: (j) => `readahead ${j.readahead}` },
  { key: "ioengine", text: (j) => j.ioengine ?? "—" },
  { key: "rwmixread", text: (j) => `${j.rwmixread}% reads` },
  { key: "size_bytes", text: (j) => `${formatBytes(j.size_bytes)} file` },
  { key: "io_size_bytes", text: (j) => `${formatBytes(j.io_size_bytes)} per point` },
  { key: "runtime_s", text: (j) => `${j.runtime_s} s` },
  { key: "end_fsync", text: (j) => (j.end_fsync ? "fsync at end" : "no final fsync") },
  { key: "invalidate", text: (j) => (j.invalidate ? "cache dropped" : "cache kept") },
];

/**
 * Titles from the jobs' real parameters: sweeps that would share a title (kernel-help's three
 * read sweeps are all "read QD1×1") get the parameters they differ by ("read QD1×1 · buffered
 * (page cache on) · readahead off").
 */
function distinguish(sweeps: (Sweep & { first: JobSpec })[]): Sweep[] {
  return sweeps.map(({ first, ...s }) => {
    const twins = sweeps.filter((o) => o.label === s.label && o.param === s.param);
    if (twins.length < 2) return s;
    const extra = DISTINCT.filter((d) => new Set(twins.map((t) => String(t.first[d.key]))).size > 1)
      .filter((d) => d.key !== "readahead" || !first.direct)
      .map((d) => d.text(first));
    return { ...s, label: [s.label, ...extra].join(" · ") };
  });
}

export function sweepAxis(param: SweepParam): {
  label: string;
  unit: string;
  format: (v: number) => string;
} {
  return param === "bs_bytes"
    ? { label: "block size", unit: "bytes", format: (v) => formatBytes(v).replace(" ", "") }
    : { label: "threads (numjobs)", unit: "threads", format: (v) => String(v) };
}

/**
 * Lines of a sweep chart: one per column, x = the swept parameter, y = the jobs' throughput
 * (MB/s, read + write) or IOPS (read + write): the job metrics of the server's kind
 * `bandwidth` or `iops`.
 */
export function sweepLines(
  sweep: Sweep,
  jobs: { name: string; metrics: Pick<CompareMetric, "kind" | "values">[] }[],
  columns: string[],
  rate: Rate,
): { key: string; label: string; color: number; points: { x: number; y: number }[] }[] {
  const kind: CompareMetric["kind"] = rate === "mbps" ? "bandwidth" : "iops";
  return columns.map((label, ci) => ({
    key: `c${ci}`,
    label,
    color: ci,
    points: sweep.points.flatMap((p) => {
      const job = jobs.find((j) => j.name === p.job);
      const vals = (job?.metrics ?? [])
        .filter((m) => m.kind === kind)
        .map((m) => m.values[ci])
        .filter((v): v is number => typeof v === "number");
      if (vals.length === 0) return [];
      const sum = vals.reduce((a, b) => a + b, 0);
      return [{ x: p.x, y: rate === "mbps" ? toMBps(sum) : sum }];
    }),
  }));
}

/** Powers of two covering the swept values, for a log2 block-size or thread axis. */
export function pow2Ticks(xs: number[]): number[] {
  if (xs.length === 0) return [];
  const lo = Math.floor(Math.log2(Math.min(...xs)));
  const hi = Math.ceil(Math.log2(Math.max(...xs)));
  const step = Math.max(1, Math.ceil((hi - lo) / 12));
  const out: number[] = [];
  for (let e = lo; e <= hi; e += step) out.push(2 ** e);
  return out;
}
