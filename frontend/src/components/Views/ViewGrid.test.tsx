import { render, screen } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import type { ViewColumn, ViewTable } from "../../queries/views";
import { formatCell, headerSpans, shortLabel, ViewGrid } from "./ViewGrid";

function col(
  key: string,
  label: string,
  group: string | null,
  kind: ViewColumn["kind"] = "number",
) {
  return {
    key,
    label,
    unit: kind === "text" ? null : "MB/s",
    description: `${label} is`,
    kind,
    run_id: null,
    group,
  };
}

const table: ViewTable = {
  view: {
    name: "crystaldiskmark",
    title: "CrystalDiskMark grid",
    description: "",
    seed: "",
    presets: ["crystaldiskmark"],
    min_runs: 1,
    max_runs: 30,
  },
  runs: [],
  baseline_run_id: null,
  columns: [
    col("run", "Run", null, "text"),
    col("test", "Test", null, "text"),
    col("read_best_mbps", "Read best (MB/s)", "Read"),
    col("read_passes", "Read passes (MB/s)", "Read", "text"),
    col("write_best_mbps", "Write best (MB/s)", "Write"),
  ],
  rows: [
    {
      group: "r1",
      cells: [
        { value: "nvme0n1 on host", note: null },
        { value: "SEQ1M Q8T1", note: null },
        { value: 3512.5, note: null },
        { value: "p0 3400.00 (discarded) · p1 3512.50 (best) · p2 3390.10", note: null },
        { value: null, note: null },
      ],
    },
  ],
  charts: [],
  notes: [],
};

describe("ViewGrid", () => {
  it("formats figures in the column's unit without rescaling, ratios with ×", () => {
    const c = col("x", "X", null);
    expect(formatCell({ value: 1611.04, note: null }, c)).toBe("1,611.04");
    expect(formatCell({ value: null, note: null }, c)).toBe("—");
    expect(formatCell({ value: 3.1, note: null }, col("ratio", "Ratio", null, "ratio"))).toBe(
      "3.1×",
    );
  });

  it("puts Read and Write over their columns and shortens the labels under them", () => {
    const cols = table.columns.slice(1);
    expect(headerSpans(cols)).toEqual([
      [null, 1],
      ["Read", 2],
      ["Write", 1],
    ]);
    expect(shortLabel(cols[1] as ViewColumn)).toBe("Best (MB/s)");
    expect(shortLabel(cols[0] as ViewColumn)).toBe("Test");
  });

  it("heads a run's rows with its device and marks the discarded and the best pass", () => {
    render(<ViewGrid table={table} />);
    expect(screen.getByTestId("view-group").textContent).toBe("nvme0n1 on host");
    const passes = document.querySelector('[data-col="read_passes"]');
    expect(passes?.querySelector('[data-pass="discarded"]')?.textContent).toBe(
      "p0 3400.00 discarded",
    );
    expect(passes?.querySelector('[data-pass="best"]')?.textContent).toBe("p1 3512.50 best");
    expect(document.querySelector('th[data-label="Read best (MB/s)"]')?.getAttribute("title")).toBe(
      "Read best (MB/s) is",
    );
    // written as the server wrote it: an upper-cased "µs" would read "ΜS"
    const th = document.querySelector<HTMLElement>('th[data-label="Read best (MB/s)"]');
    expect(th?.style.textTransform).toBe("none");
  });
});
