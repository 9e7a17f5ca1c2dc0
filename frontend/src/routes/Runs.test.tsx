import { act, fireEvent, screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import type { RunRead } from "../client/types";
import { SEARCH_DEBOUNCE_MS } from "../components/Run/RunFilterBar";
import { setToken } from "../lib/auth";
import { setAllTeams, setCurrentTeamId } from "../lib/role";
import { NO_ENERGY } from "../test/fixtures";
import { renderAt, stubApi } from "../test/render";
import { Runs } from "./Runs";

const A1 = "11111111-2222-4333-8444-555555555555";
const realFetch = globalThis.fetch;
afterEach(() => {
  globalThis.fetch = realFetch;
});

function run(id: string, over: Partial<RunRead> = {}): RunRead {
  return {
    id,
    team_id: "t1",
    name: `run ${id}`,
    status: "succeeded",
    source: "agent",
    tags: [],
    agent_id: "a1",
    agent_name: "alpha",
    target_path: "/srv/bench",
    destructive: false,
    device_id: null,
    device_name: null,
    environment_id: null,
    cancel_requested: false,
    workload: { jobs: [], passes: 1, discard_passes: 0 } as unknown as RunRead["workload"],
    workload_id: null,
    created_at: "2026-11-21T10:00:00Z",
    created_by: null,
    assigned_at: null,
    started_at: null,
    finished_at: null,
    attempt: 1,
    error: null,
    progress: null,
    jobs: [],
    passes: [],
    meter: null,
    idle_s: null,
    energy: NO_ENERGY,
    ...over,
  } as RunRead;
}

/** Stubs the API; every GET /runs's query string is recorded, newest last. */
function stub(
  page: (q: URLSearchParams) => { items: RunRead[]; total: number; total_exact?: boolean },
) {
  const asked: URLSearchParams[] = [];
  const empty = () => ({ body: { items: [], total: 0 } });
  stubApi({
    "GET /api/v1/runs": (req) => {
      const q = new URL(req.url).searchParams;
      asked.push(q);
      return { body: page(q) };
    },
    "GET /api/v1/agents": () => ({ body: { items: [{ id: A1, name: "alpha" }], total: 1 } }),
    "GET /api/v1/devices": empty,
    "GET /api/v1/environments": empty,
    "GET /api/v1/workloads": empty,
    "GET /api/v1/campaigns": empty,
    "GET /api/v1/tags": () => ({ body: { items: [{ tag: "nvme", runs: 3 }] } }),
  });
  return asked;
}

const last = (asked: URLSearchParams[]) => asked[asked.length - 1] as URLSearchParams;

describe("runs page filters", () => {
  it("sends the filters the URL states, and each control changes the query", async () => {
    const asked = stub(() => ({
      items: [run("r1", { tags: ["nvme"], source: "import" })],
      total: 1,
    }));
    renderAt(<Runs />, { path: "/runs?status=failed&tag=nvme&sort=name" });
    expect(await screen.findByText("run r1", {}, { timeout: 10_000 })).toBeTruthy();
    expect(last(asked).getAll("status")).toEqual(["failed"]);
    expect(last(asked).getAll("tag")).toEqual(["nvme"]);
    expect(last(asked).get("sort")).toBe("name");
    expect(last(asked).get("limit")).toBe("50");
    expect(last(asked).get("jobs")).toBe("false"); // the table shows no job's figures
    // the row shows its tags and that it was uploaded
    expect(screen.getByTestId("run-imported").textContent).toBe("uploaded");
    expect(screen.getAllByTestId("tag-chip").map((c) => c.textContent)).toEqual(["nvme"]);

    fireEvent.click(screen.getByTestId("filter-status-cancelled"));
    await waitFor(() => expect(last(asked).getAll("status")).toEqual(["failed", "cancelled"]));
    expect(last(asked).getAll("tag")).toEqual(["nvme"]); // the others stay

    fireEvent.change(screen.getByTestId("filter-agent_id"), { target: { value: A1 } });
    await waitFor(() => expect(last(asked).get("agent_id")).toBe(A1));

    // the recorded environment's fields, as compare filters them
    fireEvent.change(screen.getByTestId("env-filter-field"), { target: { value: "fstype" } });
    fireEvent.change(screen.getByTestId("env-filter-value"), { target: { value: "xfs" } });
    fireEvent.click(screen.getByTestId("env-filter-add"));
    await waitFor(() => expect(last(asked).getAll("env")).toEqual(["fstype:xfs"]));

    fireEvent.change(screen.getByTestId("filter-from"), { target: { value: "2026-11-02" } });
    await waitFor(() =>
      expect(last(asked).get("created_from")).toBe(new Date(2026, 10, 2).toISOString()),
    );

    const n = asked.length;
    fireEvent.change(screen.getByTestId("filter-q"), { target: { value: "opt" } });
    fireEvent.change(screen.getByTestId("filter-q"), { target: { value: "optane" } });
    await waitFor(() => expect(last(asked).get("q")).toBe("optane"), {
      timeout: SEARCH_DEBOUNCE_MS * 10,
    });
    // typing asked once, after the pause, not at every key
    expect(asked.slice(n).filter((q) => q.get("q") === "opt")).toEqual([]);
  }, 30_000);

  it("pages on the server, keeping the filters", async () => {
    const asked = stub((q) => {
      const offset = Number(q.get("offset"));
      const ids = Array.from({ length: 50 }, (_, i) => `r${offset + i}`).filter(
        (_, i) => offset + i < 120,
      );
      // the server counts up to offset + a bound (100 here): a lower bound until the end is near
      return {
        items: ids.map((id) => run(id)),
        total: Math.min(120, offset + 100),
        total_exact: offset + 100 >= 120,
      };
    });
    renderAt(<Runs />, { path: "/runs?status=succeeded" });
    expect(await screen.findByText("run r0", {}, { timeout: 10_000 })).toBeTruthy();
    expect(screen.getByTestId("runs-range").textContent).toContain("1–50 of 100+");
    fireEvent.click(screen.getByTestId("page-next"));
    expect(await screen.findByText("run r50", {}, { timeout: 10_000 })).toBeTruthy();
    expect(last(asked).get("offset")).toBe("50");
    expect(last(asked).getAll("status")).toEqual(["succeeded"]);
    fireEvent.click(screen.getByTestId("page-next"));
    expect(await screen.findByText("run r100", {}, { timeout: 10_000 })).toBeTruthy();
    expect(screen.getByTestId("runs-range").textContent).toContain("101–120 of 120");
    expect((screen.getByTestId("page-next") as HTMLButtonElement).disabled).toBe(true);
    // a filter change goes back to the first page
    fireEvent.click(screen.getByTestId("filter-status-failed"));
    await waitFor(() => expect(last(asked).get("offset")).toBe("0"));
  }, 30_000);

  it("says when nothing matches and clears the filters", async () => {
    const asked = stub((q) =>
      q.getAll("tag").length ? { items: [], total: 0 } : { items: [run("r1")], total: 1 },
    );
    renderAt(<Runs />, { path: "/runs?tag=nope&sort=name" });
    expect(
      await screen.findByText("No runs match these filters.", {}, { timeout: 10_000 }),
    ).toBeTruthy();
    fireEvent.click(screen.getByTestId("filter-clear"));
    expect(await screen.findByText("run r1", {}, { timeout: 10_000 })).toBeTruthy();
    expect(last(asked).getAll("tag")).toEqual([]);
    expect(last(asked).get("sort")).toBe("name"); // the order is not a filter
  }, 30_000);

  it("adds a tag filter from the tag box and refuses a malformed one", async () => {
    const asked = stub(() => ({ items: [run("r1")], total: 1 }));
    renderAt(<Runs />, { path: "/runs" });
    expect(await screen.findByText("run r1", {}, { timeout: 10_000 })).toBeTruthy();
    const box = screen.getByTestId("filter-tag-input");
    fireEvent.change(box, { target: { value: "bad;tag" } });
    fireEvent.keyDown(box, { key: "Enter" });
    expect(await screen.findByRole("alert")).toBeTruthy();
    fireEvent.change(box, { target: { value: "nvme" } });
    fireEvent.keyDown(box, { key: "Enter" });
    await waitFor(() => expect(last(asked).getAll("tag")).toEqual(["nvme"]));
    expect(screen.getAllByTestId("filter-tag").map((c) => c.textContent)).toEqual(["nvme×"]);
  }, 30_000);

  it("lists the switcher's team (team_id), and every team's under All my teams naming each run's team", async () => {
    setToken("t");
    const me = (teams: { id: string; name: string; role: string }[]) => ({
      body: { id: "u", email: "u@x", display_name: "u", teams },
    });
    let teams = [{ id: "t1", name: "Acme", role: "admin" }];
    // the server's answer follows team_id as GET /runs does
    const asked = stub((q) => {
      const all = [run("r1"), run("r2", { team_id: "t2" })];
      const items = q.get("team_id") ? all.filter((r) => r.team_id === q.get("team_id")) : all;
      return { items, total: items.length };
    });
    const routes = globalThis.fetch;
    globalThis.fetch = (async (input: RequestInfo | URL) => {
      const url = new URL(input instanceof Request ? input.url : String(input));
      if (url.pathname === "/api/v1/auth/me") {
        const r = me(teams);
        return new Response(JSON.stringify(r.body), {
          headers: { "Content-Type": "application/json" },
        });
      }
      return routes(input);
    }) as typeof fetch;
    const { unmount } = renderAt(<Runs />, { path: "/runs" });
    expect(await screen.findByText("run r1", {}, { timeout: 10_000 })).toBeTruthy();
    // one team: the list is that team's, nothing to tell apart; never asked before /auth/me
    expect(asked.every((q) => q.get("team_id") === "t1")).toBe(true);
    expect(screen.queryByText("run r2")).toBeNull();
    expect(screen.queryByTestId("run-team")).toBeNull();
    unmount();

    teams = [...teams, { id: "t2", name: "Bolt", role: "viewer" }];
    setCurrentTeamId("t2");
    renderAt(<Runs />, { path: "/runs" });
    expect(await screen.findByText("run r2", {}, { timeout: 10_000 })).toBeTruthy();
    expect(last(asked).get("team_id")).toBe("t2");
    expect(screen.queryByText("run r1")).toBeNull();
    expect(screen.queryByTestId("run-team")).toBeNull(); // one team shown: no chip

    act(() => setAllTeams()); // the switcher's "All my teams": refetched without team_id
    await waitFor(
      () =>
        expect(screen.getAllByTestId("run-team").map((c) => c.textContent)).toEqual([
          "Acme",
          "Bolt",
        ]),
      { timeout: 10_000 },
    );
    expect(last(asked).has("team_id")).toBe(false);

    act(() => setCurrentTeamId("t1")); // picking a team leaves "All my teams"
    await waitFor(() => expect(screen.queryByText("run r2")).toBeNull(), { timeout: 10_000 });
    expect(last(asked).get("team_id")).toBe("t1");
    expect(screen.queryByTestId("run-team")).toBeNull();
  }, 30_000);
});

describe("runs list rows", () => {
  it("shows a running run's progress as its page does: the server's whole-run share, not the job's", async () => {
    const job = { name: "j", rw: "read", runtime_s: 10, ramp_time_s: 0 };
    const busy = run("r1", {
      status: "running",
      workload: { jobs: [job, job, job, job], passes: 1 } as unknown as RunRead["workload"],
      progress: {
        job_index: 1,
        job_name: "j",
        phase: "job",
        percent: 50,
        run_percent: 37.5,
        run_eta_s: 25,
        run_eta_at_least: false,
        elapsed_ns: 5e9,
        read_iops: 1,
        read_bw_bytes: 1,
        write_iops: 0,
        write_bw_bytes: 0,
        updated_at: "2026-11-21T10:00:15Z",
        samples: [],
      },
    });
    stub(() => ({ items: [busy], total: 1 }));
    renderAt(<Runs />, { path: "/runs" });
    const bar = await screen.findByRole("progressbar", {}, { timeout: 5000 });
    // the second of four 10 s jobs, half done: 15 s of 40, not the job's 50 %
    expect(bar.getAttribute("aria-valuenow")).toBe("38");
  });

  it("names a multi-target run's other targets, and no duration for an import that states none", async () => {
    const t = (i: number) => ({ target_index: i, target_path: `/srv/t${i}` });
    const at = "2026-11-21T10:00:00Z";
    stub(() => ({
      items: [
        run("m3", { targets: [t(0), t(1), t(2)] as never }),
        run("imp", {
          source: "import",
          started_at: at,
          finished_at: at,
          origin: { kind: "imported", label: "imported from CrystalDiskMark 8.0.4" } as never,
        }),
        run("one", { started_at: at, finished_at: "2026-11-21T10:00:30Z" }),
      ],
      total: 3,
    }));
    renderAt(<Runs />, { path: "/runs" });
    expect(await screen.findByText("run m3", {}, { timeout: 10_000 })).toBeTruthy();
    expect(screen.getAllByTestId("run-more-targets").map((e) => e.textContent)).toEqual([
      " +2 targets",
    ]);
    const rows = screen.getAllByRole("row");
    const cells = (name: string) =>
      Array.from(rows.find((r) => r.textContent?.includes(name))?.querySelectorAll("td") ?? []);
    expect(cells("run imp").some((c) => c.textContent === "—")).toBe(true);
    expect(cells("run one").some((c) => c.textContent === "30 s")).toBe(true);
  }, 30_000);
});
