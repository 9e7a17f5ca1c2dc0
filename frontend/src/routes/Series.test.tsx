import { fireEvent, screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import type { SeriesHistory, SeriesRead } from "../client/types";
import { setToken } from "../lib/auth";
import { renderAt, stubApi } from "../test/render";
import { Series, SeriesPage } from "./Series";

const realFetch = globalThis.fetch;
afterEach(() => {
  globalThis.fetch = realFetch;
});

const TH = {
  test: "t_test" as const,
  alpha: 1e-5,
  z_min: 3,
  min_change_pct: 5,
  max_change_abs: null,
  lookback: 20,
  min_window: 5,
  max_suffix: 3,
  cp_penalty: 3,
  cp_min_size: 3,
  cp_alpha: 1e-4,
};
const NONE = Object.fromEntries(Object.keys(TH).map((k) => [k, null]));
const SERIES = {
  id: "s1",
  team_id: "t1",
  name: "nightly randread on nvme0n1",
  workload_fingerprint: "f",
  target_kind: "device",
  agent_id: "a1",
  device_id: "d1",
  target_path: "/srv/bench",
  environment_id: null,
  workload_id: null,
  metric: null,
  job_index: null,
  pinned: false,
  archived_at: null,
  thresholds: NONE,
  effective_thresholds: TH,
  run_count: 3,
  last_run_at: "2026-11-01T02:00:00Z",
  open_regressions: 1,
  created_at: "2026-11-01T00:00:00Z",
} as unknown as SeriesRead;
const at = (h: number) => `2026-11-01T0${h}:00:00Z`;
const HISTORY = {
  series_id: "s1",
  metric: "read_iops",
  direction: "higher_is_better",
  job_index: 0,
  jobs: ["randread"],
  total_runs: 3,
  downsampled: false,
  points: [
    {
      run_id: "r0",
      at: at(0),
      value: 1000,
      low: null,
      high: null,
      runs: 1,
      excluded: [],
      segment: "a",
    },
    {
      run_id: "r1",
      at: at(1),
      value: 3000,
      low: null,
      high: null,
      runs: 1,
      excluded: [{ flag: "cache_resident", message: "fits in RAM" }],
      segment: "a",
    },
    {
      run_id: "r2",
      at: at(2),
      value: 800,
      low: null,
      high: null,
      runs: 1,
      excluded: [],
      segment: "a",
    },
  ],
  host_changes: [],
  detections: [
    {
      id: "d1",
      series_id: "s1",
      metric: "read_iops",
      job_index: 0,
      kind: "new_run",
      direction: "regression",
      run_id: "r2",
      previous_run_id: "r0",
      at: at(2),
      mean_before: 1000,
      mean_after: 800,
      change_pct: -20,
      change_pct_low: -25,
      change_pct_high: -15,
      runs_before: 5,
      runs_after: 1,
      method: "t_test, last 1 vs 5",
      parameters: {},
      p_value: 1e-6,
      excluded: [],
      status: "open",
      comment: "",
      status_by: null,
      status_at: null,
    },
  ],
} as unknown as SeriesHistory;

describe("a series' history page", () => {
  it("says what was left out, lists the change and sends a review and thresholds", async () => {
    setToken("t");
    const calls = stubApi({
      "GET /api/v1/auth/me": () => ({
        body: {
          id: "u1",
          email: "a@b",
          display_name: "A",
          teams: [{ id: "t1", name: "lab", role: "member" }],
        },
      }),
      "GET /api/v1/series/s1": () => ({ body: SERIES }),
      "GET /api/v1/series/s1/history": () => ({ body: HISTORY }),
      "PATCH /api/v1/series/s1/detections/d1": () => ({
        body: { ...HISTORY.detections[0], status: "acknowledged" },
      }),
      "PATCH /api/v1/series/s1": () => ({
        status: 422,
        body: {
          error: "validation_error",
          message: "thresholds.min_window: must not exceed lookback (20)",
          detail: [{ field: "thresholds.min_window", message: "must not exceed lookback (20)" }],
        },
      }),
    });
    renderAt(<SeriesPage />, { path: "/series/s1", route: "/series/:id" });
    const summary = await screen.findByTestId("history-summary");
    expect(summary.textContent).toContain("3 runs");
    expect(summary.textContent).toContain("1 left out by their validity flags");
    const table = await screen.findByTestId("detections-table");
    expect(table.textContent).toContain("-20 %");
    expect(table.textContent).toContain("(95 %: -25 … -15 %)");
    fireEvent.change(screen.getByLabelText("comment"), { target: { value: "new firmware" } });
    fireEvent.click(screen.getByText("Acknowledge"));
    await waitFor(() =>
      expect(calls.find((c) => c.method === "PATCH" && c.path.endsWith("/d1"))?.body).toEqual({
        status: "acknowledged",
        comment: "new firmware",
      }),
    );
    fireEvent.change(screen.getByLabelText(/Tracks/), { target: { value: "read_clat_p99_ns" } });
    await waitFor(() =>
      expect(
        calls.find((c) => c.method === "PATCH" && c.path === "/api/v1/series/s1")?.body,
      ).toEqual({ metric: "read_clat_p99_ns" }),
    );
    fireEvent.change(screen.getByLabelText(/Fewest runs to judge/), { target: { value: "30" } });
    fireEvent.click(screen.getByTestId("save-thresholds"));
    expect((await screen.findByTestId("field-error-min_window")).textContent).toContain("lookback");
    expect(
      calls.filter((c) => c.method === "PATCH" && c.path === "/api/v1/series/s1").at(-1)?.body,
    ).toEqual({
      thresholds: { min_window: 30 },
    });
  });

  it("lets a team admin set the team's default thresholds from the list", async () => {
    setToken("t");
    localStorage.setItem("iowatt.team", "t1");
    const calls = stubApi({
      "GET /api/v1/auth/me": () => ({
        body: {
          id: "u1",
          email: "a@b",
          display_name: "A",
          teams: [{ id: "t1", name: "lab", role: "admin" }],
        },
      }),
      "GET /api/v1/series": () => ({ body: { items: [SERIES], total: 1 } }),
      "GET /api/v1/series/thresholds": () => ({
        body: {
          team_id: "t1",
          thresholds: { ...NONE, lookback: 30 },
          effective: { ...TH, lookback: 30 },
        },
      }),
      "PUT /api/v1/series/thresholds": () => ({
        body: { team_id: "t1", thresholds: { ...NONE, z_min: 4 }, effective: { ...TH, z_min: 4 } },
      }),
    });
    renderAt(<Series />, { path: "/series", route: "/series" });
    const form = await screen.findByTestId("team-thresholds");
    expect(form.textContent).toContain("the default");
    expect((screen.getByLabelText(/Window, runs/) as HTMLInputElement).value).toBe("30");
    fireEvent.change(screen.getByLabelText(/Window, runs/), { target: { value: "" } });
    fireEvent.change(screen.getByLabelText(/z-score at least/), { target: { value: "4" } });
    fireEvent.click(screen.getByTestId("save-thresholds"));
    await waitFor(() => expect(calls.find((c) => c.method === "PUT")?.body).toEqual({ z_min: 4 }));
    expect(calls.find((c) => c.method === "PUT")?.path).toBe("/api/v1/series/thresholds");
  });
});
