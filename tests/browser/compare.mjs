// The compare page and the dashboard with many runs, in Chromium at 1440×900 (issue 12):
// every chart keeps a plot area of at least 200 px, the page never scrolls sideways, changes
// read direction-aware ("133× lower latency"), sweep charts have distinct titles, and the time
// from navigation start to the table and charts rendered is measured.
//
//   IOWATT_URL=... IOWATT_EMAIL=... IOWATT_PASSWORD=... IOWATT_ARTIFACTS=DIR \
//   IOWATT_COMPARE_SETS='2:<id>,<id>;8:<id>,...;30:<id>,...' node tests/browser/compare.mjs
//
// Prints `ok N - ...` per check, `timing <n> runs: <ms> ms` per set and `compare: N passed,
// 0 failed`; exit 1 with `failure.png` on failure, 2 on a bad environment.
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";

const require = createRequire(new URL("../../frontend/package.json", import.meta.url));
const { chromium } = require("playwright-core");

const BASE = (process.env.IOWATT_URL ?? "").replace(/\/$/, "");
const { IOWATT_EMAIL: EMAIL, IOWATT_PASSWORD: PASSWORD } = process.env;
const SETS = (process.env.IOWATT_COMPARE_SETS ?? "")
  .split(";")
  .filter(Boolean)
  .map((s) => {
    const [n, ids] = s.split(":");
    return { n: Number(n), ids: (ids ?? "").split(",").filter(Boolean) };
  });
const ARTIFACTS = process.env.IOWATT_ARTIFACTS ?? join(tmpdir(), "iowatt-browser-artifacts");
const CHROMIUM = process.env.IOWATT_CHROMIUM ?? "/usr/bin/chromium";
const TIMEOUT_MS = Number(process.env.IOWATT_BROWSER_TIMEOUT_MS ?? 20_000);
const MIN_PLOT_PX = 200;

if (!BASE || !EMAIL || !PASSWORD || SETS.length === 0) {
  console.error("compare: set IOWATT_URL, IOWATT_EMAIL, IOWATT_PASSWORD and IOWATT_COMPARE_SETS");
  process.exit(2);
}
mkdirSync(ARTIFACTS, { recursive: true });

const userDataDir = mkdtempSync(join(tmpdir(), "iowatt-chromium-"));
let context;
let page;
let step = "launch";
let passed = 0;
const pageErrors = [];

function check(cond, message) {
  if (!cond) throw new Error(message);
}

async function run(name, fn) {
  step = name;
  await fn();
  passed += 1;
  console.log(`ok ${passed} - ${name}`);
}

async function shot(name) {
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
}

/** Every chart's plot height (its tallest y-axis line) and title, in page order. */
function plots() {
  return page.evaluate(() =>
    [
      ...document.querySelectorAll(
        '[data-testid="compare-chart"], [data-testid="sweep-chart"], [data-testid="latency-chart"], [data-testid="series-chart"], [data-testid="energy-chart"]',
      ),
    ].map((el) => {
      const lines = [...el.querySelectorAll(".recharts-yAxis .recharts-cartesian-axis-line")];
      const h = Math.max(0, ...lines.map((l) => l.getBoundingClientRect().height));
      return {
        id: el.getAttribute("data-testid"),
        kind: el.getAttribute("data-kind"),
        title: el.querySelector("h3")?.textContent ?? "",
        plot: Math.round(h),
      };
    }),
  );
}

function overflow() {
  return page.evaluate(() => ({
    scroll: document.documentElement.scrollWidth,
    width: window.innerWidth,
  }));
}

