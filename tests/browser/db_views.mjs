// Issue 15's two views at 1440×900 with runs of the built-in presets (Z): tpch-qphh (QphH@Size per
// device, environment and scale factor, the Rate column, power and energy rows) and
// heap-btree-grid (op/s per cache fraction, the Ratio columns, the largest ÷ smallest row); each
// view's CSV downloaded and read.
//
//   IOWATT_URL=... IOWATT_EMAIL=... IOWATT_PASSWORD=... IOWATT_ARTIFACTS=DIR \
//   IOWATT_DBV_TPCH=<4 tpch-smoke run ids> IOWATT_DBV_HB=<2 heap-btree run ids> \
//   IOWATT_DBV_QPHH=<the API's first QphH@Size cell> IOWATT_DBV_HB_FIRST=<its first B-tree insert op/s> \
//   node tests/browser/db_views.mjs
//
// tests/browser/test_db_views.py runs it. Prints `ok N - ...` per check and `db_views: N passed,
// 0 failed`; exit 1 with `failure.png` on failure, 2 on bad env.
import { readFileSync } from "node:fs";
import {
  BASE,
  check,
  downloaded,
  navigate,
  needs,
  noOverflow,
  openBrowser,
  viewRows,
} from "./lib.mjs";

const TPCH = (process.env.IOWATT_DBV_TPCH ?? "").split(",").filter(Boolean);
const HB = (process.env.IOWATT_DBV_HB ?? "").split(",").filter(Boolean);
const QPHH = Number(process.env.IOWATT_DBV_QPHH ?? "NaN");
const HB_FIRST = Number(process.env.IOWATT_DBV_HB_FIRST ?? "NaN");

needs(
  "db_views",
  TPCH.length === 4 && HB.length === 2 && QPHH > 0 && HB_FIRST > 0,
  "IOWATT_DBV_TPCH (4 ids), IOWATT_DBV_HB (2 ids), IOWATT_DBV_QPHH, IOWATT_DBV_HB_FIRST",
);
const { page, run, shot, login, done } = await openBrowser("db_views");

/** The leading number of a cell's text ("1,234 QphH" → 1234). */
function num(text) {
  const m = (text ?? "").replace(/,/g, "").match(/-?\d+(\.\d+)?/);
  return m ? Number(m[0]) : Number.NaN;
}

async function rowsOf() {
  return viewRows(page);
}

async function csv() {
  const [download] = await Promise.all([
    page.waitForEvent("download"),
    page.getByTestId("view-csv").click(),
  ]);
  return readFileSync(await downloaded(download), "utf8")
    .trim()
    .split("\n");
}

await run("log in", () => login("view-grid", `/views/tpch-qphh?runs=${TPCH.join(",")}`));

await run("tpch-qphh with four tpch-smoke runs: QphH, SF, W, J and the Rate", async () => {
  await navigate(page, `/views/tpch-qphh?runs=${TPCH.join(",")}`); // there already (the login's next)
  await page.getByTestId("view-grid").waitFor();
  const rows = await rowsOf();
  console.log(`# tpch-qphh rows: ${JSON.stringify(rows)}`);
  const heads = await page
    .getByTestId("view-grid")
    .locator("thead th[data-label]")
    .evaluateAll((els) => els.map((e) => e.getAttribute("data-label")));
  console.log(`# tpch-qphh headers: ${JSON.stringify(heads)}`);
  check(
    heads.some((h) => h.startsWith("Rate (")),
    `no Rate column: ${heads}`,
  );
  const qphh = rows.filter((r) => r.measure === "QphH@Size");
  check(qphh.length === 2, `QphH@Size rows: ${qphh.length} (one per environment)`);
  check(
    qphh.every((r) => r.database.startsWith("SF 0.01") && r.database.includes("postgresql")),
    `database cells: ${qphh.map((r) => r.database)}`,
  );
  check(
    qphh.every((r) => r.database.includes("MB on disk")),
    `SF 0.01's size: ${qphh[0].database}`,
  );
  const shown = num(qphh[0].device_0);
  check(Math.abs(shown - QPHH) <= Math.max(1, QPHH * 0.005), `QphH ${shown} vs the API's ${QPHH}`);
  check(
    qphh.every((r) => r.rate.endsWith("×")),
    `rate cells: ${qphh.map((r) => r.rate)}`,
  );
  // the units are the Measure's (QphH@Size, W, J); a device without watts (tmpfs has no
  // datasheet) shows "—" and the estimated one says so under its figure
  const figure = (r) => Math.max(num(r.device_0) || 0, num(r.device_1) || 0);
  const energy = rows.filter((r) => r.measure.startsWith("Energy of the run (J)"));
  check(
    energy.length === 2 && energy.every((r) => figure(r) > 0 && r.database.startsWith("SF 0.01")),
    `energy rows: ${JSON.stringify(energy)}`,
  );
  const power = rows.filter((r) => r.measure.startsWith("Power (W)"));
  check(
    power.length === 4 &&
      power.filter((r) => r.database === "Non-load").length === 2 &&
      power.every((r) => figure(r) > 0),
    `power rows: ${JSON.stringify(power)}`,
  );
  check(
    [...energy, ...power].every((r) => /estimated/.test(r.device_0 + r.device_1)),
    "estimated energy not marked",
  );
  // one scale factor: no line by database size (its points sat on the y axis), a note says why
  check(
    (await page.locator('[data-testid^="view-chart-"]').count()) === 0,
    "a chart by database size from one SF",
  );
  check(
    (await page.locator("body").textContent()).includes("two or more scale factors"),
    "no note on the charts left out",
  );
  await noOverflow(page);
  await shot("Z-tpch-qphh");
});

