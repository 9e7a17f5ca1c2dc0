import { focusManager } from "@tanstack/react-query";
import { fireEvent, screen, waitFor, within } from "@testing-library/react";
import { act } from "react";
import { Route, Routes, useLocation } from "react-router-dom";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { RunRead } from "../client/types";
import { clearToken, setToken } from "../lib/auth";
import { type Change, compareBarCharts } from "../lib/compare";
import { comparison, metric, NO_ENERGY, OK_ENERGY } from "../test/fixtures";
import { renderAt, stubApi } from "../test/render";
import { Compare } from "./Compare";
import { Dashboard } from "./Dashboard";
import { Runs } from "./Runs";

// the real function, watched: how many times the bar charts were worked out (each time they are
// drawn) tells whether a chart was drawn again
vi.mock("../lib/compare", async (original) => {
  const mod = await original<typeof import("../lib/compare")>();
  return { ...mod, compareBarCharts: vi.fn(mod.compareBarCharts) };
});
const barChartsDrawn = () => vi.mocked(compareBarCharts).mock.calls.length;

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
    destructive: false,
    device_id: null,
    device_name: null,
    environment_id: null,
    cancel_requested: false,
    workload: { kind: "block", jobs: [], passes: 1, discard_passes: 0 },
    workload_id: null,
    preset: null,
    file_workload: null,
    created_at: "2026-11-21T10:00:00Z",
    created_by: null,
    source: "agent",
    tags: [],
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
            phase: "job" as const,
            samples: [],
            percent: 40,
            run_percent: 40,
            run_eta_s: 6,
            run_eta_at_least: false,
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
    passes: [],
    energy: NO_ENERGY,
  };
}

function Where() {
  const loc = useLocation();
  return <p data-testid="where">{`${loc.pathname}${loc.search}`}</p>;
}

const HDD = run("r1", "hdd");
const RAM = run("r2", "ram");

/** The server's `changes` (docs/contracts.md §5) on a fixture metric. */
function withChanges<M extends object>(m: M, changes: (Change | null)[]): M {
  return Object.assign(m, { changes });
}

function ch(ratio: number, verdict: Change["verdict"], phrase: string): Change {
  return {
    ratio,
    pct_change: (ratio - 1) * 100,
    factor: Math.max(ratio, 1 / ratio),
    verdict,
    phrase,
  };
}

/** A fake /compare that honours baseline and force like the server does. */
function fakeCompare(req: Request) {
  const q = new URL(req.url).searchParams;
  const base = q.get("baseline") === "r2" ? 1 : 0;
  const iops = base
    ? [ch(0.004, "worse", "250× slower"), null]
    : [null, ch(250, "better", "250× faster")];
  const p99 = base
    ? [ch(400, "worse", "400× higher latency"), null]
    : [null, ch(0.0025, "better", "400× lower latency")];
  return {
    body: comparison(
      [HDD, RAM],
      [
        {
          name: "rand4k",
          metrics: [
            withChanges(
              metric("read_iops", "Read IOPS", "IO/s", [200, 50_000], {
                base,
                higher_is_better: true,
              }),
              iops,
            ),
            withChanges(
              metric("read_clat_p99_ns", "Read latency p99", "ns", [8e6, 2e4], { base }),
              p99,
            ),
          ],
        },
      ],
      { base, validity: { r1: [{ flag: "short_run", message: "under 10 s: r1" }] } },
    ),
  };
}

