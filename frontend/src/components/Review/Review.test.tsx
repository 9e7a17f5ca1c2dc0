import { fireEvent, screen, waitFor, within } from "@testing-library/react";
import { Route, Routes } from "react-router-dom";
import { afterEach, describe, expect, it } from "vitest";
import { setToken } from "../../lib/auth";
import type { CandidateRead, ReviewRead } from "../../queries/reviews";
import { ReviewDetail } from "../../routes/ReviewDetail";
import { Reviews } from "../../routes/Reviews";
import { renderAt, stubApi } from "../../test/render";
import { Discrepancies, figureRows, JobEnergy } from "./Figures";
import { scatterPoints, tcoRows } from "./ReviewCharts";
import { decimalBytes, groupDigits, money, parseCapacity } from "./units";

const realFetch = globalThis.fetch;
afterEach(() => {
  globalThis.fetch = realFetch;
  localStorage.clear();
});

function candidate(over: Partial<CandidateRead> = {}): CandidateRead {
  return {
    id: "c1",
    position: 0,
    name: "ENT 15K R1",
    model: "ENT 15K",
    capacity_bytes: 600e9,
    unit_price: "595.00",
    count: 2,
    hot_spares: 0,
    over_provisioning: "0",
    protection: "raid1",
    afr: "0.0044",
    device_id: null,
    performance_source: "published",
    performance_metric: "rps",
    performance_value: "1250",
    performance_reference: "seed 001 Table 3",
    run_id: null,
    run_ids: [],
    validity: [],
    mb_s: null,
    power_source: "published",
    power_reference: "datasheet",
    idle_w: "11",
    load_w: "19",
    drives: 2,
    data_drives: 2,
    raw_bytes: 1_200_000_000_000,
    usable_bytes: 600_000_000_000,
    protection_overhead: "1",
    price_total: "1190.00",
    cost_per_iops_single: "0.4760",
    cost_per_iops_set: "0.9520",
    cost_per_gb_raw: "0.9917",
    cost_per_gb_usable: "1.9833",
    cost_per_gb_usable_per_iops: "0.00158667",
    iops_per_w: "65.8",
    mb_s_per_w: null,
    energy_kwh_per_year: "120.5",
    facility_kwh_per_year: "180.7",
    energy_cost_per_year: "27.11",
    operational_kg_per_year: "72.3",
    replacements: "0.044",
    embodied_kg: "40.9",
    embodied_source: "manufacturer PCF",
    tco: "1351.73",
    tco_parts: { purchase: "1190.00", energy: "135.55", replacements: "26.18" },
    co2e_kg_lifetime: "402.4",
    job_energy: [],
    discrepancies: [],
    ...over,
  };
}

function review(over: Partial<ReviewRead> = {}): ReviewRead {
  const a = candidate();
  const b = candidate({
    id: "c2",
    name: "Measured disk",
    performance_source: "run",
    performance_metric: "iops",
    run_id: "11111111-2222-3333-4444-555555555555",
    power_source: "estimated",
    validity: [{ flag: "cache_resident", message: "the working set fits in the page cache" }],
    tco: "2000.10",
    tco_parts: { purchase: "1500.00", energy: "400.10", replacements: "100.00" },
    performance_value: "900",
  });
  return {
    id: "r1",
    team_id: "t1",
    name: "File server drives",
    question: "Which drives?",
    currency: "USD",
    horizon_years: "5",
    duty_cycle: "0.3",
    tariff_per_kwh: "0.15",
    tariff_source: "utility contract",
    grid_g_per_kwh: "400",
    grid_source: "national average",
    pue: "1.5",
    environment_id: null,
    weights: { tco: "1", performance: "1", co2e_lifetime: "1" },
    version: 1,
    parent_id: null,
    created_by: null,
    created_at: "2026-11-23T03:00:00Z",
    updated_at: "2026-11-23T03:00:00Z",
    decision: null,
    hours_per_year: 8766,
    gb_bytes: 1_000_000_000,
    candidates: [a, b],
    ranking: [
      {
        rank: 1,
        candidate_id: "c1",
        name: a.name,
        score: "0.95",
        scores: { tco: "1", performance: "1", co2e_lifetime: "0.85" },
      },
      {
        rank: 2,
        candidate_id: "c2",
        name: b.name,
        score: "0.7",
        scores: { tco: "0.68", performance: "0.72", co2e_lifetime: "1" },
      },
    ],
    normalisation: "value / best",
    leader: "c1",
    sensitivity: [
      {
        parameter: "price",
        base: "1",
        low: "0.25",
        high: "4",
        flip_at: "1.8",
        new_leader: "Measured disk",
        message: "at 1.8× ENT 15K R1's unit price, Measured disk leads instead of ENT 15K R1",
      },
      {
        parameter: "tariff",
        base: "0.15",
        low: "0",
        high: "1",
        flip_at: null,
        new_leader: null,
        message: "no flip in range 0 to 1",
      },
    ],
    job_crossover: null,
    methodology: [
      { name: "tco", formula: "TCO = set price + energy cost/year × years", source: "definition" },
    ],
    ...over,
  } as ReviewRead;
}

