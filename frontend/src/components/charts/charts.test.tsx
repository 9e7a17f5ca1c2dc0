import { render } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { tickNumber, timeTicks } from "./axis";
import { ChangeBarChart, changeChartHeight, VERDICT_COLOR } from "./ChangeBarChart";
import { DualAxisLineChart } from "./DualAxisLineChart";
import { GroupedBarChart, PLOT_HEIGHT } from "./GroupedBarChart";
import { MultiLineChart } from "./MultiLineChart";
import { colorAt } from "./palette";

const RUNS = Array.from({ length: 30 }, (_, i) => ({ key: `c${i}`, label: `run ${i}` }));

describe("GroupedBarChart with many runs", () => {
  it("keeps the key outside the plot: the SVG holds no legend and its height is the plot's", () => {
    const row: Record<string, string | number> = { category: "rand4k" };
    RUNS.forEach((r, i) => {
      row[r.key] = 100 + i;
    });
    const { container } = render(
      <GroupedBarChart
        rows={[row]}
        categoryKey="category"
        series={RUNS}
        valueLabel="IOPS"
        unit="IOPS"
        width={500}
      />,
    );
    expect(container.querySelector(".recharts-legend-wrapper")).toBeNull();
    const svg = container.querySelector("svg.recharts-surface");
    expect(Number(svg?.getAttribute("height"))).toBeGreaterThanOrEqual(PLOT_HEIGHT);
    const key = container.querySelector('[data-testid="series-key"]');
    expect(key?.querySelectorAll(".series-key-item")).toHaveLength(30);
    expect(container.querySelectorAll(".recharts-bar-rectangle")).toHaveLength(30);
  });

  it("names a lone bar in its group (issue 25: one metered run's energy among several)", () => {
    const texts = (rows: Record<string, string | number | null>[]) =>
      [
        ...render(
          <GroupedBarChart
            rows={rows}
            categoryKey="category"
            series={RUNS.slice(0, 3)}
            valueLabel="Energy per run"
            unit="kJ"
            width={500}
            legend={false}
          />,
        ).container.querySelectorAll(".recharts-label-list text"),
      ].map((t) => t.textContent);
    expect(texts([{ category: "Energy", c0: null, c1: 3.9, c2: null }])).toEqual(["run 1"]);
    // a group of several bars: the shared key names them, no label on the bars
    expect(texts([{ category: "Energy", c0: 1.5, c1: 3.9, c2: null }])).toEqual([]);
  });

  it("leaves the key to the page when asked (one shared run key)", () => {
    const { container } = render(
      <GroupedBarChart
        rows={[{ category: "j", c0: 1, c1: 2 }]}
        categoryKey="category"
        series={RUNS.slice(0, 2)}
        valueLabel="IOPS"
        unit="IOPS"
        width={400}
        legend={false}
      />,
    );
    expect(container.querySelector('[data-testid="series-key"]')).toBeNull();
  });
});

describe("palette", () => {
  it("gives 30 runs 30 different colours", () => {
    expect(new Set(RUNS.map((_, i) => colorAt(i))).size).toBe(30);
  });
});

describe("ChangeBarChart", () => {
  it("draws better to the right in green and worse to the left in red, with the phrases", () => {
    const rows = [
      { label: "ram", score: 132, phrase: "133× lower latency", verdict: "better" as const },
      { label: "hdd", score: -0.25, phrase: "20% slower", verdict: "worse" as const },
    ];
    const { container } = render(<ChangeBarChart rows={rows} width={700} />);
    expect(container.textContent).toContain("133× lower latency");
    expect(container.textContent).toContain("20% slower");
    const fills = [...container.querySelectorAll(".recharts-bar-rectangle path")].map((p) =>
      p.getAttribute("fill"),
    );
    expect(fills).toEqual([VERDICT_COLOR.better, VERDICT_COLOR.worse]);
    expect(container.textContent).toContain("(linear)");
  });

  it("grows with its rows so that the plot never shrinks below 200 px", () => {
    expect(changeChartHeight(1) - 48).toBeGreaterThanOrEqual(200);
    expect(changeChartHeight(29) - 48).toBe(29 * 26);
  });
});

describe("MultiLineChart key", () => {
  const series = [
    { key: "a", label: "help off", points: [{ x: 4, y: 1 }] },
    {
      key: "b",
      label: "vda on e2e-host-with-a-long-name · /srv/iowatt/a-very-long-directory/target",
      points: [{ x: 4, y: 2 }],
    },
  ];

  it("keeps labels apart in the text (no 'help offvda on e2e')", () => {
    const { container } = render(
      <MultiLineChart
        series={series}
        x={{ label: "block size", unit: "B" }}
        y={{ label: "IOPS", unit: "IOPS" }}
        width={400}
      />,
    );
    const key = container.querySelector('[data-testid="series-key"]');
    expect(key?.textContent).not.toContain("help offvda");
    expect(key?.textContent).toContain("help off; vda on e2e");
    const labels = [...(key?.querySelectorAll(".series-key-label") ?? [])].map(
      (l) => l.textContent,
    );
    expect(labels).toEqual(series.map((s) => s.label));
  });
});

