import { render, screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { JobSummary, RunRead } from "../client/types";
import { RunSummary } from "../components/Run/RunSummary";
import { WorkloadCell } from "../components/Run/WorkloadCell";
import { setToken } from "../lib/auth";
import { keys } from "../queries/keys";
import { IO_URING_JOB, NO_ENERGY, OK_ENERGY, POWER_SERIES, PSYNC_JOB } from "../test/fixtures";
import { renderAt, stubApi, testQueryClient } from "../test/render";
import { RunDetail } from "./RunDetail";

// the real component, watched: how many times the page's summary was drawn tells whether the
// page's still parts were drawn again
vi.mock("../components/Run/RunSummary", async (original) => {
  const mod = await original<typeof import("../components/Run/RunSummary")>();
  return { ...mod, RunSummary: vi.fn(mod.RunSummary) };
});
const summaryDrawn = () => vi.mocked(RunSummary).mock.calls.length;

const realFetch = globalThis.fetch;
afterEach(() => {
  globalThis.fetch = realFetch;
});

const job: JobSummary = PSYNC_JOB;

function runAs(status: RunRead["status"]): RunRead {
  return {
    id: "r1",
    team_id: "t",
    name: "watch me",
    status,
    source: "agent",
    tags: [],
    agent_id: "a",
    agent_name: "local",
    target_path: "/tmp/t",
    destructive: false,
    device_id: null,
    device_name: null,
    environment_id: null,
    cancel_requested: false,
    workload: {
      kind: "block",
      jobs: [
        {
          name: "rand4k",
          rw: "randread",
          bs_bytes: 4096,
          size_bytes: 1 << 24,
          offset_bytes: 0,
          runtime_s: 2,
          time_based: true,
          ramp_time_s: 0,
          rwmixread: 50,
          numjobs: 1,
          iodepth: 1,
          ioengine: "psync",
          direct: false,
          invalidate: true,
          readahead: "default",
          end_fsync: false,
        } as NonNullable<RunRead["workload"]["jobs"]>[number],
      ],
      passes: 1,
      discard_passes: 0,
    },
    workload_id: null,
    preset: null,
    file_workload: null,
    created_at: "2026-11-21T10:00:00Z",
    created_by: null,
    assigned_at: "2026-11-21T10:00:00Z",
    started_at: "2026-11-21T10:00:00Z",
    finished_at: status === "succeeded" ? "2026-11-21T10:00:02Z" : null,
    attempt: 1,
    error: null,
    progress:
      status === "running"
        ? {
            job_index: 0,
            job_name: "rand4k",
            phase: "job" as const,
            samples: [],
            percent: 50,
            run_percent: 50,
            run_eta_s: 1,
            run_eta_at_least: false,
            elapsed_ns: 1e9,
            read_iops: 1000,
            read_bw_bytes: 4_096_000,
            write_iops: 0,
            write_bw_bytes: 0,
            updated_at: "2026-11-21T10:00:01Z",
          }
        : null,
    jobs: status === "succeeded" ? [job] : [],
    meter: null,
    idle_s: null,
    passes: [],
    energy: NO_ENERGY,
  };
}

describe("RunDetail", () => {
  it("follows a running run's progress and shows figures and the chart once it succeeds", async () => {
    setToken("t");
    let polls = 0;
    const calls = stubApi({
      "GET /api/v1/runs/r1": () => {
        polls += 1;
        return { body: runAs(polls === 1 ? "running" : "succeeded") };
      },
      // the page's poll while the run is active: the run ended, so the page reads it again
      "GET /api/v1/runs/r1/progress": () => ({
        body: { status: "succeeded", cancel_requested: false, progress: null, samples_kept: 300 },
      }),
      "GET /api/v1/runs/r1/series": () => ({
        body: {
          run_id: "r1",
          jobs:
            polls <= 1
              ? []
              : [
                  {
                    job_index: 0,
                    name: "rand4k",
                    points: [1, 2].map((t) => ({
                      t_s: t,
                      read_iops: 1000,
                      read_bw_bytes: 4_096_000,
                      write_iops: 0,
                      write_bw_bytes: 0,
                      read_clat_p99_ns: 5000,
                      write_clat_p99_ns: null,
                    })),
                  },
                ],
        },
      }),
      "GET /api/v1/agents": () => ({ body: { items: [], total: 0 } }),
    });
    renderAt(<RunDetail />, { path: "/r/r1", route: "/r/:id" });
    expect((await screen.findByRole("progressbar")).getAttribute("aria-valuenow")).toBe("50");
    expect(screen.getByText("Waiting for the run to finish…")).toBeTruthy();

    const figures = await screen.findByTestId("key-figures", {}, { timeout: 5000 });
    expect(figures.textContent).toContain("1k IOPS");
    expect(figures.textContent).toContain("4.1 MB/s");
    expect(screen.queryByTestId("io-uring-workers-cpu")).toBeNull(); // psync: no kernel workers
    expect(screen.getAllByTestId("run-status")[0]?.textContent).toBe("succeeded");
    // The series is fetched again after the run finished, so the chart is drawn.
    await waitFor(() => expect(screen.queryByText("No per-second samples.")).toBeNull());
    expect(
      screen.getByTestId("run-chart").querySelector(".recharts-responsive-container"),
    ).not.toBeNull();
    expect(screen.queryByRole("progressbar")).toBeNull();
    // the whole run read twice: when the page opened and when its poll said it had ended
    expect(calls.filter((c) => c.path === "/api/v1/runs/r1")).toHaveLength(2);
    expect(calls.filter((c) => c.path === "/api/v1/runs/r1/progress")).toHaveLength(1);
  }, 10_000);

  it("says computing while the energy is pending, and shows it once the server has it", async () => {
    setToken("t");
    let polls = 0;
    stubApi({
      "GET /api/v1/runs/r1": () => {
        polls += 1;
        return {
          body: {
            ...runAs("succeeded"),
            energy:
              polls === 1
                ? {
                    ...NO_ENERGY,
                    status: "pending",
                    reason: "being computed",
                    tier: "bmc",
                    tier_label: "BMC",
                  }
                : OK_ENERGY,
          },
        };
      },
      "GET /api/v1/runs/r1/series": () => ({ body: { run_id: "r1", jobs: [] } }),
      "GET /api/v1/runs/r1/power": () => ({ body: POWER_SERIES }),
      "GET /api/v1/agents": () => ({ body: { items: [], total: 0 } }),
    });
    renderAt(<RunDetail />, { path: "/r/r1", route: "/r/:id" });
    expect((await screen.findByTestId("energy-pending")).textContent).toContain(
      "energy: computing…",
    );
    const total = await screen.findByTestId("energy-total", {}, { timeout: 5000 });
    expect(total.textContent).toContain("3.963 ± 0.012 kJ");
    expect(screen.getByTestId("energy-panel").dataset.status).toBe("ok");
  }, 10_000);

  it("shows io_size inside the region, readahead and end_fsync in the workload table", async () => {
    setToken("t");
    const run = runAs("queued");
    const spec = run.workload.jobs?.[0];
    const jobs = [
      {
        ...spec,
        name: "kh",
        size_bytes: 1 << 30,
        io_size_bytes: 64 << 20,
        readahead: "on" as const,
        end_fsync: true,
      },
      { ...spec, name: "plain", direct: true },
    ];
    stubApi({
      "GET /api/v1/runs/r1": () => ({ body: { ...run, workload: { ...run.workload, jobs } } }),
      "GET /api/v1/agents": () => ({ body: { items: [], total: 0 } }),
    });
    renderAt(<RunDetail />, { path: "/r/r1", route: "/r/:id" });
    const table = await screen.findByTestId("workload-table", {}, { timeout: 5000 });
    const rows = Array.from(table.querySelectorAll("tbody tr"));
    expect(rows).toHaveLength(2);
    const [kh, plain] = rows.map((r) => r.textContent ?? "");
    expect(kh).toContain("64 MiB in 1 GiB");
    expect(kh).toContain("no (page cache, readahead on), fsync at end");
    expect(plain).toContain("16 MiB");
    expect(plain).not.toContain(" in ");
    expect(plain).toContain("yes (O_DIRECT)");
    expect(plain).not.toContain("fsync");
  }, 10_000);

  it("names the host of the agent that ran it", async () => {
    setToken("t");
    const other = { id: "b", hostname: "bench-9" };
    stubApi({
      "GET /api/v1/runs/r1": () => ({ body: runAs("queued") }),
      "GET /api/v1/agents": () => ({
        body: { items: [other, { id: "a", hostname: "bench-7" }], total: 2 },
      }),
    });
    renderAt(<RunDetail />, { path: "/r/r1", route: "/r/:id" });
    expect(await screen.findByText(/· host bench-7/, {}, { timeout: 5000 })).toBeTruthy();
    expect(screen.queryByText(/bench-9/)).toBeNull();
  }, 10_000);

  it("shows the io_uring kernel workers' CPU next to usr/sys", async () => {
    setToken("t");
    stubApi({
      "GET /api/v1/runs/r1": () => ({ body: { ...runAs("succeeded"), jobs: [IO_URING_JOB] } }),
      "GET /api/v1/runs/r1/series": () => ({ body: { run_id: "r1", jobs: [] } }),
      "GET /api/v1/agents": () => ({ body: { items: [], total: 0 } }),
    });
    renderAt(<RunDetail />, { path: "/r/r1", route: "/r/:id" });
    const cell = await screen.findByTestId("io-uring-workers-cpu", {}, { timeout: 5000 });
    expect(cell.textContent).toBe("io_uring workers 87.5 %");
    expect(screen.getByTestId("key-figures").textContent).toContain("usr 18.2 %, sys 73.7 %");
    expect(screen.getByTestId("io-uring-no-nowait").textContent).toContain("no nowait support");
  }, 10_000);

  it("names the run's meter and marks a confirmed destructive write", async () => {
    setToken("t");
    let run: RunRead = { ...runAs("queued"), meter: "bmc", destructive: true };
    stubApi({
      "GET /api/v1/runs/r1": () => ({ body: run }),
      "GET /api/v1/runs/r1/series": () => ({ body: { run_id: "r1", jobs: [] } }),
      "GET /api/v1/agents": () => ({ body: { items: [], total: 0 } }),
    });
    const view = renderAt(<RunDetail />, { path: "/r/r1", route: "/r/:id" });
    expect((await screen.findByTestId("run-meter")).textContent).toBe("bmc");
    expect(screen.getByTestId("run-destructive").textContent).toContain("destructive write");
    view.unmount();

    run = { ...runAs("queued"), meter: "", destructive: false };
    renderAt(<RunDetail />, { path: "/r/r1", route: "/r/:id" });
    expect((await screen.findByTestId("run-meter")).textContent).toBe("none");
    expect(screen.queryByTestId("run-destructive")).toBeNull();
  });
});

const SYSTEM = {
  hostname: "bench-1",
  kernel: "6.1.0-42-amd64",
  distro: "Debian 12",
  virtualization: "kvm",
  cpu_model: "EPYC",
  mem_bytes: 8 * 1024 ** 3,
  device_name: "nvme0n1",
  device_model: "Samsung 980 PRO",
  device_kind: "nvme",
  interface: "nvme",
  media: "ssd",
  fstype: "ext4",
  mountpoint: "/srv",
  mount_options: "rw,noatime",
  cache: "buffered" as const,
  validity: [
    { flag: "short_run", message: "under 10 s: rand4k; caches and bursts dominate short runs" },
    { flag: "virtualized", message: "the host is virtualised (kvm)" },
    {
      flag: "working_set_below_ram",
      message: "a buffered job's working set fits in the host's RAM",
    },
  ],
};

describe("RunDetail header", () => {
  it("leads with a summary and the system, each flag beside what it qualifies", async () => {
    setToken("t");
    let resultCalls = 0;
    stubApi({
      "GET /api/v1/runs/r1": () => ({ body: runAs("succeeded") }),
      "GET /api/v1/runs/r1/system": () => ({ body: SYSTEM }),
      "GET /api/v1/runs/r1/series": () => ({ body: { run_id: "r1", jobs: [] } }),
      "GET /api/v1/runs/r1/result": () => {
        resultCalls += 1;
        return { body: { run_id: "r1", engine_result: { jobs: [] } } };
      },
      "GET /api/v1/compare/latency": () => ({
        body: {
          job: "rand4k",
          columns: [{ key: "r1", label: "r1", run_ids: ["r1"], is_baseline: true }],
          curves: [
            {
              column: "r1",
              direction: "read",
              samples: 1000,
              points: [
                { percentile: 50, latency_ns: 80_000 },
                { percentile: 99, latency_ns: 200_000 },
                { percentile: 99.9, latency_ns: 900_000 },
              ],
            },
          ],
        },
      }),
      "GET /api/v1/agents": () => ({ body: { items: [], total: 0 } }),
      // a member of the run's team may clone it (a viewer gets no button)
      "GET /api/v1/auth/me": () => ({
        body: {
          id: "u",
          email: "m@x",
          display_name: "m",
          teams: [{ id: "t", name: "t", role: "member" }],
        },
      }),
    });
    renderAt(<RunDetail />, { path: "/r/r1", route: "/r/:id" });
    const line = await screen.findByTestId("run-summary-line", {}, { timeout: 5000 });
    await waitFor(() => expect(line.textContent).toContain("Samsung 980 PRO (nvme, ext4)"));
    expect(line.textContent).toContain("buffered I/O, host bench-1");
    expect(line.textContent).toContain("rand4k 1k IOPS, 4.1 MB/s");
    const flagIn = (id: string) =>
      Array.from(screen.getByTestId(id).querySelectorAll("[data-flag]")).map(
        (e) => (e as HTMLElement).dataset.flag,
      );
    expect(flagIn("run-summary-line")).toEqual(["short_run"]);
    expect(flagIn("system-host")).toEqual(["virtualized"]);
    expect(flagIn("system-cache")).toEqual(["working_set_below_ram"]);
    expect(screen.getByTestId("system-kernel").textContent).toBe("6.1.0-42-amd64");
    expect(screen.getByTestId("system-fs").textContent).toBe("ext4 on /srv (rw,noatime)");
    expect(screen.getByTestId("job-validity").dataset.flag).toBe("short_run");
    expect((await screen.findByTestId("clone-run")).getAttribute("href")).toBe("/runs/new?from=r1");
    // Share is as small as its neighbours in the header
    expect(screen.getByTestId("share-button").className).toBe(
      screen.getByTestId("clone-run").className,
    );
    expect(await screen.findByTestId("latency-percentiles", {}, { timeout: 5000 })).toBeTruthy();

    // one click downloads: the result is fetched and handed to the browser as a file
    const clicked: string[] = [];
    const realClick = HTMLAnchorElement.prototype.click;
    HTMLAnchorElement.prototype.click = function (this: HTMLAnchorElement) {
      clicked.push(this.download);
    };
    URL.createObjectURL = () => "blob:x";
    URL.revokeObjectURL = () => undefined;
    try {
      screen.getByTestId("raw-json").click();
      await waitFor(() => expect(clicked).toEqual(["iowatt-run-r1.json"]));
      expect(resultCalls).toBe(1);
    } finally {
      HTMLAnchorElement.prototype.click = realClick;
    }
  }, 10_000);

  it("shows a running run's phase, ETA and live chart from its progress samples", async () => {
    setToken("t");
    const running = runAs("running");
    const samples = [1, 2, 3].map((t) => ({
      t_s: t,
      job_index: 0,
      read_iops: 1000,
      read_bw_bytes: 4_096_000,
      write_iops: 0,
      write_bw_bytes: 0,
    }));
    stubApi({
      "GET /api/v1/runs/r1": () => ({
        // the server's share: idle 4 s + half of a 2 s job = 5 of 4 + 2 + 4 = 10 s
        body: {
          ...running,
          idle_s: 4,
          progress: { ...running.progress, samples, run_percent: 50, run_eta_s: 5 },
        },
      }),
      "GET /api/v1/runs/r1/system": () => ({ body: SYSTEM }),
      "GET /api/v1/runs/r1/series": () => ({ body: { run_id: "r1", jobs: [] } }),
      "GET /api/v1/agents": () => ({ body: { items: [], total: 0 } }),
    });
    renderAt(<RunDetail />, { path: "/r/r1", route: "/r/:id" });
    expect((await screen.findByTestId("run-phase", {}, { timeout: 5000 })).textContent).toBe(
      "job 1 of 1: rand4k",
    );
    expect(screen.getByRole("progressbar").getAttribute("aria-valuenow")).toBe("50");
    expect(screen.getByTestId("run-eta").textContent).toContain("about 5 s left");
    expect(
      screen.getByTestId("run-chart-live").querySelector(".recharts-responsive-container"),
    ).not.toBeNull();
  }, 10_000);

  it("a poll that moved only the progress draws the live part again, nothing else", async () => {
    setToken("t");
    const running = runAs("running");
    const sample = (k: number) => ({
      t_s: k + 1,
      job_index: 0,
      read_iops: 1000 + k,
      read_bw_bytes: 4_096_000,
      write_iops: 0,
      write_bw_bytes: 0,
    });
    let polls = 0;
    const calls = stubApi({
      "GET /api/v1/runs/r1": () => {
        const samples = [0, 1, 2].map(sample);
        return {
          body: { ...running, progress: running.progress && { ...running.progress, samples } },
        };
      },
      // each poll as the server answers it: a new report, the bar further on, the one sample after
      // the page's last
      "GET /api/v1/runs/r1/progress": (req) => {
        polls += 1;
        const since = Number(new URL(req.url).searchParams.get("since_t_s"));
        const progress = running.progress && {
          ...running.progress,
          run_percent: 50 + polls,
          samples: [sample(since)],
        };
        return {
          body: { status: "running", cancel_requested: false, progress, samples_kept: 300 },
        };
      },
      "GET /api/v1/runs/r1/system": () => ({ body: SYSTEM }),
      "GET /api/v1/runs/r1/series": () => ({ body: { run_id: "r1", jobs: [] } }),
      "GET /api/v1/agents": () => ({ body: { items: [], total: 0 } }),
    });
    const client = testQueryClient();
    renderAt(<RunDetail />, { path: "/r/r1", route: "/r/:id", client });
    const bar = await screen.findByRole("progressbar", {}, { timeout: 5000 });
    await screen.findByTestId("run-summary");
    await waitFor(() =>
      expect(screen.getByTestId("run-chart-live").textContent).toContain("last 3 reports"),
    );
    const drawn = summaryDrawn();
    const before = bar.getAttribute("aria-valuenow");
    for (let k = 0; k < 3; k++) {
      const asked = polls;
      // the progress asked again, as at each poll
      await client.refetchQueries({ queryKey: keys.runs.live("r1") });
      expect(polls).toBeGreaterThan(asked);
    }
    // the live part drew each new report: the bar and the chart moved on
    await waitFor(() => expect(bar.getAttribute("aria-valuenow")).not.toBe(before));
    await waitFor(() =>
      expect(screen.getByTestId("run-chart-live").textContent).toContain("last 6 reports"),
    );
    // the rest of the page is as drawn; the whole run was read once, and an active run's series
    // (stored with its result, which ends the run) is not asked for
    expect(summaryDrawn()).toBe(drawn);
    expect(calls.filter((c) => c.path === "/api/v1/runs/r1")).toHaveLength(1);
    expect(calls.filter((c) => c.path === "/api/v1/runs/r1/series")).toHaveLength(0);
  }, 10_000);

  it("offers no Clone and re-run for a run uploaded from CI (its host runs nothing)", async () => {
    setToken("t");
    stubApi({
      "GET /api/v1/runs/r1": () => ({ body: { ...runAs("succeeded"), source: "import" } }),
      "GET /api/v1/runs/r1/series": () => ({ body: { run_id: "r1", jobs: [] } }),
      "GET /api/v1/agents": () => ({ body: { items: [], total: 0 } }),
      "GET /api/v1/auth/me": () => ({
        body: {
          id: "u",
          email: "m@x",
          display_name: "m",
          teams: [{ id: "t", name: "t", role: "member" }],
        },
      }),
    });
    renderAt(<RunDetail />, { path: "/r/r1", route: "/r/:id" });
    // the member's Share button shows the role is known; Clone stays away for this run
    expect(await screen.findByTestId("share-button", {}, { timeout: 5000 })).toBeTruthy();
    expect(screen.queryByTestId("clone-run")).toBeNull();
  });

  it("a 110-job preset run: its name, jobs paged, the workload folded, psync's depth noted", async () => {
    setToken("t");
    const base = runAs("succeeded");
    const spec = base.workload.jobs?.[0];
    const specs = Array.from({ length: 110 }, (_, k) => ({ ...spec, name: `j${k}`, iodepth: 8 }));
    const jobs = specs.map((s, k) => ({ ...job, job_index: k, name: s.name ?? "" }));
    stubApi({
      "GET /api/v1/runs/r1": () => ({
        body: { ...base, preset: "kernel-help", jobs, workload: { ...base.workload, jobs: specs } },
      }),
      "GET /api/v1/runs/r1/series": () => ({ body: { run_id: "r1", jobs: [] } }),
      "GET /api/v1/agents": () => ({ body: { items: [], total: 0 } }),
    });
    renderAt(<RunDetail />, { path: "/r/r1", route: "/r/:id" });
    await screen.findByTestId("jobs-table", {}, { timeout: 5000 });
    expect(screen.getAllByTestId("job-row")).toHaveLength(25);
    expect(screen.queryAllByTestId("job-result")).toHaveLength(0);
    expect(screen.getByTestId("workload-details").hasAttribute("open")).toBe(false);
    expect(screen.getByTestId("run-depth-capped").textContent).toContain(
      "110 jobs: iodepth 8 with psync, a synchronous engine: the queue depth is capped at 1",
    );
    expect(screen.getByTestId("run-summary-line").textContent).toContain("kernel-help: 110 jobs");
  });
});

describe("an imported run's unstated settings (issue 26)", () => {
  // as the API answers a CrystalDiskMark job: no ioengine or direct in the file, so null and listed
  const imported = {
    ...(runAs("succeeded").workload.jobs ?? [])[0],
    name: "SEQ1M_Q8T1",
    rw: "read",
    bs_bytes: 1 << 20,
    iodepth: 8,
    ioengine: null,
    direct: null,
    unstated: ["ioengine", "direct"],
  } as unknown as NonNullable<RunRead["workload"]["jobs"]>[number];

  it("shows them as — with the tooltip on the run page, never a default", async () => {
    setToken("t");
    const run = runAs("succeeded");
    stubApi({
      "GET /api/v1/runs/r1": () => ({
        body: { ...run, source: "import", workload: { ...run.workload, jobs: [imported] } },
      }),
      "GET /api/v1/runs/r1/system": () => ({ body: { ...SYSTEM, cache: "unstated" } }),
      "GET /api/v1/agents": () => ({ body: { items: [], total: 0 } }),
    });
    renderAt(<RunDetail />, { path: "/r/r1", route: "/r/:id" });
    const table = await screen.findByTestId("workload-table", {}, { timeout: 5000 });
    const row = table.querySelector("tbody tr");
    const marks = Array.from(row?.querySelectorAll("[data-testid=not-stated]") ?? []);
    expect(marks).toHaveLength(2);
    for (const m of marks) {
      expect(m.textContent).toBe("—");
      expect(m.getAttribute("title")).toBe("not in the imported file");
    }
    const text = row?.textContent ?? "";
    expect(text).toContain("1 MiB");
    expect(text).not.toContain("psync");
    expect(text).not.toContain("page cache");
    expect(screen.queryByTestId("workload-depth-capped")).toBeNull(); // no engine named: no cap claimed
    // the header's cache mode: the file did not say, so neither does the page
    const cache = await screen.findByTestId("system-cache", {}, { timeout: 5000 });
    await waitFor(() => expect(cache.querySelector("[data-testid=not-stated]")).not.toBeNull());
    expect(cache.textContent).not.toContain("page cache");
  }, 10_000);

  it("shows an unstated queue depth as — in the jobs table too", async () => {
    setToken("t");
    const run = runAs("succeeded");
    const noDepth = { ...imported, iodepth: null, unstated: ["iodepth", "ioengine", "direct"] };
    stubApi({
      "GET /api/v1/runs/r1": () => ({
        body: {
          ...run,
          source: "import",
          jobs: [{ ...job, name: "SEQ1M_Q8T1" }],
          workload: { ...run.workload, jobs: [noDepth] },
        },
      }),
      "GET /api/v1/runs/r1/system": () => ({ body: SYSTEM }),
      "GET /api/v1/runs/r1/series": () => ({ body: { run_id: "r1", jobs: [] } }),
      "GET /api/v1/agents": () => ({ body: { items: [], total: 0 } }),
    });
    renderAt(<RunDetail />, { path: "/r/r1", route: "/r/:id" });
    const table = await screen.findByTestId("workload-table", {}, { timeout: 5000 });
    expect(table.querySelectorAll("[data-testid=not-stated]")).toHaveLength(3);
    // the jobs table's QD column (JobsOverview), beside the workload table's three
    await waitFor(() => expect(screen.getAllByTestId("not-stated").length).toBeGreaterThan(3));
  }, 10_000);

  it("reads — in compare's workload cell, with the tooltip", () => {
    render(
      <WorkloadCell
        run={{
          preset: null,
          workload: {
            kind: "block",
            jobs: [
              {
                ...imported,
                iodepth: null,
                unstated: ["iodepth", "ioengine"],
              } as unknown as typeof imported,
            ],
            passes: 1,
            discard_passes: 0,
          },
        }}
      />,
    );
    const cell = screen.getByTestId("workload-not-stated");
    expect(cell.textContent).toBe("read 1 MiB QD—×1");
    expect(cell.getAttribute("title")).toBe("—: not in the imported file");
  });
});
