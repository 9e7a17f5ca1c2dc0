// A running run as one bar: the whole run's share done, the phase it is in and the time left. The
// share and the time left are the server's (progress.run_percent, run_eta_s, run_eta_at_least:
// backend/run/share.py owns the rule for the UI and `iowatt run` alike, and holds the share so it
// never goes back); this names the phase for a person.
import type { RunRead } from "../../client/types";

export type Phase = "idle_before" | "job" | "idle_after" | "upload";

export interface RunProgressView {
  /** 0..100 of the whole run. */
  percent: number;
  phase: Phase;
  /** "idle baseline (before)", "job 2 of 5: seqread-1m", "uploading the result". */
  label: string;
  /** Seconds left, or null when unknown (a report stored before the server said). */
  etaS: number | null;
  /** The ETA is a lower bound: some job not yet done is size-bound. */
  etaAtLeast: boolean;
}

export function runProgress(run: RunRead): RunProgressView | null {
  const p = run.progress;
  if (!p) return null;
  const n = run.workload.jobs?.length ?? 0;
  const k = Math.min(Math.max(0, p.job_index), Math.max(0, n - 1));
  let phase: Phase = p.phase;
  let label: string;
  if (phase === "idle_before") label = "idle baseline (before)";
  else if (phase === "idle_after") label = "idle baseline (after)";
  else if (p.run_percent >= 100) {
    // the last job done and no idle baseline after it: the agent uploads the result
    phase = "upload";
    label = "uploading the result";
  } else label = n ? `job ${k + 1} of ${n}: ${p.job_name}` : p.job_name;
  return {
    percent: p.run_percent,
    phase,
    label,
    etaS: p.run_eta_s,
    etaAtLeast: p.run_eta_at_least,
  };
}
