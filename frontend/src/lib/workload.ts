import type { JobSpec, WorkloadSpec } from "../client/types";
import { formatBytes } from "./format";

/** "randread 4 KiB QD1×1", the way the published reports name jobs (CrystalDiskMark's Q/T). */
export function describeJob(j: Pick<JobSpec, "rw" | "bs_bytes" | "iodepth" | "numjobs">): string {
  return `${j.rw} ${formatBytes(j.bs_bytes)} QD${j.iodepth}×${j.numjobs}`;
}

/** What describeWorkload reads: a shared run's workload (no vdbench text) is one too. */
type Described = Pick<WorkloadSpec, "kind" | "jobs" | "tpch"> & {
  jobfile?: WorkloadSpec["jobfile"];
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
  const jobs = w?.jobs ?? [];
  const first = jobs[0];
  if (!first) return "—";
  // an uploaded TPC-H result's jobs[0] (the agent builds one named tpch, rw "tpch")
  if (jobs.length === 1 && (first.rw as string) === "tpch") return "TPC-H-derived";
  if (jobs.length === 1 && first.name === "heap-btree") return "heap / B-tree sweep";
  return jobs.length === 1
    ? describeJob(first)
    : `${jobs.length} jobs: ${jobs.map((j) => j.name).join(", ")}`;
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
/** Stated overhead per job: laying out or pre-filling its file and starting the engine. */
export const OVERHEAD_S_PER_JOB = 5;
/** Stated overhead per run: the lease, the agent's checks and the result's upload. */
export const OVERHEAD_S_PER_RUN = 10;
/** The stated rate a size-bound job without rate_iops is estimated at (its real speed is what the run measures). */
export const ASSUMED_BYTES_PER_S = 100 * 1024 * 1024;

type EstimateJob = Pick<
  JobSpec,
  "runtime_s" | "ramp_time_s" | "size_bytes" | "io_size_bytes" | "bs_bytes" | "numjobs"
> &
  Partial<Pick<JobSpec, "rate_iops" | "loops">>;

export interface DurationEstimate {
  /** load + idle + overhead, seconds */
  totalS: number;
  /** the jobs' runtimes and warm-ups (size-bound ones at their rate_iops or ASSUMED_BYTES_PER_S) */
  loadS: number;
  /** idle baseline before and after */
  idleS: number;
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

/** How long a run of `jobs` takes, with what the estimate assumes spelled out by its parts. */
export function estimateDuration(
  jobs: readonly EstimateJob[],
  idleS: number | null | undefined,
): DurationEstimate {
  let loadS = 0;
  let assumedRate = 0;
  for (const j of jobs) {
    const { s, assumed } = jobSeconds(j);
    loadS += s;
    if (assumed) assumedRate += 1;
  }
  const idle = 2 * (idleS ?? DEFAULT_IDLE_S);
  const overheadS = OVERHEAD_S_PER_RUN + OVERHEAD_S_PER_JOB * jobs.length;
  return { totalS: loadS + idle + overheadS, loadS, idleS: idle, overheadS, assumedRate };
}
