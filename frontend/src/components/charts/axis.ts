import { sig3 } from "../../lib/format";

/** Compact tick labels: 12000 → "12k"; the unit lives in the axis label. */
export function tickNumber(v: number): string {
  const abs = Math.abs(v);
  if (abs >= 1e9) return `${sig3(v / 1e9)}G`;
  if (abs >= 1e6) return `${sig3(v / 1e6)}M`;
  if (abs >= 1e3) return `${sig3(v / 1e3)}k`;
  return sig3(v);
}

/** Round-numbered ticks (1, 2 or 5 × 10^k apart) covering [min, max], about `count` of them. */
export function niceTicks(min: number, max: number, count = 8): number[] {
  if (!Number.isFinite(min) || !Number.isFinite(max) || max <= min) return [];
  const raw = (max - min) / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = ([1, 2, 5, 10].find((m) => m * mag >= raw) ?? 10) * mag;
  const out: number[] = [];
  for (let v = Math.ceil(min / step) * step; v <= max + step * 1e-9; v += step) {
    out.push(Number(v.toPrecision(12)));
  }
  return out;
}

/** A time axis in seconds: its ticks at round times, and their unit. */
export interface TimeAxis {
  /** In seconds, the data's unit, from the first round time at or before the data's first point. */
  ticks: number[];
  unit: "s" | "min";
  /** A tick's label in `unit`. */
  format: (s: number) => string;
}

// steps a reader counts in: seconds up to 10 minutes of data, then minutes (in seconds here)
const SECOND_STEPS = [1, 2, 5, 10, 15, 30, 60, 120];
const MINUTE_STEPS = [1, 2, 5, 10, 15, 30, 60, 120, 240, 360, 720, 1440].map((m) => m * 60);

/** Ticks at round times over [min, max] seconds, about `count` of them: 0, 30, 60, 90 s, not the
 * 1, 36, 71, 106 s of even division; in minutes (0, 5, 10 min) when the data spans 10 minutes or more. */
export function timeTicks(min: number, max: number, count = 6): TimeAxis {
  const span = max - min;
  const unit = span >= 600 ? "min" : "s";
  const format = unit === "min" ? (s: number) => sig3(s / 60) : (s: number) => sig3(s);
  if (!Number.isFinite(span) || span <= 0) return { ticks: [], unit, format };
  const steps = unit === "min" ? MINUTE_STEPS : SECOND_STEPS;
  const step = steps.find((s) => s >= span / count) ?? (steps.at(-1) as number);
  const ticks: number[] = [];
  for (let t = Math.floor(min / step) * step; t <= max + step * 1e-9; t += step) ticks.push(t);
  return { ticks, unit, format };
}
