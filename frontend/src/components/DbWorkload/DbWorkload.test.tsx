// Issue 15's database workloads in the UI: the TPC-H panel (metrics with formulas, per-query bars,
// timed-out queries, energy per database size), the heap/B-tree sweep, New run's consent note and
// scale, the workloads list. The run figures are real documents (fixtures/README.md).
import { fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import type { AgentRead, RunRead } from "../../client/types";
import { setToken } from "../../lib/auth";
import { describeWorkload } from "../../lib/workload";
import { NewRun } from "../../routes/NewRun";
import { Workloads } from "../../routes/Workloads";
import { POLICY, policyAgent } from "../../test/fixtures";
import { renderAt, stubApi } from "../../test/render";
import { dbHeadline, dbSpecOf } from "./DbRunPanels";
import {
  dbmsRefusal,
  energyPerDbSize,
  formatJoulesWh,
  type HeapBtreeSummary,
  minimumStreams,
  powerFromIntervals,
  queryChartRows,
  sweepGrid,
  sweepRows,
  sweepSeries,
  type TpchSummary,
} from "./dbWorkload";
import HB from "./fixtures/heap-btree-n20000.json";
import TPCH from "./fixtures/tpch-postgresql-sf001.json";
import { HeapBtreePanel } from "./HeapBtreePanel";
import { TpchPanel } from "./TpchPanel";

const realFetch = globalThis.fetch;
afterEach(() => {
  globalThis.fetch = realFetch;
});

const T = TPCH as TpchSummary;
const H = HB as HeapBtreeSummary;

describe("TPC-H helpers", () => {
  it("lays the real run's queries out as Q1..Q22 with the power test and each stream", () => {
    const c = queryChartRows(T);
    expect(c.rows).toHaveLength(22);
    expect(c.rows[0]?.query).toBe("Q1");
    expect(c.series.map((s) => s.key)).toEqual(["s0", "s1", "s2"]);
    const q1 = T.queries.find((q) => q.query === 1 && q.stream === 2);
    expect(c.rows[0]?.s2).toBe(q1?.seconds);
    expect(c.timedOut).toEqual([]);
  });

  it("marks a timed-out query in its label and lists it", () => {
    const queries = T.queries.map((q) =>
      q.query === 5 && q.stream === 1 ? { ...q, timed_out: true, answer_ok: null } : q,
    );
    const c = queryChartRows({ ...T, queries });
    expect(c.rows[4]?.query).toBe("Q5*");
    expect(c.rows[3]?.query).toBe("Q4");
    expect(c.timedOut).toEqual([{ query: 5, stream: 1 }]);
  });

  it("recomputes Power@Size from the power test's intervals as the agent did", () => {
    const p = powerFromIntervals(T);
    expect(p).not.toBeNull();
    expect(Math.abs((p as number) / (T.power_at_size as number) - 1)).toBeLessThan(1e-3);
  });

  it("the spec's minimum streams, energy in J and Wh, never kW", () => {
    expect(minimumStreams(1)).toBe(2);
    expect(minimumStreams(10)).toBe(3);
    expect(minimumStreams(100)).toBe(5);
    expect(formatJoulesWh(7200)).toBe("7.2 kJ (2 Wh)");
    const e = energyPerDbSize(36_000, 5, 8e9);
    expect(e?.total).toBe("36 kJ (10 Wh)");
    expect(e?.perSf).toBe("7.2 kJ (2 Wh)");
    expect(e?.perGb).toBe("4.5 kJ (1.25 Wh)");
    expect(energyPerDbSize(null, 1)).toBeNull();
  });

  it("the host's consent: refused with the command unless allowed_dbms names the DBMS", () => {
    expect(dbmsRefusal({ allowed_dbms: ["postgresql"] }, "postgresql")).toBeNull();
    const r = dbmsRefusal({ allowed_dbms: [] }, "mariadb");
    expect(r?.command).toBe("iowatt-agent targets allow-dbms mariadb");
    expect(r?.reason).toContain("MariaDB");
    expect(dbmsRefusal({}, "postgresql")?.reason).toContain("older agent");
  });
});

describe("TpchPanel", () => {
  it("shows the metrics with their formulas on hover, load, DBMS settings and the label", () => {
    render(<TpchPanel t={T} energy={{ total_j: 5400, estimated: true }} />);
    const qphh = screen.getByTestId("tpch-qphh");
    expect(qphh.textContent).toContain("3022");
    expect(qphh.getAttribute("title")).toBe("QphH@Size = √(Power@Size × Throughput@Size)");
    expect(screen.getByTestId("tpch-throughput").getAttribute("title")).toContain(
      "2 × 22 × 3600 / 0.544 s × 0.01",
    );
    expect(screen.getByTestId("tpch-power").getAttribute("title")).toContain("^(1/24)");
    expect(screen.getByTestId("tpch-load").textContent).toContain("1.42 s");
    expect(screen.getByTestId("tpch-label").textContent).toBe("TPC-H-derived, not audited");
    expect(screen.getByTestId("tpch-query-chart").dataset.queries).toBe("22");
    expect(screen.getByTestId("tpch-energy").textContent).toContain("(estimated)");
    expect(screen.getByTestId("tpch-energy").textContent).toContain("5.4 kJ (1.5 Wh)");
    expect(screen.getByTestId("tpch-energy-per-sf").textContent).toContain("540 kJ (150 Wh)");
    expect(screen.getByTestId("tpch-answers").textContent).toContain("66 of 66");
    const dbms = screen.getByTestId("tpch-dbms");
    expect(dbms.textContent).toContain("PostgreSQL 15");
    expect(dbms.textContent).toContain("shared_buffers");
    expect(dbms.textContent).toContain("16 MiB");
    expect(screen.queryByTestId("tpch-timed-out")).toBeNull();
    expect(document.body.textContent).not.toMatch(/kw(?!h)/i);
  });

  it("lists timed-out queries and the withheld metrics; no energy says so", () => {
    const queries = T.queries.map((q) =>
      q.query === 18 && q.stream === 0 ? { ...q, timed_out: true, answer_ok: null } : q,
    );
    render(
      <TpchPanel
        t={{
          ...T,
          queries,
          power_at_size: null,
          throughput_at_size: null,
          qphh_at_size: null,
          metrics_note: "Q18 timed out",
        }}
        energy={null}
      />,
    );
    expect(screen.getByTestId("tpch-timed-out").textContent).toContain("Q18 (power)");
    expect(screen.getByTestId("tpch-metrics-note").textContent).toContain("Q18 timed out");
    expect(screen.getByTestId("tpch-qphh").textContent).toContain("—");
    expect(screen.getByTestId("tpch-energy-none")).toBeTruthy();
  });
});

describe("HeapBtreePanel", () => {
  it("sweeps ops/s over the cache fraction, log where two orders apart, with Table 3's ratios", () => {
    const rows = sweepRows(H);
    expect(rows).toHaveLength(12);
    const ops = sweepSeries(rows, "ops_per_s");
    expect(ops.log).toBe(true);
    expect(ops.series.map((s) => s.label)).toEqual([
      "B-tree insert",
      "B-tree point query",
      "heap insert",
      "heap point query",
    ]);
    expect(ops.series[3]?.points.map((p) => p.x)).toEqual([0.1, 0.5, 1]);
    expect(sweepSeries(rows, "hit_ratio").log).toBe(false);
    const grid = sweepGrid(rows);
    const hq = rows.filter((r) => r.structure === "heap" && r.operation === "point_query");
    expect(grid.ratio("heap|point_query")).toBeCloseTo(
      (hq[2]?.ops_per_s as number) / (hq[0]?.ops_per_s as number),
      6,
    );
    render(<HeapBtreePanel summary={H} />);
    expect(screen.getByTestId("sweep-ops").dataset.log).toBe("true");
    const table = screen.getByTestId("sweep-table");
    expect(
      within(table)
        .getAllByRole("row")
        .filter((r) => r.dataset.fraction),
    ).toHaveLength(3);
    expect(screen.getByTestId("sweep-ratio").textContent).toContain("×");
  });
});

const tpchWorkload = {
  id: "w-tp",
  name: "tpch-postgresql",
  description: "TPC-H-derived, not audited: PostgreSQL at SF 1",
  builtin: true,
  spec: {
    kind: "tpch",
    jobs: [],
    passes: 1,
    tpch: {
      dbms: "postgresql",
      scale_factor: 1,
      streams: null,
      query_timeout_s: 3600,
      buffer_pool_bytes: 16777216,
    },
    heap_btree: null,
  },
};
const hbWorkload = {
  id: "w-hb",
  name: "heap-btree",
  description: "Heap file and B+tree, the P3608 report's Table 3",
  builtin: true,
  spec: {
    kind: "heap_btree",
    jobs: [],
    passes: 1,
    tpch: null,
    heap_btree: {
      records: 1_000_000,
      queries: 100_000,
      cache_fractions: [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1],
      randseed: 1,
      structure: "both",
    },
  },
};

function setupNewRun(path: string, agent: AgentRead) {
  setToken("tok");
  const calls = stubApi({
    "GET /api/v1/agents": () => ({ body: { items: [agent], total: 1 } }),
    "GET /api/v1/workloads": () => ({
      body: { items: [tpchWorkload, hbWorkload], total: 2 },
    }),
    "GET /api/v1/environments": () => ({ body: { items: [], total: 0 } }),
    "POST /api/v1/runs": () => ({ status: 201, body: { id: "r-new" } }),
  });
  renderAt(<NewRun />, { path });
  return calls;
}

describe("NewRun with a database workload", () => {
  it("says a host without allowed_dbms refuses the TPC-H run, names the command, scales the SF", async () => {
    const calls = setupNewRun("/?workload=w-tp", policyAgent());
    const note = await screen.findByTestId("dbms-consent");
    expect(note.dataset.allowed).toBe("false");
    expect(note.textContent).toContain("iowatt-agent targets allow-dbms postgresql");
    expect(screen.getByTestId("tpch-settings").textContent).toContain("2 (the spec's minimum)");
    const scale = screen.getByTestId("scale-input") as HTMLInputElement;
    expect(screen.getByTestId("scale-db").textContent).toContain("SF 1");
    fireEvent.change(scale, { target: { value: "10" } });
    expect(screen.getByTestId("scale-db").textContent).toContain("SF 10");
    expect(screen.getByTestId("scale-db").textContent).toContain("3 throughput streams");
    const options = within(screen.getByTestId("target-select")).getAllByRole(
      "option",
    ) as HTMLOptionElement[];
    expect(options.filter((o) => !o.disabled).map((o) => o.dataset.kind)).toEqual(["directory"]);
    fireEvent.click(screen.getByTestId("submit-run"));
    await screen.findByTestId("run-page");
    const run = calls.find((c) => c.path === "/api/v1/runs")?.body as Record<string, unknown>;
    expect(run.workload_id).toBe("w-tp");
    expect(run.scale).toBe(10);
  });

  it("says nothing is refused when the host allows the DBMS; heap-btree scales N", async () => {
    const agent = policyAgent({
      policy: { ...POLICY, allowed_dbms: ["postgresql"] } as AgentRead["policy"],
    });
    setupNewRun("/?workload=w-tp", agent);
    expect((await screen.findByTestId("dbms-consent")).dataset.allowed).toBe("true");
    fireEvent.change(screen.getByLabelText("Built-in workload"), { target: { value: "w-hb" } });
    await waitFor(() => expect(screen.queryByTestId("dbms-consent")).toBeNull());
    fireEvent.change(screen.getByTestId("scale-input"), { target: { value: "50" } });
    expect(screen.getByTestId("scale-db").textContent).toContain("50M records");
  });
});

describe("Workloads list", () => {
  it("names the two kinds and their sizes", async () => {
    setToken("tok");
    stubApi({
      "GET /api/v1/workloads": () => ({
        body: { items: [tpchWorkload, hbWorkload], total: 2 },
      }),
    });
    renderAt(<Workloads />);
    const rows = await screen.findAllByTestId("workload-row");
    expect(rows[0]?.textContent).toContain("TPC-H-derived");
    expect(rows[0]?.textContent).toContain("SF 1 on PostgreSQL");
    expect(rows[1]?.textContent).toContain("heap / B-tree");
    expect(rows[1]?.textContent).toContain("1,000,000 records × 10 cache fractions");
  });
});

describe("an uploaded database run (no database spec)", () => {
  const run = (extra: object) =>
    ({ workload: { kind: "block", jobs: [], passes: 1 }, ...extra }) as unknown as RunRead;
  it("leads with QphH@Size or the sweep, and reads its settings from the summary", () => {
    const t = dbHeadline(run({ tpch: T }));
    expect(t?.what).toBe("TPC-H-derived (not audited) at SF 0.01 on PostgreSQL");
    expect(t?.figures).toBe("QphH@Size 3022, load 1.42 s");
    expect(dbSpecOf(run({ tpch: T }))?.tpch?.buffer_pool_bytes).toBe(16777216);
    const withheld = dbHeadline(
      run({ tpch: { ...T, qphh_at_size: null, metrics_note: "Q18 timed out" } }),
    );
    expect(withheld?.figures).toBe("metrics withheld (Q18 timed out)");
    const h = dbHeadline(run({ heap_btree: H }));
    expect(h?.what).toBe("heap / B-tree sweep over 3 cache fractions");
    expect(dbSpecOf(run({ heap_btree: H }))?.heap_btree?.cache_fractions).toEqual([0.1, 0.5, 1]);
    expect(dbHeadline(run({}))).toBeNull();
  });
});

describe("the runs list's workload column", () => {
  it("names the database kinds, and an uploaded TPC-H result's jobs[0], not '4 KiB QD1'", () => {
    type Spec = Parameters<typeof describeWorkload>[0];
    expect(describeWorkload(tpchWorkload.spec as unknown as Spec)).toBe(
      "TPC-H-derived, SF 1 on postgresql",
    );
    expect(describeWorkload(hbWorkload.spec as unknown as Spec)).toBe("heap / B-tree sweep");
    const uploaded = { jobs: [{ name: "tpch", rw: "tpch", bs_bytes: 4096 }], passes: 1 };
    expect(describeWorkload(uploaded as unknown as Spec)).toBe("TPC-H-derived");
    const sweep = { jobs: [{ name: "heap-btree", rw: "read", bs_bytes: 8192 }], passes: 1 };
    expect(describeWorkload(sweep as unknown as Spec)).toBe("heap / B-tree sweep");
  });
});
