import { render, screen } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import type { JobSummary } from "../client/types";
import { NINES_TICKS, nines, ninesLabel } from "../lib/latency";
import { pow2Ticks, sweepAxis } from "../lib/sweep";
import { IO_URING_JOB, PSYNC_JOB } from "../test/fixtures";
import { niceTicks } from "./charts/axis";
import { GroupedBarChart } from "./charts/GroupedBarChart";
import { MultiLineChart } from "./charts/MultiLineChart";
import { KeyFigures } from "./Run/KeyFigures";
import { ThroughputChart } from "./Run/ThroughputChart";

describe("KeyFigures", () => {
  it("shows each direction's figures with units", () => {
    const job: JobSummary = {
      job_index: 0,
      name: "rand4k",
      rw: "randread",
      bs_bytes: 4096,
      runtime_ns: 5e9,
      usr_cpu_pct: 1.5,
      sys_cpu_pct: 20,
      kernel_worker_cpu_pct: null,
      target_nowait: null,
      read: {
        iops: 12_345,
        bw_bytes: 50_565_120,
        io_bytes: 252_825_600,
        total_ios: 61_725,
        lat_mean_ns: 80_000,
        clat_p50_ns: 70_000,
        clat_p99_ns: 1_200_000,
        clat_p999_ns: 4_000_000,
        clat_max_ns: 9_000_000,
      },
      write: null,
    };
    render(<KeyFigures job={job} />);
    const row = screen.getByRole("row", { name: /read/ });
    expect(row.textContent).toContain("12.3k IOPS");
    expect(row.textContent).toContain("50.6 MB/s");
    // one latency unit for the table, named in its headers (the largest's: ms), not µs beside ms
    expect(row.textContent).toContain("1.2");
    expect(row.textContent).toContain("0.08");
    expect(screen.getByTestId("key-figures").querySelector("thead")?.textContent).toContain(
      "p99 (ms)",
    );
    expect(screen.queryByRole("row", { name: /^write/ })).toBeNull();
    expect(screen.queryByTestId("io-uring-workers-cpu")).toBeNull();
    expect(screen.queryByTestId("io-uring-no-nowait")).toBeNull();
  });
  it("shows io_uring's kernel worker CPU when the engine reported it, and why it is high", () => {
    render(<KeyFigures job={IO_URING_JOB} />);
    const cell = screen.getByTestId("io-uring-workers-cpu");
    expect(cell.textContent).toBe("io_uring workers 87.5 %");
    expect(cell.getAttribute("title")).toContain("not included in usr/sys");
    expect(screen.getByTestId("io-uring-no-nowait").textContent).toBe(
      "target has no nowait support: io_uring ran every request in kernel worker threads",
    );
  });
  it("shows the workers' CPU without the note when the target has nowait support", () => {
    render(
      <KeyFigures job={{ ...IO_URING_JOB, kernel_worker_cpu_pct: 0.4, target_nowait: true }} />,
    );
    expect(screen.getByTestId("io-uring-workers-cpu").textContent).toBe("io_uring workers 0.40 %");
    expect(screen.queryByTestId("io-uring-no-nowait")).toBeNull();
  });
  it("shows nothing for a job without io_uring figures", () => {
    render(<KeyFigures job={PSYNC_JOB} />);
    expect(screen.getByTestId("key-figures").textContent).toContain("usr 1.00 %, sys 2.00 %");
    expect(screen.queryByTestId("io-uring-workers-cpu")).toBeNull();
  });
});

describe("ThroughputChart", () => {
  it("draws two lines with labelled axes", () => {
    const points = [0, 1, 2, 3].map((t) => ({
      t_s: t,
      read_iops: 1000 + t * 10,
      read_bw_bytes: 4e6 + t * 1e5,
      write_iops: 0,
      write_bw_bytes: 0,
      read_clat_p99_ns: null,
      write_clat_p99_ns: null,
    }));
    const { container } = render(<ThroughputChart points={points} width={600} />);
    expect(container.querySelectorAll("path.recharts-line-curve")).toHaveLength(2);
    const text = container.textContent ?? "";
    expect(text).toContain("Throughput (MB/s)");
    expect(text).not.toContain("IOPS (IOPS)");
    expect(text).toContain("IOPS");
    expect(text).toContain("time (s)");
  });
  it("says so when there are no samples", () => {
    render(<ThroughputChart points={[]} />);
    expect(screen.getByText("No per-second samples.")).toBeTruthy();
  });
});

