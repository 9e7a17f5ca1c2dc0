import { describe, expect, it } from "vitest";
import type { RunRead } from "../client/types";
import { comparison, metric } from "../test/fixtures";
import {
  type Change,
  changeAt,
  changeCharts,
  changeScore,
  columnLabels,
  compareBarCharts,
  energyBarCharts,
  metricDisplay,
  metricDisplays,
  pickLikeRuns,
  runLabels,
  unmatchedJobs,
} from "./compare";
import { toThroughputSeries } from "./series";

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
  it("picks metrics by the server's kind and percentile, never by key or unit", () => {
    const cmp = comparison(
      [run("aaaaaaaa", "disk"), run("bbbbbbbb", "shm")],
      [
        {
          name: "job",
          metrics: [
            // keys and units that a name-based guess would misread
            metric("ops_rate", "Ops", "bytes/s", [10, 20], {
              kind: "iops",
              better: "higher",
              direction: "read",
            }),
            metric("iops_bw", "Transfer", "iops", [1e6, 2e6], {
              kind: "bandwidth",
              better: "higher",
              direction: "read",
            }),
            metric("tail", "Tail", "ns", [5e6, 1e6], {
              kind: "latency",
              better: "lower",
              direction: "write",
              percentile: 99,
            }),
            metric("read_clat_p999_ns", "Read p99.9", "ns", [9e6, 8e6]),
            metric("read_clat_p50_ns", "Read p50", "ns", [1e6, 1e6]),
            metric("usr_cpu_pct", "CPU user", "%", [1, 2]),
          ],
        },
      ],
    );
    const charts = compareBarCharts(cmp);
    expect(charts.map((c) => [c.kind, c.rows])).toEqual([
      ["iops", [{ category: "job", c0: 10, c1: 20 }]],
      ["throughput", [{ category: "job", c0: 1, c1: 2 }]],
      ["p99", [{ category: "job", c0: 5, c1: 1 }]],
    ]);
    // rates linear unless they span over 100× (auto, issue 25), latency on a labelled log axis
    expect(charts.map((c) => c.log)).toEqual(["auto", "auto", true]);
  });

  it("titles file workloads' rates as operation rates in op/s", () => {
    const cmp = comparison(
      [run("aaaaaaaa", "a"), run("bbbbbbbb", "b")],
      ["create", "read"].map((name) => ({
        name,
        metrics: [
          metric("rate_per_s", "Operation rate", "op/s", [202, 588], {
            kind: "iops",
            better: "higher",
            changes: [null, ch(2.91, "better", "2.91× faster")],
          }),
        ],
      })),
    );
    const [rates] = compareBarCharts(cmp);
    expect([rates?.title, rates?.unit]).toEqual(["Operation rate", "op/s"]);
    expect(rates?.rows.map((r) => r.category)).toEqual(["create", "read"]);
    expect(changeCharts(cmp, "create")[0]?.title).toBe("Operation rate: change vs a · create");
  });

  it("adds each column's 95 % interval as error bars where it has repeats (issue 25)", () => {
    const iops = metric("read_iops", "Read IOPS", "IO/s", [1000, 2000]);
    const ci = { ci95_low: 900, ci95_high: 1150, ci_method: "log" as const, cv: 5, stdev: 50 };
    iops.stats = [{ n: 3, mean: 1000, values: [950, 1000, 1050], ...ci }, iops.stats[1] ?? null];
    const cmp = comparison(
      [run("aaaaaaaa", "disk"), run("bbbbbbbb", "shm")],
      [{ name: "rand4k", metrics: [iops] }],
    );
    const [bars] = compareBarCharts(cmp);
    // [below, above] the bar, in the chart's unit; the single run (n = 1) has none
    expect(bars?.rows).toEqual([
      { category: "rand4k", c0: 1000, c0_err: [100, 150], c0_n: 3, c1: 2000 },
    ]);
  });

  it("builds one chart per headline metric in display units, one series per column", () => {
    const cmp = comparison(
      [run("aaaaaaaa", "disk"), run("bbbbbbbb", "shm")],
      [
        {
          name: "rand4k",
          metrics: [
            metric("read_iops", "Read IOPS", "IO/s", [1000, 50000]),
            metric("read_bw_bytes", "Read BW", "B/s", [4e6, 2e8]),
            metric("read_clat_p99_ns", "Read p99", "ns", [2e6, 3e4]),
            metric("write_iops", "Write IOPS", "IO/s", [null, null]),
          ],
        },
      ],
    );
    const charts = compareBarCharts(cmp);
    expect(charts.map((c) => [c.kind, c.unit])).toEqual([
      ["iops", "IOPS"],
      ["throughput", "MB/s"],
      ["p99", "ms"],
    ]);
    expect(charts[1]?.rows).toEqual([{ category: "rand4k", c0: 4, c1: 200 }]);
    expect(charts[2]?.rows).toEqual([{ category: "rand4k", c0: 2, c1: 0.03 }]);
    expect(charts[0]?.series).toEqual([
      { key: "c0", label: "disk" },
      { key: "c1", label: "shm" },
    ]);
  });

  it("labels grouped columns by the server's group label", () => {
    const cmp = comparison([run("a", "r1"), run("b", "r2"), run("c", "r3")], [], {
      group_by: "device",
      columns: [
        {
          key: "d1",
          label: "vda on lab",
          run_ids: ["a", "b"],
          device_name: "vda",
          environment_name: null,
          is_baseline: true,
        },
        {
          key: "d2",
          label: "nvme0 on lab",
          run_ids: ["c"],
          device_name: "nvme0",
          environment_name: null,
          is_baseline: false,
        },
      ],
    });
    expect(columnLabels(cmp)).toEqual(["vda on lab", "nvme0 on lab"]);
  });
});

