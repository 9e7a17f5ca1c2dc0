// TPC-H and heap/B-tree in Chromium at 1440×900 (issue 15, U15) against a running server whose
// runs were uploaded by test_db_workloads.py (real documents). IOWATT_DB_PHASE=two: the workloads
// list and the TPC-H preset's page, New run's consent note, both run pages; IOWATT_DB_PHASE=many:
// the runs list with the 10 TPC-H runs and a run page among them.
//
//   IOWATT_URL=... IOWATT_EMAIL=... IOWATT_PASSWORD=... IOWATT_ARTIFACTS=DIR IOWATT_DB_PHASE=two|many \
//   IOWATT_DB_TPCH_RUN=ID IOWATT_DB_TIMED_RUN=ID IOWATT_DB_HB_RUN=ID IOWATT_DB_TPCH_PRESET=ID \
//   node tests/browser/db_workloads.mjs
//
// Prints `ok N - ...` per check and `db_workloads: N passed, 0 failed`; exit 1 with `failure.png`.
import {
  BASE,
  check,
  fitsItsBox,
  needs,
  noOverflow,
  openBrowser,
  pause,
  visit as visitPage,
} from "./lib.mjs";

// two, many or both (two,many) in one browser: with IOWATT_PAUSES=1 the script stops before
// `many` (lib.mjs pause) while tests/browser/test_db_workloads.py uploads the other runs
const PHASES = (process.env.IOWATT_DB_PHASE ?? "").split(",").filter(Boolean);
const TPCH_RUN = process.env.IOWATT_DB_TPCH_RUN ?? "";
const TIMED_RUN = process.env.IOWATT_DB_TIMED_RUN ?? "";
const HB_RUN = process.env.IOWATT_DB_HB_RUN ?? "";
const PRESET = process.env.IOWATT_DB_TPCH_PRESET ?? "";
needs(
  "db_workloads",
  PHASES.length > 0 && PHASES.every((p) => p === "two" || p === "many"),
  "IOWATT_DB_PHASE=two|many|two,many",
);
needs("db_workloads", !!(TPCH_RUN && TIMED_RUN && HB_RUN && PRESET), "IOWATT_DB_* run ids");
const { page, run, shot, login, done } = await openBrowser("db_workloads");

/** `visit(path)`: lib.mjs `visit` on this script's page; the runs list after the uploads of the
 * pause is loaded (pageOf: the same page), as the app's cache has the list from before them. */
const visit = (path) => visitPage(page, path);
const text = async (testId) => (await page.getByTestId(testId).first().textContent()) ?? "";

/** Every chart's plot area on the page is at least 200 px high; at least `count` of them. */
async function plotsAtLeast(count) {
  await page.waitForTimeout(300); // ResponsiveContainer's own size pass
  const heights = await page
    .locator(".recharts-cartesian-grid")
    .evaluateAll((els) => els.map((e) => e.getBoundingClientRect().height));
  check(heights.length >= count, `${heights.length} charts, expected ${count}`);
  check(
    heights.every((h) => h >= 150),
    `plot heights ${heights.map((h) => Math.round(h))}`,
  );
}

await run("log in", async () => {
  await login();
});

async function tpchPage(id, name) {
  await visit(`/runs/${id}`);
  await page.getByTestId("tpch-panel").waitFor();
  const label = await text("tpch-label");
  check(label === "TPC-H-derived, not audited", `label: ${label}`);
  const queries = await page.getByTestId("tpch-query-chart").getAttribute("data-queries");
  check(queries === "22", `${queries} queries in the chart`);
  await page.locator("[data-testid=tpch-query-chart] .recharts-bar-rectangle").first().waitFor();
  const dbms = await text("tpch-dbms");
  check(dbms.includes("PostgreSQL 15") && dbms.includes("shared_buffers"), `DBMS: ${dbms}`);
  check((await page.getByTestId("job-result").count()) === 0, "job cards beside the TPC-H panel");
  const body = (await page.textContent("body")) ?? "";
  check(!/\bkw\b/i.test(body), "'kW' on a TPC-H run page");
  await noOverflow(page);
  await shot(name);
}

