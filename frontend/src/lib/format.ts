// The one place where numbers become text for humans. The wire carries base units
// (bytes, nanoseconds, seconds, UTC timestamps); everything below turns them into
// labelled strings. Conventions:
//   - sizes (block size, capacity, memory) use binary prefixes: KiB, MiB, GiB, TiB (2^10 steps);
//   - throughput uses decimal megabytes per second: 1 MB/s = 10^6 B/s (as fio's "MB/s");
//   - latency is shown in ns / µs / ms / s with three significant digits;
//   - IOPS use k (10^3) and M (10^6);
//   - power in mW / W / kW, energy in J / kJ / MJ and kWh from 1 kWh (3.6 MJ) up;
//   - carbon in gCO2e / kgCO2e / tCO2e (CO2-equivalent mass);
//   - timestamps are shown in the browser's local time zone.

export const MISSING = "—";

type Num = number | null | undefined;

function isNum(v: Num): v is number {
  return typeof v === "number" && Number.isFinite(v);
}

// Numbers become text through Intl.NumberFormat in the browser's locale (en-US where there is
// none: tests, a server-side render). The server prints the same rules in Python
// (backend/kit/numbers.py: the review's CSV and PDF); both pass the vectors of
// libs/workload/testdata/numbers.json in en-US (format.vectors.test.ts). Intl rounds a float from its
// shortest decimal, half away from zero (1.005 to two places is 1.01), and formats a decimal
// string exactly (the API's money, never through a float).

/** The locale numbers are written in: the browser's, else en-US. */
export const LOCALE: string =
  (typeof navigator !== "undefined" &&
    typeof navigator.language === "string" &&
    navigator.language) ||
  "en-US";

const formats = new Map<string, Intl.NumberFormat>();

/** A cached Intl.NumberFormat: `min`..`max` decimals, digits grouped or not. */
function nf(locale: string, min: number, max: number, grouping: boolean): Intl.NumberFormat {
  const key = `${locale}|${min}|${max}|${grouping}`;
  let f = formats.get(key);
  if (!f) {
    f = new Intl.NumberFormat(locale, {
      minimumFractionDigits: min,
      maximumFractionDigits: max,
      useGrouping: grouping,
    });
    formats.set(key, f);
  }
  return f;
}

function sig3Decimals(abs: number): number {
  return abs >= 100
    ? 0
    : abs >= 10
      ? 1
      : abs >= 1
        ? 2
        : Math.min(6, 2 - Math.floor(Math.log10(abs)));
}

/** `v` rounded to three significant digits (at most 6 decimals), as a number. */
export function round3(v: number): number {
  if (v === 0 || !Number.isFinite(v)) return v;
  return Number(nf("en-US", 0, sig3Decimals(Math.abs(v)), false).format(v));
}

/** Three significant digits, without trailing zeros past the point ("12.3", "4", "0.0456"). */
export function sig3(v: number, locale: string = LOCALE): string {
  if (v === 0) return "0";
  return nf(locale, 0, sig3Decimals(Math.abs(v)), false).format(v);
}

/** A whole number with grouped digits: 1234.5 → "1,235" (en-US). */
export function formatWhole(v: number, locale: string = LOCALE): string {
  return nf(locale, 0, 0, true).format(v);
}

const DECIMAL = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/;

/** A decimal string of the API in fixed notation with exactly the digits it was sent with:
 * "2.7E-7" → "0.00000027", "2.5E+2" → "250", "1190.00" → "1190.00"; null if it is no decimal.
 * (A Decimal's str() in Python writes exponents below 10^-6: the wire carries "2.7E-7".) */
