import { describe, expect, it } from "vitest";
import { latencyChart, nines, ninesLabel } from "./latency";

describe("latency percentile curves", () => {
  it("maps percentiles to nines and back", () => {
    expect(nines(50)).toBeCloseTo(0.30103);
    expect(nines(99)).toBeCloseTo(2);
    expect(nines(99.9)).toBeCloseTo(3);
    expect(ninesLabel(nines(99.99))).toBe("p99.99");
  });

  it("shapes curves per column and direction in one latency unit, dropping p100", () => {
    const chart = latencyChart(
      {
        job: "rand4k",
        columns: [
          {
            key: "k1",
            label: "hdd",
            run_ids: ["a"],
            device_name: null,
            environment_name: null,
            is_baseline: true,
          },
          {
            key: "k2",
            label: "ram",
            run_ids: ["b"],
            device_name: null,
            environment_name: null,
            is_baseline: false,
          },
        ],
        curves: [
          {
            column: "k1",
            direction: "read",
            samples: 10,
            points: [
              { percentile: 50, latency_ns: 4e6 },
              { percentile: 100, latency_ns: 9e6 },
            ],
          },
          {
            column: "k2",
            direction: "read",
            samples: 10,
            points: [{ percentile: 50, latency_ns: 2e4 }],
          },
          {
            column: "k2",
            direction: "write",
            samples: 10,
            points: [{ percentile: 99, latency_ns: 5e4 }],
          },
        ],
      },
      new Map([
        ["k1", "hdd"],
        ["k2", "ram"],
      ]),
    );
    expect(chart.unit).toBe("ms");
    expect(chart.series.map((s) => [s.label, s.color, !!s.dashed])).toEqual([
      ["hdd read", 0, false],
      ["ram read", 1, false],
      ["ram write", 1, true],
    ]);
    expect(chart.series[0]?.points).toEqual([{ x: nines(50), y: 4 }]);
    expect(chart.ticks).toHaveLength(3); // p50, p90, p99
  });
});
