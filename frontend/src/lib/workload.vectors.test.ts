// The frontend's copies of libs/workload's rules against the vectors the Python tests read
// (tests/workload/test_vectors.py): one rule, two languages, the same answers.
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { formatSize, parseSize, parseSizeBig } from "./format";
import { workloadKey } from "./workload";

const TESTDATA = join(
  dirname(fileURLToPath(import.meta.url)),
  "..",
  "..",
  "..",
  "libs",
  "workload",
  "testdata",
);

function vectors<T>(name: string): T {
  return JSON.parse(readFileSync(join(TESTDATA, name), "utf8")) as T;
}

type ParseVector = { text: string; kb_base?: 1000 | 1024; bytes?: string; error?: boolean };
type FormatVector = { bytes: string; text: string };
const sizes = vectors<{ parse: ParseVector[]; format: FormatVector[] }>("sizes.json");

type IdentityCase = { name: string; a: object[]; b: object[]; same: boolean };
const identity = vectors<{ cases: IdentityCase[] }>("identity.json");

describe("sizes.json", () => {
  it("has vectors (the file was read)", () => {
    expect(sizes.parse.length).toBeGreaterThan(20);
    expect(sizes.format.length).toBeGreaterThan(5);
  });
  it.each(sizes.parse.map((v) => [`${JSON.stringify(v.text)}/${v.kb_base ?? 1024}`, v] as const))(
    "parse %s",
    (_, v) => {
      const big = parseSizeBig(v.text, v.kb_base ?? 1024);
      const small = parseSize(v.text, v.kb_base ?? 1024);
      if (v.error) {
        expect(big).toBeNull();
        expect(small).toBeNull();
        return;
      }
      const want = BigInt(v.bytes ?? "x");
      expect(big).toBe(want);
      // a number holds sizes exactly up to 2^53 - 1: beyond, parseSize answers null
      expect(small).toBe(want <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(want) : null);
    },
  );
  it.each(sizes.format.map((v) => [v.text, v] as const))("format %s", (_, v) => {
    expect(formatSize(Number(v.bytes))).toBe(v.text);
    expect(parseSize(v.text)).toBe(Number(v.bytes));
  });
  it("refuses what is not a size", () => {
    expect(() => formatSize(-1)).toThrow(RangeError);
    expect(() => formatSize(1.5)).toThrow(RangeError);
  });
});

describe("identity.json", () => {
  it("has cases", () => expect(identity.cases.length).toBeGreaterThan(5));
  it.each(identity.cases.map((c) => [c.name, c] as const))("%s", (_, c) => {
    expect(workloadKey({ jobs: c.a }) === workloadKey({ jobs: c.b })).toBe(c.same);
  });
});