export function decimalPlain(text: string): string | null {
  const m = DECIMAL.exec(text.trim());
  if (!m) return null;
  const [, sign = "", int = "", frac = "", exp = "0"] = m;
  if (int === "" && frac === "") return null;
  const digits = `${int}${frac}`;
  const scale = frac.length - Number(exp);
  let out: string;
  if (scale <= 0) {
    out = `${digits}${"0".repeat(-scale)}`.replace(/^0+(?=\d)/, "");
  } else {
    const padded = digits.padStart(scale + 1, "0");
    const head = padded.slice(0, padded.length - scale).replace(/^0+(?=\d)/, "");
    out = `${head}.${padded.slice(padded.length - scale)}`;
  }
  return `${sign === "-" ? "-" : ""}${out}`;
}

/** A decimal string of the API for reading: every digit as sent, digits grouped, never in exponent
 * form: "1190.00" → "1,190.00", "2.7E-7" → "0.00000027" (en-US). Text that is no decimal is
 * returned as it is. */
export function formatDecimal(text: string, locale: string = LOCALE): string {
  const fixed = decimalPlain(text);
  if (fixed === null) return text;
  const scale = Math.min(100, fixed.includes(".") ? (fixed.split(".")[1]?.length ?? 0) : 0);
  // Intl formats a string exactly (ECMA-402 2023); the cast is for TypeScript's older lib typing.
  return nf(locale, scale, scale, true).format(fixed as unknown as number);
}

/** Money of the API with its currency code: ("0.0005", "EUR") → "0.0005 EUR". Its precision is
 * the one the server rounded it to (the currency's minor unit for totals, 4 places for rates,
 * 8 for the cost per GB per IOPS): the digits are shown as sent, never rounded again. */
export function formatMoney(
  text: string | null | undefined,
  currency: string,
  locale: string = LOCALE,
): string {
  if (text == null || text === "") return MISSING;
  return `${formatDecimal(text, locale)} ${currency}`;
}

const BINARY_UNITS = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"] as const;

/** Bytes with binary prefixes: 4096 → "4 KiB", 1572864 → "1.5 MiB". */
export function formatBytes(bytes: Num): string {
  if (!isNum(bytes)) return MISSING;
  let v = Math.abs(bytes);
  let i = 0;
  while (v >= 1024 && i < BINARY_UNITS.length - 1) {
    v /= 1024;
    i += 1;
  }
  return `${bytes < 0 ? "-" : ""}${sig3(v)} ${BINARY_UNITS[i]}`;
}

/** Bytes per second → decimal MB/s (10^6 B/s), the number only. */
export function toMBps(bytesPerSecond: number): number {
  return bytesPerSecond / 1e6;
}

/** Throughput in decimal MB/s: 1_234_000_000 → "1,234 MB/s", 5_430_000 → "5.43 MB/s". */
export function formatThroughput(bytesPerSecond: Num): string {
  if (!isNum(bytesPerSecond)) return MISSING;
  const mb = toMBps(bytesPerSecond);
  const abs = Math.abs(mb);
  const text = abs >= 1000 ? formatWhole(mb) : abs === 0 ? "0" : sig3(mb);
  return `${text} MB/s`;
}

/** Nanoseconds → "850 ns", "12.3 µs", "4.56 ms", "1.23 s". */
export function formatNs(ns: Num): string {
  if (!isNum(ns)) return MISSING;
  // Pick the unit after rounding, so 999_999 ns reads "1 ms", not "1000 µs".
  const steps: [number, string][] = [
    [1, "ns"],
    [1e3, "µs"],
    [1e6, "ms"],
  ];
  for (const [scale, unit] of steps) {
    if (Math.abs(round3(ns / scale)) < 1000) return `${sig3(ns / scale)} ${unit}`;
  }
  return `${sig3(ns / 1e9)} s`;
}

/** Seconds as a duration: 5 → "5 s", 90 → "1 min 30 s", 3720 → "1 h 2 min". */
export function formatSeconds(s: Num): string {
  if (!isNum(s)) return MISSING;
  if (s < 60) return `${sig3(s)} s`;
  const total = Math.round(s);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const sec = total % 60;
  if (h > 0) return `${h} h ${m} min`;
  return sec > 0 ? `${m} min ${sec} s` : `${m} min`;
}

