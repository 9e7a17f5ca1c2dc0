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
