import { fireEvent, screen, within } from "@testing-library/react";
import { Route, Routes, useLocation } from "react-router-dom";
import { afterEach, describe, expect, it } from "vitest";
import type { RunRead } from "../client/types";
import { setToken } from "../lib/auth";
import { NO_ENERGY } from "../test/fixtures";
import { renderAt, stubApi } from "../test/render";
import { Compare } from "./Compare";
import { Runs } from "./Runs";

const realFetch = globalThis.fetch;
afterEach(() => {
  globalThis.fetch = realFetch;
});

function run(id: string, name: string, status: RunRead["status"] = "succeeded"): RunRead {
  return {
    id,
    team_id: "t",
    name,
    status,
    agent_id: "a",
    agent_name: "local",
    target_path: `/data/${name}`,
    device_id: null,
    device_name: null,
    environment_id: null,
    cancel_requested: false,
    workload: { jobs: [] },
    workload_id: null,
    created_at: "2026-11-21T10:00:00Z",
    assigned_at: null,
    started_at: null,
    finished_at: null,
    attempt: 1,
    error: null,
    progress:
      status === "running"
        ? {
            job_index: 0,
            job_name: "j",
            percent: 40,
            elapsed_ns: 1,
            read_iops: 0,
            read_bw_bytes: 0,
            write_iops: 0,
            write_bw_bytes: 0,
            updated_at: "2026-11-21T10:00:00Z",
          }
        : null,
    jobs: [],
    meter: null,
    idle_s: null,
    energy: NO_ENERGY,
  };
}

describe("Compare page", () => {
  it("shows every metric per run with units and a ratio to the first run", async () => {
    setToken("t");
    const calls = stubApi({
      "GET /api/v1/compare": () => ({
        body: {
          runs: [run("r1", "hdd"), run("r2", "ram")],
          energy: [],
          jobs: [
            {
              name: "rand4k",
              metrics: [
                { key: "read_iops", label: "Read IOPS", unit: "IO/s", values: [200, 50_000] },
                {
                  key: "read_clat_p99_ns",
                  label: "Read latency p99",
                  unit: "ns",
                  values: [8e6, 2e4],
                },
              ],
            },
          ],
        },
      }),
    });
    renderAt(<Compare />, { path: "/compare?runs=r1,r2,r1" });
    const table = await screen.findByTestId("compare-table");
    const iops = within(table).getByRole("row", { name: /Read IOPS/ });
    expect(iops.textContent).toContain("200 IOPS");
    expect(iops.textContent).toContain("50k IOPS");
    expect(iops.textContent).toContain("250×");
    const p99 = within(table).getByRole("row", { name: /p99/ });
    expect(p99.textContent).toContain("8 ms");
    expect(p99.textContent).toContain("20 µs");
    expect(p99.textContent).toContain("0.0025×");
    // Duplicates in the URL are dropped; order is kept (the first is the baseline).
    expect(calls[0]?.path).toBe("/api/v1/compare");
  });

  it("asks for two runs when the URL names fewer", () => {
    stubApi({});
    renderAt(<Compare />, { path: "/compare?runs=r1" });
    expect(screen.getByText(/Select two or more runs/)).toBeTruthy();
  });
});

function Where() {
  const loc = useLocation();
  return <p data-testid="where">{`${loc.pathname}${loc.search}`}</p>;
}

describe("Runs page", () => {
  it("selects runs and opens the comparison with their ids in the URL", async () => {
    setToken("t");
    stubApi({
      "GET /api/v1/runs": () => ({
        body: { items: [run("r1", "a"), run("r2", "b"), run("r3", "c", "running")], total: 3 },
      }),
    });
    renderAt(
      <Routes>
        <Route path="/runs" element={<Runs />} />
        <Route path="/compare" element={<Where />} />
      </Routes>,
      { path: "/runs" },
    );
    const rows = await screen.findAllByTestId("run-row");
    expect(rows).toHaveLength(3);
    // The running run shows its progress.
    expect(
      within(rows[2] as HTMLElement)
        .getByRole("progressbar")
        .getAttribute("aria-valuenow"),
    ).toBe("40");
    const compare = screen.getByTestId("compare-button") as HTMLButtonElement;
    expect(compare.disabled).toBe(true);
    fireEvent.click(within(rows[0] as HTMLElement).getByTestId("run-select"));
    expect(compare.disabled).toBe(true);
    fireEvent.click(within(rows[1] as HTMLElement).getByTestId("run-select"));
    expect(compare.disabled).toBe(false);
    fireEvent.click(compare);
    expect((await screen.findByTestId("where")).textContent).toBe("/compare?runs=r1,r2");
  });
});
