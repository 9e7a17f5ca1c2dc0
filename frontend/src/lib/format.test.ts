import { describe, expect, it } from "vitest";
import {
  formatBytes,
  formatCount,
  formatIops,
  formatNs,
  formatPercent,
  formatRatio,
  formatRelative,
  formatSeconds,
  formatThroughput,
  formatTimestamp,
  formatWithUnit,
  formatZone,
  MISSING,
  parseSize,
  toMBps,
} from "./format";

describe("formatBytes (binary prefixes)", () => {
  it.each([
    [0, "0 B"],
    [512, "512 B"],
    [4096, "4 KiB"],
    [1536, "1.5 KiB"],
    [1048576, "1 MiB"],
    [64 * 1024 ** 2, "64 MiB"],
    [16 * 1024 ** 3, "16 GiB"],
    [3.5 * 1024 ** 4, "3.5 TiB"],
  ])("%d → %s", (n, s) => expect(formatBytes(n)).toBe(s));
  it("handles missing values", () => {
    expect(formatBytes(null)).toBe(MISSING);
    expect(formatBytes(Number.NaN)).toBe(MISSING);
  });
});

describe("formatThroughput (decimal MB/s)", () => {
  it("uses 10^6 bytes per MB", () => {
    expect(toMBps(1_000_000)).toBe(1);
    expect(formatThroughput(1_048_576)).toBe("1.05 MB/s");
  });
  it.each([
    [0, "0 MB/s"],
    [5_430_000, "5.43 MB/s"],
    [123_456_789, "123 MB/s"],
    [2_345_600_000, "2,346 MB/s"],
  ])("%d B/s → %s", (n, s) => expect(formatThroughput(n)).toBe(s));
});

describe("formatNs", () => {
  it.each([
    [0, "0 ns"],
    [850, "850 ns"],
    [12_345, "12.3 µs"],
    [4_560_000, "4.56 ms"],
    [999_999, "1 ms"],
    [999.7, "1 µs"],
    [1_234_000_000, "1.23 s"],
  ])("%d ns → %s", (n, s) => expect(formatNs(n)).toBe(s));
  it("missing", () => expect(formatNs(undefined)).toBe(MISSING));
});

describe("formatIops / formatCount", () => {
  it.each([
    [850, "850 IOPS"],
    [85.25, "85.3 IOPS"],
    [12_345, "12.3k IOPS"],
    [1_234_567, "1.23M IOPS"],
  ])("%d → %s", (n, s) => expect(formatIops(n)).toBe(s));
  it("counts past a billion", () => expect(formatCount(2.5e9)).toBe("2.5G"));
});

describe("formatPercent / formatRatio / formatSeconds", () => {
  it("percent", () => {
    expect(formatPercent(42.123)).toBe("42.1 %");
    expect(formatPercent(3.14567)).toBe("3.15 %");
    expect(formatPercent(100)).toBe("100 %");
  });
  it("ratio", () => {
    expect(formatRatio(2.5)).toBe("2.50×");
    expect(formatRatio(null)).toBe(MISSING);
    expect(formatRatio(0.007312)).toBe("0.00731×");
    expect(formatRatio(0.59)).toBe("0.59×");
    expect(formatRatio(906.4)).toBe("906×");
  });
  it("seconds", () => {
    expect(formatSeconds(5)).toBe("5 s");
    expect(formatSeconds(90)).toBe("1 min 30 s");
    expect(formatSeconds(3720)).toBe("1 h 2 min");
  });
});

describe("timestamps", () => {
  it("formats in local time", () => {
    const d = new Date(2026, 10, 21, 9, 5, 7); // local time
    expect(formatTimestamp(d.toISOString())).toBe(`2026-11-21 09:05:07 ${formatZone(d)}`);
    expect(formatTimestamp(d.toISOString())).toMatch(/ UTC([+-]\d\d:\d\d)?$/);
    expect(formatTimestamp(null)).toBe(MISSING);
    expect(formatTimestamp("not a date")).toBe(MISSING);
  });
  it("names the zone", () => {
    const d = new Date(2026, 10, 21, 9, 5, 7);
    const off = -d.getTimezoneOffset();
    const want =
      off === 0
        ? "UTC"
        : `UTC${off > 0 ? "+" : "-"}${String(Math.floor(Math.abs(off) / 60)).padStart(2, "0")}:${String(Math.abs(off) % 60).padStart(2, "0")}`;
    expect(formatZone(d)).toBe(want);
  });
  it("relative", () => {
    const now = Date.parse("2026-11-21T12:00:00Z");
    expect(formatRelative("2026-11-21T11:59:55Z", now)).toBe("5 s ago");
    expect(formatRelative("2026-11-21T11:57:00Z", now)).toBe("3 min ago");
    expect(formatRelative("2026-11-21T09:00:00Z", now)).toBe("3 h ago");
    expect(formatRelative("2026-11-17T12:00:00Z", now)).toBe("4 d ago");
    expect(formatRelative("2026-11-21T12:00:05Z", now)).toBe("in 5 s");
  });
});

describe("parseSize", () => {
  // the full rule is checked against libs/workload/testdata/sizes.json (workload.vectors.test.ts)
  it.each([
    ["4k", 4096],
    ["1m", 1048576],
    ["512", 512],
    ["0", 0],
    ["4KiB", 4000], // fio (and the engine): IEC-looking suffixes are powers of 1000 by default
  ])("%s → %d", (s, n) => expect(parseSize(s)).toBe(n));
  it.each([[""], ["abc"], ["4x"], ["-1k"], ["1.5m"], [" 4k"]])("%s is invalid", (s) =>
    expect(parseSize(s)).toBeNull(),
  );
});

describe("formatWithUnit", () => {
  it("dispatches on the server's unit", () => {
    expect(formatWithUnit(12_345, "ns")).toBe("12.3 µs");
    expect(formatWithUnit(5_430_000, "bytes/s")).toBe("5.43 MB/s");
    expect(formatWithUnit(12_345, "iops")).toBe("12.3k IOPS");
    expect(formatWithUnit(4096, "bytes")).toBe("4 KiB");
    expect(formatWithUnit(3, "W")).toBe("3 W");
    expect(formatWithUnit(null, "ns")).toBe(MISSING);
  });
});
