import { fireEvent, screen } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { setToken } from "../../lib/auth";
import type { CandidateRead } from "../../queries/reviews";
import type { SharedView } from "../../queries/sharing";
import { Shared } from "../../routes/Shared";
import { renderAt, stubApi } from "../../test/render";
import type { SharedReviewData } from "./SharedReview";
import { ShareReviewButton } from "./ShareReviewButton";

const realFetch = globalThis.fetch;
afterEach(() => {
  globalThis.fetch = realFetch;
  localStorage.clear();
});

function candidate(id: string, name: string, price: string, tco: string): CandidateRead {
  return {
    id,
    position: 0,
    name,
    model: name,
    capacity_bytes: 600_000_000_000,
    unit_price: price,
    count: 2,
    hot_spares: 0,
    over_provisioning: "0",
    protection: "raid1",
    afr: "0.01",
    device_id: null,
    performance_source: id === "c1" ? "run" : "published",
    performance_metric: "rps",
    performance_value: "580.7",
    performance_reference: id === "c1" ? "run rand on lab-host:target-1 (r1)" : "seed 001 Table 3",
    run_id: id === "c1" ? "r1" : null,
    run_ids: [],
    validity: [],
    mb_s: null,
    power_source: "published",
    power_reference: "datasheet",
    idle_w: "10",
    load_w: "16",
    drives: 2,
    data_drives: 1,
    raw_bytes: 1_200_000_000_000,
    usable_bytes: 600_000_000_000,
    protection_overhead: "1",
    price_total: String(Number(price) * 2),
    cost_per_iops_single: "1.0246",
    cost_per_iops_set: "2.0493",
    cost_per_gb_raw: "0.9917",
    cost_per_gb_usable: "1.9833",
    cost_per_gb_usable_per_iops: "0.00341",
    iops_per_w: "36.29",
    mb_s_per_w: null,
    energy_kwh_per_year: "114.5",
    facility_kwh_per_year: "114.5",
    energy_cost_per_year: "13.74",
    operational_kg_per_year: "45.8",
    replacements: "0.1",
    embodied_kg: "40",
    embodied_source: "default",
    tco,
    tco_parts: { purchase: String(Number(price) * 2), energy: "68.70", replacements: "59.50" },
    co2e_kg_lifetime: "269",
    job_energy: [],
    discrepancies: [],
  };
}

function review(decided: boolean): SharedReviewData {
  return {
    id: "rv1",
    name: "Content server HDDs",
    question: "Which HDD for the content platform?",
    currency: "USD",
    horizon_years: "5",
    duty_cycle: "0.5",
    tariff_per_kwh: "0.12",
    tariff_source: "entered",
    grid_g_per_kwh: "400",
    grid_source: "entered",
    pue: "1",
    weights: { tco: "1" },
    version: 2,
    created_at: "2026-11-21T10:00:00Z",
    updated_at: "2026-11-21T10:00:00Z",
    decided,
    decision: decided
      ? {
          candidate_id: "c1",
          candidate_name: "ENT 15K R1",
          decided_by_name: "Ada Admin",
          decided_at: "2026-11-22T09:00:00Z",
          reason: "cheapest per RPS",
        }
      : null,
    hours_per_year: 8766,
    gb_bytes: 1_000_000_000,
    candidates: [
      candidate("c1", "ENT 15K R1", "595", "1318.20"),
      candidate("c2", "ENT 10K R1", "875", "1878.20"),
    ],
    ranking: [
      { rank: 1, candidate_id: "c1", name: "ENT 15K R1", score: "1", scores: { tco: "1" } },
      {
        rank: 2,
        candidate_id: "c2",
        name: "ENT 10K R1",
        score: "0.7018",
        scores: { tco: "0.7018" },
      },
    ],
    normalisation: "ratio to the best",
    leader: "c1",
    sensitivity: [],
    job_crossover: null,
    methodology: [{ name: "tco", formula: "purchase + energy + replacements", source: "ADR 0024" }],
  };
}

