import { QueryClient, QueryObserver } from "@tanstack/react-query";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { EnergyRead, RunRead } from "../client/types";
import { setToken } from "../lib/auth";
import { NO_ENERGY, OK_ENERGY } from "../test/fixtures";
import { stubApi } from "../test/render";
import { ENERGY_POLL_MAX_MS, energyPollDelay, LIVE_INTERVAL_MS, runQuery } from "./runs";

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
