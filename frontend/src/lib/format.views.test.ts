import { describe, expect, it } from "vitest";
import { formatFigure, fromBaseUnit } from "./format";

describe("figures in a seed's units from base units (named views)", () => {
  it("converts bytes per second, nanoseconds and bytes to the seeds' MB/s, µs and KiB", () => {
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

  it("prints as the seed's table: grouped digits, two decimals at most, no unit", () => {
    expect(formatFigure(1_611_040_000, "B/s", "MB/s")).toBe("1,611.04");
    expect(formatFigure(5_430_123, "B/s", "MB/s")).toBe("5.43");
    expect(formatFigure(123_456.7, "ns", "µs")).toBe("123.46");
    expect(formatFigure(4096, "B", "KiB")).toBe("4");
    expect(formatFigure(12_345.67, "IO/s", "IO/s", 1)).toBe("12,345.7");
    expect(formatFigure(12.34567, "×", null, 3)).toBe("12.346");
    expect(formatFigure(null, "B/s", "MB/s")).toBe("—");
  });
});
