// The run page people share, in Chromium at 1440×900 (issue 12), against a running server:
// a succeeded run leads with its one-line summary and the system, the validity flags the API
// reports beside the facts they qualify, a latency percentile chart with a real plot, the
// engine JSON downloaded in one click, timestamps with their zone and "Clone and re-run";
// a running run shows one bar with its phase, ETA and a live per-second chart; the campaign
// comparison by target keeps two directories of one disk apart; SNIA PTS (pts_steps.mjs): the New
// run form's PTS mode and the report pages; "Log out" revokes the token.
//
//   IOWATT_URL=... IOWATT_EMAIL=... IOWATT_PASSWORD=... IOWATT_ARTIFACTS=DIR \
//   IOWATT_RUN_ID=<succeeded run> IOWATT_LIVE_RUN_ID=<queued long run> IOWATT_RUN_IDS=<id,...> \
//   node tests/browser/run_page.mjs
//
// Prints `ok N - ...` per check and `run_page: N passed, 0 failed`; exit 1 with `failure.png`.
import { readFileSync } from "node:fs";
import { BASE, check, downloaded, needs, openBrowser, viewRows, visit } from "./lib.mjs";
import { ptsSteps, wantsPts } from "./pts_steps.mjs";

const RUN = process.env.IOWATT_RUN_ID;
const LIVE = process.env.IOWATT_LIVE_RUN_ID ?? "";
const RUNS = (process.env.IOWATT_RUN_IDS ?? "").split(",").filter(Boolean);

needs(
  "run_page",
  RUN && LIVE && RUNS.length >= 2,
  "IOWATT_RUN_ID, IOWATT_LIVE_RUN_ID, IOWATT_RUN_IDS",
);
const { page, run, shot, login, done } = await openBrowser("run_page");

/** The API as the page's own session calls it (bearer token from localStorage). */
async function api(path, token) {
  const r = await fetch(`${BASE}/api/v1${path}`, { headers: { Authorization: `Bearer ${token}` } });
  return { status: r.status, body: r.status === 200 ? await r.json() : null };
}

/** The chart's plot: its largest recharts surface (the legend's icons are small ones). */
async function plotBox(chart) {
  const boxes = await chart
    .locator(".recharts-surface")
    .evaluateAll((els) =>
      els.map((e) => e.getBoundingClientRect()).map((r) => ({ width: r.width, height: r.height })),
    );
  return boxes.sort((a, b) => b.height - a.height)[0] ?? null;
}

async function noHorizontalOverflow() {
  const [scroll, client] = await page.evaluate(() => [
    document.documentElement.scrollWidth,
    document.documentElement.clientWidth,
  ]);
  check(scroll <= client + 1, `the page overflows horizontally: ${scroll} > ${client}`);
}

let token = "";
await run("log in", async () => {
  await login("runs-table", "/runs"); // not the dashboard: lib.mjs login
  token = (await page.evaluate(() => localStorage.getItem("iowatt.token"))) ?? "";
  check(token.length > 10, "no session token in localStorage");
});

await run(
  "a running run: one bar with its phase and ETA, and a live per-second chart",
  async () => {
    // a busy machine may still be finishing the runs before it: wait until this one started
    const started = Date.now() + 180_000;
    while (Date.now() < started) {
      const r = await api(`/runs/${LIVE}`, token);
      check(r.status === 200, `GET the live run: ${r.status}`);
      if (r.body.status === "running") break;
      check(["queued", "assigned"].includes(r.body.status), `the live run is ${r.body.status}`);
      await new Promise((ok) => setTimeout(ok, 300));
    }
    await visit(page, `/runs/${LIVE}`); // from the runs list: inside the app (lib.mjs visit)
    const phases = new Set();
    let eta = "";
    const deadline = Date.now() + 60_000;
    // the phase moves from the idle baseline to the job; the chart appears with the 2nd sample
    while (Date.now() < deadline) {
      const phase = page.getByTestId("run-phase");
      if (await phase.count()) {
        phases.add((await phase.textContent()) ?? "");
        eta = (await page.getByTestId("run-eta").textContent()) ?? eta;
      }
      if (
        (await page.getByTestId("run-chart-live").count()) > 0 &&
        [...phases].some((p) => p.startsWith("job 1 of 1"))
      )
        break;
      await page.waitForTimeout(500);
    }
    check(
      [...phases].some((p) => p.startsWith("job 1 of 1: ")),
      `phases seen: ${[...phases]}`,
    );
    check(/about .*left|time left unknown/.test(eta), `no ETA: ${eta}`);
    const live = page.getByTestId("run-chart-live");
    await live.waitFor();
    const box = await plotBox(live);
    check(box && box.height >= 200, `live chart plot ${box?.height} px high`);
    const pct = Number(await page.getByRole("progressbar").getAttribute("aria-valuenow"));
    check(pct > 0 && pct <= 100, `whole-run percent ${pct}`);
    await noHorizontalOverflow();
    await shot("M-run-live");
  },
);

