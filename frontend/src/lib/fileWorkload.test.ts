import { describe, expect, it } from "vitest";
import { VDBENCH_INTERVALS } from "../test/fileFixtures";
import {
  type AnySpec,
  describeFileSet,
  describeRuntime,
  fileWrites,
  intervalSeries,
  kindOf,
  POSTMARK_DEFAULTS,
  parseScale,
  postmarkFactsAt,
  postmarkRows,
  presetSource,
  timeUnitFor,
} from "./fileWorkload";

const LOW = {
  ...POSTMARK_DEFAULTS,
  number: 10_000,
  transactions: 50_000,
  subdirectories: 10,
  size_low_bytes: 327 * 1024,
  size_high_bytes: 327 * 1024,
  read_block_bytes: 4096,
  write_block_bytes: 4096,
};

describe("file workloads", () => {
  it("reads a spec without a kind as block jobs (specs stored before file workloads)", () => {
    expect(kindOf({} as AnySpec)).toBe("block");
    expect(kindOf({ kind: "postmark" } as AnySpec)).toBe("postmark");
    expect(kindOf(undefined)).toBe("block");
  });

  it("names the published report of the file presets", () => {
    expect(presetSource("postmark-low")).toBe("Song & Lee's PostMark levels (their Table 1)");
    expect(presetSource("vdbench-small")).toBe("Schulz's vdbench scripts (the StorageIO report)");
    expect(presetSource("my-workload")).toBeNull();
  });

  it("shows PostMark's settings in humane units with their commands", () => {
    const rows = Object.fromEntries(postmarkRows(LOW).map((r) => [r.command, r.value]));
    expect(rows["set size"]).toBe("327 KiB");
    expect(rows["set number"]).toBe("10k");
    expect(rows["set read"]).toBe("4 KiB");
    // a fixed file size (low = high): the appends the bias asks for add nothing, and it says so
    expect(rows["set bias read"]).toBe(
      "50 % reads, 50 % appends (appends add nothing here: files have a fixed size and PostMark appends only up to the upper bound)",
    );
    expect(rows["set subdirectories"]).toBe("10");
    expect(rows["set fsync"]).toContain("no");
    const ranged = Object.fromEntries(
      postmarkRows({ ...POSTMARK_DEFAULTS, bias_create: -1, fsync: true }).map((r) => [
        r.command,
        r.value,
      ]),
    );
    expect(ranged["set size"]).toBe("500 B to 9.77 KiB");
    expect(ranged["set bias create"]).toContain("neither");
    expect(ranged["set fsync"]).toContain("not in PostMark");
  });

  it("scales PostMark's files and transactions as the server does (each at least 1)", () => {
    const f = postmarkFactsAt(LOW, 0.01);
    expect(f.files).toBe(100);
    expect(f.transactions).toBe(500);
    expect(f.dataset_bytes).toBe(100 * 327 * 1024);
    expect(f.directories).toBe(10);
    expect(postmarkFactsAt(LOW, 1e-9).files).toBe(1);
    expect(describeFileSet(f)).toBe("31.9 MiB in 100 files, 10 directories");
    // one directory is a directory ("1 directories" read wrong on the workloads list)
    expect(describeFileSet({ dataset_bytes: 2.5 * 2 ** 30, files: 8, directories: 1 })).toBe(
      "2.5 GiB in 8 files, 1 directory",
    );
    expect(describeRuntime(f, f.transactions)).toBe("until 500 transactions are done (size-bound)");
    expect(describeRuntime({ runtime_s_max: 36 })).toBe("36 s");
  });

  it("accepts a scale above 0 and at most 1000 only", () => {
    expect(parseScale("0.001")).toBe(0.001);
    expect(parseScale(" 2 ")).toBe(2);
    expect(parseScale("1e-4")).toBe(0.0001);
    expect(parseScale("0")).toBeNull();
    expect(parseScale("-1")).toBeNull();
    expect(parseScale("1001")).toBeNull();
    expect(parseScale("abc")).toBeNull();
    expect(parseScale("")).toBeNull();
  });

  it("knows which file workloads write", () => {
    expect(fileWrites({ kind: "postmark" } as AnySpec)).toBe(true);
    expect(
      fileWrites({ kind: "vdbench", facts: { bytes_written_max: 0 } } as unknown as AnySpec),
    ).toBe(false);
    expect(
      fileWrites({ kind: "vdbench", facts: { bytes_written_max: null } } as unknown as AnySpec),
    ).toBe(true);
    expect(fileWrites({ kind: "block" } as AnySpec)).toBe(false);
  });

  it("turns vdbench's intervals into one line per operation (rates 1/s, response in the unit of its size)", () => {
    const { rates, resp, respUnit } = intervalSeries(VDBENCH_INTERVALS);
    // means of a few µs to tens of µs: plotted in µs, not as 0.005 ms
    expect(respUnit).toBe("µs");
    const names = rates.map((r) => r.key);
    expect(names).toContain("read");
    expect(names).toContain("write");
    const read = rates.find((r) => r.key === "read");
    expect(read?.points).toHaveLength(VDBENCH_INTERVALS.points.length);
    expect(read?.points[0]?.x).toBe(VDBENCH_INTERVALS.points[0]?.t_s);
    const first = VDBENCH_INTERVALS.points[0]?.ops.find((o) => o.name === "read");
    expect(read?.points[0]?.y).toBe(first?.rate_per_s);
    const readResp = resp.find((r) => r.key === "read");
    expect(readResp?.points[0]?.y).toBeCloseTo((first?.resp_mean_ns ?? 0) / 1e3, 9);
  });

  it("picks a time unit by the largest duration", () => {
    expect(timeUnitFor([42_800_000, 686_000]).unit).toBe("ms");
    expect(timeUnitFor([5_460, 13_800]).unit).toBe("µs");
    expect(timeUnitFor([2.1e9]).unit).toBe("s");
    expect(timeUnitFor([]).unit).toBe("ns");
  });
});
