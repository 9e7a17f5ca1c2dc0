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
const LATER_JOB_FIELDS: Record<string, unknown> = { end_fsync: false, io_size_bytes: null };

type Jobs = { jobs: readonly object[] };

/** The jobs as identity sees them, keys sorted, as one string: equal strings, same workload. */
export function workloadKey(workload: Jobs | null | undefined): string {
  const jobs = (workload?.jobs ?? []).map((job) =>
    Object.fromEntries(
      Object.entries(job)
        .filter(
          ([k, v]) =>
            !IGNORED_JOB_FIELDS.has(k) && !(k in LATER_JOB_FIELDS && v === LATER_JOB_FIELDS[k]),
        )
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
    ),
  );
  return JSON.stringify(jobs);
}
