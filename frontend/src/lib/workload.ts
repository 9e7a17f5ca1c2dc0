import type { JobSpec, JobSpecIn, WorkloadSpec } from "../client/types";
import { formatBytes } from "./format";

/** "randread 4 KiB QD1×1", the way the published reports name jobs (CrystalDiskMark's Q/T). */
export function describeJob(
  j: Pick<JobSpec, "rw" | "bs_bytes" | "iodepth" | "numjobs"> & Pick<Partial<JobSpec>, "unstated">,
): string {
  // an imported file's unstated settings read "—", never the spec's placeholder
  const u = new Set<string>(j.unstated ?? []);
  const v = (key: string, text: string | null) => (text === null || u.has(key) ? "—" : text);
  const str = (n: number | null) => (n === null ? null : String(n));
  return `${v("rw", j.rw)} ${v("bs_bytes", j.bs_bytes === null ? null : formatBytes(j.bs_bytes))} QD${v("iodepth", str(j.iodepth))}×${v("numjobs", str(j.numjobs))}`;
}

/** Whether a workload's jobs leave settings unstated (an imported run): "—" in its brief. */
export function hasUnstated(
  w: { jobs?: readonly Pick<Partial<JobSpec>, "unstated">[] } | null | undefined,
): boolean {
  return (w?.jobs ?? []).some((j) => (j.unstated ?? []).length > 0);
}

/** What describeWorkload reads: a shared run's workload (no vdbench text) is one too. */
type Described = Pick<WorkloadSpec, "kind" | "jobs" | "tpch"> & {
  jobfile?: WorkloadSpec["jobfile"];
  pts?: WorkloadSpec["pts"];
};

export function describeWorkload(w: Described | null | undefined): string {
  if (w?.kind === "postmark") return "PostMark";
  if (w?.kind === "vdbench") return "vdbench file set";
  if (w?.kind === "tpch")
    return w.tpch ? `TPC-H-derived, SF ${w.tpch.scale_factor} on ${w.tpch.dbms}` : "TPC-H-derived";
  if (w?.kind === "heap_btree") return "heap / B-tree sweep";
  if (w?.kind === "jobfile") {
    const n = w.jobfile?.parsed?.jobs.length;
    return n ? `fio job file: ${n} job${n === 1 ? "" : "s"}` : "fio job file";
  }
  if (w?.kind === "pts") return w.pts ? `SNIA PTS ${w.pts.test}` : "SNIA PTS";
  if (w?.kind === "innodb_flush") return "InnoDB flushing policy (sysbench on MariaDB)";
  const jobs = w?.jobs ?? [];
  const first = jobs[0];
  if (!first) return "—";
  // an uploaded TPC-H result's jobs[0] (the agent builds one named tpch, rw "tpch")
  if (jobs.length === 1 && (first.rw as string) === "tpch") return "TPC-H-derived";
  if (jobs.length === 1 && first.name === "heap-btree") return "heap / B-tree sweep";
  if (jobs.length === 1 && (first.rw as string) === "innodb-flush")
    return "InnoDB flushing policy (sysbench on MariaDB)";
  return jobs.length === 1 ? describeJob(first) : `${jobs.length} jobs: ${namesInBrief(jobs)}`;
}

/** The first three names and how many more: a list cell never holds 110 job names. */
export function namesInBrief(jobs: readonly { name: string }[], shown = 3): string {
  const names = jobs.slice(0, shown).map((j) => j.name);
  const more = jobs.length - names.length;
  return more > 0 ? `${names.join(", ")}, +${more} more` : names.join(", ");
}

/** A run's workload in a list: the built-in preset's name when it ran one (runs.preset, recorded
 * when it was queued), else the workload in brief. */
export function workloadLabel(run: { preset?: string | null; workload: Described }): {
  label: string;
  preset: boolean;
} {
  if (run.preset) return { label: run.preset, preset: true };
  return { label: describeWorkload(run.workload), preset: false };
}

// --- the short-run rule (libs/workload defaults.py; both pass libs/workload/testdata/constants.json) ---

