import { fireEvent, screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { ShareButton } from "../components/Share/ShareButton";
import { setToken } from "../lib/auth";
import type { SharedView } from "../queries/sharing";
import { comparison, metric, NO_ENERGY } from "../test/fixtures";
import { renderAt, stubApi } from "../test/render";
import { asCompareRead, deletedNote, Shared } from "./Shared";

const realFetch = globalThis.fetch;
afterEach(() => {
  globalThis.fetch = realFetch;
  localStorage.clear();
});

function sharedRun(
  id: string,
  name: string,
): NonNullable<SharedView["comparison"]>["runs"][number] {
  return {
    id,
    name,
    status: "succeeded",
    device_name: `${name} disk`,
    environment_name: "lab",
    workload: {
      kind: "block",
      jobs: [],
      passes: 1,
      discard_passes: 0,
      shortened_by: null,
      scaled_by: null,
      postmark: null,
      vdbench: null,
      tpch: null,
      heap_btree: null,
      facts: null,
    },
    created_at: "2026-11-21T10:00:00Z",
    started_at: null,
    finished_at: null,
    jobs: [],
    passes: [],
    energy: NO_ENERGY,
  };
}

function view(over: Partial<SharedView> = {}): SharedView {
  const runs = [sharedRun("r1", "hdd"), sharedRun("r2", "ram")];
  const cmp = comparison(runs as never, [
    { name: "rand4k", metrics: [metric("read_iops", "Read IOPS", "IO/s", [200, 50_000])] },
  ]);
  return {
    kind: "comparison",
    title: "HDD vs RAM",
    team_name: "Storage lab",
    shared_by: "Sam",
    created_at: "2026-11-21T10:00:00Z",
    expires_at: null,
    options: {
      group_by: "none",
      fingerprint: "workload",
      force: false,
      job: null,
      charts: ["bars"],
      table: "metrics",
      series_metric: "mbps",
      env: [],
    },
    runs_total: 3,
    runs_deleted: 1,
    comparison: { ...cmp, runs } as SharedView["comparison"],
    latency: null,
    campaign: null,
    review: null,
    ...over,
  };
}

describe("shared page (/s/:token)", () => {
  it("shows the frozen view with who shared it, the deleted run and no link into the app", async () => {
    const calls = stubApi({ "GET /api/v1/shared/tok": () => ({ body: view() }) });
    const { container } = renderAt(<Shared />, { path: "/s/tok", route: "/s/:token" });
    expect((await screen.findByTestId("shared-title")).textContent).toContain("HDD vs RAM");
    expect(screen.getByTestId("shared-by").textContent).toMatch(
      /^Shared by the team Storage lab on November 21, 2026/,
    );
    expect(screen.getByTestId("shared-deleted").textContent).toContain(
      "1 run of this comparison was deleted",
    );
    expect(screen.getAllByTestId("shared-table")[0]?.textContent).toContain("Read IOPS");
    expect(container.querySelectorAll("a[href]")).toHaveLength(0);
    expect(screen.queryByRole("navigation")).toBeNull();
    expect(calls.map((c) => c.path)).toEqual(["/api/v1/shared/tok"]);
    // the compare page's runs table, read-only: the environment instead of the (unshared) agent,
    // no validity or remove columns
    const runs = screen.getByTestId("shared-runs");
    // (a sortable header's arrow aside)
    const heads = [...runs.querySelectorAll("th")].map((th) =>
      (th.textContent ?? "").replace(/\s*[↕↑↓▲▼]\s*$/u, ""),
    );
    expect(heads).toEqual(["Run", "Column", "Status", "Device", "Environment", "Workload"]);
    expect(runs.querySelector("tbody tr")?.textContent).toContain("hdd disk");
    expect(runs.querySelector("tbody tr")?.textContent).toContain("lab");
    expect(screen.queryByRole("button", { name: "remove" })).toBeNull();
  });

  it("says which environments the link keeps, and how many runs that leaves out", async () => {
    const filtered = view({ runs_total: 4, runs_deleted: 1 });
    filtered.options.env = ["raid_level:raid10", "kind:das"];
    stubApi({ "GET /api/v1/shared/tok": () => ({ body: filtered }) });
    renderAt(<Shared />, { path: "/s/tok", route: "/s/:token" });
    expect((await screen.findByTestId("shared-env-filter")).textContent).toBe(
      "Only runs whose recorded environment has RAID level = raid10 and kind = das (1 of the runs shared left out).",
    );
  });

  it("says the filter left nothing rather than that the runs were deleted", async () => {
    const none = view({ comparison: null, runs_deleted: 0 });
    none.options.env = ["kind:nas"];
    stubApi({ "GET /api/v1/shared/tok": () => ({ body: none }) });
    renderAt(<Shared />, { path: "/s/tok", route: "/s/:token" });
    expect((await screen.findByTestId("shared-empty")).textContent).toBe(
      "No run of this link has an environment with kind = nas.",
    );
  });

  it("reads a shared comparison as the compare page's, with nothing the link does not carry", () => {
    const shared = view().comparison;
    if (!shared) throw new Error("fixture");
    const vd = {
      ...shared.runs[0],
      workload: { ...shared.runs[0]?.workload, vdbench: { scale: 0.1, elapsed_s: null } },
    };
    const c = asCompareRead({ ...shared, runs: [vd as never, ...shared.runs.slice(1)] });
    expect(c.runs.map((r) => [r.id, r.name, r.status, r.device_name])).toEqual([
      ["r1", "hdd", "succeeded", "hdd disk"],
      ["r2", "ram", "succeeded", "ram disk"],
    ]);
    expect(c.runs[0]).toMatchObject({
      team_id: "",
      agent_id: "",
      target_path: "",
      created_by: null,
    });
    expect(c.runs[0]?.workload.vdbench).toEqual({ scale: 0.1, elapsed_s: null, parameters: "" });
    expect(c.runs[1]?.workload.vdbench).toBeNull();
    expect(c.runs[0]?.energy).toMatchObject({ status: "none", meter_name: null, source: null });
    expect(c.jobs).toBe(shared.jobs);
    expect(c.validity).toBe(shared.validity);
  });

  it("says a revoked link is not available, and an expired one expired, without a login prompt", async () => {
    stubApi({
      "GET /api/v1/shared/gone": () => ({
        status: 404,
        body: { error: "share_link_not_found", message: "revoked" },
      }),
      "GET /api/v1/shared/old": () => ({
        status: 410,
        body: { error: "share_link_expired", message: "this share link expired on 2026-11-01" },
      }),
    });
    renderAt(<Shared />, { path: "/s/gone", route: "/s/:token" });
    expect((await screen.findByTestId("shared-gone")).textContent).toContain("not available");
    expect(screen.queryByLabelText(/password/i)).toBeNull();
    renderAt(<Shared />, { path: "/s/old", route: "/s/:token" });
    expect(await screen.findByText("This link has expired")).toBeTruthy();
  });

  it("words the deleted-run note by the link's kind", () => {
    expect(deletedNote({ kind: "comparison", runs_deleted: 0 })).toBeNull();
    expect(deletedNote({ kind: "comparison", runs_deleted: 2 })).toMatch(
      /^2 runs of this comparison were deleted/,
    );
    expect(deletedNote({ kind: "run", runs_deleted: 1 })).toMatch(
      /^The run of this link was deleted/,
    );
  });
});

describe("Share button", () => {
  const me = (role: string) => ({
    body: {
      id: "u1",
      email: "u@x",
      display_name: "U",
      password_set: true,
      teams: [{ id: "t1", name: "lab", role }],
    },
  });

  it("is hidden for a viewer of the object's team", async () => {
    setToken("t");
    const calls = stubApi({ "GET /api/v1/auth/me": () => me("viewer") });
    renderAt(<ShareButton teamId="t1" share={{ kind: "run", target: "r1" }} defaultTitle="x" />);
    await waitFor(() => expect(calls.length).toBeGreaterThan(0));
    await new Promise((r) => setTimeout(r, 50));
    expect(screen.queryByTestId("share-button")).toBeNull();
  });

  it("lets a member create a link with a title and an expiry, and shows the URL once", async () => {
    setToken("t");
    const calls = stubApi({
      "GET /api/v1/auth/me": () => me("member"),
      "POST /api/v1/share-links": () => ({
        status: 201,
        body: { id: "s1", url: "http://h/s/abc", expires_at: "2026-11-28T00:00:00Z" },
      }),
    });
    renderAt(
      <ShareButton teamId="t1" share={{ kind: "run", target: "r1" }} defaultTitle="hdd run" />,
    );
    fireEvent.click(await screen.findByTestId("share-button"));
    fireEvent.change(screen.getByTestId("share-title"), { target: { value: "For the vendor" } });
    fireEvent.change(screen.getByTestId("share-expiry"), { target: { value: "7" } });
    fireEvent.click(screen.getByTestId("share-create"));
    expect((await screen.findByTestId("share-url")).textContent).toContain("http://h/s/abc");
    const post = calls.find((c) => c.method === "POST");
    const body = post?.body as { kind: string; target: string; title: string; expires_at: string };
    expect([body.kind, body.target, body.title]).toEqual(["run", "r1", "For the vendor"]);
    const days = (Date.parse(body.expires_at) - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(6.9);
    expect(days).toBeLessThan(7.1);
  });
});
