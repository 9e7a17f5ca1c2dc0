import { describe, expect, it } from "vitest";
import type { RunRead } from "../../client/types";
import { runProgress } from "./progress";

type Job = NonNullable<RunRead["workload"]["jobs"]>[number];
type Report = NonNullable<RunRead["progress"]>;

const job = (name: string, runtime_s: number | null): Job => ({ name, runtime_s }) as Job;

function run(jobs: Job[], p: Partial<Report>): RunRead {
  return {
    idle_s: null,
    workload: { jobs, passes: 1, discard_passes: 0 },
    progress: {
      job_index: 0,
      job_name: jobs[0]?.name ?? "",
      phase: "job",
      percent: 0,
      run_percent: 0,
      run_eta_s: 0,
      run_eta_at_least: false,
      elapsed_ns: 0,
      read_iops: 0,
      read_bw_bytes: 0,
      write_iops: 0,
      write_bw_bytes: 0,
      updated_at: "2026-11-21T10:00:00Z",
      samples: [],
      ...p,
    },
  } as unknown as RunRead;
}

// the share and the time left are the server's (backend/run/share.py, tests/backend/test_run_share.py)
describe("runProgress: the server's whole-run share, the phase named for a person", () => {
  const three = [job("a", 10), job("b", 20), job("c", 5)];

  it("draws the server's share and time left, not the engine's percent of the job", () => {
    const v = runProgress(
      run(three, { job_index: 1, job_name: "b", percent: 40, run_percent: 50, run_eta_s: 30 }),
    );
    expect(v).toEqual({
      percent: 50,
      phase: "job",
      label: "job 2 of 3: b",
      etaS: 30,
      etaAtLeast: false,
    });
    const sized = runProgress(
      run(three, { run_percent: 12.5, run_eta_s: 20, run_eta_at_least: true }),
    );
    expect([sized?.etaS, sized?.etaAtLeast]).toEqual([20, true]);
    // a report stored before the server computed it: the time left unknown
    expect(runProgress(run(three, { run_eta_s: null }))?.etaS).toBeNull();
  });

  it("names the idle baselines, and the upload once the whole run's share is 100 % in a job", () => {
    const before = runProgress(run(three, { job_name: "idle_before", phase: "idle_before" }));
    expect(before?.label).toBe("idle baseline (before)");
    const after = runProgress(
      run(three, { job_name: "idle_after", phase: "idle_after", run_percent: 100 }),
    );
    expect([after?.phase, after?.label]).toEqual(["idle_after", "idle baseline (after)"]);
    const v = runProgress(
      run(three, { job_index: 2, job_name: "c", percent: 100, run_percent: 100 }),
    );
    expect([v?.phase, v?.label, v?.percent]).toEqual(["upload", "uploading the result", 100]);
  });

  it("a run without job specs (a file or database workload) is named by its report", () => {
    expect(runProgress(run([], { job_name: "postmark", run_percent: 40 }))?.label).toBe("postmark");
  });

  it("no progress report yet: nothing to show", () => {
    expect(runProgress({ ...run(three, {}), progress: null })).toBeNull();
  });
});
