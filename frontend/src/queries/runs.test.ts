import { QueryClient, QueryObserver } from "@tanstack/react-query";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { EnergyRead, RunLive, RunRead } from "../client/types";
import { setToken } from "../lib/auth";
import { NO_ENERGY, OK_ENERGY } from "../test/fixtures";
import { stubApi } from "../test/render";
import { keys } from "./keys";
import {
  ENERGY_POLL_MAX_MS,
  energyPollDelay,
  LIVE_INTERVAL_MS,
  runLiveQuery,
  runQuery,
  withLive,
} from "./runs";

const realFetch = globalThis.fetch;
const PENDING: EnergyRead = { ...NO_ENERGY, status: "pending", reason: "being computed" };
const FAILED: EnergyRead = {
  ...NO_ENERGY,
  status: "failed",
  reason: "not computed within 15 minutes of the upload",
};

/** The fields of a run that decide its polling; the rest of RunRead does not matter here. */
const run = (status: RunRead["status"], energy: EnergyRead) =>
  ({ id: "r1", status, energy }) as RunRead;

/** Serves the given answers in turn (the last one from then on) and records when each was asked. */
function serve(answers: RunRead[]) {
  const at: number[] = [];
  stubApi({
    "GET /api/v1/runs/r1": () => {
      at.push(Date.now());
      return { body: answers[Math.min(at.length, answers.length) - 1] };
    },
  });
  const qc = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  const observer = new QueryObserver(qc, runQuery("r1"));
  const stop = observer.subscribe(() => {});
  const gaps = () => at.slice(1).map((t, i) => t - (at[i] ?? 0));
  return { at, gaps, observer, stop };
}

beforeEach(() => {
  vi.useFakeTimers();
  setToken("t");
});
afterEach(() => {
  vi.useRealTimers();
  globalThis.fetch = realFetch;
});

describe("energyPollDelay", () => {
  it("starts at the live interval and doubles up to 30 s", () => {
    expect([1, 2, 3, 4, 5, 6, 50].map(energyPollDelay)).toEqual([
      2000, 4000, 8000, 16000, 30000, 30000, 30000,
    ]);
    expect(LIVE_INTERVAL_MS).toBe(2000);
    expect(ENERGY_POLL_MAX_MS).toBe(30000);
  });
});

describe("runQuery polling", () => {
  it("backs off while the energy is computing and stops when the server says it failed", async () => {
    const answers = [...Array(6)].map(() => run("succeeded", PENDING));
    const q = serve([...answers, run("succeeded", FAILED)]);
    await vi.advanceTimersByTimeAsync(60 * 60_000); // an hour: no endless polling
    expect(q.gaps()).toEqual([2000, 4000, 8000, 16000, 30000, 30000]);
    expect(q.at).toHaveLength(7);
    expect(q.observer.getCurrentResult().data?.energy.status).toBe("failed");
    q.stop();
  });

  it("polls live while the run is active, then backs off from 2 s for its energy until ok", async () => {
    const q = serve([
      run("running", NO_ENERGY),
      run("running", NO_ENERGY),
      run("succeeded", PENDING),
      run("succeeded", PENDING),
      run("succeeded", PENDING),
      run("succeeded", OK_ENERGY),
    ]);
    await vi.advanceTimersByTimeAsync(10 * 60_000);
    expect(q.gaps()).toEqual([2000, 2000, 2000, 4000, 8000]);
    expect(q.observer.getCurrentResult().data?.energy.status).toBe("ok");
    q.stop();
  });

  it("does not poll a finished run whose energy is final", async () => {
    for (const energy of [
      NO_ENERGY,
      OK_ENERGY,
      FAILED,
      { ...NO_ENERGY, status: "no_meter_data" },
    ]) {
      const q = serve([run("succeeded", energy as EnergyRead)]);
      await vi.advanceTimersByTimeAsync(5 * 60_000);
      expect(q.at).toHaveLength(1);
      q.stop();
    }
  });
});