await run("tpch-qphh's CSV: the page's rows, the figures in their units", async () => {
  const lines = await csv();
  console.log(`# tpch-qphh csv:\n${lines.map((l) => `#   ${l}`).join("\n")}`);
  const n = await page.getByTestId("view-row").count();
  check(lines.length === n + 1, `${lines.length} CSV lines for ${n} rows`);
  check(lines[0].includes("Rate"), lines[0]);
  const q = lines.find((l) => l.startsWith("QphH@Size"));
  check(q?.includes("SF 0.01"), `QphH line: ${q}`);
});

await run(
  "heap-btree-grid with two heap-btree runs at scale 0.02: op/s, Ratio, largest ÷ smallest",
  async () => {
    await page.goto(`${BASE}/views/heap-btree-grid?runs=${HB.join(",")}`);
    await page.getByTestId("view-grid").waitFor();
    const rows = await rowsOf();
    console.log(`# heap-btree-grid rows: ${JSON.stringify(rows)}`);
    const heads = await page
      .getByTestId("view-grid")
      .locator("thead th[data-label]")
      .evaluateAll((els) => els.map((e) => e.getAttribute("data-label")));
    console.log(`# heap-btree-grid headers: ${JSON.stringify(heads)}`);
    check(rows.length === 11, `${rows.length} rows (ten fractions and the ratio row)`);
    check(
      num(rows[0].cache) === 10 && num(rows[9].cache) === 100,
      `fractions ${rows.map((r) => r.cache)}`,
    );
    const first = num(rows[0].run0_btree_insert);
    check(
      Math.abs(first - HB_FIRST) <= Math.max(1, HB_FIRST * 0.005),
      `B-tree insert ${rows[0].run0_btree_insert} vs the API's ${HB_FIRST}`,
    );
    check(rows[0].ratio_btree_insert.endsWith("×"), `ratio ${rows[0].ratio_btree_insert}`);
    const last = rows[10];
    check(last.cache.includes("÷"), `the last row: ${last.cache}`);
    check(
      ["heap_insert", "heap_point_query", "btree_insert", "btree_point_query"].every((k) =>
        /×$/.test(last[`run0_${k}`]),
      ),
      `ratio row: ${JSON.stringify(last)}`,
    );
    await noOverflow(page);
    await shot("Z-heap-btree-grid");
  },
);

await run("heap-btree-grid's CSV: eleven rows, the ratio row last", async () => {
  const lines = await csv();
  console.log(`# heap-btree-grid csv:\n${lines.map((l) => `#   ${l}`).join("\n")}`);
  check(lines.length === 12, `${lines.length} CSV lines`);
  check(lines[0].includes("op/s"), lines[0]);
  check(lines[11].includes("÷"), lines[11]);
});

await done();