try {
  context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1440, height: 900 },
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--disable-dev-shm-usage",
    ],
  });
  context.setDefaultTimeout(TIMEOUT_MS);
  page = context.pages()[0] ?? (await context.newPage());
  page.on("pageerror", (err) => pageErrors.push(String(err)));

  await run("log in", async () => {
    await page.goto(`${BASE}/login`);
    await page.fill('input[name="email"]', EMAIL);
    await page.fill('input[name="password"]', PASSWORD);
    await page.click('button[type="submit"]');
    await page.getByTestId("runs-table").waitFor();
  });

  for (const { n, ids } of SETS) {
    await run(`${n} runs: table and charts rendered, timed from navigation start`, async () => {
      check(ids.length === n, `set ${n} has ${ids.length} ids`);
      // Warm the app's code once (a user opening /compare from the runs page has it loaded),
      // then time a fresh navigation: navigation start → every table and chart drawn.
      await page.goto(`${BASE}/compare?runs=${ids.join(",")}`);
      await page.getByTestId("compare-table").first().waitFor();
      // best of two loads: the machine is shared, one load can lose a second to others' work
      let ms = Number.POSITIVE_INFINITY;
      let api = [];
      for (let k = 0; k < 2; k += 1) {
        await page.goto(`${BASE}/compare?runs=${ids.join(",")}`);
        // Interactive: the metric tables and the headline charts drawn, and every chart in the
        // first screen (charts further down mount as they scroll into view: LazyMount).
        await page.waitForFunction(() => {
          const t = document.querySelector('[data-testid="compare-table"]');
          const all = [...document.querySelectorAll('[data-testid="compare-chart"]')];
          const bars = all.filter((c) =>
            ["iops", "throughput", "p99"].includes(c.dataset.kind ?? ""),
          );
          const inView = [
            ...document.querySelectorAll(
              '[data-testid="compare-chart"], [data-testid="sweep-chart"]',
            ),
          ].filter((c) => c.getBoundingClientRect().top < window.innerHeight);
          const drawn = (c) => c.querySelector("svg .recharts-yAxis");
          return t && bars.length === 3 && bars.every(drawn) && inView.every(drawn);
        });
        const t = await page.evaluate(() => performance.now());
        const a = await page.evaluate(() =>
          performance
            .getEntriesByType("resource")
            .filter((e) => e.name.includes("/api/"))
            .map((e) => {
              const u = new URL(e.name);
              return `${u.pathname.replace(/[0-9a-f-]{36}/, ":id")} ${Math.round(e.startTime)}→${Math.round(e.responseEnd)}`;
            }),
        );
        if (t < ms) {
          ms = t;
          api = a;
        }
      }
      console.log(`timing ${n} runs: ${Math.round(ms)} ms (API: ${api.join(", ")})`);
      // The goal is < 1 s (docs: tests/browser/README.md); this bound only catches a page that
      // stopped scaling, on a loaded CI machine where loading the code alone can take a second.
      check(ms < 8000, `${n} runs took ${Math.round(ms)} ms to render`);
    });

    await run(
      `${n} runs: every plot area ≥ ${MIN_PLOT_PX} px, no sideways page scroll`,
      async () => {
        // scroll through the page so that every lazily mounted chart is drawn
        const height = () => page.evaluate(() => document.documentElement.scrollHeight);
        for (let y = 0; y <= (await height()); y += 500) {
          await page.evaluate((top) => window.scrollTo(0, top), y);
          await page.waitForTimeout(50);
        }
        await page.waitForFunction(
          () =>
            document.querySelectorAll('[data-testid="lazy-chart"]').length === 0 &&
            !document.body.textContent?.includes("Loading latency curves") &&
            !document.body.textContent?.includes("Loading per-second series"),
        );
        await page.evaluate(() => window.scrollTo(0, 0));
        const all = await plots();
        check(all.length >= 6, `only ${all.length} charts`);
        const small = all.filter((p) => p.plot < MIN_PLOT_PX);
        check(small.length === 0, `plots under ${MIN_PLOT_PX} px: ${JSON.stringify(small)}`);
        const o = await overflow();
        check(o.scroll <= o.width, `the page is ${o.scroll} px wide in a ${o.width} px window`);
        const sweeps = all.filter((p) => p.id === "sweep-chart").map((p) => p.title);
        check(new Set(sweeps).size === sweeps.length, `sweep titles repeat: ${sweeps}`);
      },
    );

    await run(`${n} runs: changes read direction-aware, coloured better/worse`, async () => {
      const cells = await page
        .getByTestId("ratio-cell")
        .evaluateAll((els) =>
          els.map((e) => ({ text: e.textContent ?? "", verdict: e.getAttribute("data-verdict") })),
        );
      check(cells.length >= n - 1, `only ${cells.length} change cells`);
      const phrase =
        /^(same|[\d.,]+(×|%) (faster|slower|lower latency|higher latency|less CPU|more CPU|[a-z]))/;
      const bad = cells.filter((c) => !phrase.test(c.text));
      check(bad.length === 0, `not direction-aware: ${JSON.stringify(bad.slice(0, 5))}`);
      check(
        cells.some((c) => /lower latency/.test(c.text) && c.verdict === "better"),
        "no 'lower latency' change marked better",
      );
      check(
        cells.some((c) => /slower/.test(c.text) && c.verdict === "worse"),
        "no 'slower' change marked worse",
      );
      const changeCharts = await page
        .locator('[data-testid="compare-chart"][data-kind^="change-"]')
        .count();
      check(
        changeCharts === 3,
        `expected IOPS, throughput and p99 change charts, found ${changeCharts}`,
      );
      // units name the figures shown: throughput in MB/s, never the wire's B/s
      const units = await page.locator('[data-testid="unit-cell"], .unit-head').allTextContents();
      check(units.includes("MB/s") && !units.includes("B/s"), `units: ${units}`);
      await shot(`K-compare-${n}`);
    });
  }

  const many = SETS[SETS.length - 1];
  await run(
    `${many.n} runs: the transposed table, switched by the user, stays in its box`,
    async () => {
      await page.goto(`${BASE}/compare?runs=${many.ids.join(",")}&table=metrics`);
      const table = page.getByTestId("compare-table").first();
      await table.waitFor();
      check((await table.getAttribute("data-layout")) === "metrics", "table=metrics ignored");
      const o = await overflow();
      check(o.scroll <= o.width, `the page is ${o.scroll} px wide in a ${o.width} px window`);
      // the first column stays in view when the table scrolls sideways inside its box
      const before = await table.locator("tbody th").first().boundingBox();
      await page.evaluate(() => {
        const box = document.querySelector(".table-scroll");
        if (box) box.scrollLeft = 2000;
      });
      const after = await table.locator("tbody th").first().boundingBox();
      check(
        before && after && Math.abs(before.x - after.x) < 1,
        `the first column moved from ${before?.x} to ${after?.x}`,
      );
      await shot(`K-compare-${many.n}-metrics-as-rows`);
    },
  );

  await run("dashboard: the latest runs compared keep their plots", async () => {
    await page.goto(`${BASE}/`);
    await page.getByTestId("dashboard-compare").waitFor();
    await page.waitForFunction(
      () =>
        document.querySelectorAll('[data-testid="compare-chart"] svg .recharts-yAxis').length >= 3,
    );
    const all = await plots();
    const small = all.filter((p) => p.plot < MIN_PLOT_PX);
    check(all.length >= 3 && small.length === 0, `dashboard plots: ${JSON.stringify(all)}`);
    const o = await overflow();
    check(o.scroll <= o.width, `the dashboard is ${o.scroll} px wide`);
    await shot("K-dashboard");
  });

  check(pageErrors.length === 0, `page errors: ${pageErrors.join("; ")}`);
  console.log(`compare: ${passed} passed, 0 failed`);
  await context.close();
  rmSync(userDataDir, { recursive: true, force: true });
} catch (err) {
  console.log(`not ok - ${step}: ${err?.message ?? err}`);
  if (page)
    await page.screenshot({ path: join(ARTIFACTS, "failure.png"), fullPage: true }).catch(() => {});
  await context?.close().catch(() => {});
  rmSync(userDataDir, { recursive: true, force: true });
  process.exit(1);
}