type Sample = NonNullable<RunRead["progress"]>["samples"][number];
const sample = (t_s: number): Sample => ({
  t_s,
  job_index: 0,
  read_iops: 1000 + t_s,
  read_bw_bytes: 4096 * (1000 + t_s),
  write_iops: 0,
  write_bw_bytes: 0,
});
const report = (percent: number, samples: Sample[]): NonNullable<RunRead["progress"]> => ({
  job_index: 0,
  job_name: "rand4k",
  phase: "job",
  percent,
  run_percent: percent,
  run_eta_s: 10,
  run_eta_at_least: false,
  elapsed_ns: 1e9,
  read_iops: 1000,
  read_bw_bytes: 4_096_000,
  write_iops: 0,
  write_bw_bytes: 0,
  updated_at: "2026-12-07T10:00:00Z",
  samples,
});
const runningWith = (samples: Sample[], percent = 10) =>
  ({
    id: "r1",
    status: "running",
    cancel_requested: false,
    energy: NO_ENERGY,
    progress: report(percent, samples),
  }) as RunRead;
const liveWith = (samples: Sample[], percent: number, status: RunRead["status"] = "running") =>
  ({
    status,
    cancel_requested: false,
    progress: report(percent, samples),
    samples_kept: 4,
  }) as RunLive;

describe("withLive", () => {
  it("adds the new samples after those held, keeping the server's last N", () => {
    const run = runningWith([1, 2, 3].map(sample));
    const next = withLive(run, liveWith([4, 5].map(sample), 40));
    expect(next?.progress?.samples.map((x) => x.t_s)).toEqual([2, 3, 4, 5]);
    expect(next?.progress?.percent).toBe(40);
    // samples the run holds already (it was read whole while the poll was out) are not added twice
    const again = withLive(next as RunRead, liveWith([5, 6].map(sample), 50));
    expect(again?.progress?.samples.map((x) => x.t_s)).toEqual([3, 4, 5, 6]);
    // no new sample (an idle baseline's tick): the samples held stay the same array (no new chart)
    expect(withLive(run, liveWith([], 12))?.progress?.samples).toBe(run.progress?.samples);
  });

  it("asks for the whole run again when the status or the cancel request moved", () => {
    const run = runningWith([sample(1)]);
    expect(withLive(run, liveWith([], 100, "succeeded"))).toBeNull();
    expect(withLive(run, { ...liveWith([], 10), cancel_requested: true })).toBeNull();
    expect(withLive({ ...run, progress: null }, { ...liveWith([], 0), progress: null })).toEqual({
      ...run,
      progress: null,
    });
  });
});

describe("following an active run's progress", () => {
  it("asks the whole run once, then only its progress since the last sample held", async () => {
    const since: (string | null)[] = [];
    let runReads = 0;
    const progress = [liveWith([sample(3)], 30), liveWith([], 31), liveWith([], 100, "succeeded")];
    stubApi({
      "GET /api/v1/runs/r1": () => {
        runReads += 1;
        return {
          body:
            runReads === 1
              ? runningWith([1, 2].map(sample))
              : { ...runningWith([]), status: "succeeded", energy: OK_ENERGY },
        };
      },
      "GET /api/v1/runs/r1/progress": (req) => {
        since.push(new URL(req.url).searchParams.get("since_t_s"));
        return { body: progress[Math.min(since.length, progress.length) - 1] };
      },
    });
    const qc = new QueryClient({ defaultOptions: { queries: { retry: false } } });
    const page = new QueryObserver(qc, runQuery("r1", "progress"));
    const stopPage = page.subscribe(() => {});
    await vi.advanceTimersByTimeAsync(0);
    const live = new QueryObserver(qc, {
      ...runLiveQuery("r1", qc),
      initialData: "running" as RunRead["status"],
      initialDataUpdatedAt: Date.now(),
      staleTime: LIVE_INTERVAL_MS,
    });
    const stopLive = live.subscribe(() => {});
    await vi.advanceTimersByTimeAsync(LIVE_INTERVAL_MS);
    expect(since).toEqual(["2"]); // one interval after the run was read, not at once
    const held = qc.getQueryData<RunRead>(keys.runs.detail("r1"));
    expect(held?.progress?.samples.map((x) => x.t_s)).toEqual([1, 2, 3]);
    expect(held?.progress?.percent).toBe(30);
    await vi.advanceTimersByTimeAsync(2 * LIVE_INTERVAL_MS);
    expect(since).toEqual(["2", "3", "3"]);
    // the run ended: read whole again (its figures, its energy), and not asked again since
    expect(runReads).toBe(2);
    expect(page.getCurrentResult().data?.status).toBe("succeeded");
    await vi.advanceTimersByTimeAsync(10 * LIVE_INTERVAL_MS);
    expect(runReads).toBe(2);
    stopLive();
    stopPage();
  });
});