function me(role: "viewer" | "member" | "admin") {
  return { id: "u1", email: "a@b", name: "A", teams: [{ id: "t1", name: "lab", role }] };
}

function stub(r: ReviewRead, role: "viewer" | "member" | "admin") {
  setToken("t");
  let current = r;
  return stubApi({
    "GET /api/v1/auth/me": () => ({ body: me(role) }),
    "GET /api/v1/reviews/r1": () => ({ body: current }),
    "GET /api/v1/reviews/r1/comments": () => ({ body: { items: [], total: 0 } }),
    "POST /api/v1/reviews/r1/decision": () => {
      current = {
        ...r,
        decision: {
          candidate_id: "c1",
          candidate_name: "ENT 15K R1",
          decided_by: "u1",
          decided_by_name: "A",
          decided_at: "2026-11-23T04:00:00Z",
          reason: "enough capacity",
        },
      };
      return { body: current };
    },
  });
}

const page = () =>
  renderAt(
    <Routes>
      <Route path="/reviews/:id" element={<ReviewDetail />} />
    </Routes>,
    { path: "/reviews/r1" },
  );

describe("review units", () => {
  it("shows money as the API's decimal strings, digits grouped, with the currency", () => {
    expect(groupDigits("1234567.0050")).toBe("1,234,567.0050");
    expect(money("1190.00", "USD")).toBe("1,190.00 USD");
    expect(money(null, "EUR")).toBe("—");
    expect(groupDigits("-999.5")).toBe("-999.5");
  });
  it("reads and writes capacities in decimal units (GB = 10^9 bytes)", () => {
    expect(decimalBytes(600e9)).toBe("600 GB");
    expect(decimalBytes(1.8e12)).toBe("1.8 TB");
    expect(parseCapacity("1.8 TB")).toBe(1.8e12);
    expect(parseCapacity("600GB")).toBe(600e9);
    expect(parseCapacity("4 TiB")).toBe(4 * 1024 ** 4);
    expect(parseCapacity("lots")).toBeNull();
  });
  it("lists every computed figure, cost per GB with its GB definition", () => {
    const rows = figureRows(review());
    const ids = rows.map((r) => r.testId);
    for (const f of [
      "raw_bytes",
      "usable_bytes",
      "cost_per_iops_single",
      "cost_per_iops_set",
      "cost_per_gb_raw",
      "cost_per_gb_usable",
      "energy_kwh_per_year",
      "tco",
      "co2e_kg_lifetime",
      "replacements",
      "embodied_kg",
    ]) {
      expect(ids).toContain(f);
    }
    expect(rows.find((r) => r.testId === "cost_per_gb_usable")?.note).toBe("GB = 10^9 bytes");
  });
  it("charts plot the TCO parts and cost against performance", () => {
    expect(tcoRows(review())[1]).toEqual({
      name: "Measured disk",
      purchase: 1500,
      energy: 400.1,
      replacements: 100,
    });
    expect(scatterPoints(review()).map((p) => [p.perf, p.tco])).toEqual([
      [1250, 1351.73],
      [900, 2000.1],
    ]);
  });
});

