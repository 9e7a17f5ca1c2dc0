import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { decimals } from "../components/Views/ViewGrid";
import { formatFigure, fromBaseUnit } from "./format";

describe("figures in a report's units from base units (named views)", () => {
  it("converts bytes per second, nanoseconds and bytes to the reports' MB/s, µs and KiB", () => {
    expect(fromBaseUnit(3_512_500_000, "B/s", "MB/s")).toBe(3512.5);
    expect(fromBaseUnit(1_048_576, "B/s", "MiB/s")).toBe(1);
    expect(fromBaseUnit(86_250, "ns", "µs")).toBe(86.25);
    expect(fromBaseUnit(16 * 1024 * 1024, "B", "KiB")).toBe(16_384);
    expect(fromBaseUnit(42, "IO/s", "IO/s")).toBe(42);
  });

  it("refuses a pair it cannot convert instead of printing the wrong figure", () => {
    expect(() => fromBaseUnit(1, "ns", "MB/s")).toThrow(RangeError);
    expect(() => fromBaseUnit(1, "B/s", "µs")).toThrow("no conversion from B/s to µs");
  });

  it("prints as the report's table: grouped digits, two decimals at most, no unit", () => {
    expect(formatFigure(1_611_040_000, "B/s", "MB/s")).toBe("1,611.04");
    expect(formatFigure(5_430_123, "B/s", "MB/s")).toBe("5.43");
    expect(formatFigure(123_456.7, "ns", "µs")).toBe("123.46");
    expect(formatFigure(4096, "B", "KiB")).toBe("4");
    expect(formatFigure(12_345.67, "IO/s", "IO/s", 1)).toBe("12,345.7");
    expect(formatFigure(12.34567, "×", null, 3)).toBe("12.346");
    expect(formatFigure(null, "B/s", "MB/s")).toBe("—");
  });
});

// The server's CSV and this page print a view's figures by one rule: both read the vectors in
// backend/views/testdata/display_units.json (tests/backend/test_views_display.py is the Python
// side, which also fails when the server can name a unit not listed there).
type UnitVector = { base: string; shown: string; per: number };
type ConvertVector = { value: number; base: string; shown: string; figure: number };
type DigitsVector = { unit: string; value: number; digits: number };
const display = JSON.parse(
  readFileSync(
    join(
      dirname(fileURLToPath(import.meta.url)),
      "../../../backend/views/testdata/display_units.json",
    ),
    "utf8",
  ),
) as { units: UnitVector[]; convert: ConvertVector[]; digits: DigitsVector[] };

describe("the views' display vectors (shared with the server's CSV)", () => {
  it.each(display.units)("one $shown is $per $base", (u) => {
    expect(fromBaseUnit(u.per, u.base, u.shown)).toBe(1);
  });
  it.each(display.convert)("$value $base is $figure $shown", (v) => {
    expect(fromBaseUnit(v.value, v.base, v.shown)).toBeCloseTo(v.figure, 9);
  });
  it.each(display.digits)("$value (shown, of $unit) keeps $digits decimals", (v) => {
    expect(decimals(v.unit, v.value)).toBe(v.digits);
  });
});