/** Number with k / M / G: 850 → "850", 12_345 → "12.3k", 1_234_567 → "1.23M". */
export function formatCount(n: Num): string {
  if (!isNum(n)) return MISSING;
  const abs = Math.abs(n);
  if (abs < 1e3) return sig3(n);
  if (abs < 1e6) return `${sig3(n / 1e3)}k`;
  if (abs < 1e9) return `${sig3(n / 1e6)}M`;
  return `${sig3(n / 1e9)}G`;
}

/** I/O operations per second: 12_345 → "12.3k IOPS". */
export function formatIops(iops: Num): string {
  if (!isNum(iops)) return MISSING;
  return `${formatCount(iops)} IOPS`;
}

/** A percentage already in 0..100: 42.123 → "42.1 %". */
export function formatPercent(pct: Num): string {
  if (!isNum(pct)) return MISSING;
  const abs = Math.abs(pct);
  const decimals = abs >= 100 ? 0 : abs >= 10 ? 1 : 2;
  return `${nf(LOCALE, decimals, decimals, false).format(pct)} %`;
}

/** A ratio between two measurements: 2.5 → "2.50×". */
export function formatRatio(r: Num): string {
  if (!isNum(r)) return MISSING;
  const abs = Math.abs(r);
  // Below 1, three significant digits, so 0.0073 does not collapse to "0.01".
  const fixed = (d: number) => nf(LOCALE, d, d, false).format(r);
  const text =
    abs >= 100 ? fixed(0) : abs >= 10 ? fixed(1) : abs >= 1 || abs === 0 ? fixed(2) : sig3(r);
  return `${text}×`;
}

function pad2(n: number): string {
  return String(n).padStart(2, "0");
}

/** The zone of a local time: "UTC" when the offset is zero, else "UTC+01:00" / "UTC-05:30". */
export function formatZone(d: Date): string {
  const off = -d.getTimezoneOffset();
  if (off === 0) return "UTC";
  const a = Math.abs(off);
  return `UTC${off > 0 ? "+" : "-"}${pad2(Math.floor(a / 60))}:${pad2(a % 60)}`;
}

/** ISO timestamp (UTC on the wire) → "2026-11-21 23:13:02 UTC+01:00" in the browser's local
 * time, always with its zone, so a shared screenshot or page reads the same anywhere. */
export function formatTimestamp(iso: string | null | undefined): string {
  if (!iso) return MISSING;
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return MISSING;
  return `${d.getFullYear()}-${pad2(d.getMonth() + 1)}-${pad2(d.getDate())} ${pad2(d.getHours())}:${pad2(d.getMinutes())}:${pad2(d.getSeconds())} ${formatZone(d)}`;
}

/** "5 s ago", "3 min ago", "2 h ago", "4 d ago"; future times read "in 5 s". */
export function formatRelative(iso: string | null | undefined, now: number = Date.now()): string {
  if (!iso) return MISSING;
  const t = new Date(iso).getTime();
  if (Number.isNaN(t)) return MISSING;
  const diff = Math.round((now - t) / 1000);
  const abs = Math.abs(diff);
  let text: string;
  if (abs < 60) text = `${abs} s`;
  else if (abs < 3600) text = `${Math.floor(abs / 60)} min`;
  else if (abs < 86400) text = `${Math.floor(abs / 3600)} h`;
  else text = `${Math.floor(abs / 86400)} d`;
  return diff >= 0 ? `${text} ago` : `in ${text}`;
}

// Sizes typed by a person or used in a name follow fio's syntax, the one rule of iowatt
// (libs/workload/src/iowatt_workload/sizes.py; this port passes the same vectors,
// libs/workload/testdata/sizes.json, in workload.vectors.test.ts): a whole number (decimal,
// octal with a leading 0, hex 0x…), then optionally k m g t p (+ b) — powers of 1024 — or
// IEC-looking ki/kib — powers of 1000 under fio's default kb_base=1024, so "4KiB" is 4000 bytes,
// as the engine reads it. No fraction, sign or spaces (callers trim what a person typed).

