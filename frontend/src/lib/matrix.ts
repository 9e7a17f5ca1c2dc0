import { parseSize } from "./format";

/** The sweep fields of a campaign form, as typed: comma-separated lists. */
export type SweepText = { bs: string; qd: string; threads: string; read: string };
export const EMPTY_SWEEP: SweepText = { bs: "", qd: "", threads: "", read: "" };

export type Sweep = {
  bs_bytes: number[];
  iodepth: number[];
  numjobs: number[];
  rwmixread: number[];
};

/** A comma- or space-separated list: sizes in fio's spelling ("4k, 64k, 1m") or whole numbers. */
export function parseList(
  text: string,
  kind: "size" | "count" | "percent",
): { values: number[] } | { error: string } {
  const parts = text
    .split(/[,\s]+/)
    .map((s) => s.trim())
    .filter(Boolean);
  const values: number[] = [];
  for (const p of parts) {
    const n = kind === "size" ? parseSize(p) : /^\d+$/.test(p) ? Number(p) : null;
    if (n === null || (kind !== "percent" && n <= 0) || (kind === "percent" && n > 100))
      return {
        error: `"${p}" is not ${kind === "size" ? "a size (4k, 64k, 1m)" : kind === "percent" ? "a percentage 0–100" : "a whole number above 0"}`,
      };
    if (values.includes(n)) return { error: `"${p}" is given twice` };
    values.push(n);
  }
  return { values };
}

/** The sweep a form's text makes, with an error per field that does not read. */
export function sweepOf(t: SweepText): {
  sweep: Sweep;
  errors: Partial<Record<keyof SweepText, string>>;
} {
  const errors: Partial<Record<keyof SweepText, string>> = {};
  const take = (k: keyof SweepText, kind: "size" | "count" | "percent") => {
    const r = parseList(t[k], kind);
    if ("error" in r) {
      errors[k] = r.error;
      return [];
    }
    return r.values;
  };
  return {
    sweep: {
      bs_bytes: take("bs", "size"),
      iodepth: take("qd", "count"),
      numjobs: take("threads", "count"),
      rwmixread: take("read", "percent"),
    },
    errors,
  };
}

export function hasSweep(s: Sweep): boolean {
  return Object.values(s).some((v) => v.length > 0);
}

/** Seconds as "2 h 5 min", "40 s". */
export function formatSpan(s: number): string {
  if (s < 90) return `${Math.round(s)} s`;
  const min = Math.round(s / 60);
  if (min < 90) return `${min} min`;
  const h = Math.floor(min / 60);
  return `${h} h ${min % 60} min`;
}