await run("a succeeded run leads with its summary and system, flags beside the facts", async () => {
  await page.goto(`${BASE}/runs/${RUN}`);
  const line = page.getByTestId("run-summary-line");
  await line.waitFor();
  await page.getByTestId("system-kernel").waitFor();
  const sys = await api(`/runs/${RUN}/system`, token);
  check(sys.status === 200, `GET system ${sys.status}`);
  if (sys.body.hostname) {
    // the system arrives in its own request: the line names the host once it has
    await page.waitForFunction(
      (h) =>
        document
          .querySelector("[data-testid=run-summary-line]")
          ?.textContent?.includes(`host ${h}`),
      sys.body.hostname,
    );
  }
  const text = (await line.textContent()) ?? "";
  check(text.includes("job") && text.includes("IOPS") && text.includes("MB/s"), `summary: ${text}`);
  if (sys.body.hostname) check(text.includes(`host ${sys.body.hostname}`), `no host in: ${text}`);
  const kernel = (await page.getByTestId("system-kernel").textContent()) ?? "";
  check(kernel === (sys.body.kernel ?? "unknown"), `kernel ${kernel} vs ${sys.body.kernel}`);
  const cache = (await page.getByTestId("system-cache").textContent()) ?? "";
  check(cache.startsWith(sys.body.cache), `cache mode: ${cache}`);
  const shown = await page
    .locator("[data-testid=run-summary] [data-flag]")
    .evaluateAll((els) => els.map((e) => e.dataset.flag));
  const want = sys.body.validity.map((f) => f.flag);
  check(
    JSON.stringify([...shown].sort()) === JSON.stringify([...want].sort()),
    `flags shown ${shown} vs the API's ${want}`,
  );
  const created = (await page.locator("dt:text('Created') + dd").textContent()) ?? "";
  check(/ UTC([+-]\d\d:\d\d)? /.test(created), `timestamp without its zone: ${created}`);
});

await run("the latency percentile curve has a real plot", async () => {
  const chart = page.getByTestId("latency-percentiles").first();
  await chart.waitFor();
  await chart.scrollIntoViewIfNeeded();
  const box = await plotBox(chart);
  check(box && box.height >= 200 && box.width >= 300, `latency plot ${box?.width}×${box?.height}`);
  const ticks = (await chart.textContent()) ?? "";
  check(ticks.includes("p99"), `no percentile ticks: ${ticks.slice(0, 200)}`);
  await noHorizontalOverflow();
  await page.evaluate(() => window.scrollTo(0, 0));
  await shot("M-run-page");
});

await run("the engine JSON downloads in one click", async () => {
  const [download] = await Promise.all([
    page.waitForEvent("download"),
    page.getByTestId("raw-json").click(),
  ]);
  check(download.suggestedFilename() === `iowatt-run-${RUN}.json`, download.suggestedFilename());
  const doc = JSON.parse(readFileSync(await downloaded(download), "utf8"));
  check(Array.isArray(doc.jobs) && doc.jobs.length > 0, "the download has no jobs");
});

await run("clone and re-run opens New run with the run in the URL", async () => {
  await page.getByTestId("clone-run").click();
  await page.waitForURL(`**/runs/new?from=${RUN}`);
});

await run(
  "campaign comparison by target: two directories of one disk are two columns",
  async () => {
    // from the New run form the clone opened: inside the app (lib.mjs visit)
    await visit(page, `/compare?runs=${RUNS.join(",")}&group_by=target&force=true`);
    const cmp = await api(`/compare?runs=${RUNS.join(",")}&group_by=target&force=true`, token);
    const byDevice = await api(`/compare?runs=${RUNS.join(",")}&group_by=device&force=true`, token);
    check(
      cmp.body.columns.length > byDevice.body.columns.length,
      `by target ${cmp.body.columns.length} columns, by device ${byDevice.body.columns.length}`,
    );
    // the page's heading counts the columns it drew: "Compare 4 runs in 3 groups"
    await page.getByText(`in ${cmp.body.columns.length} groups`).first().waitFor();
    await noHorizontalOverflow();
    await shot("M-compare-by-target");
    await visit(page, "/runs");
    await page.getByTestId("runs-table").waitFor();
    await shot("M-runs");
  },
);

// SNIA PTS: the New run form's PTS mode and the report pages (pts_steps.mjs), when the test
// gave a host with a raw device
if (wantsPts()) await ptsSteps({ page, run, shot });

const WRITEBACK = process.env.IOWATT_WRITEBACK_RUN_ID ?? "";
if (WRITEBACK)
  await run(
    "the page cache panel: Dirty and Writeback beside throughput, with the limits",
    async () => {
      await page.goto(`${BASE}/runs/${WRITEBACK}`);
      const panel = page.getByTestId("page-cache");
      await panel.waitFor();
      const facts = (await page.getByTestId("page-cache-facts").textContent()) ?? "";
      check(
        facts.includes("Dirty limit") && facts.includes("20 % of dirtyable memory"),
        `page cache facts: ${facts}`,
      );
      const chart = page.getByTestId("writeback-chart");
      await chart.scrollIntoViewIfNeeded();
      const box = await plotBox(chart);
      check(
        box && box.height >= 200 && box.width >= 300,
        `write-back plot ${box?.width}×${box?.height}`,
      );
      const legend = (await chart.textContent()) ?? "";
      for (const name of ["Dirty", "Writeback", "Dirty limit", "MB/s"])
        check(legend.includes(name), `write-back chart without ${name}: ${legend.slice(0, 300)}`);
      // Dirty (38 one-second samples), Writeback, the two limits and throughput: five lines
      const lines = await chart.locator(".recharts-line-curve").count();
      check(lines === 5, `write-back chart lines: ${lines}`);
      await noHorizontalOverflow();
      await shot("M-run-writeback");
    },
  );

