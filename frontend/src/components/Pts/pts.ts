// A SNIA PTS run's report (GET /runs/{id}/pts) shaped for its tables and charts: pure functions,
// tested in pts.test.ts. The steady-state rule itself is the server's (libs/workload's pts.py):
// the report carries the verdict, the window's fit and its limits; nothing here re-judges them.
import type { components } from "../../client/schema";
import { formatBytes } from "../../lib/format";

export type PtsReport = components["schemas"]["PtsReport"];
export type PtsElement = components["schemas"]["PtsElement"];

/** R/W mix as PTS writes it: read % 65 -> "65/35". */
export function mixLabel(readPct: number): string {
  return `${readPct}/${100 - readPct}`;
}

/** Block size as PTS writes it: 512 -> "0.5 KiB", 4096 -> "4 KiB", 1048576 -> "1024 KiB". */
export function bsLabel(bytes: number): string {
  const kib = bytes / 1024;
  return `${Number.isInteger(kib) ? kib : kib.toFixed(1)} KiB`;
}

export interface Matrix {
  /** block sizes, rows, largest first (the specification's order) */
  sizes: number[];
  /** R/W mixes as read %, columns, 100/0 first */
  mixes: number[];
  /** value at [row][column], null where the matrix has no element */
  cells: (number | null)[][];
}

/** The elements' window figures as a block size x R/W mix table. */
export function matrixOf(elements: PtsElement[], value: (e: PtsElement) => number | null): Matrix {
  const sizes = [...new Set(elements.map((e) => e.bs_bytes))].sort((a, b) => b - a);
  const mixes = [...new Set(elements.map((e) => e.read_pct))].sort((a, b) => b - a);
  const cells = sizes.map((bs) =>
    mixes.map((m) => {
      const e = elements.find((x) => x.bs_bytes === bs && x.read_pct === m);
      return e ? value(e) : null;
    }),
  );
  return { sizes, mixes, cells };
}

/** A heat map's shade of `v` between the matrix's smallest and largest (log scale: IOPS span
 * decades), 0..1; null for a missing cell. */
export function heat(v: number | null, all: (number | null)[]): number | null {
  if (v == null || !(v > 0)) return null;
  const pos = all.filter((x): x is number => x != null && x > 0);
  const lo = Math.log10(Math.min(...pos));
  const hi = Math.log10(Math.max(...pos));
  return hi > lo ? (Math.log10(v) - lo) / (hi - lo) : 1;
}

/** Why the rounds stopped, in words (the review PDF's stop_text says the same); null when the run
 * did not record it (before December 2026). */
export function stopText(r: PtsReport): string | null {
  const st = r.stop;
  if (!st) return null;
  switch (st.rule) {
    case "steady_state":
      return `steady state reached in round ${st.round}`;
    case "round_limit":
      return `the round limit: ${st.round_limit} rounds without steady state`;
    case "capacity":
      return `4 × the tested region written (${formatBytes(st.bytes_written)} of ${formatBytes(st.bytes_limit ?? 0)}) in round ${st.round}`;
    case "time": {
      const scaled =
        st.round_s === 60 ? "" : ": the specification's 24 hours at this trial's shorter rounds";
      return `the time limit: ${st.round_limit} rounds of ${st.round_s} s${scaled} (24 hours at 60 s rounds)`;
    }
  }
}

/** What the elements' figures average: the measurement window, or (Write Saturation, to which no
 * steady-state window applies) its last rounds. */
export function averagesLabel(r: PtsReport): string {
  if (r.verdict.steady_state_applies) return "window averages";
  if (r.averaged_first_round == null) return "no rounds";
  return `the average of rounds ${r.averaged_first_round}–${r.averaged_last_round}, the last ones run`;
}

/** The verdict in words, as the report's header and the run page say it. */
export function verdictText(v: PtsReport["verdict"]): string {
  if (!v.steady_state_applies)
    return `no steady-state rule (${v.test}: ${v.rounds} rounds over time)`;
  // Host Idle Recovery's rounds are its preconditioning; the wait states follow either way
  const of = v.test === "hir" ? "preconditioning: " : "";
  if (v.steady_state_reached) {
    return `${of}steady state reached in round ${v.steady_state_round} (window rounds ${v.window_first_round}–${v.window_last_round})`;
  }
  return `${of}steady state not reached in ${v.rounds} rounds`;
}

/** The convergence plot's lines: for IOPS every block size at the tracking variable's R/W mix
 * (the specification's plot), else every element; x = round. */
export function convergenceSeries(
  r: PtsReport,
): { key: string; label: string; points: { x: number; y: number }[] }[] {
  const tracking = r.elements.find((e) => e.name === r.tracking_element);
  const shown =
    r.verdict.test === "iops" && tracking
      ? r.elements.filter((e) => e.read_pct === tracking.read_pct)
      : r.elements;
  return shown.map((e) => ({
    key: e.name,
    label: `${bsLabel(e.bs_bytes)} ${mixLabel(e.read_pct)}`,
    points: e.per_round.flatMap((y, i) =>
      y == null ? [] : [{ x: r.rounds[i]?.round ?? i + 1, y: y }],
    ),
  }));
}

