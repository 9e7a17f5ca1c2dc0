// What a chart's tooltip says of a figure's uncertainty: its 95 % confidence interval where the
// figure is a mean of repeats (drawn as an error bar), else that it has none (a figure
// without repeats gets no bar, and the tooltip says why rather than leaving the reader to guess).
import { sig3 } from "../../lib/format";

/** Distances [below, above] the value, as Recharts' ErrorBar takes them. */
export type ErrorDistances = [number, number];

export function isErr(v: unknown): v is ErrorDistances {
  return Array.isArray(v) && v.length === 2 && v.every((x) => typeof x === "number");
}

export const NO_INTERVAL = "no repeats: no interval";

/** "95 % CI 480 – 520 MB/s (n = 3)", or NO_INTERVAL for a figure without repeats. */
export function intervalText(value: number, err: unknown, unit: string, n?: unknown): string {
  if (!isErr(err)) return NO_INTERVAL;
  const [below, above] = err;
  const count = typeof n === "number" && n > 1 ? ` (n = ${n})` : "";
  return `95 % CI ${sig3(value - below)} – ${sig3(value + above)}${unit ? ` ${unit}` : ""}${count}`;
}

/** A tooltip's value line: the figure in its unit, then its interval (or why it has none). */
export function tooltipValue(value: unknown, unit: string, err: unknown, n?: unknown): string {
  if (value == null || value === "") return "—";
  const v = Number(value);
  return `${sig3(v)}${unit ? ` ${unit}` : ""} · ${intervalText(v, err, unit, n)}`;
}
