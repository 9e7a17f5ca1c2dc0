import { fireEvent, screen, waitFor, within } from "@testing-library/react";
import { Route, Routes, useLocation } from "react-router-dom";
import { afterEach, describe, expect, it } from "vitest";
import type { CampaignRead } from "../client/types";
import { setToken } from "../lib/auth";
import { limits, POLICY, policyAgent, target } from "../test/fixtures";
import { renderAt, stubApi } from "../test/render";
import { byTarget, CampaignDetail, CampaignForm, campaignPercent } from "./Campaigns";

const realFetch = globalThis.fetch;
afterEach(() => {
  globalThis.fetch = realFetch;
});

function Where() {
  const loc = useLocation();
  return <p data-testid="where">{`${loc.pathname}${loc.search}`}</p>;
}

const agent = policyAgent({
  policy: {
    targets: [
      target({ path: "/mnt/hdd", kind: "directory", writable: true, destructive: false }),
      target({ path: "/dev/shm", kind: "directory", writable: true, destructive: false }),
    ],
    meters: [],
    default_meter: null,
    limits: limits(),
    allowed_dbms: [],
  },
});

function campaign(done: boolean): CampaignRead {
  return {
    id: "c1",
    team_id: "t1",
    name: "hdd vs ram",
    created_at: "2026-11-21T10:00:00Z",
    created_by: null,
    repeats: 2,
    run_ids: ["r1", "r2", "r3", "r4"],
    counts: (done ? { succeeded: 4 } : { succeeded: 1, running: 1, queued: 2 }) as Record<
      string,
      number
    >,
    done,
    compare_url: "/compare?runs=r1,r2,r3,r4&group_by=device_environment",
    targets_left_out: [],
  };
}

