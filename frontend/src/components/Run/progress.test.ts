import { describe, expect, it } from "vitest";
import type { RunRead } from "../../client/types";
import { heldPercent, runProgress } from "./progress";

type Job = NonNullable<RunRead["workload"]["jobs"]>[number];

function job(name: string, runtime_s: number | null, ramp = 0): Job {
  return { name, runtime_s, ramp_time_s: ramp } as Job;
}

function run(
  jobs: Job[],
  idle_s: number | null,
  p: Partial<NonNullable<RunRead["progress"]>>,
): RunRead {
  return {
    idle_s,
    workload: { jobs, passes: 1, discard_passes: 0 },
    progress: {
      job_index: 0,
      job_name: jobs[0]?.name ?? "",
      phase: "job",
      percent: 0,
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

describe("runProgress: one bar for the whole run", () => {
  const three = [job("a", 10), job("b", 20, 5), job("c", 5)]; // 10 + 25 + 5 = 40 s

  it("counts the jobs before and the idle baselines", () => {
    const v = runProgress(run(three, 10, { job_index: 1, job_name: "b", percent: 40 }));
    // 10 idle + 10 (a) + 0.4 × 25 (b) = 30 of 10 + 40 + 10 = 60
    expect(v?.percent).toBeCloseTo(50);
    expect(v?.label).toBe("job 2 of 3: b");
    expect(v?.etaS).toBeCloseTo(30);
    expect(v?.etaAtLeast).toBe(false);
  });

  it("names the idle baselines", () => {
    const before = runProgress(
      run(three, 10, { job_name: "idle_before", phase: "idle_before", percent: 50 }),
    );
    expect(before?.label).toBe("idle baseline (before)");
    expect(before?.percent).toBeCloseTo((100 * 5) / 60);
    const after = runProgress(
      run(three, 10, { job_name: "idle_after", phase: "idle_after", percent: 50 }),
    );
    expect(after?.label).toBe("idle baseline (after)");
    expect(after?.percent).toBeCloseTo((100 * 55) / 60);
    expect(after?.etaS).toBeCloseTo(5);
  });

  it("says upload once the last job is done and no idle baseline follows", () => {
    const v = runProgress(run(three, null, { job_index: 2, job_name: "c", percent: 100 }));
    expect(v?.phase).toBe("upload");
    expect(v?.label).toBe("uploading the result");
    expect(v?.percent).toBe(100);
    expect(v?.etaS).toBe(0);
  });

  it("a size-bound job: its length from its own percent; a later one makes the ETA a lower bound", () => {
    const jobs = [job("sized", null), job("timed", 10), job("sized-2", null)];
    const v = runProgress(
      run(jobs, null, { job_index: 0, job_name: "sized", percent: 25, elapsed_ns: 5e9 }),
    );
    // sized: 5 s for 25 % → 20 s planned; timed 10 s; sized-2 unknown
    expect(v?.percent).toBeCloseTo((100 * 5) / 30);
    expect(v?.etaS).toBeCloseTo(25);
    expect(v?.etaAtLeast).toBe(true);
  });

  it("a run without job specs and no idle baseline: the report's own share", () => {
    expect(runProgress(run([], null, { percent: 40 }))?.percent).toBeCloseTo(40);
  });

  it("no progress report yet: nothing to show", () => {
    expect(runProgress({ ...run(three, null, {}), progress: null })).toBeNull();
  });
});

describe("heldPercent: a bar that never goes backwards", () => {
  const jobs = [job("a", 10), job("b", null), job("c", 10)]; // b: size-bound, 50 s this time
  const at = (k: number, percent: number, elapsedS: number, runS: number) => {
    const r = run(jobs, 0, {
      job_index: k,
      job_name: "abc"[k] ?? "a",
      percent,
      elapsed_ns: elapsedS * 1e9,
      updated_at: new Date(Date.parse("2026-11-21T10:00:00Z") + runS * 1000).toISOString(),
    });
    return runProgress({ ...r, started_at: "2026-11-21T10:00:00Z" })?.percent ?? 0;
  };

  it("counts a size-bound job done by the run's clock, not as 0", () => {
    // c half done, 65 s into the run: b took 65 - 10 - 5 = 50 s, so 65 of 70 s (was 15 of 20: 75 %)
    expect(at(2, 50, 5, 65)).toBeCloseTo(92.9, 1);
  });

  it("holds when a size-bound job's length first shows, until the run catches up", () => {
    // b just started: its length unknown, counted as 0 of 20 s known
    expect(at(1, 0, 0, 10)).toBe(50);
    // 5 s later b is 10 % done: 50 s long, so 15 of 70 s
    expect(at(1, 10, 5, 15)).toBeCloseTo(21.4, 1);
    const shown = [at(1, 0, 0, 10), at(1, 10, 5, 15), at(1, 80, 40, 50), at(2, 0, 0, 60)];
    expect(shown.map((p) => Math.round(heldPercent("r-size-bound", p)))).toEqual([50, 50, 71, 86]);
    // each run has its own memory
    expect(heldPercent("r-other", 3)).toBe(3);
  });
});
