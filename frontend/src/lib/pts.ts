// A SNIA PTS run as the New run form plans it before it is queued: the server's scale of a short
// trial (backend/workload/kinds/pts.py `scaled`) and libs/workload's pts.py reading of the run
// (its matrix, round limit, tested region, longest time and why it is not PTS-compliant). One
// rule, two languages: libs/workload/testdata/pts_plan.json holds both to the same answers
// (tests/workload/test_pts.py, pts.test.ts). The steady-state verdict itself is never judged
// here: the agent stops on it and the report carries it.
import type { components } from "../client/schema";
import { ASSUMED_BYTES_PER_S } from "./workload";

export type PtsSpec = components["schemas"]["PtsSpec"];
export type PtsTest = PtsSpec["test"];

const KiB = 1024;
const MiB = 1024 * KiB;
/** PTS "Steady State": a window of five rounds, at most 25 rounds. */
export const WINDOW_ROUNDS = 5;
export const MAX_ROUNDS = 25;
/** PTS: one minute per element of the matrix per round. */
export const ROUND_S = 60;
export const ROUND_S_MAX = 600;
/** Write Saturation: rounds until 4 × the tested region is written or 24 hours pass, whichever
 * first: 1,440 one-minute rounds (a short trial's shorter rounds shorten the 24 hours). */
export const WSAT_CAPACITY_MULTIPLE = 4;
export const WSAT_HOURS = 24;
export const WSAT_MAX_ROUNDS = (WSAT_HOURS * 3600) / ROUND_S;
/** Workload-independent preconditioning: the tested region written twice, SEQ 128 KiB (IOPS,
 * Throughput, Latency; Write Saturation and Host Idle Recovery start from the purged state). */
export const WIPC_LOOPS = 2;
/** Host Idle Recovery: bursts of 5 s, 360 per wait state; wait state N idles N bursts' length. */
export const HIR_BURST_S = 5;
export const HIR_BURST_S_MAX = 60;
export const HIR_BURSTS = 360;
export const HIR_WAIT_STATES = [1, 2, 3, 5, 10];
const REGION_ALIGN = MiB;

interface TestDef {
  label: string;
  blockSizes: number[];
  mixes: number[];
  steadyState: boolean;
  singleIo: boolean;
  /** workload-independent preconditioning first */
  wipc: boolean;
}

/** The tests' matrices in the specification's order (libs/workload's TESTS). */
export const PTS_TESTS: Record<PtsTest, TestDef> = {
  iops: {
    label: "IOPS",
    blockSizes: [1024 * KiB, 128 * KiB, 64 * KiB, 32 * KiB, 16 * KiB, 8 * KiB, 4 * KiB, 512],
    mixes: [100, 95, 65, 50, 35, 5, 0],
    steadyState: true,
    singleIo: false,
    wipc: true,
  },
  throughput: {
    label: "Throughput",
    blockSizes: [1024 * KiB],
    mixes: [100, 0],
    steadyState: true,
    singleIo: false,
    wipc: true,
  },
  latency: {
    label: "Latency",
    blockSizes: [512, 4 * KiB, 8 * KiB],
    mixes: [100, 65, 0],
    steadyState: true,
    singleIo: true,
    wipc: true,
  },
  wsat: {
    label: "Write Saturation",
    blockSizes: [4 * KiB],
    mixes: [0],
    steadyState: false,
    singleIo: false,
    wipc: false,
  },
  hir: {
    label: "Host Idle Recovery",
    blockSizes: [4 * KiB],
    mixes: [0],
    steadyState: true,
    singleIo: false,
    wipc: false,
  },
};
export const THROUGHPUT_BLOCK_SIZES = [128 * KiB, 1024 * KiB];
/** PTS Client's Throughput test is 1024 KiB only (SNIA's Throughput test page). */
export const CLIENT_THROUGHPUT_BLOCK_SIZES = [1024 * KiB];