/** The measurement window's chart rows: each round's value, the fitted line, the average, the
 * data excursion band (average ± 10 %: 20 % of the average wide) and the slope excursion band
 * (average ± 5 %: the fitted line passes through the average at the window's middle, so it stays
 * inside exactly when it changes by at most 10 % of the average across the window). */
export function windowRows(w: NonNullable<PtsReport["window"]>) {
  return w.points.map((p) => ({
    round: p.round,
    value: p.value,
    fitted: p.fitted,
    average: w.average,
    dataHigh: w.average * 1.1,
    dataLow: w.average * 0.9,
    slopeHigh: w.average * 1.05,
    slopeLow: w.average * 0.95,
  }));
}

export interface WsatPoint {
  round: number;
  /** seconds of stimulus at the round's end (each round: round_s per element) */
  seconds: number;
  /** GB (10^9 bytes) the rounds had written by the round's end */
  gb: number;
  iops: number;
}

/** Write Saturation's two plots (PTS "Write Saturation": IOPS over time and over total GB
 * written): each round's RND 4 KiB write IOPS at the end of its seconds of stimulus and of the
 * bytes the rounds had written by then (the preconditioning's are not counted). Rounds without a
 * figure are left out. */
export function wsatPoints(r: PtsReport): WsatPoint[] {
  const perRound = r.round_s * Math.max(1, r.elements.length);
  return r.rounds.flatMap((rd) =>
    rd.tracking == null
      ? []
      : [
          {
            round: rd.round,
            seconds: rd.round * perRound,
            gb: rd.bytes_written / 1e9,
            iops: rd.tracking,
          },
        ],
  );
}

/** The time axis of Write Saturation: minutes (the specification's) from five minutes of
 * stimulus up, seconds for a short trial. */
export function wsatTimeAxis(points: WsatPoint[]): { unit: "min" | "s"; divisor: number } {
  const last = points.at(-1)?.seconds ?? 0;
  return last >= 300 ? { unit: "min", divisor: 60 } : { unit: "s", divisor: 1 };
}

export type PtsHir = NonNullable<PtsReport["hir"]>;

/** Host Idle Recovery's time axis: minutes (the specification's "IOPS v Time") from ten minutes
 * on, seconds for a short trial. */
export function hirTimeAxis(h: PtsHir): { unit: "min" | "s"; divisor: number } {
  const last = Math.max(0, ...h.segments.flatMap((s) => s.points.map((p) => p.t_s)));
  return last >= 600 ? { unit: "min", divisor: 60 } : { unit: "s", divisor: 1 };
}

/** The segment's name as the report writes it: "WS2: 10 s idle" or "baseline after WS2". */
export function hirSegmentLabel(s: PtsHir["segments"][number]): string {
  return s.kind === "wait"
    ? `WS${s.wait_state}: ${sig(s.idle_s)} s idle`
    : `baseline after WS${s.wait_state}`;
}

function sig(v: number): string {
  return Number.isInteger(v) ? String(v) : v.toPrecision(3);
}

/** The "IOPS v Time" plot's lines (PTS Host Idle Recovery): one per segment, each burst's write
 * IOPS at the time it started; a wait state and its return to baseline share a colour (one per
 * wait state), the return to baseline dashed. */
export function hirSeries(h: PtsHir): {
  key: string;
  label: string;
  dashed: boolean;
  color: number;
  points: { x: number; y: number }[];
}[] {
  const { divisor } = hirTimeAxis(h);
  const states = [...new Set(h.segments.map((s) => s.wait_state))];
  return h.segments.map((s, i) => ({
    key: `${s.kind}-${s.wait_state}-${i}`,
    label: hirSegmentLabel(s),
    dashed: s.kind === "baseline",
    color: states.indexOf(s.wait_state),
    points: s.points.map((p) => ({ x: p.t_s / divisor, y: p.iops })),
  }));
}

/** Each wait state's average IOPS beside its return to baseline and the preconditioning's
 * steady state: the recovery a host idle bought (ratio to the steady state; null without one). */
export function hirRows(h: PtsHir): {
  waitState: number;
  idleS: number;
  iops: number;
  baselineIops: number | null;
  ratio: number | null;
}[] {
  return h.segments
    .filter((s) => s.kind === "wait")
    .map((s) => {
      const base = h.segments.find((b) => b.kind === "baseline" && b.wait_state === s.wait_state);
      const steady = h.preconditioned_iops;
      return {
        waitState: s.wait_state,
        idleS: s.idle_s,
        iops: s.average_iops,
        baselineIops: base ? base.average_iops : null,
        ratio: steady != null && steady > 0 ? s.average_iops / steady : null,
      };
    });
}
