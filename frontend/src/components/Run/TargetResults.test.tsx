import { render as rtlRender, screen, within } from "@testing-library/react";
import type { ReactElement } from "react";
import { MemoryRouter } from "react-router-dom";
import { describe, expect, it } from "vitest";
import type { JobSummary, RunRead } from "../../client/types";
import { PSYNC_JOB } from "../../test/fixtures";
import { summaryLine } from "./RunSummary";
import { CombinedCaption, RunTargets, TargetResults } from "./TargetResults";

const render = (ui: ReactElement) => rtlRender(<MemoryRouter>{ui}</MemoryRouter>);

function job(iops: number, bw: number, p99: number | null): JobSummary {
  return {
    ...PSYNC_JOB,
    job_index: 0,
    name: "randwrite",
    read: null,
    write: PSYNC_JOB.read && { ...PSYNC_JOB.read, iops, bw_bytes: bw, clat_p99_ns: p99 },
  } as JobSummary;
}

function run(latency: "merged" | "not_combined"): RunRead {
  const target = (i: number, j: JobSummary) => ({
    target_index: i,
    target_path: `/srv/t${i}`,
    device_id: null,
    device_name: `md${i}`,
    engine_exit_code: 0,
    jobs: [j],
  });
  return {
    id: "run1",
    jobs: [job(3000, 30e6, latency === "merged" ? 9000 : null)],
    targets: [target(0, job(1000, 10e6, 8000)), target(1, job(2000, 20e6, 9000))],
    combined: { targets: 2, latency, rates: "summed", energy: "the host's" },
  } as unknown as RunRead;
}

describe("TargetResults", () => {
  it("shows each target's figures and the combined row", () => {
    render(<TargetResults run={run("merged")} />);
    const rows = screen.getAllByTestId("target-row");
    expect(rows).toHaveLength(2);
    const [first, second] = rows as [HTMLElement, HTMLElement];
    expect(within(first).getByText(/\/srv\/t0/)).toBeTruthy();
    expect(within(second).getByText("2k IOPS")).toBeTruthy();
    const combined = screen.getByTestId("combined-row");
    expect(within(combined).getByText("3k IOPS")).toBeTruthy();
    expect(within(combined).getByText("30 MB/s")).toBeTruthy();
    expect(within(combined).getByText("9 µs")).toBeTruthy();
    expect(screen.getByTestId("combined-note").textContent).toMatch(/merged/);
    const link = within(second).getByRole("link", { name: "this target" });
    expect(link.getAttribute("href")).toBe("/compare?runs=run1&targets=run1%3A1");
  });

  it("says when latency percentiles were not combined, and shows nothing for one target", () => {
    render(<TargetResults run={run("not_combined")} />);
    expect(screen.getByTestId("combined-note").textContent).toMatch(/not combined/);
    const { container } = render(
      <TargetResults run={{ ...run("merged"), targets: [], combined: null }} />,
    );
    expect(container.querySelector("[data-testid=target-results]")).toBeNull();
  });
});

describe("a multi-target run's targets and combined figures, named on the run page", () => {
  it("lists every target in order, the one target as before, and says when a file named none", () => {
    const { container } = render(<RunTargets run={run("merged")} />);
    expect(screen.getByTestId("run-targets").textContent).toBe("2 at the same time:/srv/t0/srv/t1");
    container.remove();
    render(<RunTargets run={{ target_path: "/srv/one", targets: [], origin: null }} />);
    expect(screen.getByText("/srv/one")).toBeTruthy();
    render(
      <RunTargets run={{ target_path: "", targets: [], origin: { kind: "imported" } as never }} />,
    );
    expect(screen.getByText("not stated by the imported file")).toBeTruthy();
  });

  it("captions the jobs of a multi-target run as combined, and nothing else", () => {
    render(<CombinedCaption run={run("merged")} />);
    expect(screen.getByTestId("combined-caption").textContent).toContain("2 targets combined");
    const { container } = render(<CombinedCaption run={{ ...run("merged"), targets: [] }} />);
    expect(container.textContent).toBe("");
    expect(within(screen.getByTestId("combined-caption")).getByText("combined")).toBeTruthy();
  });
});

describe("a multi-target run's summary line", () => {
  it("names every target's device, not only the first target's", () => {
    const r = {
      ...run("merged"),
      status: "succeeded",
      preset: null,
      file_workload: null,
      workload: { kind: "block", jobs: [{ name: "randwrite" }] },
    } as unknown as RunRead;
    const sys = { device_model: "vda", interface: "virtio", fstype: "ext4", cache: "direct" };
    const line = summaryLine(r, sys as never);
    expect(line.startsWith("1 job on 2 targets (md0 + md1), direct I/O")).toBe(true);
    expect(line).not.toContain("virtio");
  });
});
