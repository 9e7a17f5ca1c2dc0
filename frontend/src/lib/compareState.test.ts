import { describe, expect, it } from "vitest";
import {
  CHARTS,
  type CompareState,
  compareHref,
  DEFAULT_STATE,
  parseCompareState,
  toSearchParams,
} from "./compareState";

describe("compare URL state", () => {
  it("round-trips every field through the URL", () => {
    const s: CompareState = {
      runs: ["a", "b", "c"],
      baseline: "b",
      groupBy: "device_environment",
      env: ["raid_level:raid10", "kind:san"],
      fingerprint: "workload_host",
      force: true,
      job: "randread-4k",
      charts: ["bars", "latency"],
      seriesMetric: "iops",
      table: "runs",
    };
    const url = new URLSearchParams(toSearchParams(s).toString());
    expect(parseCompareState(url)).toEqual(s);
  });

  it("keeps defaults out of the URL and reads them back", () => {
    const p = toSearchParams({ ...DEFAULT_STATE, runs: ["a", "b"] });
    expect(p.toString()).toBe("runs=a%2Cb");
    expect(parseCompareState(p)).toEqual({
      ...DEFAULT_STATE,
      runs: ["a", "b"],
      charts: [...CHARTS],
    });
  });

  it("ignores unknown values and a baseline that is not compared", () => {
    const s = parseCompareState(
      new URLSearchParams("runs=a,b,a&baseline=z&group_by=planet&force=yes&charts=bars,nope"),
    );
    expect(s.runs).toEqual(["a", "b"]);
    expect(s.baseline).toBeNull();
    expect(s.groupBy).toBe("none");
    expect(s.force).toBe(false);
    expect(s.charts).toEqual(["bars"]);
  });

  it("reads the campaign's compare_url", () => {
    const s = parseCompareState(new URLSearchParams("runs=a,b,c,d&group_by=device_environment"));
    expect(s.groupBy).toBe("device_environment");
    expect(compareHref({ runs: ["a", "b"], groupBy: "device" })).toBe(
      "/compare?runs=a,b&group_by=device",
    );
  });

  it("keeps the targets picked of compared multi-target runs, in both directions", () => {
    const s = parseCompareState(new URLSearchParams("runs=a,b&targets=a:1&targets=c:0"));
    expect(s.targets).toEqual(["a:1"]); // c is not compared
    expect(parseCompareState(toSearchParams(s)).targets).toEqual(["a:1"]);
    expect(parseCompareState(new URLSearchParams("runs=a,b")).targets).toBeUndefined();
  });
});