const SIZE_NUMBER = /^(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)(.*)$/;
const SIZE_POWERS: Record<string, number> = { k: 1, m: 2, g: 3, t: 4, p: 5 };
const U64_MAX = (1n << 64n) - 1n;

/** fio's reading of a size as a BigInt (exact to 2^64 - 1); null when the engine would refuse it. */
export function parseSizeBig(text: string, kbBase: 1000 | 1024 = 1024): bigint | null {
  if (kbBase !== 1000 && kbBase !== 1024) return null;
  const m = SIZE_NUMBER.exec(text);
  if (!m || m[1] === undefined) return null;
  const digits = m[1];
  const value =
    digits.length > 1 && digits[0] === "0" && !/^0[xX]/.test(digits)
      ? BigInt(`0o${digits.slice(1)}`)
      : BigInt(digits);
  const rest = m[2] ?? "";
  let power = 0;
  let iec = false;
  if (rest) {
    const head = (rest[0] ?? "").toLowerCase();
    const tail = rest.slice(1).toLowerCase();
    if (head === "b") {
      if (tail) return null;
    } else if (head in SIZE_POWERS) {
      power = SIZE_POWERS[head] ?? 0;
      if (tail === "ib" || tail === "i") iec = true;
      else if (tail && tail !== "b") return null;
    } else {
      return null;
    }
  }
  const unit = (kbBase === 1000) === iec ? 1024n : 1000n;
  const bytes = value * unit ** BigInt(power);
  return value > U64_MAX || bytes > U64_MAX ? null : bytes;
}

/** Bytes of a size in fio's syntax ("4k" → 4096, "1g", "0x1000"); null when the engine would
 * refuse it or it is beyond what a number holds exactly (2^53 - 1). */
export function parseSize(text: string, kbBase: 1000 | 1024 = 1024): number | null {
  const bytes = parseSizeBig(text, kbBase);
  return bytes === null || bytes > BigInt(Number.MAX_SAFE_INTEGER) ? null : Number(bytes);
}

/** The shortest fio spelling that parseSize reads back exactly: 4096 → "4k", 1536 → "1536".
 * For names and values a person may type again; for reading, formatBytes ("4 KiB"). */
export function formatSize(bytes: number): string {
  if (!Number.isSafeInteger(bytes) || bytes < 0)
    throw new RangeError(`not a size in bytes: ${bytes}`);
  const n = BigInt(bytes);
  for (const [suffix, power] of [
    ["p", 5],
    ["t", 4],
    ["g", 3],
    ["m", 2],
    ["k", 1],
  ] as const) {
    const unit = 1024n ** BigInt(power);
    if (n > 0n && n % unit === 0n) return `${n / unit}${suffix}`;
  }
  return String(n);
}

/**
 * A value with a unit as the server names it in compare metrics. Units known here are
 * formatted with the helpers above; anything else is printed with its unit verbatim.
 */
export function formatWithUnit(value: Num, unit: string | null | undefined): string {
  if (!isNum(value)) return MISSING;
  switch ((unit ?? "").toLowerCase()) {
    case "w":
      return formatWatts(value);
    case "j":
      return formatEnergy(value);
    case "gco2e":
      return formatCo2(value);
    case "j/gb":
      return formatJPerGb(value);
    case "j/mio":
      return formatJPerMio(value);
    case "io/j":
    case "iops/w":
      return formatIopsPerWatt(value);
    case "mb/j":
    case "mb/s/w":
      return formatMBpsPerWatt(value);
    case "gco2e/kwh":
      return formatGridIntensity(value);
    case "ns":
      return formatNs(value);
    case "ns/op":
      return `${formatNs(value)}/op`;
    case "op/s":
      return `${formatCount(value)} op/s`;
    case "b/s":
    case "bytes/s":
    case "bytes_per_s":
    case "bytes_per_second":
      return formatThroughput(value);
    case "b":
    case "bytes":
      return formatBytes(value);
    case "iops":
    case "io/s":
      return formatIops(value);
    case "%":
    case "pct":
    case "percent":
      return formatPercent(value);
    case "s":
    case "seconds":
      return formatSeconds(value);
    case "":
      return formatCount(value);
    default:
      return `${formatCount(value)} ${unit}`;
  }
}