describe("GroupedBarChart", () => {
  const series = [
    { key: "r0", label: "hdd" },
    { key: "r1", label: "ram" },
  ];
  it("draws a bar per run and labels the axis with its unit", () => {
    const { container } = render(
      <GroupedBarChart
        rows={[{ category: "rand4k", r0: 4, r1: 200 }]}
        categoryKey="category"
        series={series}
        valueLabel="Throughput"
        unit="MB/s"
        log="auto"
        width={500}
      />,
    );
    expect(container.querySelectorAll(".recharts-bar-rectangle")).toHaveLength(2);
    expect(container.textContent).toContain("Throughput (MB/s)");
  });
  it("switches to a log axis when values span more than 100×", () => {
    const { container } = render(
      <GroupedBarChart
        rows={[{ category: "rand4k", r0: 150, r1: 500_000 }]}
        categoryKey="category"
        series={series}
        valueLabel="IOPS"
        unit="IOPS"
        log="auto"
        width={500}
      />,
    );
    expect(container.textContent).toContain("IOPS (log)");
  });
});

describe("niceTicks", () => {
  it("spaces ticks 1, 2 or 5 × 10^k apart", () => {
    expect(niceTicks(-3.02, 7.1)).toEqual([-2, 0, 2, 4, 6]);
    expect(niceTicks(-3.02, 7.1, 12)).toEqual([-3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7]);
    expect(niceTicks(0, 100)).toEqual([0, 20, 40, 60, 80, 100]);
    expect(niceTicks(0.1, 0.35, 5)).toEqual([0.1, 0.15, 0.2, 0.25, 0.3, 0.35]);
    expect(niceTicks(5, 5)).toEqual([]);
  });
});

describe("MultiLineChart", () => {
  it("draws a block-size sweep per column on a log2 axis with size ticks", () => {
    const xs = [4096, 65536, 1 << 20, 16 << 20];
    const { container } = render(
      <MultiLineChart
        width={600}
        series={[
          { key: "c0", label: "hdd", points: xs.map((x, i) => ({ x, y: 10 * (i + 1) })) },
          { key: "c1", label: "ssd", points: xs.map((x, i) => ({ x, y: 100 * (i + 1) })) },
        ]}
        x={{
          label: "block size",
          unit: "bytes",
          log: true,
          ticks: pow2Ticks(xs),
          format: sweepAxis("bs_bytes").format,
        }}
        y={{ label: "Throughput", unit: "MB/s" }}
      />,
    );
    const lines = [...container.querySelectorAll("path.recharts-line-curve")];
    expect(lines).toHaveLength(2);
    for (const l of lines) expect(l.getAttribute("d") ?? "").not.toContain("NaN");
    expect(container.textContent).toContain("4KiB");
    expect(container.textContent).toContain("16MiB");
    expect(container.textContent).toContain("Throughput (MB/s)");
  });

  it("draws latency percentiles on a nines axis with a log latency axis", () => {
    const pts = [50, 90, 99, 99.9].map((p, i) => ({ x: nines(p), y: 10 ** i }));
    const { container } = render(
      <MultiLineChart
        width={600}
        series={[{ key: "a", label: "vda", points: pts }]}
        x={{ label: "percentile", unit: "", ticks: NINES_TICKS.slice(0, 4), format: ninesLabel }}
        y={{ label: "Latency", unit: "µs", log: true }}
      />,
    );
    expect(container.querySelector("path.recharts-line-curve")?.getAttribute("d")).not.toContain(
      "NaN",
    );
    expect(container.textContent).toContain("p99.9");
    expect(container.textContent).toContain("Latency (µs, log)");
  });
});