describe("Compare page", () => {
  it("shows every metric in the unit its row names and the direction-aware change; a new baseline changes them and the URL", async () => {
    setToken("t");
    const calls = stubApi({ "GET /api/v1/compare": fakeCompare });
    renderAt(
      <>
        <Compare />
        <Where />
      </>,
      { path: "/compare?runs=r1,r2,r1" },
    );
    const table = await screen.findByTestId("compare-table");
    expect(table.dataset.layout).toBe("metrics");
    const iops = within(table).getByRole("row", { name: /Read IOPS/ });
    expect(within(iops).getByTestId("unit-cell").textContent).toBe("IOPS");
    expect(iops.textContent).toContain("200");
    expect(iops.textContent).toContain("50,000");
    const change = within(iops).getByTestId("ratio-cell");
    expect(change.textContent).toBe("250× faster");
    expect(change.className).toContain("better");
    expect(change.title).toContain("250×");
    const p99 = within(table).getByRole("row", { name: /p99/ });
    // values shown in ms beside a unit cell that says ms (not "ns")
    expect(within(p99).getByTestId("unit-cell").textContent).toBe("ms");
    expect(p99.textContent).toContain("8");
    expect(p99.textContent).toContain("0.02");
    expect(p99.textContent).not.toContain("0.0025×");
    expect(within(p99).getByTestId("ratio-cell").textContent).toBe("400× lower latency");
    expect(within(p99).getByTestId("ratio-cell").className).toContain("better");
    expect(within(table).getAllByTestId("validity-mark").length).toBeGreaterThan(0);
    expect(table.textContent).toContain("hdd (baseline)");
    // Duplicates in the URL are dropped; order is kept.
    expect(new URL(`http://x${calls[0]?.path}`).pathname).toBe("/api/v1/compare");

    fireEvent.change(screen.getByTestId("baseline-select"), { target: { value: "r2" } });
    await waitFor(() =>
      expect(screen.getByTestId("compare-table").textContent).toContain("ram (baseline)"),
    );
    const row = within(screen.getByTestId("compare-table")).getByRole("row", { name: /Read IOPS/ });
    expect(within(row).getByTestId("ratio-cell").textContent).toBe("250× slower");
    expect(within(row).getByTestId("ratio-cell").className).toContain("worse");
    expect(screen.getByTestId("where").textContent).toBe("/compare?runs=r1%2Cr2&baseline=r2");
  });

  it("puts runs in rows from five runs on, or as the user switches; the first column stays", async () => {
    setToken("t");
    const runs = ["a", "b", "c", "d", "e", "f"].map((x) => run(`r${x}`, `disk ${x}`));
    stubApi({
      "GET /api/v1/compare": () => ({
        body: comparison(runs, [
          {
            name: "j",
            metrics: [
              metric("read_iops", "Read IOPS", "IO/s", [1, 2, 3, 4, 5, 6]),
              metric("read_bw_bytes", "Read throughput", "B/s", [1e6, 2e6, 3e6, 4e6, 5e6, 6e6]),
            ],
          },
        ]),
      }),
    });
    renderAt(
      <>
        <Compare />
        <Where />
      </>,
      { path: `/compare?runs=${runs.map((r) => r.id).join(",")}` },
    );
    const table = await screen.findByTestId("compare-table");
    expect(table.dataset.layout).toBe("runs");
    expect(table.className).toContain("sticky-first");
    expect(within(table).getAllByRole("row")).toHaveLength(7);
    expect(
      within(table).getByRole("columnheader", { name: /Read throughput/ }).textContent,
    ).toContain("MB/s");
    // sortable (issue 25, TanStack Table as the other tables): a metric's header sorts the runs
    // by it, highest first, then lowest first; the run header by name
    const names = () =>
      [...table.querySelectorAll("tbody tr th")].map((th) => th.textContent?.slice(0, 6));
    expect(names()[0]).toBe("disk a");
    fireEvent.click(within(table).getByTestId("sort-read_iops"));
    expect(names()).toEqual(["disk f", "disk e", "disk d", "disk c", "disk b", "disk a"]);
    expect(
      within(table)
        .getByRole("columnheader", { name: /Read IOPS/ })
        .getAttribute("aria-sort"),
    ).toBe("descending");
    fireEvent.click(within(table).getByTestId("sort-read_iops"));
    expect(names()[0]).toBe("disk a");
    fireEvent.click(within(table).getByTestId("sort-run"));
    fireEvent.click(within(table).getByTestId("sort-run"));
    expect(names()[0]).toBe("disk f"); // by name, descending on the second click
    fireEvent.change(screen.getByTestId("table-layout"), { target: { value: "metrics" } });
    await waitFor(() => expect(screen.getByTestId("compare-table").dataset.layout).toBe("metrics"));
    expect(screen.getByTestId("where").textContent).toContain("table=metrics");
    // one shared run key for all charts, no legend inside any chart
    expect(screen.getAllByTestId("series-key")[0]?.textContent).toContain("disk f");
  });

  it("lists the differences of unlike runs and compares them anyway on request", async () => {
    setToken("t");
    const seen: string[] = [];
    stubApi({
      "GET /api/v1/compare": (req) => {
        const force = new URL(req.url).searchParams.get("force") === "true";
        seen.push(String(force));
        const differences = [{ field: "jobs.0.bs_bytes", values: { r1: 4096, r2: 1048576 } }];
        return {
          body: comparison(
            [HDD, RAM],
            force
              ? [{ name: "j", metrics: [metric("read_iops", "Read IOPS", "IO/s", [1, 2])] }]
              : [],
            {
              comparability: {
                verdict: force ? "forced" : "not_comparable",
                fingerprint: "workload",
                fingerprints: { r1: "a", r2: "b" },
                differences,
              },
            },
          ),
        };
      },
      "GET /api/v1/auth/me": () => ({
        body: {
          id: "u",
          email: "m@x",
          display_name: "m",
          teams: [{ id: "t", name: "t", role: "member" }],
        },
      }),
    });
    renderAt(<Compare />, { path: "/compare?runs=r1,r2" });
    const panel = await screen.findByTestId("comparability");
    expect(panel.dataset.verdict).toBe("not_comparable");
    expect(within(panel).getByTestId("differences").textContent).toContain("1048576");
    expect(screen.queryByTestId("compare-table")).toBeNull();
    // the Share dialog warns before a link to a page of only the runs table is made
    fireEvent.click(await screen.findByTestId("share-button"));
    expect(screen.getByTestId("share-warning").textContent).toContain(
      "the shared page will show only the runs table",
    );
    fireEvent.click(within(screen.getByTestId("share-dialog")).getByText("Cancel"));
    fireEvent.click(screen.getByTestId("compare-anyway"));
    await screen.findByTestId("compare-table");
    expect(screen.getByTestId("comparability").dataset.verdict).toBe("forced");
    expect(seen).toEqual(["false", "true"]);
    fireEvent.click(screen.getByTestId("share-button"));
    expect(screen.getByTestId("share-dialog")).toBeTruthy();
    expect(screen.queryByTestId("share-warning")).toBeNull();
  });

  it("shows n, CV and the 95 % CI of grouped repeats, within-noise marks and suggestions", async () => {
    setToken("t");
    stubApi({
      "GET /api/v1/compare": () => ({
        body: comparison(
          [HDD, RAM, run("r3", "hdd again")],
          [
            {
              name: "rand4k",
              metrics: [
                withChanges(
                  metric("read_iops", "Read IOPS", "IO/s", [210, 205], {
                    stats: [
                      {
                        n: 2,
                        mean: 210,
                        stdev: 14.1,
                        cv: 0.0673,
                        ci95_low: 83,
                        ci95_high: 337,
                        ci_method: "log",
                        values: [200, 220],
                      },
                      {
                        n: 1,
                        mean: 205,
                        stdev: null,
                        cv: null,
                        ci95_low: null,
                        ci95_high: null,
                        ci_method: null,
                        values: [205],
                      },
                    ],
                    within_noise: [true, true],
                  }),
                  [null, ch(205 / 210, "worse", "2.4% slower")],
                ),
              ],
            },
          ],
          {
            group_by: "device",
            columns: [
              {
                key: "d1",
                label: "vda on lab",
                run_ids: ["r1", "r3"],
                device_name: "vda",
                environment_name: null,
                is_baseline: true,
              },
              {
                key: "d2",
                label: "sdb on lab",
                run_ids: ["r2"],
                device_name: "sdb",
                environment_name: null,
                is_baseline: false,
              },
            ],
            suggestions: [
              "rand4k: Read IOPS of 'vda on lab' varies by 7 % (CV); about 9 repeats give a ±5 % 95 % confidence interval",
            ],
          },
        ),
      }),
    });
    renderAt(<Compare />, { path: "/compare?runs=r1,r2,r3&group_by=device" });
    const table = await screen.findByTestId("compare-table");
    const lines = within(table)
      .getAllByTestId("stats-line")
      .map((e) => e.textContent);
    expect(lines[0]).toBe("n=2 · CV 6.73 % · 95 % CI 83 IOPS – 337 IOPS");
    expect(lines[1]).toBe("n=1");
    expect(within(table).getByTestId("ratio-cell").textContent).toContain("within noise");
    expect(screen.getByTestId("suggestions").textContent).toContain("about 9 repeats");
    expect((screen.getByTestId("group-by") as HTMLSelectElement).value).toBe("device");
  });

  it("shows the paper's energy table with each column's meter tier", async () => {
    setToken("t");
    stubApi({
      "GET /api/v1/compare": () => ({
        body: comparison(
          [
            { ...HDD, energy: OK_ENERGY },
            {
              ...RAM,
              energy: {
                ...OK_ENERGY,
                tier: "estimate",
                tier_label: "estimate (no meter)",
                estimated: true,
              },
            },
          ],
          [{ name: "j", metrics: [metric("read_iops", "Read IOPS", "IO/s", [1, 2])] }],
          {
            energy: [
              metric("idle_w", "Non-load power", "W", [200, 20]),
              metric("load_w_mean", "Power under load", "W", [264.18, 30]),
              metric("runtime_s", "Load time", "s", [15, 15]),
              metric("total_j", "Energy (run time x power)", "J", [3962.7, 450]),
            ],
          },
        ),
      }),
    });
    renderAt(<Compare />, { path: "/compare?runs=r1,r2" });
    const table = await screen.findByTestId("energy-paper-table");
    const rows = within(table).getAllByRole("row");
    expect(rows[1]?.textContent).toContain("264 W");
    expect(rows[1]?.textContent).toContain("3.96 kJ");
    expect(rows[1]?.textContent).toContain("BMC");
    expect(rows[2]?.textContent).toContain("ESTIMATE");
    expect(rows[2]?.textContent).toContain("0.114×");
  });

  it("offers the remaining runs when a saved link names a deleted run", async () => {
    setToken("t");
    stubApi({
      "GET /api/v1/compare": () => ({
        status: 422,
        body: {
          error: "validation_error",
          message: "runs: not found in your teams: r1",
          detail: [{ field: "runs", message: "not found in your teams: r1" }],
        },
      }),
    });
    renderAt(<Compare />, { path: "/compare?runs=r1,r2,r3" });
    const gone = await screen.findByTestId("compare-gone");
    expect(gone.textContent).toContain("One of these runs no longer exists");
    const link = within(gone).getByRole("link", { name: "Open the other 2 runs" });
    expect(link.getAttribute("href")).toBe("/compare?runs=r2,r3");
    // no dead controls above the error
    expect((screen.getByTestId("copy-link") as HTMLButtonElement).disabled).toBe(true);
    expect((screen.getByTestId("download-csv") as HTMLButtonElement).disabled).toBe(true);
    expect(screen.queryByTestId("share-button")).toBeNull();
  });

  it("asks for two runs when the URL names fewer", () => {
    stubApi({});
    renderAt(<Compare />, { path: "/compare?runs=r1" });
    expect(screen.getByText(/Select two or more runs/)).toBeTruthy();
  });
});