/** A display unit for a latency axis, chosen from the largest value: ns, µs, ms or s. */
export function latencyScale(maxNs: number): { divisor: number; unit: string } {
  if (maxNs >= 1e9) return { divisor: 1e9, unit: "s" };
  if (maxNs >= 1e6) return { divisor: 1e6, unit: "ms" };
  if (maxNs >= 1e3) return { divisor: 1e3, unit: "µs" };
  return { divisor: 1, unit: "ns" };
}

/** Power: 0.85 → "850 mW", 61.24 → "61.2 W", 1234 → "1.23 kW". */
export function formatWatts(w: Num): string {
  if (!isNum(w)) return MISSING;
  const abs = Math.abs(w);
  if (abs === 0) return "0 W";
  if (abs < 1) return `${sig3(w * 1e3)} mW`;
  if (abs >= 1e3) return `${sig3(w / 1e3)} kW`;
  return `${sig3(w)} W`;
}

/** The unit energy `j` is shown in, so a value and its uncertainty can share it. */
export function energyScale(j: number): { divisor: number; unit: string } {
  const abs = Math.abs(j);
  if (abs >= 3.6e6) return { divisor: 3.6e6, unit: "kWh" };
  if (abs >= 1e6) return { divisor: 1e6, unit: "MJ" };
  if (abs >= 1e3) return { divisor: 1e3, unit: "kJ" };
  return { divisor: 1, unit: "J" };
}

/** Energy: 850 → "850 J", 3962.7 → "3.96 kJ", 2.5e6 → "2.5 MJ", 7.2e6 → "2 kWh". */
export function formatEnergy(j: Num): string {
  if (!isNum(j)) return MISSING;
  const s = energyScale(j);
  return `${sig3(j / s.divisor)} ${s.unit}`;
}

/**
 * Energy with its expanded uncertainty in the same unit: "3.96 ± 0.05 kJ". The uncertainty
 * keeps the decimals of the value (at least two significant digits of its own).
 */
export function formatEnergyPm(j: Num, u: Num): string {
  if (!isNum(j)) return MISSING;
  if (!isNum(u)) return formatEnergy(j);
  const s = energyScale(j);
  const v = j / s.divisor;
  const du = Math.abs(u) / s.divisor;
  const valueText = sig3(v, "en-US");
  const decimals = Math.max(
    valueText.includes(".") ? (valueText.split(".")[1]?.length ?? 0) : 0,
    du > 0 && du < 1 ? Math.min(6, 1 - Math.floor(Math.log10(du))) : 0,
  );
  const fixed = nf(LOCALE, decimals, decimals, false);
  return `${fixed.format(v)} ± ${fixed.format(du)} ${s.unit}`;
}

/** CO2-equivalent mass given in grams: 12.34 → "12.3 gCO2e", 4500 → "4.5 kgCO2e", 2e6 → "2 tCO2e". */
export function formatCo2(g: Num): string {
  if (!isNum(g)) return MISSING;
  const abs = Math.abs(g);
  if (abs >= 1e6) return `${sig3(g / 1e6)} tCO2e`;
  if (abs >= 1e3) return `${sig3(g / 1e3)} kgCO2e`;
  return `${sig3(g)} gCO2e`;
}

/** Embodied carbon given in kg: 15 → "15 kgCO2e", 0.5 → "500 gCO2e". */
export function formatCo2Kg(kg: Num): string {
  return isNum(kg) ? formatCo2(kg * 1e3) : MISSING;
}