// The QoS view (issue 29): runs of the qos-randread-4k preset answered with recorded real sweeps
// (tests/data/qos); IOWATT_QOS_FIGURE is the API's IOPS at the target for the first
const QOS = (process.env.IOWATT_QOS_RUN_IDS ?? "").split(",").filter(Boolean);
const QOS_FIGURE = Number(process.env.IOWATT_QOS_FIGURE ?? "NaN");
if (QOS.length)
  await run("the QoS view: IOPS at the latency target, the curve, IOPS per watt", async () => {
    for (const [ids, name] of [
      [QOS.slice(0, 1), "M-qos-view"],
      [QOS, "M-qos-view-2"],
    ]) {
      await page.goto(`${BASE}/views/qos?runs=${ids.join(",")}`);
      await page.getByTestId("view-grid").waitFor();
      const rows = await viewRows(page);
      console.log(`# qos rows (${ids.length} runs): ${JSON.stringify(rows)}`);
      const heads = await page
        .getByTestId("view-grid")
        .locator("thead th")
        .evaluateAll((els) => els.map((e) => e.textContent.trim()));
      console.log(`# qos headers: ${JSON.stringify(heads)}`);
      // the units in the headers: IOPS, µs, W and IOPS per watt
      for (const h of [
        "IOPS",
        "p99 latency (µs)",
        "p99.9 latency (µs)",
        "Power (W)",
        "IOPS per watt",
      ])
        check(
          heads.some((x) => x.startsWith(h)),
          `no ${h} header: ${heads}`,
        );
      // the single figure: the search's IOPS at p99 ≤ 1 ms, first in each run's group, its
      // power and IOPS per watt labelled estimated (the host's meter is datasheet watts)
      const figures = rows.filter((r) => r.point.startsWith("At the target (p99 ≤ 1 ms)"));
      check(figures.length === ids.length, `figure rows: ${JSON.stringify(figures)}`);
      const first = figures[0];
      const shown = Number(first.iops.replace(/,/g, "").match(/\d+(\.\d+)?/)?.[0]);
      check(
        Math.abs(shown - QOS_FIGURE) <= Math.max(1, QOS_FIGURE * 0.005),
        `IOPS at the target ${first.iops} vs the API's ${QOS_FIGURE}`,
      );
      check(
        first.meets === "yes" && /^QD \d+$/.test(first.qd),
        `figure row: ${JSON.stringify(first)}`,
      );
      check(
        /\d/.test(first.iops_per_w) && first.iops_per_w.includes("estimated"),
        `IOPS per watt: ${first.iops_per_w}`,
      );
      check(first.power.includes("estimated"), `power: ${first.power}`);
      // the curve: nine sweep points per run, IOPS against p99 (solid) and p99.9 (dashed), the target
      // the second run's search missed 1 ms even at QD 1: its row says so, the sweep's QD 2 is the figure
      const missed = rows.filter((r) => r.point.startsWith("Search (missed the target)"));
      check(
        missed.length === ids.length - 1 && missed.every((r) => r.meets === "no"),
        `missed searches: ${JSON.stringify(missed)}`,
      );
      const sweep = rows.filter((r) => r.point.startsWith("Sweep qd"));
      check(sweep.length === 9 * ids.length, `sweep rows: ${sweep.length}`);
      const chart = page.getByTestId("view-chart-qos-curve");
      await chart.scrollIntoViewIfNeeded();
      const box = await plotBox(chart);
      check(box && box.height >= 200 && box.width >= 300, `qos plot ${box?.width}×${box?.height}`);
      const legend = (await chart.textContent()) ?? "";
      for (const text of [" p99", " p99.9", "target p99 ≤ 1 ms", "IOPS", "Completion latency"])
        check(legend.includes(text), `qos chart without ${text}: ${legend.slice(0, 400)}`);
      const lines = await chart.locator(".recharts-line-curve").count();
      check(lines === 2 * ids.length + 1, `qos chart lines: ${lines}`);
      await noHorizontalOverflow();
      await page.evaluate(() => window.scrollTo(0, 0));
      await shot(name);
    }
  });

await run("log out revokes the session token", async () => {
  check((await api("/auth/me", token)).status === 200, "the token works before");
  await page.getByTestId("logout").click();
  await page.getByTestId("login-form").waitFor();
  check((await api("/auth/me", token)).status === 401, "the token still works after log out");
});

await done();