describe("review page", () => {
  it("labels published and measured figures, shows a run's validity flags and the flip", async () => {
    stub(review(), "member");
    page();
    const rows = await screen.findAllByTestId("candidate-row");
    expect(within(rows[0] as HTMLElement).getAllByTestId("source-published").length).toBe(2);
    expect(within(rows[1] as HTMLElement).getAllByTestId("source-measured").length).toBe(1);
    expect(within(rows[1] as HTMLElement).getByTestId("candidate-validity").textContent).toContain(
      "page cache",
    );
    expect(screen.getByTestId("figure-cost_per_gb_usable").textContent).toContain("1.9833 USD");
    expect(screen.getByTestId("figure-price_total").textContent).toContain("1,190.00 USD");
    expect(screen.getByTestId("sensitivity-price").textContent).toContain("flips at 1.8");
    expect(screen.getByTestId("sensitivity-tariff").textContent).toContain("no flip in range");
    // a member edits but does not decide
    expect(screen.getByTestId("add-candidate")).toBeTruthy();
    expect(screen.queryByTestId("decision-form")).toBeNull();
    expect(screen.getByTestId("decide-note").textContent).toContain("an admin");
    expect(screen.getByTestId("share-button")).toBeTruthy();
  });

  it("a member edits a candidate (the form starts from its inputs) and removes one", async () => {
    const calls = stubApi({
      "GET /api/v1/auth/me": () => ({ body: me("member") }),
      "GET /api/v1/reviews/r1": () => ({ body: review() }),
      "GET /api/v1/reviews/r1/comments": () => ({ body: { items: [], total: 0 } }),
      "PATCH /api/v1/reviews/r1/candidates/c1": () => ({ body: candidate() }),
      "DELETE /api/v1/reviews/r1/candidates/c2": () => ({ status: 204, body: null }),
    });
    setToken("t");
    page();
    const edits = await screen.findAllByTestId("edit-candidate");
    fireEvent.click(edits[0] as HTMLElement);
    const price = document.getElementById("f-price") as HTMLInputElement;
    expect(price.value).toBe("595.00");
    expect((document.getElementById("f-capacity") as HTMLInputElement).value).toBe("600 GB");
    fireEvent.change(price, { target: { value: "550" } });
    fireEvent.click(screen.getByTestId("submit-candidate"));
    await waitFor(() => expect(calls.some((c) => c.method === "PATCH")).toBe(true));
    const body = calls.find((c) => c.method === "PATCH")?.body as {
      device: object;
      performance: object;
    };
    expect(body.device).toMatchObject({
      unit_price: "550",
      capacity_bytes: 600e9,
      model: "ENT 15K",
    });
    expect(body.performance).toMatchObject({
      source: "published",
      value: "1250",
      reference: "seed 001 Table 3",
    });
    const confirm = window.confirm;
    window.confirm = () => true;
    try {
      fireEvent.click(screen.getAllByTestId("remove-candidate")[1] as HTMLElement);
      await waitFor(() => expect(calls.some((c) => c.method === "DELETE")).toBe(true));
    } finally {
      window.confirm = confirm;
    }
  });

  it("a viewer reads only, and is told why", async () => {
    stub(review(), "viewer");
    page();
    await screen.findAllByTestId("candidate-row");
    await waitFor(() => expect(screen.getByTestId("read-only").textContent).toContain("viewer"));
    expect(screen.queryByTestId("add-candidate")).toBeNull();
    expect(screen.queryByTestId("edit-candidate")).toBeNull();
    expect(screen.queryByTestId("comment-body")).toBeNull();
    expect(screen.queryByTestId("share-button")).toBeNull();
    expect(screen.getByTestId("export-pdf")).toBeTruthy();
  });

  it("loads the discussion a page at a time, oldest first, and the next page on demand", async () => {
    const all = Array.from({ length: 53 }, (_, i) => ({
      id: `m${i}`,
      review_id: "r1",
      author_id: "u1",
      author_name: "A",
      body: `comment ${i}`,
      created_at: "2026-11-23T04:00:00Z",
    }));
    const asked: string[] = [];
    stubApi({
      "GET /api/v1/auth/me": () => ({ body: me("viewer") }),
      "GET /api/v1/reviews/r1": () => ({ body: review() }),
      "GET /api/v1/reviews/r1/comments": (req) => {
        const q = new URL(req.url).searchParams;
        asked.push(`${q.get("limit")}/${q.get("offset")}`);
        const offset = Number(q.get("offset"));
        return {
          body: { items: all.slice(offset, offset + Number(q.get("limit"))), total: all.length },
        };
      },
    });
    setToken("t");
    page();
    await waitFor(() => expect(screen.getAllByTestId("review-comment")).toHaveLength(50));
    const more = screen.getByTestId("more-comments");
    expect(more.textContent).toContain("50 of 53");
    fireEvent.click(more);
    await waitFor(() => expect(screen.getAllByTestId("review-comment")).toHaveLength(53));
    const shown = screen.getAllByTestId("review-comment").map((li) => li.textContent);
    expect(shown[0]).toContain("comment 0");
    expect(shown[52]).toContain("comment 52");
    expect(screen.queryByTestId("more-comments")).toBeNull();
    expect(asked).toEqual(["50/0", "50/50"]);
  });

  it("an admin decides; the review freezes with the reason and a New version button", async () => {
    const calls = stub(review(), "admin");
    page();
    await screen.findByTestId("decision-form");
    fireEvent.change(screen.getByLabelText("Why"), { target: { value: "enough capacity" } });
    fireEvent.click(screen.getByTestId("decide"));
    await screen.findByTestId("decision");
    expect(calls.find((c) => c.method === "POST")?.body).toEqual({
      candidate_id: "c1",
      reason: "enough capacity",
    });
    expect(screen.getByTestId("decision-reason").textContent).toBe("enough capacity");
    expect(screen.getByTestId("new-version")).toBeTruthy();
    expect(screen.queryByTestId("add-candidate")).toBeNull();
    expect(screen.queryByTestId("edit-candidate")).toBeNull();
    expect(screen.getByTestId("read-only").textContent).toContain("frozen");
  });
});