describe("campaigns", () => {
  it("counts finished runs as progress", () => {
    expect(campaignPercent(campaign(false))).toBe(25);
    expect(campaignPercent({ counts: { failed: 1, succeeded: 2 }, run_ids: ["a", "b", "c"] })).toBe(
      100,
    );
  });

  it("queues workload × targets × repeats and opens the campaign", async () => {
    setToken("t");
    const calls = stubApi({
      "GET /api/v1/agents": () => ({ body: { items: [agent], total: 1 } }),
      "GET /api/v1/workloads": () => ({
        body: {
          items: [
            { id: "w1", name: "RND4K Q1T1", description: "", spec: { jobs: [] }, builtin: true },
          ],
          total: 1,
        },
      }),
      "GET /api/v1/environments": () => ({
        body: { items: [{ id: "e1", name: "lab" }], total: 1 },
      }),
      "POST /api/v1/campaigns": () => ({ status: 201, body: campaign(false) }),
    });
    renderAt(
      <Routes>
        <Route path="/" element={<CampaignForm />} />
        <Route path="/campaigns/:id" element={<Where />} />
      </Routes>,
    );
    // role queries are slow on a loaded machine: more than the default second
    await screen.findByRole("option", { name: "RND4K Q1T1" }, { timeout: 10_000 });
    await screen.findByRole("option", { name: "local (online)" });
    fireEvent.change(screen.getByRole("textbox", { name: /Name/ }), {
      target: { value: "hdd vs ram" },
    });
    // Targets are chosen from what the host allows; the first is the default.
    expect(
      (screen.getByRole("combobox", { name: "Path of target 1" }) as HTMLSelectElement).value,
    ).toBe("/mnt/hdd");
    fireEvent.click(screen.getByTestId("add-target"));
    fireEvent.change(screen.getByRole("combobox", { name: "Path of target 2" }), {
      target: { value: "/dev/shm" },
    });
    fireEvent.change(screen.getByRole("combobox", { name: "Environment of target 2" }), {
      target: { value: "e1" },
    });
    fireEvent.change(screen.getByRole("textbox", { name: /Repeats/ }), { target: { value: "2" } });
    expect(screen.getByTestId("campaign-form").textContent).toContain(
      "2 targets × 2 repeats = 4 runs",
    );
    fireEvent.click(screen.getByTestId("submit-campaign"));
    expect((await screen.findByTestId("where")).textContent).toBe("/campaigns/c1");
    expect(calls.find((c) => c.method === "POST")?.body).toEqual({
      name: "hdd vs ram",
      workload_id: "w1",
      workload: null,
      targets: [
        { agent_id: "a1", target_path: "/mnt/hdd", environment_id: null },
        { agent_id: "a1", target_path: "/dev/shm", environment_id: "e1" },
      ],
      repeats: 2,
      meter: null,
      idle_s: null,
      destructive: false,
      workload_ids: [],
    });
  });

  it("creates a schedule from the same form, and shows the server's 422 on the cron field", async () => {
    setToken("t");
    let attempt = 0;
    const calls = stubApi({
      "GET /api/v1/agents": () => ({ body: { items: [agent], total: 1 } }),
      "GET /api/v1/workloads": () => ({
        body: {
          items: [
            { id: "w1", name: "RND4K Q1T1", description: "", spec: { jobs: [] }, builtin: true },
          ],
          total: 1,
        },
      }),
      "GET /api/v1/environments": () => ({ body: { items: [], total: 0 } }),
      "POST /api/v1/schedules": () => {
        attempt += 1;
        return attempt === 1
          ? {
              status: 422,
              body: {
                code: "validation_error",
                message: "cron: not a cron expression",
                detail: [{ field: "cron", message: "not a cron expression: bad minute" }],
              },
            }
          : { status: 201, body: { id: "s1" } };
      },
    });
    let closed = false;
    renderAt(<CampaignForm onClose={() => (closed = true)} />);
    await screen.findByRole("option", { name: "RND4K Q1T1" }, { timeout: 10_000 });
    await screen.findByRole("option", { name: "local (online)" });
    fireEvent.change(screen.getByRole("textbox", { name: /Name/ }), {
      target: { value: "nightly" },
    });
    fireEvent.click(screen.getByTestId("when-schedule"));
    fireEvent.change(screen.getByRole("textbox", { name: /Cron expression/ }), {
      target: { value: "61 2 * * *" },
    });
    fireEvent.change(screen.getByRole("combobox", { name: /Time zone/ }), {
      target: { value: "Europe/Berlin" },
    });
    expect(screen.getByTestId("submit-campaign").textContent).toBe("Create schedule");
    expect(screen.getByTestId("campaign-form").textContent).toContain("= 3 runs per slot");
    fireEvent.click(screen.getByTestId("submit-campaign"));
    expect((await screen.findByTestId("field-error-cron")).textContent).toContain("bad minute");
    fireEvent.change(screen.getByRole("textbox", { name: /Cron expression/ }), {
      target: { value: "0 2 * * *" },
    });
    fireEvent.click(screen.getByTestId("submit-campaign"));
    await waitFor(() => expect(closed).toBe(true));
    const posts = calls.filter((c) => c.method === "POST");
    expect(posts.map((c) => c.path)).toEqual(["/api/v1/schedules", "/api/v1/schedules"]);
    expect(posts[1]?.body).toEqual({
      name: "nightly",
      cron: "0 2 * * *",
      every_hours: null,
      timezone: "Europe/Berlin",
      enabled: true,
      campaign: {
        name: "nightly",
        workload_id: "w1",
        workload: null,
        targets: [{ agent_id: "a1", target_path: "/mnt/hdd", environment_id: null }],
        repeats: 3,
        meter: null,
        idle_s: null,
        destructive: false,
        workload_ids: [],
      },
    });
  });

  it("schedules a campaign over every agent's targets: a target set, counted now, chosen per slot", async () => {
    setToken("t");
    const calls = stubApi({
      "GET /api/v1/auth/me": () => ({
        body: {
          id: "u",
          email: "a@x",
          display_name: "a",
          teams: [{ id: "t1", name: "t1", role: "member" }],
        },
      }),
      "GET /api/v1/agents": () => ({ body: { items: [agent], total: 1 } }),
      "GET /api/v1/workloads": () => ({
        body: {
          items: [{ id: "w1", name: "quick", description: "", spec: { jobs: [] }, builtin: true }],
          total: 1,
        },
      }),
      "GET /api/v1/environments": () => ({ body: { items: [], total: 0 } }),
      "POST /api/v1/campaigns/plan": () => ({
        body: {
          cells: [],
          runs: 6,
          targets: 2,
          repeats: 3,
          per_slot: true,
          left_out: [],
          measure_s: 60,
        },
      }),
      "POST /api/v1/schedules": () => ({ status: 201, body: { id: "s1" } }),
    });
    let closed = false;
    renderAt(<CampaignForm onClose={() => (closed = true)} />);
    await screen.findByRole("option", { name: "quick" }, { timeout: 10_000 });
    await screen.findByRole("option", { name: "local (online)" });
    fireEvent.change(screen.getByRole("textbox", { name: /Name/ }), {
      target: { value: "nightly" },
    });
    fireEvent.click(screen.getByTestId("when-schedule"));
    fireEvent.click(screen.getByTestId("pick-set"));
    expect(screen.queryByTestId("campaign-targets")).toBeNull();
    const set = await screen.findByTestId("target-set");
    fireEvent.click(within(set).getByRole("checkbox", { name: /devices/ }));
    expect((await screen.findByTestId("campaign-plan-per-slot")).textContent).toContain(
      "each slot chooses again",
    );
    fireEvent.click(screen.getByTestId("submit-campaign"));
    await waitFor(() => expect(closed).toBe(true));
    const sent = calls.find((c) => c.path === "/api/v1/schedules")?.body as {
      campaign: Record<string, unknown>;
    };
    expect(sent.campaign.targets).toEqual([]);
    expect(sent.campaign.target_set).toEqual({
      team_id: "t1",
      agent_ids: [],
      kinds: ["directory", "device"],
      environment_id: null,
    });
    expect(sent.campaign.destructive).toBe(false);
  });

  it("sweeps a matrix: the server's plan before queueing, then the sweep and the workloads sent", async () => {
    setToken("t");
    const calls = stubApi({
      "GET /api/v1/agents": () => ({ body: { items: [agent], total: 1 } }),
      "GET /api/v1/workloads": () => ({
        body: {
          items: [
            { id: "w1", name: "RND4K Q1T1", description: "", spec: { jobs: [] }, builtin: true },
            { id: "w2", name: "SEQ1M Q8T1", description: "", spec: { jobs: [] }, builtin: true },
          ],
          total: 2,
        },
      }),
      "GET /api/v1/environments": () => ({ body: { items: [], total: 0 } }),
      "POST /api/v1/campaigns/plan": () => ({
        body: {
          cells: [1, 32].flatMap((qd) =>
            ["RND4K Q1T1", "SEQ1M Q8T1"].map((w) => ({
              workload: w,
              params: { iodepth: qd },
              label: `QD ${qd}`,
              seconds: 5,
            })),
          ),
          runs: 4,
          targets: 1,
          repeats: 1,
          measure_s: 20,
        },
      }),
      "POST /api/v1/campaigns": () => ({ status: 201, body: campaign(false) }),
    });
    renderAt(
      <Routes>
        <Route path="/" element={<CampaignForm />} />
        <Route path="/campaigns/:id" element={<Where />} />
      </Routes>,
    );
    await screen.findByRole("option", { name: "RND4K Q1T1" }, { timeout: 10_000 });
    await screen.findByRole("option", { name: "local (online)" });
    fireEvent.change(screen.getByRole("textbox", { name: /Name/ }), { target: { value: "grid" } });
    fireEvent.change(screen.getByRole("textbox", { name: /Repeats/ }), { target: { value: "1" } });
    fireEvent.click(screen.getByTestId("add-workload"));
    expect((screen.getByRole("combobox", { name: "Workload 2" }) as HTMLSelectElement).value).toBe(
      "w2",
    );
    fireEvent.change(screen.getByRole("textbox", { name: /Queue depths/ }), {
      target: { value: "1, x" },
    });
    fireEvent.click(screen.getByTestId("submit-campaign"));
    expect((await screen.findByTestId("field-error-sweep_qd")).textContent).toContain('"x"');
    fireEvent.change(screen.getByRole("textbox", { name: /Queue depths/ }), {
      target: { value: "1, 32" },
    });
    const plan = await screen.findByTestId("campaign-plan", {}, { timeout: 5_000 });
    expect(plan.textContent).toContain("4 cells × 1 target × 1 repeat = 4 runs");
    expect(plan.textContent).toContain("measuring 20 s in all");
    expect(plan.textContent).toContain("SEQ1M Q8T1 · QD 32");
    fireEvent.click(screen.getByTestId("submit-campaign"));
    expect((await screen.findByTestId("where")).textContent).toBe("/campaigns/c1");
    const sent = calls.filter((c) => c.path === "/api/v1/campaigns").at(-1)?.body as Record<
      string,
      unknown
    >;
    expect(sent.workload_ids).toEqual(["w2"]);
    expect(sent.sweep).toEqual({ bs_bytes: [], iodepth: [1, 32], numjobs: [], rwmixread: [] });
    expect(calls.find((c) => c.path === "/api/v1/campaigns/plan")?.body).toMatchObject({
      workload_id: "w1",
      workload_ids: ["w2"],
    });
  });

  it("takes a scale for a TPC-H or heap/B-tree workload, as New run, and sends it", async () => {
    setToken("t");
    const tpch = {
      id: "w-tp",
      name: "tpch-smoke",
      description: "",
      builtin: true,
      spec: {
        kind: "tpch",
        jobs: [],
        tpch: { dbms: "postgresql", scale_factor: 0.01, streams: null },
        heap_btree: null,
      },
    };
    const hb = {
      id: "w-hb",
      name: "heap-btree",
      description: "",
      builtin: true,
      spec: {
        kind: "heap_btree",
        jobs: [],
        tpch: null,
        heap_btree: { records: 1_000_000, queries: 100_000, cache_fractions: [0.1, 1] },
      },
    };
    const calls = stubApi({
      "GET /api/v1/agents": () => ({ body: { items: [agent], total: 1 } }),
      "GET /api/v1/workloads": () => ({ body: { items: [tpch, hb], total: 2 } }),
      "GET /api/v1/environments": () => ({ body: { items: [], total: 0 } }),
      "POST /api/v1/campaigns": () => ({ status: 201, body: campaign(false) }),
    });
    renderAt(
      <Routes>
        <Route path="/" element={<CampaignForm />} />
        <Route path="/campaigns/:id" element={<Where />} />
      </Routes>,
    );
    await screen.findByRole("option", { name: "tpch-smoke (tpch)" }, { timeout: 10_000 });
    await screen.findByRole("option", { name: "local (online)" });
    expect(screen.getByTestId("scale-db").textContent).toContain("SF 0.01");
    fireEvent.change(screen.getByTestId("scale-input"), { target: { value: "abc" } });
    expect(screen.getByTestId("scale-estimate").textContent).toContain("above 0");
    fireEvent.change(screen.getByRole("combobox", { name: /Workload/ }), {
      target: { value: "w-hb" },
    });
    expect(screen.getByTestId("scale-db").textContent).toContain("1M records");
    fireEvent.change(screen.getByTestId("scale-input"), { target: { value: "0.02" } });
    expect(screen.getByTestId("scale-db").textContent).toContain("20k records");
    fireEvent.change(screen.getByRole("textbox", { name: /Name/ }), { target: { value: "hb" } });
    fireEvent.click(screen.getByTestId("submit-campaign"));
    expect((await screen.findByTestId("where")).textContent).toBe("/campaigns/c1");
    const body = calls.find((c) => c.method === "POST")?.body as Record<string, unknown>;
    expect(body.workload_id).toBe("w-hb");
    expect(body.scale).toBe(0.02);
    expect(body.targets).toEqual([
      { agent_id: "a1", target_path: "/mnt/hdd", environment_id: null },
    ]);
  });

  it("offers each row its host's targets, only meters every host has, and refuses writes on read-only files", async () => {
    setToken("t");
    const other = policyAgent({
      id: "a2",
      name: "other",
      policy: {
        targets: [
          target({ path: "/data/ref.bin", kind: "file", writable: false, destructive: false }),
        ],
        meters: [{ name: "plug", driver: "tasmota", tier: "plug" }],
        default_meter: "plug",
        limits: limits(),
        allowed_dbms: [],
      },
    });
    const calls = stubApi({
      "GET /api/v1/agents": () => ({ body: { items: [policyAgent(), other], total: 2 } }),
      "GET /api/v1/workloads": () => ({
        body: {
          items: [
            {
              id: "w1",
              name: "seq write",
              description: "",
              spec: { jobs: [{ name: "w", rw: "write" }] },
              builtin: true,
            },
          ],
          total: 1,
        },
      }),
      "GET /api/v1/environments": () => ({ body: { items: [], total: 0 } }),
      "POST /api/v1/campaigns": () => ({ status: 201, body: campaign(false) }),
    });
    renderAt(<CampaignForm />);
    await screen.findByRole("option", { name: "seq write" });
    await screen.findByRole("option", { name: /^\/srv\/bench/ });
    const row1 = (await screen.findByRole("combobox", {
      name: "Path of target 1",
    })) as HTMLSelectElement;
    expect(
      within(row1)
        .getAllByRole("option")
        .map((o) => (o as HTMLOptionElement).value),
    ).toEqual(POLICY.targets.map((t) => t.path));
    // One meter name goes to every host: only "plug" is configured on both.
    fireEvent.click(screen.getByTestId("add-target"));
    fireEvent.change(screen.getByRole("combobox", { name: "Agent of target 2" }), {
      target: { value: "a2" },
    });
    const meterOptions = within(screen.getByTestId("meter-select"))
      .getAllByRole("option")
      .map((o) => o.textContent);
    expect(meterOptions).toEqual([
      "each host's default meter",
      "plug (shelly, plug)",
      "none (no power measurement)",
    ]);
    // The second host's only target is a read-only file: a writing workload is refused there.
    expect(screen.getByTestId("row-refusal").textContent).toContain("--allow-write");
    fireEvent.click(screen.getByTestId("submit-campaign"));
    expect((await screen.findByTestId("field-error-targets")).textContent).toContain(
      "target 2: the host lists /data/ref.bin as a read-only file",
    );
    expect(calls.some((c) => c.method === "POST")).toBe(false);
  });

  it("asks for the device's model before a destructive campaign", async () => {
    setToken("t");
    const calls = stubApi({
      "GET /api/v1/agents": () => ({ body: { items: [policyAgent()], total: 1 } }),
      "GET /api/v1/workloads": () => ({
        body: {
          items: [
            {
              id: "w1",
              name: "rand write",
              description: "",
              spec: { jobs: [{ name: "w", rw: "randwrite" }] },
              builtin: true,
            },
          ],
          total: 1,
        },
      }),
      "GET /api/v1/environments": () => ({ body: { items: [], total: 0 } }),
      "POST /api/v1/campaigns": () => ({ status: 201, body: campaign(false) }),
    });
    renderAt(
      <Routes>
        <Route path="/" element={<CampaignForm />} />
        <Route path="/campaigns/:id" element={<Where />} />
      </Routes>,
    );
    await screen.findByRole("option", { name: "rand write" });
    await screen.findByRole("option", { name: /^\/srv\/bench/ });
    const nvme = POLICY.targets[2]?.path ?? "";
    fireEvent.change(await screen.findByRole("combobox", { name: "Path of target 1" }), {
      target: { value: nvme },
    });
    fireEvent.click(screen.getByTestId("submit-campaign"));
    const dialog = await screen.findByTestId("destructive-dialog");
    const confirm = within(dialog).getByTestId("destructive-confirm") as HTMLButtonElement;
    expect(confirm.disabled).toBe(true);
    fireEvent.change(within(dialog).getByTestId("destructive-input"), {
      target: { value: "Samsung SSD 990 PRO 2TB" },
    });
    await waitFor(() => expect(confirm.disabled).toBe(false));
    expect(calls.some((c) => c.method === "POST")).toBe(false);
    fireEvent.click(confirm);
    expect((await screen.findByTestId("where")).textContent).toBe("/campaigns/c1");
    expect(calls.find((c) => c.method === "POST")?.body).toMatchObject({
      targets: [{ agent_id: "a1", target_path: nvme }],
      meter: null,
      destructive: true,
    });
  });

  it("follows a running campaign and lands on its comparison when it is done", async () => {
    setToken("t");
    let polls = 0;
    const runsAsked: string[] = [];
    stubApi({
      "GET /api/v1/campaigns/c1": () => {
        polls += 1;
        return { body: campaign(polls > 1) };
      },
      "GET /api/v1/runs": (req) => {
        runsAsked.push(new URL(req.url).search);
        return { body: { items: [], total: 0 } };
      },
    });
    renderAt(
      <Routes>
        <Route path="/campaigns/:id" element={<CampaignDetail />} />
        <Route path="/compare" element={<Where />} />
      </Routes>,
      { path: "/campaigns/c1" },
    );
    const detail = await screen.findByTestId("campaign-detail");
    expect(within(detail).getByTestId("campaign-counts").textContent).toContain("2 queued");
    // the finished runs as a count (the bar beside it shows the share), and the runs table in a
    // box of its own that scrolls sideways on a phone instead of running past the page's edge
    expect(detail.textContent).toContain("1 of 4 runs finished");
    expect(within(detail).getByTestId("campaign-runs").closest(".table-scroll")).not.toBeNull();
    // lands on the comparison by target (two directories on one disk stay two columns)
    await waitFor(
      () =>
        expect(screen.getByTestId("where").textContent).toBe(
          "/compare?runs=r1,r2,r3,r4&group_by=target",
        ),
      { timeout: 5000 },
    );
    // its runs table shows names, statuses and targets: the list it polls carries neither the runs'
    // figures nor an active run's live reports
    expect(runsAsked.length).toBeGreaterThan(0);
    for (const q of runsAsked) {
      const params = new URLSearchParams(q);
      expect([params.get("jobs"), params.get("samples")]).toEqual(["false", "false"]);
    }
  }, 10_000);

  it("sizes Delete campaign like its neighbours in the header", async () => {
    setToken("t");
    stubApi({
      "GET /api/v1/campaigns/c1": () => ({ body: campaign(true) }),
      "GET /api/v1/runs": () => ({ body: { items: [], total: 0 } }),
      "GET /api/v1/auth/me": () => ({
        body: {
          id: "u",
          email: "a@x",
          display_name: "a",
          teams: [{ id: "t1", name: "t1", role: "admin" }],
        },
      }),
    });
    renderAt(<CampaignDetail />, { path: "/campaigns/c1", route: "/campaigns/:id" });
    const del = await screen.findByTestId("delete-campaign", {}, { timeout: 5000 });
    const share = await screen.findByTestId("share-button");
    expect(del.classList.contains("btn-small")).toBe(false);
    expect(share.classList.contains("btn-small")).toBe(false);
  });
});

describe("byTarget", () => {
  it("keys the campaign's comparison by target, the runs unchanged", () => {
    expect(byTarget("/compare?runs=a,b,c&group_by=device_environment")).toBe(
      "/compare?runs=a,b,c&group_by=target",
    );
    expect(byTarget("/compare?runs=a")).toBe("/compare?runs=a&group_by=target");
  });
});