describe("charts drawn again only for another comparison", () => {
  it("the dashboard's polls of a running run leave its comparison's charts as drawn", async () => {
    clearToken(); // signed out: the lists are asked without a team (lib/role useListTeam)
    let polls = 0;
    const running = { ...run("r3", "busy", "running"), workload: { ...HDD.workload, passes: 2 } };
    const runsStub = stubApi({
      "GET /api/v1/agents": () => ({ body: { items: [], total: 0 } }),
      "GET /api/v1/runs": (req) => {
        const status = new URL(req.url).searchParams.getAll("status");
        polls += 1;
        // the running run moves on at each poll: the lists' data is new every time
        const busy = {
          ...running,
          progress: running.progress && { ...running.progress, run_percent: polls },
        };
        const items = status.includes("succeeded") ? [RAM, HDD] : [busy, RAM, HDD];
        return { body: { items, total: items.length, limit: 50, offset: 0 } };
      },
      "GET /api/v1/compare": fakeCompare,
    });
    renderAt(<Dashboard />, { path: "/" });
    await screen.findByTestId("dashboard-compare");
    await screen.findByTestId("run-progress");
    const drawn = barChartsDrawn();
    expect(drawn).toBeGreaterThan(0);
    const progress = () => screen.getByTestId("run-progress").getAttribute("aria-valuenow");
    const before = progress();
    const asked = runsStub.length;
    act(() => {
      focusManager.setFocused(false);
      focusManager.setFocused(true); // every list asked again, as at each poll
    });
    await waitFor(() => expect(runsStub.length).toBeGreaterThan(asked + 3));
    // the page drew the lists' new data (the running run's progress moved)
    await waitFor(() => expect(progress()).not.toBe(before));
    expect(barChartsDrawn()).toBe(drawn);
    focusManager.setFocused(undefined);
  });
});

describe("Runs page", () => {
  it("selects runs and opens the comparison with their ids in the URL", async () => {
    setToken("t");
    stubApi({
      "GET /api/v1/runs": () => ({
        body: {
          items: [
            run("r1", "a"),
            { ...run("r2", "b"), energy: OK_ENERGY },
            run("r3", "c", "running"),
          ],
          total: 3,
        },
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
    // Energy with its meter tier where measured; a dash where no meter was configured.
    expect(within(rows[1] as HTMLElement).getByTestId("run-energy").textContent).toBe(
      "3.96 kJ BMC",
    );
    expect(within(rows[0] as HTMLElement).getByTestId("run-energy").textContent).toBe("no meter");
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
