import type { JobSpec, WorkloadSpec } from "../client/types";
import { formatBytes } from "./format";

/** "randread 4 KiB QD1×1", the way the seeds name jobs (CrystalDiskMark's Q/T). */
export function describeJob(j: Pick<JobSpec, "rw" | "bs_bytes" | "iodepth" | "numjobs">): string {
  return `${j.rw} ${formatBytes(j.bs_bytes)} QD${j.iodepth}×${j.numjobs}`;
}

export function describeWorkload(w: WorkloadSpec | null | undefined): string {
  if (!w || w.jobs.length === 0) return "—";
  const first = w.jobs[0];
  if (!first) return "—";
  return w.jobs.length === 1
    ? describeJob(first)
    : `${w.jobs.length} jobs: ${w.jobs.map((j) => j.name).join(", ")}`;
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

type Jobs = { jobs: readonly object[] };

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
  return JSON.stringify((workload?.jobs ?? []).map((job) => canonicalJob(job)));
}

/** One job's identity without `omit`: jobs with equal keys differ only in that field. */
export function jobKey(job: object, omit?: string): string {
  return JSON.stringify(canonicalJob(job, omit));
}