export type PtsProfile = PtsSpec["profile"];
export const PTS_PROFILES: { value: PtsProfile; label: string }[] = [
  { value: "enterprise", label: "Enterprise" },
  { value: "client", label: "Client" },
];

/** The PTS Client parameters of a test the sources at hand name but do not state (libs/workload's
 * `client_unstated`, word for word): a Client run lists them and is never called compliant. */
export function clientUnstated(test: PtsTest): string[] {
  const out = ["its ActiveRange and ActiveRange amount"];
  if (test !== "latency") out.push("its outstanding I/O (threads x queue depth)");
  if (PTS_TESTS[test].wipc)
    out.push("its workload-independent preconditioning (sequential and random)");
  if (test === "wsat" || test === "hir")
    out.push("whether it has this test in this form (the sources describe PTS Enterprise's)");
  return out;
}

/** What a run of the profile is judged against (the server's `compliance_name`). */
export function complianceName(profile: PtsProfile | undefined): string {
  return profile === "client" ? "PTS Client-compliant" : "PTS-compliant";
}

/** A SNIA PTS run as chosen: the test, (Throughput) its block size, the purge and the scale of a
 * short trial as the select holds it ("" = the specification's length: PTS-compliant). */
export interface PtsDraft {
  test: PtsTest;
  profile: PtsProfile;
  throughputBs: number;
  purge: PtsSpec["purge"];
  scale: string;
  /** a cloned run's parameters as it ran them: sent unchanged (no scale) until a choice changes */
  kept: PtsSpec | null;
}

/** The run's PTS parameters as the form sends them: the specification's defaults, the test, its
 * purge, (Throughput) its one block size and the profile. */
export function ptsSpec(
  test: PtsTest,
  purge: PtsSpec["purge"] = "auto",
  throughputBs: number = 1024 * KiB,
  profile: PtsProfile = "enterprise",
): PtsSpec {
  return {
    test,
    profile,
    purge,
    ioengine: "libaio",
    threads: 4,
    iodepth: 32,
    round_s: ROUND_S,
    capacity_fraction: 1,
    max_rounds: MAX_ROUNDS,
    block_sizes: test === "throughput" ? [throughputBs] : null,
    mixes: null,
    ...(test === "hir" ? { burst_s: HIR_BURST_S, bursts: HIR_BURSTS, wait_states: null } : {}),
  };
}

/** Python's round(): halves to the even neighbour (4.5 → 4, 5.5 → 6). */
export function roundHalfEven(x: number): number {
  const f = Math.floor(x);
  const d = x - f;
  if (d > 0.5) return f + 1;
  if (d < 0.5) return f;
  return f % 2 === 0 ? f : f + 1;
}

/** Python's `{x:g}`: six significant digits, trailing zeros dropped, exponent below 1e-4. */
export function pyG(x: number): string {
  if (x === 0) return "0";
  const exp = Math.floor(Math.log10(Math.abs(x)));
  if (exp < -4 || exp >= 6) {
    const [m = "", e = "0"] = x.toExponential(5).split("e");
    const mant = m.includes(".") ? m.replace(/0+$/, "").replace(/\.$/, "") : m;
    const n = Number(e);
    return `${mant}e${n < 0 ? "-" : "+"}${String(Math.abs(n)).padStart(2, "0")}`;
  }
  const s = x.toPrecision(6);
  return s.includes(".") ? s.replace(/0+$/, "").replace(/\.$/, "") : s;
}

/** A run's scale on the parameters, as the server applies it: rounds `factor` as long (at least
 * 1 s) and `factor` of the capacity (at most all of it); Host Idle Recovery's bursts `factor` as
 * long (at least 1 s) and `factor` as many (at least 2). */