/** A job that ran under MIN_RUNTIME_S is flagged short_run (the server's compare/validity.py);
 * the new-run form's jobs default to it, so a default is never flagged. */
export const MIN_RUNTIME_S = 10;
/** A 10 s time-based job may report 9,999 ms: still 10 s. */
export const TIMER_SLACK_S = 0.05;

/** Whether a measured job is short by the rule (its runtime as the engine timed it). */
export function isShortJob(job: { runtime_ns: number }): boolean {
  return job.runtime_ns < (MIN_RUNTIME_S - TIMER_SLACK_S) * 1e9;
}

// --- queue depth on a synchronous engine -----------------------------------------------------------

/** Engines that issue one I/O at a time per thread: iodepth above 1 is capped at 1, as fio notes
 * ("both iodepth >= 1 and synchronous I/O engine are selected, queue depth will be capped at 1"). */
export const SYNC_ENGINES: ReadonlySet<string> = new Set(["psync", "sync", "pvsync", "pvsync2"]);

/** The note for a job asking iodepth > 1 on a synchronous engine, or null. */
export function depthCapNote(j: {
  iodepth?: number | null;
  ioengine?: string | null;
  unstated?: readonly string[] | null;
}): string | null {
  // an imported job whose file named no engine (null): nothing to say of its depth
  if (j.ioengine === null || j.unstated?.includes("ioengine")) return null;
  const depth = j.iodepth ?? 1;
  if (depth <= 1 || !SYNC_ENGINES.has(j.ioengine ?? "psync")) return null;
  return `iodepth ${depth} with ${j.ioengine ?? "psync"}, a synchronous engine: the queue depth is capped at 1 (one I/O in flight per thread, as fio notes); use libaio or io_uring for depth ${depth}`;
}

// Workload identity, the server's rule (libs/workload/src/iowatt_workload/identity.py, behind the
// compare's fingerprint); both pass libs/workload/testdata/identity.json. Two workloads are the
// same when their jobs, in order, are equal without their names and without fields added later
// (LATER_JOB_FIELDS) that are still at their default.
const IGNORED_JOB_FIELDS = new Set(["name"]);
const LATER_JOB_FIELDS: Record<string, unknown> = {
  end_fsync: false,
  io_size_bytes: null,
  // spec version 2's engine options
  bssplit: null,
  rate_iops: null,
  random_distribution: "random",
  fsync_every: 0,
  sync: false,
  randseed: null,
  loops: 1,
};

type Jobs = {
  jobs?: readonly object[];
  kind?: string;
  postmark?: object | null;
  vdbench?: object | null;
};

/** What identity compares (the server's WorkloadSpec.identity_jobs): a block workload's jobs; a
 * file workload's parameters as one entry with its kind, so file workloads are the same only when
 * they run the same thing. */
function identityJobs(w: Jobs): readonly object[] {
  if (w.kind === "postmark" && w.postmark) return [{ kind: "postmark", ...w.postmark }];
  if (w.kind === "vdbench" && w.vdbench) return [{ kind: "vdbench", ...w.vdbench }];
  return w.jobs ?? [];
}

/** A job as identity sees it, keys sorted; `omit` leaves out one more field (a sweep's axis). */
function canonicalJob(job: object, omit?: string): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(job)
      .filter(
        ([k, v]) =>
          k !== omit &&
          !IGNORED_JOB_FIELDS.has(k) &&
          !(k in LATER_JOB_FIELDS && v === LATER_JOB_FIELDS[k]),
      )
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
  );
}

/** The jobs as identity sees them, as one string: equal strings, same workload. */
export function workloadKey(workload: Jobs | null | undefined): string {
  return JSON.stringify((workload ? identityJobs(workload) : []).map((job) => canonicalJob(job)));
}

/** One job's identity without `omit`: jobs with equal keys differ only in that field. */
export function jobKey(job: object, omit?: string): string {
  return JSON.stringify(canonicalJob(job, omit));
}

// --- duration estimate (the New run form) ---------------------------------------------------------

