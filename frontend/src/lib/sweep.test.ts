import { describe, expect, it } from "vitest";
import type { JobSpec } from "../client/types";
import { metric } from "../test/fixtures";
import { detectSweeps, sweepLines } from "./sweep";

function job(name: string, over: Partial<JobSpec> = {}): JobSpec {
  return {
    name,
    rw: "randread",
    bs_bytes: 4096,
    size_bytes: 1 << 30,
    offset_bytes: 0,
    runtime_s: 10,
    time_based: true,
    ramp_time_s: 0,
    rwmixread: 50,
    numjobs: 1,
    iodepth: 32,
    ioengine: "io_uring",
    direct: true,
    invalidate: true,
    readahead: "default",
    end_fsync: false,
    bssplit: null,
    rate_iops: null,
    random_distribution: "random",
    fsync_every: 0,
    sync: false,
    randseed: null,
    loops: 1,
    ...over,
  };
}

describe("detectSweeps", () => {
  it("finds a DiskSpd-style block-size sweep, ordered by size", () => {
    const jobs = [16384, 4096, 1 << 20, 65536].map((bs) => job(`bs${bs}`, { bs_bytes: bs }));
    const s = detectSweeps(jobs);
    expect(s).toHaveLength(1);
    expect(s[0]?.param).toBe("bs_bytes");
    expect(s[0]?.points.map((p) => p.x)).toEqual([4096, 16384, 65536, 1 << 20]);
    expect(s[0]?.label).toBe("randread QD32×1");
  });

  it("titles kernel-help's three read sweeps by the parameters they differ in", () => {
    const modes = [
      ["nocache", true, "default"],
      ["cache-ra", false, "on"],
      ["cache-nora", false, "off"],
    ] as const;
    const jobs = modes.flatMap(([mode, direct, readahead]) =>
      [4096, 8192, 16384].map((bs) =>
        job(`read-${bs}-${mode}`, { rw: "read", iodepth: 1, bs_bytes: bs, direct, readahead }),
      ),
    );
    const labels = detectSweeps(jobs).map((s) => s.label);
    expect(labels).toEqual([
      "read QD1×1 · O_DIRECT (page cache off)",
      "read QD1×1 · buffered (page cache on) · readahead on",
      "read QD1×1 · buffered (page cache on) · readahead off",
    ]);
    expect(new Set(labels).size).toBe(3);
  });

  it("finds a thread sweep", () => {
    const s = detectSweeps([1, 2, 4, 8].map((n) => job(`t${n}`, { numjobs: n })));
    expect(s.map((x) => x.param)).toEqual(["numjobs"]);
    expect(s[0]?.points.map((p) => p.job)).toEqual(["t1", "t2", "t4", "t8"]);
  });

  it("splits the kernel-help sweep by rw and direct, and ignores unlike jobs", () => {
    const jobs = [
      ...[4096, 65536, 1 << 20].map((bs) => job(`r-${bs}`, { bs_bytes: bs, rw: "read" })),
      ...[4096, 65536, 1 << 20].map((bs) => job(`w-${bs}`, { bs_bytes: bs, rw: "write" })),
      job("odd", { rw: "randwrite", iodepth: 1 }),
    ];
    const s = detectSweeps(jobs);
    expect(s.map((x) => x.label)).toEqual(["read QD32×1", "write QD32×1"]);
  });

  it("is not a sweep: CrystalDiskMark's mixed jobs or two points", () => {
    expect(
      detectSweeps([
        job("SEQ1M", { rw: "read", bs_bytes: 1 << 20, iodepth: 8 }),
        job("RND4K", { iodepth: 32, numjobs: 16 }),
        job("RND4KQ1", { iodepth: 1 }),
      ]),
    ).toEqual([]);
    expect(detectSweeps([job("a"), job("b", { bs_bytes: 8192 })])).toEqual([]);
  });
});

describe("sweepLines", () => {
  it("sums read + write of the server's kind per point, throughput in MB/s", () => {
    const jobs = [4096, 65536, 1 << 20].map((bs) => job(`bs${bs}`, { bs_bytes: bs, rw: "randrw" }));
    const [sweep] = detectSweeps(jobs);
    if (!sweep) throw new Error("no sweep");
    const results = jobs.map((j, i) => ({
      name: j.name,
      metrics: [
        metric("read_bw_bytes", "Read bandwidth", "B/s", [1e6 * (i + 1)]),
        // picked by its kind, whatever its key says
        metric("write_rate", "Write bandwidth", "B/s", [2e6 * (i + 1)], {
          kind: "bandwidth",
          better: "higher",
          direction: "write",
        }),
        metric("read_iops", "Read IOPS", "IO/s", [100 * (i + 1)]),
        // a key that looks like bandwidth but is a CPU figure: never summed into throughput
        metric("bw_cpu", "CPU", "%", [50], { kind: "cpu", better: "lower" }),
      ],
    }));
    const mbps = sweepLines(sweep, results, ["disk"], "mbps");
    expect(mbps[0]?.points).toEqual([
      { x: 4096, y: 3 },
      { x: 65536, y: 6 },
      { x: 1 << 20, y: 9 },
    ]);
    expect(sweepLines(sweep, results, ["disk"], "iops")[0]?.points.map((p) => p.y)).toEqual([
      100, 200, 300,
    ]);
  });
});