export function scaledSpec(p: PtsSpec, factor: number | null): PtsSpec {
  if (factor === null) return p;
  const roundS = Math.max(1, Math.min(ROUND_S_MAX, roundHalfEven(p.round_s * factor)));
  const fraction = Number(Math.min(1, p.capacity_fraction * factor).toPrecision(12));
  const out: PtsSpec = { ...p, round_s: roundS, capacity_fraction: fraction };
  if (p.test === "hir") {
    const burstS = p.burst_s ?? HIR_BURST_S;
    const bursts = p.bursts ?? HIR_BURSTS;
    out.burst_s = Math.max(1, Math.min(HIR_BURST_S_MAX, roundHalfEven(burstS * factor)));
    out.bursts = Math.max(2, Math.min(HIR_BURSTS, roundHalfEven(bursts * factor)));
  }
  return out;
}

/** Host Idle Recovery's wait states as the run has them (the specification's order); [] for the
 * other tests. */
export function waitStates(p: PtsSpec): number[] {
  if (p.test !== "hir") return [];
  const chosen = p.wait_states;
  return chosen ? HIR_WAIT_STATES.filter((w) => chosen.includes(w)) : HIR_WAIT_STATES;
}

/** Host Idle Recovery's wait-state segments with their returns to baseline, seconds (libs/
 * workload's hir_seconds): each wait state's bursts with their idle, then as many without. */
export function hirSeconds(p: PtsSpec): number {
  const burstS = p.burst_s ?? HIR_BURST_S;
  const bursts = p.bursts ?? HIR_BURSTS;
  return waitStates(p).reduce((sum, w) => sum + bursts * (2 * burstS + w * burstS), 0);
}

/** The elements of one round: mixes × block sizes of the test (or the subset sent). */
export function elementCount(p: PtsSpec): number {
  const t = PTS_TESTS[p.test];
  return (p.block_sizes ?? t.blockSizes).length * (p.mixes ?? t.mixes).length;
}

export function roundLimit(p: PtsSpec): number {
  return p.test === "wsat" ? WSAT_MAX_ROUNDS : p.max_rounds;
}

/** The tested region: the first `fraction` of the device in whole MiB; null under 1 MiB. */
export function regionBytes(capacityBytes: number, fraction: number): number | null {
  const region = Math.floor(Math.floor(capacityBytes * fraction) / REGION_ALIGN) * REGION_ALIGN;
  return region < REGION_ALIGN ? null : region;
}

function sameSet(a: readonly number[], b: readonly number[]): boolean {
  const sb = [...b].sort((x, y) => x - y);
  return a.length === b.length && [...a].sort((x, y) => x - y).every((x, i) => x === sb[i]);
}

/** Why a run of these parameters is not PTS-compliant (libs/workload's `deviations`, word for
 * word); empty: the specification's parameters. Steady state not reached is the run's to say. */
export function deviations(p: PtsSpec): string[] {
  const t = PTS_TESTS[p.test];
  const out: string[] = [];
  if (p.purge === "none") out.push("no purge before preconditioning");
  if (p.round_s !== ROUND_S) out.push(`rounds of ${p.round_s} s per element, not ${ROUND_S} s`);
  if (p.capacity_fraction !== 1)
    out.push(`${pyG(p.capacity_fraction)} of the capacity tested, not all of it`);
  if (p.max_rounds !== MAX_ROUNDS && p.test !== "wsat")
    out.push(`at most ${p.max_rounds} rounds, not ${MAX_ROUNDS}`);
  const oneThroughputSize = p.test === "throughput" && (p.block_sizes ?? []).length === 1;
  if (p.block_sizes && !sameSet(p.block_sizes, t.blockSizes) && !oneThroughputSize)
    out.push("a reduced block-size matrix");
  if (p.mixes && !sameSet(p.mixes, t.mixes)) out.push("a reduced R/W mix matrix");
  if (p.test === "hir") {
    const burstS = p.burst_s ?? HIR_BURST_S;
    const bursts = p.bursts ?? HIR_BURSTS;
    if (burstS !== HIR_BURST_S) out.push(`bursts of ${burstS} s, not ${HIR_BURST_S} s`);
    if (bursts !== HIR_BURSTS) out.push(`${bursts} bursts per wait state, not ${HIR_BURSTS}`);
    const w = waitStates(p);
    if (
      p.wait_states &&
      (w.length !== HIR_WAIT_STATES.length || w.some((x, i) => x !== HIR_WAIT_STATES[i]))
    )
      out.push("a reduced set of wait states");
  }
  if (p.profile === "client") {
    const trackingBs = p.test === "throughput" ? (p.block_sizes ?? t.blockSizes)[0] : undefined;
    if (trackingBs !== undefined && !CLIENT_THROUGHPUT_BLOCK_SIZES.includes(trackingBs))
      out.push("PTS Client's Throughput test is 1024 KiB only");
    out.push(
      `PTS Client: the sources at hand do not state ${clientUnstated(p.test).join("; ")}: iowatt calls no Client run compliant`,
    );
  }
  return out;
}

