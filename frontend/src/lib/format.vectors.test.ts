// The UI's formatter against the vectors the server's formatter passes too
// (libs/workload/testdata/numbers.json; tests/backend/test_numbers.py): one figure reads the same
// on the page, in the CSV and in the PDF (backend/kit/numbers.py prints those).
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { decimalBytes, fractionPct, plain } from "../components/Review/units";
import { decimalPlain, formatDecimal, formatMoney, sig3 } from "./format";

type Vectors = {
  locale: string;
  decimal: { in: string; plain: string; grouped: string }[];
  money: { in: string | null; currency: string; out: string }[];
  sig3: { in: number; out: string }[];
  plain: { in: string | null; unit: string; out: string }[];
  decimal_bytes: { in: number; out: string }[];
  fraction_pct: { in: string; out: string }[];
};

const V: Vectors = JSON.parse(
  readFileSync(
    join(dirname(fileURLToPath(import.meta.url)), "../../../libs/workload/testdata/numbers.json"),
    "utf8",
  ),
);

describe("number vectors shared with the server (libs/workload/testdata/numbers.json)", () => {
  it("runs in the vectors' locale", () => {
    // the helpers below default to the browser's locale; jsdom's is en-US, as the vectors
    expect(V.locale).toBe("en-US");
    expect(new Intl.NumberFormat().resolvedOptions().locale).toMatch(/^en/);
  });
  it.each(V.decimal)("decimal $in", (v) => {
    expect(decimalPlain(v.in)).toBe(v.plain);
    expect(formatDecimal(v.in, V.locale)).toBe(v.grouped);
  });
  it.each(V.money)("money $in $currency", (v) => {
    expect(formatMoney(v.in, v.currency, V.locale)).toBe(v.out);
  });
  it.each(V.sig3)("sig3 $in", (v) => {
    expect(sig3(v.in, V.locale)).toBe(v.out);
  });
  it.each(V.plain)("plain $in $unit", (v) => {
    expect(plain(v.in, v.unit)).toBe(v.out);
  });
  it.each(V.decimal_bytes)("decimal bytes $in", (v) => {
    expect(decimalBytes(v.in)).toBe(v.out);
  });
  it.each(V.fraction_pct)("fraction $in as a percentage", (v) => {
    expect(fractionPct(v.in)).toBe(v.out);
  });
  it("formats in another locale through Intl (digits kept, separators the locale's)", () => {
    expect(formatDecimal("1234567.8912", "de-DE")).toBe("1.234.567,8912");
    expect(formatMoney("2.7E-7", "EUR", "de-DE")).toBe("0,00000027 EUR");
    expect(sig3(12.345, "fr-FR")).toBe("12,3");
  });
  it("refuses what is no decimal", () => {
    expect(decimalPlain("12 EUR")).toBeNull();
    expect(decimalPlain("")).toBeNull();
    expect(formatDecimal("n/a")).toBe("n/a");
  });
});
