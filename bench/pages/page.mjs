// Ready-times of the pages users open most, in Debian's Chromium at 1440×900 (issue 25): log in,
// then for each page load it once (the app's code cached, as when a user goes from page to page),
// then navigate to it ROUNDS more times and take, per load, navigation start → the page's data
// drawn (its own "ready" condition below). Prints one JSON line: {"name": [ms, ...], ...}.
//
//   node bench/pages/page.mjs BASE EMAIL PASSWORD ROUNDS NAME=PATH [NAME=PATH ...]
import { createRequire } from "node:module";

const require = createRequire(new URL("../../frontend/package.json", import.meta.url));
const { chromium } = require("playwright-core");
const [base, email, password, rounds, ...pages] = process.argv.slice(2);

// What "ready" means per page: its figures drawn, not its first paint.
const READY = {
  // the latest runs' comparison: its three headline bar charts drawn
  dashboard: () =>
    document.querySelectorAll(
      '[data-testid="dashboard-compare"] [data-testid="compare-chart"] svg .recharts-yAxis',
    ).length >= 3,
  // the list's first page of rows
  runs: () => document.querySelectorAll('[data-testid="run-row"]').length > 0,
  // the metric table and the three headline bar charts drawn, and every chart in the first screen
  compare: () => {
    const t = document.querySelector('[data-testid="compare-table"]');
    const charts = [...document.querySelectorAll('[data-testid="compare-chart"]')];
    const bars = charts.filter((c) => ["iops", "throughput", "p99"].includes(c.dataset.kind ?? ""));
    const drawn = (c) => c.querySelector("svg .recharts-yAxis");
    const inView = charts.filter((c) => c.getBoundingClientRect().top < window.innerHeight);
    return t && bars.length === 3 && bars.every(drawn) && inView.every(drawn);
  },
  // the preset's summary (its grid and every chart) and the jobs' first page
  run: () => {
    const summary = document.querySelector('[data-testid="preset-summary"]');
    const charts = [...(summary?.querySelectorAll('[data-testid^="view-chart-"]') ?? [])];
    return (
      summary?.querySelector('[data-testid="view-grid"]') &&
      charts.length > 0 &&
      charts.every((c) => c.querySelector("svg .recharts-yAxis")) &&
      document.querySelectorAll('[data-testid="job-row"]').length > 0
    );
  },
  // the view's grid and every one of its charts
  view: () => {
    const charts = [...document.querySelectorAll('[data-testid^="view-chart-"]')];
    return (
      document.querySelector('[data-testid="view-grid"]') &&
      charts.length > 0 &&
      charts.every((c) => c.querySelector("svg .recharts-yAxis"))
    );
  },
};

const browser = await chromium.launch({
  executablePath: process.env.IOWATT_CHROMIUM ?? "/usr/bin/chromium",
  headless: true,
  args: [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
  ],
});
const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
await page.goto(`${base}/login`);
await page.fill('input[name="email"]', email);
await page.fill('input[name="password"]', password);
await page.click('button[type="submit"]');
await page.getByTestId("runs-table").waitFor({ timeout: 30000 });
const out = {};
for (const spec of pages) {
  const [name, path] = [spec.slice(0, spec.indexOf("=")), spec.slice(spec.indexOf("=") + 1)];
  const ready = READY[name.replace(/-.*/, "")];
  if (!ready) throw new Error(`no ready condition for ${name}`);
  await page.goto(`${base}${path}`);
  await page.waitForFunction(ready, null, { timeout: 60000 }); // warm: code and fonts cached
  out[name] = [];
  for (let k = 0; k < Number(rounds); k += 1) {
    await page.goto(`${base}${path}`);
    await page.waitForFunction(ready, null, { timeout: 60000, polling: "raf" });
    out[name].push(Math.round(await page.evaluate(() => performance.now())));
  }
}
await browser.close();
console.log(JSON.stringify(out));
