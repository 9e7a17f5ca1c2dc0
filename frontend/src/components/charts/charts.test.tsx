import { render } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { ChangeBarChart, changeChartHeight, VERDICT_COLOR } from "./ChangeBarChart";
import { GroupedBarChart, PLOT_HEIGHT } from "./GroupedBarChart";
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
