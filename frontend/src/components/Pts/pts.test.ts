// The PTS report's shaping for its tables and charts (pts.ts): the matrix in the specification's
// order, the heat map's log scale, the verdict's words, the convergence plot's lines and the
// window's bands. The steady-state rule is the server's (libs/workload pts.py): not re-judged here.
import { describe, expect, it } from "vitest";
import {
  averagesLabel,
  bsLabel,
  convergenceSeries,
  heat,
  hirRows,
  hirSeries,
  hirTimeAxis,
  matrixOf,
  mixLabel,
  type PtsElement,
  type PtsHir,
  type PtsReport,
  stopText,
  verdictText,
  windowRows,
  wsatPoints,
  wsatTimeAxis,
} from "./pts";

const el = (bs: number, read: number, iops: number, perRound: (number | null)[]): PtsElement => ({
  name: `${bs}-r${read}`,
  bs_bytes: bs,
  read_pct: read,
  per_round: perRound,
  iops,
  read_iops: (iops * read) / 100,
  write_iops: (iops * (100 - read)) / 100,
  bw_bytes: iops * bs,
  lat_mean_ns: null,
  lat_max_ns: null,
  read_percentiles_ns: {},
  write_percentiles_ns: {},
});

const elements = [
  el(4096, 100, 90000, [1, 2]),
  el(4096, 0, 20000, [3, 4]),
  el(1048576, 0, 800, [5, 6]),
];

const verdict: PtsReport["verdict"] = {
  test: "iops",
  profile: "enterprise",
  compliant: false,
  deviations: ["rounds of 1 s per element, not 60 s"],
  steady_state_applies: true,
  steady_state_reached: true,
  steady_state_round: 7,
  rounds: 7,
  window_first_round: 3,
  window_last_round: 7,
};

