import { describe, expect, it } from "vitest";
import type { CompareRead, RunRead } from "../client/types";
import {
  compareBarCharts,
  metricKind,
  pickLikeRuns,
  ratiosToFirst,
  runLabels,
  unmatchedJobs,
} from "./compare";
import { toThroughputSeries } from "./series";

describe("ratiosToFirst", () => {
  it("divides by the first run", () => {
    expect(ratiosToFirst([100, 250, 50])).toEqual([1, 2.5, 0.5]);
  });
  it("is null where a side is missing or the base is zero", () => {
    expect(ratiosToFirst([0, 5])).toEqual([null, null]);
    expect(ratiosToFirst([null, 5])).toEqual([null, null]);
    expect(ratiosToFirst([10, null, 20])).toEqual([1, null, 2]);
    expect(ratiosToFirst([])).toEqual([]);
  });
});

describe("metricKind", () => {
  it.each([
    [{ key: "read_iops", unit: "iops" }, "iops"],
    [{ key: "read_bw_bytes", unit: "bytes/s" }, "throughput"],
    [{ key: "read_clat_p99_ns", unit: "ns" }, "p99"],
    [{ key: "read_clat_p999_ns", unit: "ns" }, null],
    [{ key: "read_clat_p50_ns", unit: "ns" }, null],
  ])("%o → %s", (m, kind) => expect(metricKind(m)).toBe(kind));
});

const run = (id: string, name: string | null) => ({ id, name }) as RunRead;

describe("runLabels", () => {
  it("uses names and disambiguates duplicates", () => {
    expect(runLabels([run("aaaaaaaa-1", "disk"), run("bbbbbbbb-2", null)])).toEqual([
      "disk",
      "#bbbbbbbb",
    ]);
    expect(runLabels([run("aaaaaaaa-1", "x"), run("bbbbbbbb-2", "x")])).toEqual([
      "x (#aaaaaaaa)",
      "x (#bbbbbbbb)",
    ]);
  });
});

describe("compareBarCharts", () => {
  it("builds one chart per headline metric in display units", () => {
    const cmp: CompareRead = {
      runs: [run("aaaaaaaa", "disk"), run("bbbbbbbb", "shm")],
      energy: [],
      jobs: [
        {
          name: "rand4k",
          metrics: [
            { key: "read_iops", label: "Read IOPS", unit: "iops", values: [1000, 50000] },
            { key: "read_bw_bytes", label: "Read BW", unit: "bytes/s", values: [4e6, 2e8] },
            { key: "read_clat_p99_ns", label: "Read p99", unit: "ns", values: [2e6, 3e4] },
            { key: "write_iops", label: "Write IOPS", unit: "iops", values: [null, null] },
          ],
        },
      ],
    };
    const charts = compareBarCharts(cmp);
    expect(charts.map((c) => [c.kind, c.unit])).toEqual([
      ["iops", "IOPS"],
      ["throughput", "MB/s"],
      ["p99", "ms"],
    ]);
    expect(charts[1]?.rows).toEqual([{ category: "rand4k", r0: 4, r1: 200 }]);
    expect(charts[2]?.rows).toEqual([{ category: "rand4k", r0: 2, r1: 0.03 }]);
    expect(charts[0]?.series).toEqual([
      { key: "r0", label: "disk" },
      { key: "r1", label: "shm" },
    ]);
  });
});

describe("toThroughputSeries", () => {
  it("adds read and write and converts to MB/s", () => {
    expect(
      toThroughputSeries([
        {
          t_s: 1,
          read_iops: 100,
          read_bw_bytes: 3e6,
          write_iops: 50,
          write_bw_bytes: 1e6,
          read_clat_p99_ns: null,
          write_clat_p99_ns: null,
        },
      ]),
    ).toEqual([{ t_s: 1, mbps: 4, iops: 150 }]);
  });
});

describe("unmatchedJobs", () => {
  it("names jobs that a run lacks", () => {
    const cmp: CompareRead = {
      runs: [run("a", "x"), run("b", "y")],
      energy: [],
      jobs: [
        { name: "both", metrics: [{ key: "read_iops", label: "", unit: "IO/s", values: [1, 2] }] },
        {
          name: "only-a",
          metrics: [{ key: "read_iops", label: "", unit: "IO/s", values: [1, null] }],
        },
      ],
    };
    expect(unmatchedJobs(cmp)).toEqual(["only-a"]);
  });
});

describe("pickLikeRuns", () => {
  const r = (id: string, jobs: string[]) =>
    ({ id, workload: { jobs: jobs.map((name) => ({ name })) } }) as unknown as RunRead;
  it("takes the newest group of like runs, oldest first", () => {
    const runs = [r("n1", ["x"]), r("n2", ["a", "b"]), r("n3", ["a", "b"]), r("n4", ["x"])];
    expect(pickLikeRuns(runs).map((x) => x.id)).toEqual(["n4", "n1"]);
  });
  it("skips lone runs and caps the group", () => {
    const runs = [r("solo", ["z"]), ...["1", "2", "3", "4"].map((i) => r(i, ["a"]))];
    expect(pickLikeRuns(runs, 3).map((x) => x.id)).toEqual(["3", "2", "1"]);
    expect(pickLikeRuns([r("solo", ["z"])])).toEqual([]);
  });
});