const ch = (ratio: number, verdict: Change["verdict"], phrase: string): Change => ({
  ratio,
  pct_change: (ratio - 1) * 100,
  factor: Math.max(ratio, 1 / ratio),
  verdict,
  phrase,
});

describe("changeCharts", () => {
  it("draws a chart per metric family with the server's phrases, better to the right", () => {
    const jobs = [
      {
        name: "rand4k",
        metrics: [
          metric("read_iops", "Read IOPS", "IO/s", [1000, 81000], {
            changes: [null, ch(81, "better", "81× faster")],
          }),
          metric("read_bw_bytes", "Read throughput", "B/s", [4e6, 3.24e8], {
            changes: [null, ch(81, "better", "81× faster")],
          }),
          metric("read_clat_p99_ns", "Read p99", "ns", [1.33e6, 1e4], {
            changes: [null, ch(1 / 133, "better", "133× lower latency")],
          }),
        ],
      },
    ];
    const runs = [run("aaaaaaaa", "disk"), run("bbbbbbbb", "shm")];
    const charts = changeCharts(comparison(runs, jobs));
    expect(charts.map((c) => c.kind)).toEqual(["change-iops", "change-throughput", "change-p99"]);
    expect(charts[0]?.title).toBe("IOPS: change vs disk");
    const p99 = charts[2]?.rows[0];
    expect(p99?.phrase).toBe("133× lower latency");
    expect(p99?.verdict).toBe("better");
    // the 133× latency improvement is the longest bar, not the shortest (linear, factor − 1)
    expect(p99?.score).toBeCloseTo(132, 6);
    expect(charts[0]?.rows[0]?.score).toBeCloseTo(80, 6);
    expect(charts[0]?.rows[0]?.label).toBe("shm");
  });

  it("follows a new baseline and puts worse to the left", () => {
    const jobs = [
      {
        name: "j",
        metrics: [
          metric("read_iops", "Read IOPS", "IO/s", [1000, 500], {
            base: 1,
            changes: [ch(2, "better", "2× faster"), null],
          }),
          metric("write_iops", "Write IOPS", "IO/s", [400, 500], {
            base: 1,
            changes: [ch(0.8, "worse", "20% slower"), null],
          }),
        ],
      },
    ];
    const runs = [run("aaaaaaaa", "disk"), run("bbbbbbbb", "shm")];
    const [iops] = changeCharts(comparison(runs, jobs, { base: 1 }));
    expect(iops?.title).toBe("IOPS: change vs shm");
    expect(iops?.rows.map((r) => [r.label, r.phrase, r.verdict])).toEqual([
      ["disk · j read", "2× faster", "better"],
      ["disk · j write", "20% slower", "worse"],
    ]);
    expect(iops?.rows[1]?.score).toBeCloseTo(-0.25, 6);
  });

  it("has nothing to draw for one column", () => {
    const jobs = [{ name: "j", metrics: [metric("read_iops", "Read IOPS", "IO/s", [1])] }];
    expect(changeCharts(comparison([run("a", "x")], jobs))).toEqual([]);
  });
});