/** The agent's idle baseline before and after the load when the run sets none (iowatt_workload
 * DEFAULT_IDLE_S; both pass libs/workload/testdata/constants.json, workload.constants.test.ts). */
export const DEFAULT_IDLE_S = 30;
/** Stated overhead per job: starting it and opening (or laying out) its file. A quick run (3 jobs
 * of 3 s on 64 MiB, no meter) measured 9 s from start to finish: 5 s per job made it 1 min 34 s. */
export const OVERHEAD_S_PER_JOB = 1;
/** Stated overhead per run: the agent's checks and the result's upload. */
export const OVERHEAD_S_PER_RUN = 2;
/** The stated rate a size-bound job without rate_iops is estimated at (its real speed is what the run measures). */
export const ASSUMED_BYTES_PER_S = 100 * 1024 * 1024;

type EstimateJob = Pick<
  JobSpecIn,
  "runtime_s" | "ramp_time_s" | "size_bytes" | "io_size_bytes" | "bs_bytes" | "numjobs"
> &
  Partial<Pick<JobSpecIn, "rate_iops" | "loops">>;

export interface DurationEstimate {
  /** load + idle + overhead, seconds */
  totalS: number;
  /** the jobs' runtimes and warm-ups (size-bound ones at their rate_iops or ASSUMED_BYTES_PER_S) */
  loadS: number;
  /** idle baseline before and after (0 without a meter: the agent idles only to measure power) */
  idleS: number;
  /** whether a meter measures the run (its idle baseline counted) */
  metered: boolean;
  /** whose idle setting the baseline is: the run's, the meter's as its agent reports it (its own,
   * else the agent's), or DEFAULT_IDLE_S (an agent that does not report it) */
  idleFrom: "run" | "meter" | "default";
  overheadS: number;
  /** how many size-bound jobs were estimated at ASSUMED_BYTES_PER_S: their time is a guess */
  assumedRate: number;
}

/** One job's seconds: its runtime (an upper bound) plus warm-up; a size-bound job's I/O at its
 * rate_iops (exact: each of its threads issues that many I/Os per second), else at the stated
 * ASSUMED_BYTES_PER_S for all its threads together. */
export function jobSeconds(j: EstimateJob): { s: number; assumed: boolean } {
  const ramp = j.ramp_time_s ?? 0;
  if (j.runtime_s != null) return { s: j.runtime_s + ramp, assumed: false };
  const perThread = (j.io_size_bytes ?? j.size_bytes) * (j.loops ?? 1);
  if (j.rate_iops != null && j.rate_iops > 0 && j.bs_bytes > 0)
    return { s: perThread / j.bs_bytes / j.rate_iops + ramp, assumed: false };
  return { s: (perThread * Math.max(1, j.numjobs)) / ASSUMED_BYTES_PER_S + ramp, assumed: true };
}

/** How long a run of `jobs` takes, with what the estimate assumes spelled out by its parts.
 * `idleS` is the run's idle setting; without one the agent takes `meterIdleS`, the meter's idle
 * baseline as the agent reports it, else DEFAULT_IDLE_S. `metered`: a meter measures
 * the run; without one the agent has no idle baseline to take. */
export function estimateDuration(
  jobs: readonly EstimateJob[],
  idleS: number | null | undefined,
  metered = true,
  meterIdleS?: number | null,
): DurationEstimate {
  let loadS = 0;
  let assumedRate = 0;
  for (const j of jobs) {
    const { s, assumed } = jobSeconds(j);
    loadS += s;
    if (assumed) assumedRate += 1;
  }
  const idleFrom = idleS != null ? "run" : meterIdleS != null ? "meter" : "default";
  const idle = metered ? 2 * (idleS ?? meterIdleS ?? DEFAULT_IDLE_S) : 0;
  const overheadS = OVERHEAD_S_PER_RUN + OVERHEAD_S_PER_JOB * jobs.length;
  return {
    totalS: loadS + idle + overheadS,
    loadS,
    idleS: idle,
    overheadS,
    assumedRate,
    metered,
    idleFrom,
  };
}
