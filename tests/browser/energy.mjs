// A run's energy states in the web UI at 1440×900, against a running server (issue 10):
// "energy: computing…" polled with back-off, "energy unavailable: <reason>" not polled at all,
// the computed figures, and the compare page's charts chosen by the server's metric kinds.
//
//   IOWATT_URL=... IOWATT_EMAIL=... IOWATT_PASSWORD=... IOWATT_ARTIFACTS=DIR \
//   IOWATT_ENERGY_STEPS=<steps, in order: computing,failed,ok,compare,pages> IOWATT_RUN_ID=<id> \
//   [IOWATT_RUN_IDS=<id>,<id>] node tests/browser/energy.mjs
//
// tests/browser/test_browser.py sets the states up with real runs and the database: the steps
// run in one browser, and with IOWATT_PAUSES=1 the script stops before `computing` and `failed`
// (lib.mjs pause) while the test puts the run in that state. Prints `ok N - ...` per check and
// `energy: N passed, 0 failed`; exit 1 with `failure.png` on failure, 2 on bad env.
import { BASE, check, navigate, needs, openBrowser, pause } from "./lib.mjs";

const RUN = process.env.IOWATT_RUN_ID;
const STEPS = (process.env.IOWATT_ENERGY_STEPS ?? process.env.IOWATT_ENERGY_STEP ?? "")
  .split(",")
  .filter(Boolean);
const RUNS = (process.env.IOWATT_RUN_IDS ?? "").split(",").filter(Boolean);
const KNOWN = ["computing", "failed", "ok", "compare", "pages"];

needs(
  "energy",
  RUN && STEPS.length > 0 && STEPS.every((s) => KNOWN.includes(s)),
  `IOWATT_RUN_ID and IOWATT_ENERGY_STEPS (of ${KNOWN})`,
);
/** Times (ms since the page was opened) of every GET of the run, as the browser sent them. */
const runGets = [];
let opened = 0;

/** Waits `ms` of real time: the behaviour under test is how often the page asks meanwhile. */
const idle = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

const { page, run, shot, login, done } = await openBrowser("energy");
page.on("request", (req) => {
  if (req.method() === "GET" && new URL(req.url()).pathname === `/api/v1/runs/${RUN}`) {
    runGets.push(Date.now() - opened);
  }
});

// onto the runs list, not the dashboard (which draws the latest runs' comparison); the run page is
// loaded for each state (the test changed the database under the app's cache), the other pages are
// opened inside the app (lib.mjs navigate)
await run("log in", () => login("runs-table", "/runs"));

const openRun = async () => {
  opened = Date.now();
  runGets.length = 0;
  await page.goto(`${BASE}/runs/${RUN}`);
  const panel = page.getByTestId("energy-panel");
  await panel.waitFor();
  await panel.scrollIntoViewIfNeeded();
  return panel;
};

for (const STEP of STEPS) {
  if (STEP === "computing" || STEP === "failed") await pause(STEP);
  if (STEP === "computing") {
    await run(
      "energy still being computed: 'energy: computing…', polled with back-off",
      async () => {
        const panel = await openRun();
        check((await panel.getAttribute("data-status")) === "pending", "energy is not pending");
        const text = (await page.getByTestId("energy-pending").textContent()) ?? "";
        check(text.includes("energy: computing…"), `no computing note: ${text}`);
        await shot("energy-computing");
        await idle(15_000);
        // 2 s, then 4 s, then 8 s apart: about 4 GETs in 15 s, where a fixed 2 s asked 8 times
        check(runGets.length >= 2 && runGets.length <= 5, `GETs of the run at ${runGets} ms`);
        const gaps = runGets.slice(2).map((t, i) => t - (runGets[i + 1] ?? 0));
        check(
          gaps.every((g, i) => i === 0 || g > (gaps[i - 1] ?? 0)),
          `the waits do not grow: ${gaps}`,
        );
      },
    );
    await run("the runs list says computing", async () => {
      await page.goto(`${BASE}/runs`);
      const cell = page.locator(`[data-run-id="${RUN}"] [data-testid="run-energy"]`);
      await cell.waitFor();
      check(((await cell.textContent()) ?? "").includes("computing…"), "runs list energy cell");
      await shot("energy-runs-list");
    });
  } else if (STEP === "failed") {
    await run(
      "energy missing long after the upload: 'energy unavailable: <reason>', no polling",
      async () => {
        const panel = await openRun();
        check((await panel.getAttribute("data-status")) === "failed", "energy is not failed");
        const text = (await page.getByTestId("energy-failed").textContent()) ?? "";
        check(
          /energy unavailable: not computed within 15 minutes/.test(text),
          `no reason: ${text}`,
        );
        await shot("energy-unavailable");
        const before = runGets.length;
        await idle(6_000);
        check(runGets.length === before, `the page still polls: GETs at ${runGets} ms`);
      },
    );
  } else if (STEP === "ok") {
    await run("computed energy: the figures", async () => {
      await openRun();
      await page.getByTestId("energy-total").waitFor();
      await shot("energy-ok");
    });
  } else if (STEP === "pages") {
    await run("compare devices offers the runs' workload with its like runs counted", async () => {
      await navigate(page, "/compare/devices");
      const matching = page.getByTestId("pick-matching");
      await matching.waitFor();
      const text = (await matching.textContent()) ?? "";
      const n = Number(/(\d+) matching/.exec(text)?.[1] ?? 0);
      check(n >= 2, `fewer than two like runs: ${text}`);
      await shot("compare-devices");
    });
    await run("campaigns page", async () => {
      await navigate(page, "/campaigns");
      await page.getByRole("heading", { name: "Campaigns" }).waitFor();
      await shot("campaigns");
    });
  } else {
    await run("compare: charts picked by the server's metric kinds, energy bars", async () => {
      await navigate(page, `/compare?runs=${RUNS.join(",")}`);
      await page.getByTestId("compare-table").first().waitFor();
      const kinds = await page
        .locator('[data-testid="compare-chart"]')
        .evaluateAll((els) => els.map((e) => e.getAttribute("data-kind")));
      for (const k of ["iops", "throughput", "p99", "change-iops"]) {
        check(kinds.includes(k), `no ${k} chart among ${kinds}`);
      }
      await shot("compare-kinds");
    });
  }
}

await done();
