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
  // size-bound jobs already done: their length is in no report, but the run's clock has it (the
  // report's time since the run started, less the idle baseline, the current job's time and the
  // other jobs before it); counted as 0, a run read 71 % late in such a job and 50 % as the next began
  const doneUnknown = plans
    .slice(0, p.phase === "job" ? k : n)
    .flatMap((s, i) => (s == null ? [i] : []));
  if (doneUnknown.length && run.started_at && p.phase !== "idle_before") {
    const runS = (Date.parse(p.updated_at) - Date.parse(run.started_at)) / 1000;
    const current = p.phase === "job" ? elapsedS : idle * jobPct;
    const before = known.slice(0, p.phase === "job" ? k : n).reduce((a, b) => a + b, 0);
    const measured = Math.max(0, runS - idle - current - before);
    for (const i of doneUnknown) known[i] = measured / doneUnknown.length;
  }
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

/** The share each run's bar last showed in this tab: the runs list, the dashboard and the run's page
 * draw the same run from one memory, so they agree. */
const shown = new Map<string, number>();

/** A run's share to draw: never below what its bar showed before. The estimate drops when a
 * size-bound job starts and its length is first known (a 10 s job, one of unknown length, a 10 s
 * job: 50 % as the second starts, its length then counted as 0; 5 s later it turns out 50 s long:
 * 21 %): the bar holds until the run catches up, the time left meanwhile says "at least". */
export function heldPercent(runId: string, percent: number): number {
  const held = Math.max(shown.get(runId) ?? 0, percent);
  shown.set(runId, held);
  return held;
}

/** Tests: forget what every bar showed (each test draws its runs afresh). */
export function forgetShownProgress(): void {
  shown.clear();
}
