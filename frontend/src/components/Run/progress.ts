// A running run as one bar: the whole run's share done, the phase it is in and an
// estimate of the time left, from the run's latest progress report and its workload.
//
// The run's plan, in order: idle baseline before (idle_s), each job (ramp + runtime when the job
// is time-bound; a size-bound job's duration is known only once it runs: from its own percent),
// idle baseline after (idle_s), then the upload. The engine's percent is of the current job.
import type { RunRead } from "../../client/types";

export type Phase = "idle_before" | "job" | "idle_after" | "upload";

export interface RunProgressView {
  /** 0..100 of the whole run. */
  percent: number;
  phase: Phase;
  /** "idle baseline (before)", "job 2 of 5: seqread-1m", "uploading the result". */
  label: string;
  /** Seconds left, or null when a job not yet started has no known duration. */
  etaS: number | null;
  /** The ETA is a lower bound: some later job is size-bound. */
  etaAtLeast: boolean;
}

function jobPlanS(j: NonNullable<RunRead["workload"]["jobs"]>[number]): number | null {
  if (j.runtime_s == null) return null; // size-bound
  return (j.ramp_time_s ?? 0) + j.runtime_s;
}

export function runProgress(run: RunRead): RunProgressView | null {
  const p = run.progress;
  if (!p) return null;
  const jobs = run.workload.jobs ?? [];
  const n = jobs.length;
  const idle = run.idle_s ?? 0;
  const k = Math.min(Math.max(0, p.job_index), Math.max(0, n - 1));
  const jobPct = Math.max(0, Math.min(100, p.percent)) / 100;
  const elapsedS = p.elapsed_ns / 1e9;

  // the current job's planned length: its spec, else what its own percent implies
  const currentPlan = (i: number): number | null => {
    const planned = jobs[i] ? jobPlanS(jobs[i]) : null;
    if (planned != null) return planned;
    return jobPct > 0.01 ? elapsedS / jobPct : null;
  };
  const plans = jobs.map((j, i) => (i === k && p.phase === "job" ? currentPlan(i) : jobPlanS(j)));
  const known = plans.map((s) => s ?? 0);
  const total = 2 * idle + known.reduce((a, b) => a + b, 0);

  let phase: Phase = p.phase;
  let done: number;
  let label: string;
  if (phase === "idle_before") {
    done = idle * jobPct;
    label = "idle baseline (before)";
  } else if (phase === "idle_after") {
    done = idle + known.reduce((a, b) => a + b, 0) + idle * jobPct;
    label = "idle baseline (after)";
  } else {
    done = idle + known.slice(0, k).reduce((a, b) => a + b, 0) + (known[k] ?? 0) * jobPct;
    label = `job ${k + 1} of ${n}: ${p.job_name}`;
    if (k === n - 1 && jobPct >= 1 && idle === 0) {
      phase = "upload";
      label = "uploading the result";
    }
  }
  const remainingJobs = phase === "job" ? plans.slice(k + 1) : [];
  const unknownLater =
    remainingJobs.some((s) => s == null) || (phase === "job" && plans[k] == null);
  const leftKnown = Math.max(0, total - done);
  // no plan to weigh it by (a run without job specs and no idle baseline): the report's own share
  const percent =
    phase === "upload" ? 100 : total > 0 ? Math.min(100, (100 * done) / total) : 100 * jobPct;
  return {
    percent,
    phase,
    label,
    etaS: phase === "upload" ? 0 : leftKnown,
    etaAtLeast: unknownLater,
  };
}