describe("the PTS report's shaping", () => {
  it("labels block sizes and mixes as the specification writes them", () => {
    expect(bsLabel(512)).toBe("0.5 KiB");
    expect(bsLabel(1048576)).toBe("1024 KiB");
    expect(mixLabel(65)).toBe("65/35");
  });
  it("lays the elements out largest block first, 100/0 first, with holes", () => {
    const m = matrixOf(elements, (e) => e.iops);
    expect(m.sizes).toEqual([1048576, 4096]);
    expect(m.mixes).toEqual([100, 0]);
    expect(m.cells).toEqual([
      [null, 800],
      [90000, 20000],
    ]);
  });
  it("shades on a log scale between the smallest and the largest", () => {
    const all = [800, 8000, 80000, null];
    expect(heat(800, all)).toBe(0);
    expect(heat(80000, all)).toBe(1);
    expect(heat(8000, all)).toBeCloseTo(0.5);
    expect(heat(null, all)).toBeNull();
  });
  it("says the verdict", () => {
    expect(verdictText(verdict)).toBe("steady state reached in round 7 (window rounds 3–7)");
    expect(verdictText({ ...verdict, steady_state_reached: false, steady_state_round: null })).toBe(
      "steady state not reached in 7 rounds",
    );
    expect(verdictText({ ...verdict, test: "wsat", steady_state_applies: false })).toContain(
      "no steady-state rule",
    );
    expect(verdictText({ ...verdict, test: "hir" })).toBe(
      "preconditioning: steady state reached in round 7 (window rounds 3–7)",
    );
  });
  it("says which rule stopped the rounds, and what Write Saturation's figures average", () => {
    const stop = {
      round: 9,
      round_limit: 1440,
      round_s: 60,
      bytes_written: 2 ** 32,
      bytes_limit: 2 ** 32,
    };
    const wsat = {
      verdict: { ...verdict, test: "wsat", steady_state_applies: false },
      stop: { ...stop, rule: "capacity" },
      averaged_first_round: 5,
      averaged_last_round: 9,
    } as unknown as PtsReport;
    expect(stopText(wsat)).toBe("4 × the tested region written (4 GiB of 4 GiB) in round 9");
    expect(averagesLabel(wsat)).toBe("the average of rounds 5–9, the last ones run");
    const time = { ...wsat, stop: { ...stop, rule: "time", round: 1440 } } as PtsReport;
    expect(stopText(time)).toBe("the time limit: 1440 rounds of 60 s (24 hours at 60 s rounds)");
    const trial = {
      ...wsat,
      stop: { ...stop, rule: "time", round: 1440, round_s: 1 },
    } as PtsReport;
    expect(stopText(trial)).toContain(
      "1440 rounds of 1 s: the specification's 24 hours at this trial's",
    );
    const iops = {
      verdict,
      stop: { ...stop, rule: "steady_state", round: 7, round_limit: 25, bytes_limit: null },
    } as unknown as PtsReport;
    expect(stopText(iops)).toBe("steady state reached in round 7");
    expect(averagesLabel(iops)).toBe("window averages");
    expect(stopText({ ...iops, stop: { ...iops.stop, rule: "round_limit" } } as PtsReport)).toBe(
      "the round limit: 25 rounds without steady state",
    );
    expect(stopText({ ...iops, stop: null })).toBeNull(); // a run from before it was recorded
  });
  it("plots every block size at the tracking variable's mix for IOPS", () => {
    const report = {
      verdict,
      tracking_element: "4096-r0",
      elements,
      rounds: [
        { round: 1, tracking: 3, bytes_written: 0 },
        { round: 2, tracking: 4, bytes_written: 0 },
      ],
    } as unknown as PtsReport;
    const lines = convergenceSeries(report);
    expect(lines.map((l) => l.key)).toEqual(["4096-r0", "1048576-r0"]);
    expect(lines[0]?.points).toEqual([
      { x: 1, y: 3 },
      { x: 2, y: 4 },
    ]);
  });
  it("draws the window's bands around its average", () => {
    const rows = windowRows({
      first_round: 1,
      last_round: 2,
      average: 100,
      data_excursion: 10,
      data_excursion_limit: 20,
      slope: 1,
      intercept: 98.5,
      slope_excursion: 1,
      slope_excursion_limit: 10,
      data_ok: true,
      slope_ok: true,
      points: [
        { round: 1, value: 95, fitted: 99.5 },
        { round: 2, value: 105, fitted: 100.5 },
      ],
    });
    const r = rows[0];
    expect(
      [r?.dataHigh, r?.dataLow, r?.slopeHigh, r?.slopeLow].map((v) => Math.round(v ?? 0)),
    ).toEqual([110, 90, 105, 95]);
    expect(rows[1]?.fitted).toBe(100.5);
  });
  it("puts Write Saturation's rounds over minutes of stimulus and over GB written", () => {
    const report = {
      round_s: 60,
      elements: [el(4096, 0, 1000, [])],
      rounds: [
        { round: 1, tracking: 90000, bytes_written: 21_600_000_000 },
        { round: 2, tracking: null, bytes_written: 30_000_000_000 },
        { round: 3, tracking: 20000, bytes_written: 40_000_000_000 },
      ],
    } as unknown as PtsReport;
    expect(wsatPoints(report)).toEqual([
      { round: 1, seconds: 60, gb: 21.6, iops: 90000 },
      { round: 3, seconds: 180, gb: 40, iops: 20000 },
    ]);
    expect(wsatTimeAxis(wsatPoints(report))).toEqual({ unit: "s", divisor: 1 });
    const long = { ...report, rounds: [{ round: 5, tracking: 1, bytes_written: 1 }] } as PtsReport;
    expect(wsatTimeAxis(wsatPoints(long))).toEqual({ unit: "min", divisor: 60 });
  });
  it("draws Host Idle Recovery's bursts over time, a line per segment, and the recovery", () => {
    const pt = (t_s: number, iops: number, idle_s: number | null) => ({ t_s, iops, idle_s });
    const h: PtsHir = {
      burst_s: 5,
      bursts: 2,
      preconditioned_iops: 1000,
      segments: [
        {
          kind: "wait",
          wait_state: 1,
          idle_s: 5,
          average_iops: 1500,
          points: [pt(0, 1400, null), pt(10, 1600, 5.02)],
        },
        {
          kind: "baseline",
          wait_state: 1,
          idle_s: 0,
          average_iops: 1000,
          points: [pt(20, 1000, 0), pt(25, 1000, 0)],
        },
        {
          kind: "wait",
          wait_state: 10,
          idle_s: 50,
          average_iops: 3000,
          points: [pt(30, 3000, 0.01), pt(85, 3000, 50.01)],
        },
      ],
    };
    expect(hirTimeAxis(h)).toEqual({ unit: "s", divisor: 1 });
    const lines = hirSeries(h);
    expect(lines.map((l) => [l.label, l.dashed, l.color])).toEqual([
      ["WS1: 5 s idle", false, 0],
      ["baseline after WS1", true, 0],
      ["WS10: 50 s idle", false, 1],
    ]);
    expect(lines[2]?.points).toEqual([
      { x: 30, y: 3000 },
      { x: 85, y: 3000 },
    ]);
    expect(hirRows(h)).toEqual([
      { waitState: 1, idleS: 5, iops: 1500, baselineIops: 1000, ratio: 1.5 },
      { waitState: 10, idleS: 50, iops: 3000, baselineIops: null, ratio: 3 },
    ]);
    const long = { ...h, segments: h.segments.map((s) => ({ ...s, points: [pt(3600, 1, 0)] })) };
    expect(hirTimeAxis(long)).toEqual({ unit: "min", divisor: 60 });
    expect(hirSeries(long)[0]?.points[0]?.x).toBe(60);
  });
});
