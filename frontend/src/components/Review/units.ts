// How a review's figures read: money exactly as the API's decimal strings (digits grouped,
// never through a float, never in exponent form) with the currency; capacities in decimal units as
// drive vendors and the published reports use them (GB = 10^9 bytes); the other figures humane,
// three significant digits. The PDF and CSV print the same through backend/kit/numbers.py (shared
// vectors: libs/workload/testdata/numbers.json).
import { formatDecimal, formatMoney, formatWhole, MISSING, sig3 } from "../../lib/format";

/** "1190.00" → "1,190.00", "2.7E-7" → "0.00000027"; digits and decimals are kept as sent. */
export function groupDigits(decimal: string): string {
  return formatDecimal(decimal);
}

/** A money string of the API with its currency: ("1190.00", "USD") → "1,190.00 USD". */
export function money(value: string | null | undefined, currency: string): string {
  return formatMoney(value, currency);
}

/** A decimal string of the API as a number for charts and humane figures (never for money text). */
export function num(value: string | number | null | undefined): number | null {
  if (value == null || value === "") return null;
  const n = typeof value === "number" ? value : Number(value);
  return Number.isFinite(n) ? n : null;
}

const DECIMAL_UNITS = ["B", "kB", "MB", "GB", "TB", "PB", "EB"] as const;

/** Bytes in decimal units: 600e9 → "600 GB", 1.8e12 → "1.8 TB" (GB = 10^9 bytes). */
export function decimalBytes(bytes: number | null | undefined): string {
  if (bytes == null || !Number.isFinite(bytes)) return MISSING;
  let v = Math.abs(bytes);
  let i = 0;
  while (v >= 1000 && i < DECIMAL_UNITS.length - 1) {
    v /= 1000;
    i += 1;
  }
  return `${bytes < 0 ? "-" : ""}${sig3(v)} ${DECIMAL_UNITS[i]}`;
}

/** A fraction string as a percentage: "1" → "100 %", "0.25" → "25 %". */
export function fractionPct(value: string | null | undefined): string {
  const n = num(value);
  return n == null ? MISSING : `${sig3(n * 100)} %`;
}

/** A plain decimal figure, three significant digits with grouping for large values. */
export function plain(value: string | number | null | undefined, unit = ""): string {
  const n = num(value);
  if (n == null) return MISSING;
  const text = Math.abs(n) >= 1000 ? formatWhole(n) : sig3(n);
  return unit ? `${text} ${unit}` : text;
}

/** A candidate's performance in its metric's unit. */
export function perfText(value: string | null | undefined, metric: string): string {
  const unit = metric === "mb_s" ? "MB/s" : metric === "rps" ? "RPS" : "IOPS";
  return plain(value, unit);
}

/** The unit of a performance metric in "cost per …" labels. */
export function perfUnit(metric: string): string {
  return metric === "mb_s" ? "MB/s" : metric === "rps" ? "RPS" : "IOPS";
}

/** Parses "600 GB", "1.8 TB", "2TB", "4 TiB" or plain bytes into bytes (decimal by default). */
export function parseCapacity(text: string): number | null {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([kmgtp]?i?b?)?\s*$/i.exec(text);
  if (!m) return null;
  const v = Number(m[1]);
  const unit = (m[2] ?? "").toLowerCase();
  if (unit === "" || unit === "b") return Number.isFinite(v) ? Math.round(v) : null;
  const power = "kmgtp".indexOf(unit[0] ?? "") + 1;
  if (power === 0) return null;
  const base = unit.includes("i") ? 1024 : 1000;
  return Math.round(v * base ** power);
}

/** Sensitivity parameters in words, with the unit their values are in. */
export const PARAMETERS: Record<string, { label: string; unit: (currency: string) => string }> = {
  price: { label: "Leader's unit price", unit: () => "× today's price" },
  tariff: { label: "Electricity tariff", unit: (c) => `${c}/kWh` },
  grid_intensity: { label: "Grid intensity", unit: () => "gCO2e/kWh" },
  duty_cycle: { label: "Duty cycle", unit: () => "share of hours under load" },
  horizon: { label: "Horizon", unit: () => "years" },
};

type CandidateSet = {
  model: string;
  capacity_bytes: number;
  count: number;
  protection: string;
  hot_spares: number;
  over_provisioning: string;
};

/** "ENT 10K (1.8 TB) × 4": a candidate's drive model, its capacity (10^9 B units) and count. */
export function deviceText(c: CandidateSet): string {
  return `${c.model} (${decimalBytes(c.capacity_bytes)}) × ${c.count}`;
}

/** "raid10 + 1 hot spare, 7 % over-provisioned": the protection as the candidate sets it up. */
export function protectionText(c: CandidateSet): string {
  const spares =
    c.hot_spares > 0 ? ` + ${c.hot_spares} hot spare${c.hot_spares > 1 ? "s" : ""}` : "";
  const op = num(c.over_provisioning)
    ? `, ${fractionPct(c.over_provisioning)} over-provisioned`
    : "";
  return `${c.protection}${spares}${op}`;
}