describe("MultiLineChart x axis", () => {
  it("does not repeat one x label at every tick when all points print alike (t ≈ 1 s)", () => {
    const { container } = render(
      <MultiLineChart
        series={[
          { key: "a", label: "disk", points: [{ x: 1, y: 50 }] },
          { key: "b", label: "ram", points: [{ x: 1.0004, y: 300 }] },
        ]}
        x={{ label: "time", unit: "s" }}
        y={{ label: "Throughput", unit: "MB/s" }}
        width={500}
      />,
    );
    const ticks = [
      ...container.querySelectorAll('.recharts-cartesian-axis-tick-value[orientation="bottom"]'),
    ].map((t) => t.textContent);
    expect(ticks.length).toBeGreaterThan(1);
    expect(new Set(ticks).size).toBe(ticks.length);
  });
});

describe("MultiLineChart linear x axis", () => {
  it("ticks at round numbers, not an even split of the data's range (15453, 21953, …)", () => {
    const { container } = render(
      <MultiLineChart
        series={[
          {
            key: "a",
            label: "p99",
            points: [
              { x: 15453.1, y: 900 },
              { x: 40161.4, y: 4000 },
            ],
          },
        ]}
        x={{ label: "IOPS", unit: "IO/s", format: tickNumber }}
        y={{ label: "latency", unit: "µs" }}
        width={600}
      />,
    );
    const ticks = [
      ...container.querySelectorAll('.recharts-cartesian-axis-tick-value[orientation="bottom"]'),
    ].map((t) => t.textContent);
    expect(ticks).toEqual(["20k", "25k", "30k", "35k", "40k"]);
  });
});

describe("DualAxisLineChart", () => {
  it("titles each axis above the plot, not as a rotated label in the gutter", () => {
    const { container } = render(
      <DualAxisLineChart
        data={[
          { t: 0, mbps: 10, iops: 2560 },
          { t: 1, mbps: 12, iops: 3072 },
        ]}
        x={{ key: "t", label: "time", unit: "s" }}
        left={{ key: "mbps", name: "Throughput", unit: "MB/s", color: "#2563eb" }}
        right={{ key: "iops", name: "IOPS", unit: "IOPS", color: "#ea580c" }}
        width={500}
      />,
    );
    const titles = container.querySelector('[data-testid="dual-axis-titles"]');
    expect(titles?.querySelector('[data-axis="left"]')?.textContent).toContain("Throughput (MB/s)");
    expect(titles?.querySelector('[data-axis="right"]')?.textContent).toContain("IOPS");
    // no SVG text is rotated (the old right-axis title sat between two side-by-side charts)
    const rotated = [...container.querySelectorAll("svg text")].filter((t) =>
      /rotate/.test(t.getAttribute("transform") ?? ""),
    );
    expect(rotated).toHaveLength(0);
    expect(container.querySelector("svg")?.textContent).not.toContain("IOPS");
  });
});

describe("a time axis at round times", () => {
  it("ticks 0, 30, 60 s, not 1, 36, 71 (even division); minutes when the data spans 10 minutes", () => {
    expect(timeTicks(1, 140).ticks).toEqual([0, 30, 60, 90, 120]);
    expect(timeTicks(3.2, 11.9).ticks).toEqual([2, 4, 6, 8, 10]);
    const long = timeTicks(95, 1900);
    expect(long.unit).toBe("min");
    expect(long.ticks.map(long.format)).toEqual(["0", "10", "20", "30"]);
    expect(timeTicks(5, 5).ticks).toEqual([]);
  });

  it("draws the live chart's seconds at round ticks, in minutes with the axis saying so", () => {
    const rows = (from: number, to: number) =>
      Array.from({ length: 80 }, (_, i) => ({
        t: from + ((to - from) * i) / 79,
        mbps: 10 + (i % 3),
        iops: 2560,
      }));
    const draw = (data: Record<string, number>[]) => {
      const { container, unmount } = render(
        <DualAxisLineChart
          data={data}
          x={{ key: "t", label: "time", unit: "s" }}
          left={{ key: "mbps", name: "Throughput", unit: "MB/s", color: "#2563eb" }}
          right={{ key: "iops", name: "IOPS", unit: "IOPS", color: "#ea580c" }}
          width={700}
        />,
      );
      const ticks = [
        ...container.querySelectorAll('.recharts-cartesian-axis-tick-value[orientation="bottom"]'),
      ].map((t) => t.textContent);
      const label = container.querySelector(".recharts-label")?.textContent;
      unmount();
      return { ticks, label };
    };
    expect(draw(rows(1, 140))).toEqual({
      ticks: ["0", "30", "60", "90", "120"],
      label: "time (s)",
    });
    expect(draw(rows(95, 1900))).toEqual({
      ticks: ["0", "10", "20", "30"],
      label: "time (min)",
    });
  });
});
