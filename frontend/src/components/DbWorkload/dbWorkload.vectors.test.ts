// The UI's copy of libs/workload's TPC-H minimum-streams table (clause 5.3.4) against the vectors
// the Python tests read (libs/workload/testdata/tpch_streams.json; tests/workload/test_tpch_bound.py):
// the UI cannot import the library, so a row changed there alone fails here.
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { minimumStreams } from "./dbWorkload";

const vectors = JSON.parse(
  readFileSync(
    join(
      dirname(fileURLToPath(import.meta.url)),
      "../../../../libs/workload/testdata/tpch_streams.json",
    ),
    "utf8",
  ),
) as { cases: { scale_factor: number; streams: number }[] };

describe("minimumStreams as libs/workload's tpch_min_streams", () => {
  it("has vectors to check", () => {
    expect(vectors.cases.length).toBeGreaterThan(10);
  });
  for (const { scale_factor, streams } of vectors.cases) {
    it(`SF ${scale_factor} needs ${streams} streams`, () => {
      expect(minimumStreams(scale_factor)).toBe(streams);
    });
  }
});
