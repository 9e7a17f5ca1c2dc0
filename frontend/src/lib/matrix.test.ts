import { describe, expect, it } from "vitest";
import { formatSpan, hasSweep, parseList, sweepOf } from "./matrix";

describe("a campaign's sweep as typed", () => {
  it("reads sizes in fio's spelling and whole numbers", () => {
    expect(parseList("4k, 64k 1m", "size")).toEqual({ values: [4096, 65536, 1048576] });
    expect(parseList("1,8, 32", "count")).toEqual({ values: [1, 8, 32] });
    expect(parseList("", "count")).toEqual({ values: [] });
    expect(parseList("0, 100", "percent")).toEqual({ values: [0, 100] });
  });

  it("says which value does not read", () => {
    expect(parseList("4k, 4x", "size")).toEqual({ error: '"4x" is not a size (4k, 64k, 1m)' });
    expect(parseList("0", "count")).toEqual({ error: '"0" is not a whole number above 0' });
    expect(parseList("101", "percent")).toEqual({ error: '"101" is not a percentage 0–100' });
    expect(parseList("8, 8", "count")).toEqual({ error: '"8" is given twice' });
  });

  it("makes the request's sweep, with an error per field", () => {
    const r = sweepOf({ bs: "4k", qd: "1,32", threads: "", read: "70, x" });
    expect(r.sweep).toEqual({ bs_bytes: [4096], iodepth: [1, 32], numjobs: [], rwmixread: [] });
    expect(r.errors).toEqual({ read: '"x" is not a percentage 0–100' });
    expect(hasSweep(r.sweep)).toBe(true);
    expect(hasSweep(sweepOf({ bs: "", qd: "", threads: "", read: "" }).sweep)).toBe(false);
  });

  it("says how long in humane units", () => {
    expect(formatSpan(40)).toBe("40 s");
    expect(formatSpan(600)).toBe("10 min");
    expect(formatSpan(7500)).toBe("2 h 5 min");
  });
});
