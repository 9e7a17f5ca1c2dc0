import { sig3 } from "../../lib/format";

/** Compact tick labels: 12000 → "12k"; the unit lives in the axis label. */
export function tickNumber(v: number): string {
  const abs = Math.abs(v);
  if (abs >= 1e9) return `${sig3(v / 1e9)}G`;
  if (abs >= 1e6) return `${sig3(v / 1e6)}M`;
  if (abs >= 1e3) return `${sig3(v / 1e3)}k`;
  return sig3(v);
}