if (PHASES.includes("two")) {
  await run(
    "the workloads list names the TPC-H and heap/B-tree presets and their size",
    async () => {
      await visit("/workloads");
      await page.getByTestId("workloads-table").waitFor();
      const row = (n) => page.locator(`[data-testid=workload-row][data-name="${n}"]`);
      for (const [n, kind] of [
        ["tpch-postgresql", "tpch"],
        ["tpch-mariadb", "tpch"],
        ["tpch-smoke", "tpch"],
        ["heap-btree", "heap_btree"],
      ]) {
        const k = await row(n).getByTestId("workload-kind").getAttribute("data-kind");
        check(k === kind, `${n} shown as ${k}`);
      }
      const size = (await row("tpch-postgresql").textContent()) ?? "";
      check(size.includes("SF 1 on PostgreSQL"), `tpch-postgresql row: ${size}`);
      await noOverflow(page);
      await shot("U15-workloads");
    },
  );

  await run("the TPC-H preset's page: settings in humane units and the label", async () => {
    await visit(`/workloads/${PRESET}`);
    const settings = await text("tpch-settings");
    check(settings.includes("TPC-H-derived, not audited"), "no label on the preset's page");
    check(settings.includes("16 MiB"), `buffer pool: ${settings}`);
    check(settings.includes("PostgreSQL"), `DBMS: ${settings}`);
    await noOverflow(page);
    await shot("U15-workload-tpch");
  });

  await run(
    "New run for TPC-H: directory targets, the scale as SF, the host's refusal and command",
    async () => {
      await visit(`/runs/new?workload=${PRESET}`);
      const note = page.getByTestId("dbms-consent");
      await note.waitFor();
      const allowed = await note.getAttribute("data-allowed");
      const t = (await note.textContent()) ?? "";
      if (allowed === "false")
        check(t.includes("iowatt-agent targets allow-dbms postgresql"), `consent note: ${t}`);
      await page.getByTestId("scale-input").fill("10");
      const scaled = await text("scale-db");
      check(
        scaled.includes("SF 10") && scaled.includes("3 throughput streams"),
        `scale: ${scaled}`,
      );
      await noOverflow(page);
      await shot("U15-new-run-tpch");
    },
  );

  await run(
    "the TPC-H run page: metrics with their formulas, per-query bars, energy per DB size",
    async () => {
      await tpchPage(TPCH_RUN, "U15-run-tpch");
      const title = await page.getByTestId("tpch-qphh").getAttribute("title");
      check(title?.includes("√(Power@Size × Throughput@Size)"), `QphH hover: ${title}`);
      const energy = await text("tpch-energy");
      check(/\d (J|kJ|MJ) \([\d.]+ Wh\)/.test(energy), `energy at SF: ${energy}`);
      check(!energy.includes("estimated"), `a plug meter's energy labelled estimated: ${energy}`);
    },
  );

  await run(
    "a timed-out query is marked and the withheld metrics say why; estimated energy labelled",
    async () => {
      await tpchPage(TIMED_RUN, "U15-run-tpch-timed-out");
      check(
        (await text("tpch-timed-out")).includes("Q18 (stream 1)"),
        "Q18 not listed as timed out",
      );
      check((await text("tpch-metrics-note")).includes("withheld"), "no metrics note");
      const energy = await text("tpch-energy");
      check(energy.includes("(estimated)"), `estimated energy not labelled: ${energy}`);
    },
  );

  await run(
    "the heap/B-tree run page: the sweep's charts (log ops/s) and Table 3 with ratios",
    async () => {
      await page.goto(`${BASE}/runs/${HB_RUN}`);
      await page.getByTestId("heap-btree-panel").waitFor();
      await plotsAtLeast(3);
      const rows = await page.locator("[data-testid=sweep-table] tr[data-fraction]").count();
      check(rows === 10, `${rows} fraction rows`);
      check((await text("sweep-ratio")).includes("×"), "no ratios row");
      await noOverflow(page);
      await shot("U15-run-heap-btree");
    },
  );

  await run("the runs list with the uploaded database runs", async () => {
    await visit("/runs");
    await page.getByTestId("run-row").first().waitFor();
    await noOverflow(page);
    await shot("U15-runs-2", false);
  });
}

if (PHASES.includes("many")) {
  await pause("many");
  await run("10 TPC-H runs: the list and a run page among them", async () => {
    await page.goto(`${BASE}/runs`);
    await page.getByTestId("run-row").first().waitFor();
    await page.waitForTimeout(500);
    const n = await page.getByTestId("run-row").count();
    check(n >= 10, `${n} rows`);
    await noOverflow(page);
    // the energy column's meter badge once reached 40 px past the list's card
    await fitsItsBox(page, "runs-table");
    await shot("U15-runs-10", false);
    await tpchPage(TPCH_RUN, "U15-run-tpch");
  });
}

await done();
