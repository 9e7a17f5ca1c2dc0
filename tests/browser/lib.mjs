// What every browser script (tests/browser/*.mjs) shares: the environment, Debian's Chromium
// driven by playwright-core from frontend/node_modules (headless, 1440×900, the flags STYLE.md
// names), the UI's log-in, numbered steps (`ok N - name`) and one failure routine (`not ok -
// step: reason`, failure.png in IOWATT_ARTIFACTS, exit 1; a bad environment exits 2).
//
//   import { BASE, check, needs, openBrowser } from "./lib.mjs";
//   needs("views", RUNS.length > 0, "IOWATT_VIEW_RUNS");
//   const { page, run, shot, login, done } = await openBrowser("views");
//   await run("log in", login);
//   await run("the page shows …", async () => { … check(cond, "why") … await shot("name"); });
//   await done(); // no uncaught page errors; prints `views: N passed, 0 failed`
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";

const require = createRequire(new URL("../../frontend/package.json", import.meta.url));
const { chromium } = require("playwright-core");

// `make up`'s address unless IOWATT_URL says otherwise
export const BASE = (process.env.IOWATT_URL ?? "http://127.0.0.1:8000").replace(/\/$/, "");
export const EMAIL = process.env.IOWATT_EMAIL;
export const PASSWORD = process.env.IOWATT_PASSWORD;
export const ARTIFACTS = process.env.IOWATT_ARTIFACTS ?? join(tmpdir(), "iowatt-browser-artifacts");
export const CHROMIUM = process.env.IOWATT_CHROMIUM ?? "/usr/bin/chromium";
export const TIMEOUT_MS = Number(process.env.IOWATT_BROWSER_TIMEOUT_MS ?? 20_000);

export function check(cond, message) {
  if (!cond) throw new Error(message);
}

/** Exits 2 naming what to set unless IOWATT_URL, IOWATT_EMAIL, IOWATT_PASSWORD and the
 * script's own variables (`ok`, described by `what`) are there; then makes IOWATT_ARTIFACTS. */
export function needs(name, ok = true, what = "") {
  if (!BASE || !EMAIL || !PASSWORD || !ok) {
    console.error(
      `${name}: set IOWATT_URL, IOWATT_EMAIL, IOWATT_PASSWORD${what ? `, ${what}` : ""}`,
    );
    process.exit(2);
  }
  mkdirSync(ARTIFACTS, { recursive: true });
}

/** Whether the page is wider than its window (a table or chart that escaped its box). */
export async function pageOverflow(page) {
  return page.evaluate(() => ({
    scroll: document.documentElement.scrollWidth,
    width: window.innerWidth,
  }));
}

/** Fails when anything matching `selector` inside the element `testId` reaches past its right edge
 * (a badge that escaped its cell and the table). */
export async function fitsItsBox(page, testId, selector = "*") {
  const past = await page.getByTestId(testId).evaluate((box, sel) => {
    const edge = box.getBoundingClientRect().right;
    return Math.max(
      0,
      ...[...box.querySelectorAll(sel)].map((el) => el.getBoundingClientRect().right - edge),
    );
  }, selector);
  check(past <= 1, `something in ${testId} reaches ${Math.round(past)} px past its right edge`);
}

/** Fails when the page is wider than its window. */
export async function noOverflow(page) {
  const { scroll, width } = await pageOverflow(page);
  check(scroll <= width, `the page is ${scroll} px wide in a ${width} px window`);
}

/**
 * Chromium with a fresh profile. `run(name, fn)` is one numbered step: any error in it (or
 * anywhere after the launch) prints `not ok - <step>: <reason>`, saves failure.png and exits 1.
 * `onFail` runs first on failure (e.g. to stop a background heartbeat). Downloads are accepted
 * (Playwright's default) unless acceptDownloads is false.
 */
export async function openBrowser(
  name,
  { acceptDownloads = true, timed = false, onFail = () => {} } = {},
) {
  const userDataDir = mkdtempSync(join(tmpdir(), "iowatt-chromium-"));
  const state = { step: "launch", passed: 0, context: null, page: null };
  const pageErrors = [];

  const fail = async (err) => {
    try {
      await onFail();
    } catch {}
    console.log(`not ok - ${state.step}: ${err?.message ?? err}`);
    if (pageErrors.length) console.log(`${name}: page errors: ${pageErrors.join(" | ")}`);
    if (state.page) {
      await state.page
        .screenshot({ path: join(ARTIFACTS, "failure.png"), fullPage: true })
        .catch(() => {});
      console.log(
        `${name}: screenshot ${join(ARTIFACTS, "failure.png")} (url ${state.page.url()})`,
      );
    }
    await state.context?.close().catch(() => {});
    rmSync(userDataDir, { recursive: true, force: true });
    console.log(`${name}: ${state.passed} passed, 1 failed`);
    process.exit(1);
  };
  process.on("uncaughtException", fail);
  process.on("unhandledRejection", fail);

  try {
    state.context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM,
      headless: true,
      acceptDownloads,
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
  } catch (err) {
    await fail(err);
  }
  const context = state.context;
  context.setDefaultTimeout(TIMEOUT_MS);
  const page = context.pages()[0] ?? (await context.newPage());
  state.page = page;
  page.on("pageerror", (err) => pageErrors.push(String(err)));

  const run = async (stepName, fn) => {
    state.step = stepName;
    const t0 = Date.now();
    try {
      await fn();
    } catch (err) {
      await fail(err);
    }
    state.passed += 1;
    console.log(`ok ${state.passed} - ${stepName}${timed ? ` (${Date.now() - t0} ms)` : ""}`);
  };

  /** A screenshot in IOWATT_ARTIFACTS (the whole page unless fullPage is false). */
  const shot = (file, fullPage = true) =>
    page.screenshot({ path: join(ARTIFACTS, `${file}.png`), fullPage });

  /** Logs in through the form and waits for `ready` (a test id) on the page it lands on. */
  const login = async (ready = "runs-table") => {
    await page.goto(`${BASE}/login`);
    await page.fill('input[name="email"]', EMAIL);
    await page.fill('input[name="password"]', PASSWORD);
    await page.click('button[type="submit"]');
    await page.getByTestId(ready).waitFor();
  };

  /** The end: no uncaught errors in the page, the summary line, the browser closed, exit 0. */
  const done = async () => {
    state.step = "no uncaught errors in the page";
    if (pageErrors.length) await fail(new Error(`page errors: ${pageErrors.join(" | ")}`));
    console.log(`${name}: ${state.passed} passed, 0 failed`);
    await context.close();
    rmSync(userDataDir, { recursive: true, force: true });
    process.exit(0); // nothing left to wait for (a script's timers or sockets must not hold it)
  };

  return { page, context, run, shot, login, done, fail, pageErrors };
}