describe("changeAt", () => {
  it("shows the server's change; none for the baseline column", () => {
    const m = metric("read_iops", "Read IOPS", "IO/s", [1, 2], {
      changes: [null, ch(2, "better", "2× faster")],
    });
    expect(changeAt(m, 1)?.phrase).toBe("2× faster");
    expect(changeAt(m, 0)).toBeNull();
  });

  it("scores same as zero, worse below zero, better above", () => {
    expect(changeScore(ch(1, "same", "same"))).toBe(0);
    expect(changeScore(ch(0.5, "worse", "2× slower"))).toBeCloseTo(-1, 6);
    expect(changeScore(ch(1 / 133, "better", "133× lower latency"))).toBeCloseTo(132, 6);
  });
});

describe("metricDisplay", () => {
  it("names the unit of the figures shown: MB/s for B/s, µs for ns", () => {
    const bw = metricDisplay(metric("read_bw_bytes", "Read throughput", "B/s", [5.43e6, 1.2e9]));
    expect(bw.unit).toBe("MB/s");
    expect(bw.format(5.43e6)).toBe("5.43");
    expect(bw.format(1.2e9)).toBe("1,200");
    const lat = metricDisplay(metric("read_clat_p99_ns", "Read p99", "ns", [386000, 9000]));
    expect(lat.unit).toBe("µs");
    expect(lat.format(9000)).toBe("9");
    expect(lat.format(null)).toBe("—");
  });

  it("shows a file workload's CPU per operation in µs/op and its rates in op/s", () => {
    const cpu = metricDisplay(
      metric("cpu_ns_per_op", "CPU per operation", "ns/op", [5200, 48000], {
        kind: "cpu",
        better: "lower",
      }),
    );
    expect(cpu.unit).toBe("µs/op");
    expect(cpu.format(5200)).toBe("5.2");
    const rate = metricDisplay(
      metric("rate_per_s", "Operation rate", "op/s", [4834.07, 12], {
        kind: "iops",
        better: "higher",
      }),
    );
    expect(rate.unit).toBe("op/s");
    expect(rate.format(4834.07)).toBe("4,834");
  });

  it("gives one operation's latencies one unit, never 0.00x, and a PostMark elapsed below 1 s in ms", () => {
    const lat = (key: string, v: number) =>
      metric(key, key, "ns", [v, v / 2], { kind: "latency", better: "lower", direction: null });
    const shown = metricDisplays([
      metric("rate_per_s", "Operation rate", "op/s", [4834.07, 12], {
        kind: "iops",
        better: "higher",
      }),
      lat("resp_mean_ns", 1_200_000),
      lat("resp_p50_ns", 5_860),
      lat("resp_p99_ns", 313_000),
      lat("resp_p999_ns", 497_000_000),
    ]);
    // 2.93 µs to 497 ms: in µs (issue 25: ms printed the p50 as "0.00586")
    expect(shown.map(({ d }) => d.unit)).toEqual(["op/s", "µs", "µs", "µs", "µs"]);
    expect(shown[2]?.d.format(5_860)).toBe("5.86");
    expect(shown[4]?.d.format(497_000_000)).toBe("497,000");
    // block jobs: read and write are two operations, each in its own unit
    const rw = metricDisplays([
      metric("read_clat_p99_ns", "Read p99", "ns", [386_000, 9000]),
      metric("read_clat_p50_ns", "Read p50", "ns", [800, 700]),
      metric("write_clat_p99_ns", "Write p99", "ns", [2_500_000, 9000]),
    ]);
    // the write's 9 µs beside 2.5 ms: µs, not "0.009 ms"
    expect(rw.map(({ d }) => d.unit)).toEqual(["µs", "µs", "µs"]);
    const el = metricDisplay(
      metric("elapsed_s", "Elapsed (PostMark's time)", "s", [0.0171, 0.0442], {
        kind: "time",
        better: "lower",
      }),
    );
    expect(el.unit).toBe("ms");
    expect(el.format(0.0171)).toBe("17.1");
    const long = metricDisplay(
      metric("elapsed_s", "Elapsed (PostMark's time)", "s", [0.5, 12.3], {
        kind: "time",
        better: "lower",
      }),
    );
    expect(long.unit).toBe("s");
    expect(long.format(0.5)).toBe("0.5");
  });
});