describe("reviews list", () => {
  it("lists the team's reviews with their state; viewers get no New review", async () => {
    setToken("t");
    localStorage.setItem("iowatt.team", "t1");
    const calls = stubApi({
      "GET /api/v1/auth/me": () => ({ body: me("viewer") }),
      "GET /api/v1/reviews": () => ({
        body: {
          items: [
            {
              id: "r1",
              team_id: "t1",
              name: "A",
              currency: "USD",
              version: 2,
              parent_id: "r0",
              candidates: 3,
              decided_at: null,
              created_at: "2026-11-23T03:00:00Z",
            },
            {
              id: "r0",
              team_id: "t1",
              name: "A",
              currency: "USD",
              version: 1,
              parent_id: null,
              candidates: 3,
              decided_at: "2026-11-22T03:00:00Z",
              created_at: "2026-11-21T03:00:00Z",
            },
          ],
          total: 2,
        },
      }),
    });
    renderAt(<Reviews />);
    const rows = await screen.findAllByTestId("review-row");
    expect(rows.length).toBe(2);
    expect(rows[1]?.textContent).toContain("decided");
    expect(rows[0]?.textContent).toContain("open");
    expect(screen.queryByTestId("new-review")).toBeNull();
    expect(calls.some((c) => c.path === "/api/v1/reviews")).toBe(true);
  });
});

describe("seed tables on the page", () => {
  it("energy per job per load level with the crossover (seed 000 Tables 3-5)", () => {
    const jobs = (w: [string, string, string, string][]) =>
      w.map(([label, runtime_s, power_w, energy_j]) => ({ label, runtime_s, power_w, energy_j }));
    const r = review({
      candidates: [
        candidate({
          name: "HDD",
          job_energy: jobs([
            ["Low", "15", "5.6", "84"],
            ["High", "1800", "8", "14400"],
          ]),
        }),
        candidate({
          id: "c2",
          name: "DRAM-SSD",
          job_energy: jobs([
            ["Low", "15", "30", "450"],
            ["High", "400", "30", "12000"],
          ]),
        }),
      ],
      job_crossover: {
        labels: ["Low", "High"],
        winners: ["HDD", "DRAM-SSD"],
        crossover: "High",
        message: "HDD uses less energy per job at Low, DRAM-SSD from High on",
      },
    });
    renderAt(<JobEnergy review={r} />);
    const t = screen.getByTestId("job-energy").textContent ?? "";
    expect(t).toContain("84 J");
    expect(t).toContain("14.4 kJ");
    expect(t).toContain("(crossover)");
    expect(screen.getByTestId("job-crossover").textContent).toContain("DRAM-SSD from High on");
  });

  it("lists a report's figures that differ from the formulas, with the reason", () => {
    const r = review({
      candidates: [
        candidate({
          discrepancies: [
            {
              field: "cost_per_gb_usable",
              reported: "0.99",
              computed: "1.9833",
              message: "equals the raw cost per GB: the mirror was ignored",
            },
          ],
        }),
      ],
    });
    renderAt(<Discrepancies review={r} />);
    const t = screen.getByTestId("discrepancies").textContent ?? "";
    expect(t).toContain("reported 0.99, computed 1.9833");
    expect(t).toContain("the mirror was ignored");
  });
});
