import { render, screen } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import type { ViewColumn, ViewTable } from "../../queries/views";
import { formatCell, headerSpans, noteShown, noteText, shortLabel, ViewGrid } from "./ViewGrid";

function col(
  key: string,
  label: string,
  group: string | null,
  kind: ViewColumn["kind"] = "number",
  unit: ViewColumn["unit"] = "B/s",
): ViewColumn {
  return {
    key,
    label,
    unit: kind === "text" ? null : kind === "ratio" ? "×" : unit,
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
    col("read_passes", "Read passes (MB/s)", "Read", "passes"),
    col("write_best_mbps", "Write best (MB/s)", "Write"),
  ],
  rows: [
    {
      group: "r1",
      cells: [
        { value: "nvme0n1 on host", unit: null, note: null, passes: null },
        { value: "SEQ1M Q8T1", unit: null, note: null, passes: null },
        { value: 3_512_500_000, unit: "B/s", note: null, passes: null },
        {
          value: null,
          unit: "B/s",
          note: null,
          passes: [
            { index: 0, bw_bytes: 3_400_000_000, status: "discarded" },
            { index: 1, bw_bytes: 3_512_500_000, status: "best" },
            { index: 2, bw_bytes: 3_390_100_000, status: "measured" },
          ],
        },
        { value: null, unit: null, note: null, passes: null },
      ],
    },
  ],
  charts: [],
  notes: [],
  display_units: { "B/s": "MB/s", ns: "µs", B: "KiB" },
};

describe("ViewGrid", () => {
  it("shows base-unit figures in the report's units, ratios with ×", () => {
    const c = col("x", "X", null);
    const shown = table.display_units;
    const cell = (value: number | null, unit: ViewColumn["unit"] = null) => ({
      value,
      unit,
      note: null,
      passes: null,
    });
    expect(formatCell(cell(1_611_040_000, "B/s"), c, shown)).toBe("1,611.04"); // MB/s
    expect(formatCell(cell(86_254, "ns"), col("l", "L", null, "number", "ns"), shown)).toBe(
      "86.25",
    ); // µs
    expect(formatCell(cell(16_777_216, "B"), col("b", "B", null, "number", "B"), shown)).toBe(
      "16,384",
    ); // KiB
    expect(formatCell(cell(12_345.67, "IO/s"), col("i", "I", null, "number", "IO/s"), shown)).toBe(
      "12,345.7",
    );
    // a cell without its own unit takes its column's
    expect(formatCell(cell(2_000_000), c, shown)).toBe("2");
    expect(formatCell(cell(null), c, shown)).toBe("—");
    expect(formatCell(cell(3.1, "×"), col("ratio", "Ratio", null, "ratio"), shown)).toBe("3.1×");
    expect(formatCell(cell(1.41234, "×"), col("ratio", "Ratio", null, "ratio"), shown)).toBe(
      "1.41×",
    );
    expect(formatCell(cell(0.94321, "×"), col("ratio", "Ratio", null, "ratio"), shown)).toBe(
      "0.943×",
    );
    // a file set's scale keeps its digits; op/s and W as the reports print them
    expect(formatCell(cell(0.0001, "×"), col("scale", "Scale", null, "number", "×"), shown)).toBe(
      "0.0001",
    );
    // an operation rate of 100 or more without decimals; below 100 one decimal
    expect(formatCell(cell(49_832.345, "op/s"), col("r", "R", null, "number", "op/s"), {})).toBe(
      "49,832",
    );
    expect(formatCell(cell(2_259_263.3, "op/s"), col("r", "R", null, "number", "op/s"), {})).toBe(
      "2,259,263",
    );
    expect(formatCell(cell(42.34, "op/s"), col("r", "R", null, "number", "op/s"), {})).toBe("42.3");
    expect(formatCell(cell(3600, "J"), col("e", "E", null, "number", "J"), { J: "Wh" })).toBe("1");
  });

  it("keeps three significant digits of a time below one of its unit (scaled PostMark, vdbench)", () => {
    const t = col("t", "T", null, "number", "ns");
    const cell = (value: number) => ({ value, unit: "ns" as const, note: null, passes: null });
    // PostMark's run time in seconds: 71.4 ms and 61.2 ms are not "0.07" and "0.06"
    expect(formatCell(cell(71_400_000), t, { ns: "s" })).toBe("0.0714");
    expect(formatCell(cell(61_240_000), t, { ns: "s" })).toBe("0.0612");
    // vdbench's mean response in ms: 21.3 µs is not "0.02"
    expect(formatCell(cell(21_340), t, { ns: "ms" })).toBe("0.0213");
    // one unit or more keeps the report's two decimals
    expect(formatCell(cell(1_234_567), t, { ns: "ms" })).toBe("1.23");
    expect(formatCell(cell(0), t, { ns: "ms" })).toBe("0");
  });

  it("shows a cache-resident row's mark and estimated energy beside the figure", () => {
    expect(noteShown("cache-resident: the file set fits", "text")).toBe(true);
    expect(noteText("cache-resident: the file set fits")).toBe("⚠ cache-resident");
    expect(noteShown("estimated (datasheet watts, no meter)", "number")).toBe(true);
    expect(noteText("estimated (datasheet watts, no meter)")).toBe(
      "estimated (datasheet watts, no meter)",
    );
    expect(noteShown("best pass", "number")).toBe(false);
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
    expect(document.querySelector('[data-col="read_best_mbps"]')?.textContent).toBe("3,512.5");
    expect(passes?.querySelector('[data-pass="best"]')?.textContent).toBe("p1 3512.50 best");
    expect(document.querySelector('th[data-label="Read best (MB/s)"]')?.getAttribute("title")).toBe(
      "Read best (MB/s) is",
    );
    // written as the server wrote it: an upper-cased "µs" would read "ΜS"
    const th = document.querySelector<HTMLElement>('th[data-label="Read best (MB/s)"]');
    expect(th?.style.textTransform).toBe("none");
  });
});