/** Grid carbon intensity: 380 → "380 gCO2e/kWh". */
export function formatGridIntensity(gPerKwh: Num): string {
  if (!isNum(gPerKwh)) return MISSING;
  return `${sig3(gPerKwh)} gCO2e/kWh`;
}

/** Energy per decimal gigabyte moved (10^9 B): "123 J/GB". */
export function formatJPerGb(v: Num): string {
  if (!isNum(v)) return MISSING;
  return `${formatCount(v)} J/GB`;
}

/** Energy per million I/O operations: "45.6 J/M I/Os". */
export function formatJPerMio(v: Num): string {
  if (!isNum(v)) return MISSING;
  return `${formatCount(v)} J/M I/Os`;
}

/** I/O operations per joule, i.e. IOPS per watt: 1234 → "1.23k IOPS/W". */
export function formatIopsPerWatt(v: Num): string {
  if (!isNum(v)) return MISSING;
  return `${formatCount(v)} IOPS/W`;
}

/** Decimal megabytes per joule, i.e. MB/s per watt: "12.3 MB/s/W". */
export function formatMBpsPerWatt(v: Num): string {
  if (!isNum(v)) return MISSING;
  return `${formatCount(v)} MB/s/W`;
}

/** A price per kWh in a currency: (0.25, "EUR") → "0.25 EUR/kWh". */
export function formatPricePerKwh(v: Num, currency: string): string {
  if (!isNum(v)) return MISSING;
  return `${sig3(v)} ${currency}/kWh`;
}

// A figure shown in a unit a published report prints, from the base unit it travels in (the named
// views, backend/views: B/s shown as MB/s = 10^6 B/s, ns as µs, B as KiB). Base units per one
// displayed unit; the server's CSV converts with backend/views/display.py DISPLAY, and both pass
// backend/views/testdata/display_units.json (format.views.test.ts), which lists every unit the
// server may name.
const PER_DISPLAY_UNIT: Record<string, Record<string, number>> = {
  "B/s": { "B/s": 1, "kB/s": 1e3, "MB/s": 1e6, "GB/s": 1e9, "MiB/s": 2 ** 20, "GiB/s": 2 ** 30 },
  ns: { ns: 1, µs: 1e3, ms: 1e6, s: 1e9 },
  B: { B: 1, KiB: 2 ** 10, MiB: 2 ** 20, GiB: 2 ** 30, kB: 1e3, MB: 1e6 },
  // file workloads: operations per second, the reports' power and energy
  "op/s": { "op/s": 1, "ops/s": 1, "k op/s": 1e3 },
  W: { W: 1, mW: 1e-3, kW: 1e3 },
  J: { J: 1, kJ: 1e3, MJ: 1e6, Wh: 3600, kWh: 3.6e6, W·s: 1 },
};

/** `value` (in the base unit `unit`) in the unit `shown`: (3.5e9, "B/s", "MB/s") → 3500. A unit
 * shown as itself, or a pair not known here, is returned unchanged only when the units are equal. */
export function fromBaseUnit(value: number, unit: string, shown: string): number {
  if (unit === shown) return value;
  const per = PER_DISPLAY_UNIT[unit]?.[shown];
  if (per === undefined) throw new RangeError(`no conversion from ${unit} to ${shown}`);
  return value / per;
}

/** A figure as a report's table prints it: converted to `shown`, digits grouped, at most
 * `maxDecimals` decimals ("1,611.04"); no unit appended (the column's header names it). */
export function formatFigure(
  value: Num,
  unit: string | null | undefined,
  shown: string | null | undefined,
  maxDecimals = 2,
): string {
  if (!isNum(value)) return MISSING;
  const v = unit && shown ? fromBaseUnit(value, unit, shown) : value;
  return nf(LOCALE, 0, maxDecimals, true).format(v);
}
