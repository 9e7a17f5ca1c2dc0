import { describe, expect, it } from "vitest";
import { ASSUMED_BYTES_PER_S, estimateDuration, jobSeconds } from "./workload";

const base = {
  ramp_time_s: 0,
  size_bytes: 1 << 30,
  io_size_bytes: null,
  bs_bytes: 4096,
  numjobs: 1,
};

describe("estimateDuration", () => {
  it("sums runtimes and warm-ups, the idle baseline before and after, and the stated overhead", () => {
    const e = estimateDuration(
      [
        { ...base, runtime_s: 60, ramp_time_s: 5 },
        { ...base, runtime_s: 30 },
      ],
      10,
    );
    expect([e.loadS, e.idleS, e.overheadS, e.totalS, e.assumedRate]).toEqual([95, 20, 4, 119, 0]);
    expect(estimateDuration([{ ...base, runtime_s: 1 }], null).idleS).toBe(60); // the agent's default 30 s, twice
  });

  it("counts no idle baseline without a meter: quick (3 jobs of 3 s) is seconds, not 1 min 34 s", () => {
    const quick = [3, 3, 3].map((runtime_s) => ({ ...base, runtime_s }));
    const e = estimateDuration(quick, null, false);
    expect([e.loadS, e.idleS, e.metered]).toEqual([9, 0, false]);
    expect(e.totalS).toBeLessThan(20); // it measured 9 s from start to finish
    expect(estimateDuration(quick, null, true).idleS).toBe(60);
  });

  it("takes the meter's reported idle baseline when the run sets none, and says whose it is", () => {
    const one = [{ ...base, runtime_s: 10 }];
    expect(estimateDuration(one, null, true, 7)).toMatchObject({ idleS: 14, idleFrom: "meter" });
    expect(estimateDuration(one, 2, true, 7)).toMatchObject({ idleS: 4, idleFrom: "run" });
    expect(estimateDuration(one, null, true, null)).toMatchObject({
      idleS: 60,
      idleFrom: "default",
    });
    expect(estimateDuration(one, null, false, 7).idleS).toBe(0);
  });

  it("times a size-bound job by its rate_iops exactly, else at the stated rate and says so", () => {
    // 1 GiB per thread, 2 loops, 4 KiB blocks at 1000 IOPS per thread
    expect(jobSeconds({ ...base, runtime_s: null, loops: 2, rate_iops: 1000 })).toEqual({
      s: ((1 << 30) * 2) / 4096 / 1000,
      assumed: false,
    });
    const guess = jobSeconds({ ...base, runtime_s: null, numjobs: 2, io_size_bytes: 1 << 28 });
    expect(guess).toEqual({ s: (2 * (1 << 28)) / ASSUMED_BYTES_PER_S, assumed: true });
    expect(estimateDuration([{ ...base, runtime_s: null }], 0).assumedRate).toBe(1);
  });
});
