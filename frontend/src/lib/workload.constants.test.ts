// The UI's copies of libs/workload's constants against the vectors the Python tests read
// (libs/workload/testdata/constants.json; tests/workload/test_constants.py): the UI cannot import
// the library, so a value changed there alone fails here.
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { TPCH_LABEL } from "../components/DbWorkload/dbWorkload";
import { DEFAULT_IDLE_S, MIN_RUNTIME_S, TIMER_SLACK_S } from "./workload";

const constants = JSON.parse(
  readFileSync(
    join(dirname(fileURLToPath(import.meta.url)), "../../../libs/workload/testdata/constants.json"),
    "utf8",
  ),
) as { DEFAULT_IDLE_S: number; TPCH_LABEL: string; MIN_RUNTIME_S: number; TIMER_SLACK_S: number };

describe("libs/workload's constants as the UI has them", () => {
  it("idles as long as the agent when a run names no idle baseline", () => {
    expect(DEFAULT_IDLE_S).toBe(constants.DEFAULT_IDLE_S);
  });
  it("marks short jobs by the server's short-run rule", () => {
    expect(MIN_RUNTIME_S).toBe(constants.MIN_RUNTIME_S);
    expect(TIMER_SLACK_S).toBe(constants.TIMER_SLACK_S);
  });
  it("labels TPC-H-derived runs as the server and the agent do", () => {
    expect(TPCH_LABEL).toBe(constants.TPCH_LABEL);
  });
});
