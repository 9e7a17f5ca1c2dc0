import { fireEvent, screen } from "@testing-library/react";
import { Route, Routes, useLocation } from "react-router-dom";
import { afterEach, describe, expect, it } from "vitest";
import type { RunRead } from "../client/types";
import { setToken } from "../lib/auth";
import { NO_ENERGY } from "../test/fixtures";
import { renderAt, stubApi } from "../test/render";
import { CompareDevices, groupFor } from "./CompareDevices";

const realFetch = globalThis.fetch;
afterEach(() => {
  globalThis.fetch = realFetch;
});

function Where() {
  const loc = useLocation();
  return <p data-testid="where">{`${loc.pathname}${loc.search}`}</p>;
}

/** Two stored workloads with different jobs (identity is the jobs, as the server's fingerprint). */
const JOBS: Record<string, { jobs: object[]; passes: number; discard_passes: number }> = {
  w1: { jobs: [{ name: "rnd", rw: "randread", bs_bytes: 4096 }], passes: 1, discard_passes: 0 },
  w2: { jobs: [{ name: "seq", rw: "read", bs_bytes: 1 << 20 }], passes: 1, discard_passes: 0 },
};

function run(id: string, workload_id: string | null, device_id: string, jobs = JOBS.w1): RunRead {
  return {
    id,
    name: id,
    workload_id,
    device_id,
    device_name: device_id,
    environment_id: null,
    target_path: "/x",
    status: "succeeded",
    finished_at: "2026-11-21T10:00:00Z",
    workload: workload_id ? JOBS[workload_id] : jobs,
    energy: NO_ENERGY,
  } as unknown as RunRead;
}

describe("compare devices", () => {
  it("groups by what was picked", () => {
    expect(groupFor(2, 0)).toBe("device");
    expect(groupFor(0, 2)).toBe("environment");
    expect(groupFor(2, 1)).toBe("device_environment");
  });

  it("finds the succeeded runs of a workload on the chosen devices and compares them", async () => {
    setToken("t");
    stubApi({
      // newest first, as the server lists them
      "GET /api/v1/runs": () => ({
        body: {
          items: [
            run("n3", "w1", "ssd"),
            run("n2", "w1", "hdd"),
            // the same jobs entered without a stored workload: the same workload to the server
            run("n1", null, "hdd", JOBS.w1),
            run("x", "w2", "ssd"),
          ],
          total: 4,
        },
      }),
      "GET /api/v1/devices": () => ({
        body: {
          items: [
            { id: "hdd", name: "sda", kind: "block", media: "hdd" },
            { id: "ssd", name: "nvme0", kind: "block", media: "ssd" },
          ],
          total: 2,
        },
      }),
      "GET /api/v1/environments": () => ({ body: { items: [], total: 0 } }),
      "GET /api/v1/workloads": () => ({
        body: {
          items: [
            { id: "w1", name: "RND4K Q1T1" },
            { id: "w2", name: "SEQ1M" },
          ],
          total: 2,
        },
      }),
    });
    renderAt(
      <Routes>
        <Route path="/" element={<CompareDevices />} />
        <Route path="/compare" element={<Where />} />
      </Routes>,
    );
    await screen.findByRole("option", { name: "RND4K Q1T1 (3 runs)" });
    expect(screen.getByTestId("pick-matching").textContent).toContain("3 matching");
    fireEvent.click(screen.getAllByTestId("pick-device")[0] as HTMLElement); // sda (hdd)
    expect(screen.getByTestId("pick-matching").textContent).toContain("2 matching");
    fireEvent.click(screen.getAllByTestId("pick-device")[1] as HTMLElement); // nvme0
    fireEvent.click(screen.getByTestId("pick-compare"));
    expect((await screen.findByTestId("where")).textContent).toBe(
      "/compare?runs=n1,n2,n3&group_by=device",
    );
  });
});