/** What the form shows before queueing. */
export interface PtsPlan {
  spec: PtsSpec;
  elements: number;
  threads: number;
  iodepth: number;
  /** one round: every element for round_s seconds */
  roundSeconds: number;
  /** the rounds' shortest time: steady state cannot hold before the fifth round (WSAT: its writes
   * may end it after the first) */
  minRoundsSeconds: number;
  /** the rounds' longest time: the round limit, and Host Idle Recovery's wait states
   * (libs/workload's run_seconds_max) */
  maxRoundsSeconds: number;
  /** Host Idle Recovery's wait states and returns to baseline (0 for the other tests) */
  hirSeconds: number;
  /** false: WSAT and HIR start from the purged state, without the SEQ 128 KiB preconditioning */
  wipc: boolean;
  /** the run's longest engine run (the host's max_runtime_s judges each): a round, or Host Idle
   * Recovery's return to baseline (bursts × burst_s without idle) when longer */
  longestRun: { seconds: number; what: "round" | "return to baseline" };
  roundLimit: number;
  /** null: the device's size is not known, or the share is under 1 MiB */
  regionBytes: number | null;
  /** the workload-independent preconditioning's writes (2 × the region) */
  preconditioningBytes: number | null;
  /** its time at ASSUMED_BYTES_PER_S (a guess: the device decides) */
  preconditioningSeconds: number | null;
  /** WSAT stops after 4 × the region written */
  wsatBytes: number | null;
  deviations: string[];
  compliant: boolean;
}

export function ptsPlan(
  spec: PtsSpec,
  factor: number | null,
  capacityBytes: number | null,
): PtsPlan {
  const p = scaledSpec(spec, factor);
  const t = PTS_TESTS[p.test];
  const elements = elementCount(p);
  const roundSeconds = elements * p.round_s;
  const limit = roundLimit(p);
  const region = capacityBytes ? regionBytes(capacityBytes, p.capacity_fraction) : null;
  const devs = deviations(p);
  const hir = hirSeconds(p);
  const baselineSeconds =
    p.test === "hir" ? (p.bursts ?? HIR_BURSTS) * (p.burst_s ?? HIR_BURST_S) : 0;
  return {
    spec: p,
    elements,
    threads: t.singleIo ? 1 : p.threads,
    iodepth: t.singleIo ? 1 : p.iodepth,
    roundSeconds,
    minRoundsSeconds: (t.steadyState ? WINDOW_ROUNDS : 1) * roundSeconds + hir,
    maxRoundsSeconds: limit * roundSeconds + hir,
    hirSeconds: hir,
    wipc: t.wipc,
    longestRun:
      baselineSeconds > roundSeconds
        ? { seconds: baselineSeconds, what: "return to baseline" }
        : { seconds: roundSeconds, what: "round" },
    roundLimit: limit,
    regionBytes: region,
    preconditioningBytes: region === null || !t.wipc ? null : WIPC_LOOPS * region,
    preconditioningSeconds:
      region === null || !t.wipc ? null : (WIPC_LOOPS * region) / ASSUMED_BYTES_PER_S,
    wsatBytes: region === null || p.test !== "wsat" ? null : WSAT_CAPACITY_MULTIPLE * region,
    deviations: devs,
    compliant: devs.length === 0,
  };
}