describe("energyBarCharts", () => {
  it("shows energy, J/GB, IOPS/W and CO2 with units chosen from the values", () => {
    const cmp = comparison([run("a", "hdd"), run("b", "dram")], [], {
      energy: [
        metric("idle_w", "Non-load power", "W", [10, 20]),
        metric("total_j", "Energy", "J", [3962.7, 1500]),
        metric("j_per_gb", "Energy per GB", "J/GB", [100, 5]),
        metric("iops_per_w", "IOPS per watt", "IO/J", [2, 900]),
        metric("operational_gco2e", "CO2", "gCO2e", [0.5, 0.2]),
        metric("gco2e_per_tb", "CO2 per TB", "gCO2e/TB", [2500, 40]),
      ],
    });
    const charts = energyBarCharts(cmp);
    expect(charts.map((c) => [c.kind, c.unit])).toEqual([
      ["total_j", "kJ"],
      ["j_per_gb", "J/GB"],
      ["iops_per_w", "IOPS/W"],
      ["operational_gco2e", "gCO2e"],
      ["gco2e_per_tb", "kgCO2e/TB"],
    ]);
    expect(charts[0]?.rows[0]).toEqual({ category: "Energy", c0: 3.9627, c1: 1.5 });
  });

  it("draws grouped repeats' energy with its 95 % interval, in the chart's unit (issue 25)", () => {
    const total = metric("total_j", "Energy", "J", [4000, 1500]);
    const ci = { ci95_low: 3000, ci95_high: 5000, ci_method: "log" as const, cv: 5, stdev: 50 };
    total.stats = [{ n: 4, mean: 4000, values: [4000], ...ci }, null];
    const cmp = comparison([run("a", "hdd"), run("b", "dram")], [], { energy: [total] });
    expect(energyBarCharts(cmp)[0]?.rows[0]).toEqual({
      category: "Energy",
      c0: 4,
      c0_err: [1, 1],
      c0_n: 4,
      c1: 1.5,
    });
  });

  it("titles a file run's efficiency as operations per watt, not IOPS", () => {
    const cmp = comparison([run("a", "hdd"), run("b", "dram")], [], {
      energy: [metric("iops_per_w", "Read/write operations per watt", "op/J", [2, 900])],
    });
    const [chart] = energyBarCharts(cmp);
    expect([chart?.title, chart?.unit]).toEqual(["Read/write operations per watt", "op/s/W"]);
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
    const cmp = comparison(
      [run("a", "x"), run("b", "y")],
      [
        { name: "both", metrics: [metric("read_iops", "", "IO/s", [1, 2])] },
        { name: "only-a", metrics: [metric("read_iops", "", "IO/s", [1, null])] },
      ],
    );
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
    const runs = [r("solo", ["z", "z2"]), ...["1", "2", "3", "4"].map((i) => r(i, ["a"]))];
    expect(pickLikeRuns(runs, 3).map((x) => x.id)).toEqual(["3", "2", "1"]);
    expect(pickLikeRuns([r("solo", ["z"])])).toEqual([]);
  });
  it("does not pair runs whose jobs share names but not their spec", () => {
    const big = {
      id: "big",
      workload: { jobs: [{ name: "a", bs_bytes: 1 << 20 }] },
    } as unknown as RunRead;
    const small = {
      id: "small",
      workload: { jobs: [{ name: "a", bs_bytes: 4096 }] },
    } as unknown as RunRead;
    expect(pickLikeRuns([big, small])).toEqual([]);
  });
  it("pairs runs of the same jobs under other names, as the server's fingerprint does", () => {
    const mine = { id: "mine", workload: { jobs: [{ name: "mine", bs_bytes: 4096 }] } };
    const yours = { id: "yours", workload: { jobs: [{ name: "yours", bs_bytes: 4096 }] } };
    expect(pickLikeRuns([mine, yours] as unknown as RunRead[]).map((x) => x.id)).toEqual([
      "yours",
      "mine",
    ]);
  });
  it("pairs runs of the same jobs under other names, as the server's fingerprint does", () => {
    const mine = { id: "mine", workload: { jobs: [{ name: "mine", bs_bytes: 4096 }] } };
    const yours = { id: "yours", workload: { jobs: [{ name: "yours", bs_bytes: 4096 }] } };
    expect(pickLikeRuns([mine, yours] as unknown as RunRead[]).map((x) => x.id)).toEqual([
      "yours",
      "mine",
    ]);
  });
});