function view(r: SharedReviewData | null): SharedView {
  return {
    kind: "review",
    title: "",
    team_name: "Storage lab",
    shared_by: "Sam",
    created_at: "2026-11-21T10:00:00Z",
    expires_at: null,
    options: {
      group_by: "none",
      fingerprint: "workload",
      force: false,
      job: null,
      charts: [],
      env: [],
      table: "auto",
      series_metric: "mbps",
    },
    runs_total: 0,
    runs_deleted: 0,
    comparison: null,
    latency: null,
    campaign: null,
    review: r,
  };
}

describe("a shared review (/s/:token)", () => {
  it("shows a decided review read-only: the decision, ranking, figures and methodology", async () => {
    const calls = stubApi({ "GET /api/v1/shared/tok": () => ({ body: view(review(true)) }) });
    const { container } = renderAt(<Shared />, { path: "/s/tok", route: "/s/:token" });
    expect((await screen.findByTestId("shared-title")).textContent).toBe(
      "Review Content server HDDs (version 2)",
    );
    const state = screen.getByTestId("shared-review-state").textContent ?? "";
    expect(state).toContain("Decided: ENT 15K R1");
    expect(state).toContain("Ada Admin");
    expect(state).toContain("cheapest per RPS");
    const rows = screen.getAllByTestId("ranking-row").map((r) => r.textContent);
    expect(rows[0]).toMatch(/^1ENT 15K R1 chosen/);
    expect(screen.getByTestId("figure-tco").textContent).toContain("1,318.20");
    expect(screen.getByTestId("shared-review-sources").textContent).toContain(
      "run rand on lab-host:target-1",
    );
    expect(screen.getByTestId("shared-review-methodology").textContent).toContain(
      "purchase + energy + replacements",
    );
    // the only link is the in-page methodology anchor; no edit, comment or decide controls
    const hrefs = [...container.querySelectorAll("a[href]")].map((a) => a.getAttribute("href"));
    expect(hrefs).toEqual(["#methodology"]);
    expect(screen.queryByTestId("new-version")).toBeNull();
    expect(screen.queryByTestId("export-pdf")).toBeNull();
    expect(screen.queryByRole("textbox")).toBeNull();
    expect(calls.map((c) => c.path)).toEqual(["/api/v1/shared/tok"]);
  });

  it('says an undecided review is "not decided yet"', async () => {
    stubApi({ "GET /api/v1/shared/tok": () => ({ body: view(review(false)) }) });
    renderAt(<Shared />, { path: "/s/tok", route: "/s/:token" });
    expect((await screen.findByTestId("shared-review-state")).textContent).toMatch(
      /^Not decided yet\./,
    );
    expect(screen.queryByText("chosen")).toBeNull();
  });

  it("says when the review was deleted", async () => {
    stubApi({ "GET /api/v1/shared/tok": () => ({ body: view(null) }) });
    renderAt(<Shared />, { path: "/s/tok", route: "/s/:token" });
    expect((await screen.findByTestId("shared-empty")).textContent).toContain(
      "review of this link was deleted",
    );
  });
});

describe("ShareReviewButton", () => {
  it("creates a review link for a member, warning when the review is not decided", async () => {
    setToken("t");
    const calls = stubApi({
      "GET /api/v1/auth/me": () => ({
        body: {
          id: "u1",
          email: "u@x",
          display_name: "U",
          password_set: true,
          teams: [{ id: "t1", name: "lab", role: "member" }],
        },
      }),
      "POST /api/v1/share-links": () => ({
        status: 201,
        body: { id: "s1", url: "http://h/s/abc", expires_at: null },
      }),
    });
    renderAt(
      <ShareReviewButton
        review={{ id: "rv1", team_id: "t1", name: "HDDs", version: 1, decision: null }}
      />,
    );
    fireEvent.click(await screen.findByTestId("share-button"));
    expect(screen.getByTestId("share-warning").textContent).toContain("not decided yet");
    expect((screen.getByTestId("share-title") as HTMLInputElement).value).toBe("HDDs (version 1)");
    fireEvent.click(screen.getByTestId("share-create"));
    expect((await screen.findByTestId("share-url")).textContent).toContain("http://h/s/abc");
    const body = calls.find((c) => c.method === "POST")?.body as { kind: string; target: string };
    expect([body.kind, body.target]).toEqual(["review", "rv1"]);
  });
});
