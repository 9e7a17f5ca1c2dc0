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
