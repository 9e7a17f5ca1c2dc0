// The form's plan of a SNIA PTS run against the server's (libs/workload/testdata/pts_plan.json,
// also read by tests/workload/test_pts.py): one rule, two languages, the same answers.
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { type PtsSpec, ptsPlan, ptsSpec, pyG, roundHalfEven } from "./pts";

interface Case {
  name: string;
  pts: {
    test: PtsSpec["test"];
    profile?: PtsSpec["profile"];
    purge?: PtsSpec["purge"];
    block_sizes?: number[];
    burst_s?: number;
    bursts?: number;
    wait_states?: number[];
  };
  scale: number | null;
  size_bytes: number;
  expect: {
    round_s: number;
    capacity_fraction: number;
    elements: number;
    round_limit: number;
    region_bytes: number | null;
    run_seconds_max: number;
    deviations: string[];
    wipc: boolean;
  };
}

const FILE = join(
  dirname(fileURLToPath(import.meta.url)),
  "..",
  "..",
  "..",
  "libs",
  "workload",
  "testdata",
  "pts_plan.json",
);
const { cases } = JSON.parse(readFileSync(FILE, "utf8")) as { cases: Case[] };

describe("ptsPlan: the server's reading of a run, before it is queued", () => {
  it.each(cases.map((c) => [c.name, c] as const))("%s", (_, c) => {
    const { burst_s, bursts, wait_states } = c.pts;
    const spec = {
      ...ptsSpec(c.pts.test, c.pts.purge ?? "auto", c.pts.block_sizes?.[0], c.pts.profile),
      ...(burst_s !== undefined ? { burst_s } : {}),
      ...(bursts !== undefined ? { bursts } : {}),
      ...(wait_states !== undefined ? { wait_states } : {}),
    };
    const plan = ptsPlan(spec, c.scale, c.size_bytes);
    expect(plan.spec.round_s).toBe(c.expect.round_s);
    expect(plan.spec.capacity_fraction).toBe(c.expect.capacity_fraction);
    expect(plan.elements).toBe(c.expect.elements);
    expect(plan.roundLimit).toBe(c.expect.round_limit);
    expect(plan.regionBytes).toBe(c.expect.region_bytes);
    expect(plan.maxRoundsSeconds).toBe(c.expect.run_seconds_max);
    expect(plan.deviations).toEqual(c.expect.deviations);
    expect(plan.compliant).toBe(c.expect.deviations.length === 0);
    expect(plan.wipc).toBe(c.expect.wipc);
    if (c.expect.region_bytes !== null)
      expect(plan.preconditioningBytes === null).toBe(!c.expect.wipc);
  });

  it("counts at least the five rounds of a window, WSAT one round, and what preconditioning writes", () => {
    const iops = ptsPlan(ptsSpec("iops"), null, 4 * 2 ** 30);
    expect(iops.minRoundsSeconds).toBe(5 * 56 * 60);
    expect(iops.preconditioningBytes).toBe(8 * 2 ** 30);
    expect(iops.wsatBytes).toBeNull();
    const wsat = ptsPlan(ptsSpec("wsat"), 0.5, 64 << 20);
    expect(wsat.minRoundsSeconds).toBe(30);
    expect(wsat.wsatBytes).toBe(128 << 20);
    expect(wsat.preconditioningBytes).toBeNull(); // from the purged state
    const hir = ptsPlan(ptsSpec("hir"), 0.001, 64 << 20);
    expect(hir.hirSeconds).toBe(62);
    expect(hir.minRoundsSeconds).toBe(5 + 62);
    const latency = ptsPlan(ptsSpec("latency"), null, null);
    expect([latency.threads, latency.iodepth, latency.regionBytes]).toEqual([1, 1, null]);
  });

  it("rounds and writes numbers as Python does", () => {
    expect([0.5, 1.5, 2.5, 4.5, 4.6].map(roundHalfEven)).toEqual([0, 2, 2, 4, 5]);
    expect([0.1, 0.001, 1e-5, 0.25, 1, 123456789].map(pyG)).toEqual([
      "0.1",
      "0.001",
      "1e-05",
      "0.25",
      "1",
      "1.23457e+08",
    ]);
  });
});
