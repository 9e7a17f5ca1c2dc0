// What every browser script (tests/browser/*.mjs) shares: the environment, Debian's Chromium
// driven by playwright-core from frontend/node_modules (headless, 1440×900, the flags STYLE.md
// names), the UI's log-in, numbered steps (`ok N - name`) and one failure routine (`not ok -
// step: reason`, failure.png in IOWATT_ARTIFACTS, exit 1; a bad environment exits 2). Run by hand
// (`node tests/browser/X.mjs`) a script's end is its process's exit; run by runner.mjs (the tests)
// it is a ScriptExit the runner catches, and the environment is read again for each script.
//
//   import { BASE, check, needs, openBrowser } from "./lib.mjs";
//   needs("views", RUNS.length > 0, "IOWATT_VIEW_RUNS");
//   const { page, run, shot, login, done } = await openBrowser("views");
//   await run("log in", login);
//   await run("the page shows …", async () => { … check(cond, "why") … await shot("name"); });
//   await done(); // no uncaught page errors; prints `views: N passed, 0 failed`
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";

const require = createRequire(new URL("../../frontend/package.json", import.meta.url));
const { chromium } = require("playwright-core");

// The environment, read by readEnv(): when this module loads (a script run by hand) and again for
// each script runner.mjs runs (its own environment); the names below are live bindings, so a script
// sees the values of its own run.
export let BASE; // `make up`'s address unless IOWATT_URL says otherwise
export let EMAIL;
export let PASSWORD;
export let ARTIFACTS;
/** Debian's Chromium headless shell (package chromium-headless-shell, Playwright's own default for
 * headless: the same Blink, V8 and Skia as /usr/bin/chromium, without the desktop browser's
 * profile, UI and services) when it is installed, else Debian's Chromium. A context costs
 * ~0.5 CPU-s less (pages.mjs's steps that open one, four alternating pairs). */
const HEADLESS_SHELL = "/usr/bin/chromium-headless-shell";
export let CHROMIUM;
export let TIMEOUT_MS;
// screenshots are drawn only when asked (IOWATT_SHOTS=1: for people and the docs) or on failure
export let SHOTS;

/** Reads the environment into the names above (runner.mjs calls it before each script). */
export function readEnv(env = process.env) {
  BASE = (env.IOWATT_URL ?? "http://127.0.0.1:8000").replace(/\/$/, "");
  EMAIL = env.IOWATT_EMAIL;
  PASSWORD = env.IOWATT_PASSWORD;
  ARTIFACTS = env.IOWATT_ARTIFACTS ?? join(tmpdir(), "iowatt-browser-artifacts");
  CHROMIUM =
    env.IOWATT_CHROMIUM ?? (existsSync(HEADLESS_SHELL) ? HEADLESS_SHELL : "/usr/bin/chromium");
  TIMEOUT_MS = Number(env.IOWATT_BROWSER_TIMEOUT_MS ?? 20_000);
  SHOTS = !["", "0"].includes(env.IOWATT_SHOTS ?? "");
}
readEnv();

/** How a script ends run by runner.mjs: `exit(code)` tells the runner and throws this, so the
 * script's code stops where `process.exit` would have stopped it. */
export class ScriptExit extends Error {
  constructor(code) {
    super(`exit ${code}`);
    this.code = code;
  }
}

// runner.mjs's hooks while it runs a script ({ exit(code), line(), onStray(fn), browser(): its
// Chromium, or null when the script is to connect to IOWATT_BROWSER_WS }), else null;
// inRunner once runner.mjs has set them: from then on nothing here ends the process (what a script
// left running after its end only stops with a ScriptExit)
let runner = null;
let inRunner = false;

/** runner.mjs: the hooks for the script about to run, null once it has ended. */
export function setRunner(hooks) {
  runner = hooks;
  inRunner = true;
}

/** Ends the script: the process exits (run by hand), or runner.mjs is told and the script's code
 * stops (a ScriptExit thrown). */
function exit(code) {
  if (!inRunner) process.exit(code);
  runner?.exit(code);
  throw new ScriptExit(code);
}

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
    exit(2);
  }
  mkdirSync(ARTIFACTS, { recursive: true });
}

let stdinLines = null;

/** With IOWATT_PAUSES=1, stops until the test has set the server up for the next step: prints
 * `pause: NAME` and waits for a line on stdin (test_browser.py `_node(..., pauses=...)`), so a
 * script keeps one browser across states the test changes; without it, returns at once. */
export async function pause(name) {
  if (process.env.IOWATT_PAUSES !== "1") return;
  if (inRunner) {
    if (!runner) throw new ScriptExit(1); // a script that has ended, still running
    console.log(`pause: ${name}`);
    await runner.line(); // runner.mjs reads stdin: the next line is the test's answer
    return;
  }
  if (!stdinLines) stdinLines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
  console.log(`pause: ${name}`);
  await stdinLines.next();
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
 * What a screenshot stands for, checked whether or not it is drawn: once no "Loading…" is left on
 * the page (the app's pending state), the app shows visible text in a box at least 100 px high.
 * Prints `shot NAME: H px, N chars` (the Python tests find the line) and, with IOWATT_SHOTS=1,
 * writes the PNG to `path` (the whole page unless fullPage is false).
 */
export async function shotOf(p, path, fullPage = true) {
  await p
    .waitForFunction(
      () =>
        ![...document.querySelectorAll("p, span, div, button")].some(
          (el) => el.textContent?.trim() === "Loading…" && el.checkVisibility(),
        ),
      null,
      { timeout: TIMEOUT_MS },
    )
    .catch(() => {
      throw new Error(`${path}: the page still says "Loading…"`);
    });
  const shown = await p.evaluate(() => {
    const root = document.getElementById("root") ?? document.body;
    return { chars: root.innerText.trim().length, height: root.getBoundingClientRect().height };
  });
  const name = path
    .split("/")
    .pop()
    .replace(/\.png$/, "");
  check(
    shown.chars > 0 && shown.height >= 100,
    `${name}: the page shows nothing (${JSON.stringify(shown)})`,
  );
  console.log(`shot ${name}: ${Math.round(shown.height)} px, ${shown.chars} chars`);
  if (SHOTS) await p.screenshot({ path, fullPage });
}

/**
 * Opens `path` (and its query) inside the app already loaded in `page`, as a click on one of its
 * links does: React Router's history entry and a popstate event, no new document. The app does
 * not load and start again, and what a script injected (axe-core) stays. Returns once the page it
 * left is gone from the document (its elements are marked `data-left` first, and the route's
 * elements are replaced, not reused), so no wait after it finds the old page's test ids; the new
 * page may still be loading. A page outside the app (about:blank) is loaded with goto. Not for a
 * route to itself with other parameters (React keeps its elements): goto there. The pointer stays
 * where the last click left it, and unlike a new document the page drawn under it shows that spot
 * hovered (a chart's tooltip): move it away first where that matters (pages.mjs parkPointer).
 */
export async function navigate(page, path) {
  if (!page.url().startsWith(`${BASE}/`)) {
    await page.goto(`${BASE}${path}`);
    return;
  }
  const moved = await page.evaluate((to) => {
    if (window.location.pathname + window.location.search === to) return false; // there already
    const box = document.querySelector("main") ?? document.getElementById("root");
    for (const el of box?.children ?? []) el.dataset.left = "1";
    const idx = (window.history.state?.idx ?? 0) + 1;
    const key = Math.random().toString(36).slice(2, 10);
    window.history.pushState({ usr: null, key, idx }, "", to);
    window.dispatchEvent(new PopStateEvent("popstate", { state: window.history.state }));
    return true;
  }, path);
  if (moved) await page.waitForFunction(() => !document.querySelector("[data-left]"));
}

/** Which page of the app `path` is (`runs`, `runs/new`, `runs/:id`, ...): two paths of one page
 * differ in their ids only. */
export function pageOf(path) {
  const [first, second] = new URL(path, BASE).pathname.split("/").filter(Boolean);
  return second === undefined ? first : second === "new" ? `${first}/new` : `${first}/:id`;
}

/** Opens `path` inside the app (`navigate`) when it is another page than the one shown, else by a
 * page load. A page load starts the app again (its bundle parsed, its session and lists asked
 * for): ~0.75 CPU-s of Chromium and ~0.18 of the API, against ~0.16 and ~0.03 for a navigation
 * inside the app (24 pages each way, 2026-12-06). The same page with other ids (a run page after a
 * run page, a view after a view) is loaded, so what a step reads is never the page before it. */
export async function visit(page, path) {
  if (pageOf(path) === pageOf(page.url())) await page.goto(`${BASE}${path}`);
  else await navigate(page, path);
}

/** A download's file, saved in IOWATT_ARTIFACTS (Download.path() is not there for a browser
 * connected to a server). */
export async function downloaded(download) {
  const file = join(ARTIFACTS, `download-${Date.now()}-${download.suggestedFilename()}`);
  await download.saveAs(file);
  return file;
}

/** Browser features a test never uses and pays for: the address bar's two WebUI popups, loaded
 * in a renderer of their own for every window (every new context: ~0.7 CPU-s each, more than the
 * page it opens). The pages a test opens are drawn the same without them. */
export const DISABLED_FEATURES = ["WebUIOmniboxPopup", "WebUIOmniboxAimPopup"];

/** Playwright 1.65's own --disable-features (its chromiumSwitches): Chromium reads only the last
 * --disable-features, so ours repeats them; browser_server.mjs fails if Playwright's list has
 * one this lacks (a Playwright upgrade: copy its list here). */
export const PLAYWRIGHT_DISABLED_FEATURES = [
  "AvoidUnnecessaryBeforeUnloadCheckSync",
  "DestroyProfileOnBrowserClose",
  "HttpsUpgrades",
  "HttpsFirstBalancedModeAutoEnable",
  "LensOverlay",
  "MediaRouter",
  "PaintHolding",
  "ThirdPartyStoragePartitioning",
  "AvoidCorsURLLoaderRestartOnRedirect",
  "TcpPortRandomizationWin",
  "OptimizationHints",
  "NetworkTimeServiceQuerying",
  "AimEnabled",
  "PreconnectToSearch",
  "msForceBrowserSignIn",
  "msEdgeUpdateLaunchServicesPreferredVersion",
];

/** The flags every launch uses (STYLE.md's, and nothing a test run does not need). */
export const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--disable-dev-shm-usage",
  `--disable-features=${[...PLAYWRIGHT_DISABLED_FEATURES, ...DISABLED_FEATURES].join(",")}`,
  // V8 without its optimising compilers (TurboFan, Maglev): a test's page lives seconds, too short
  // for their compiling to pay back. tests/browser/test_pages.py, six alternating pairs at load 2-12:
  // tree CPU-s a median 0.90 of the default's (docs/testing.md § Session 19). What the pages do is
  // the same JavaScript, interpreted and baseline-compiled (Ignition, Sparkplug).
  "--js-flags=--no-opt --no-maglev",
];

/** The Chromium a script works in: runner.mjs's (one launch per test process, kept for every script
 * it runs), else the browser server IOWATT_BROWSER_WS names (browser_server.mjs: a script run as a
 * node of its own, IOWATT_BROWSER_RUNNER=0), else a Chromium of the script's own. A server that
 * does not answer is said on a `#` line, and the script launches its own. `shared`: the browser
 * outlives the script (its contexts are closed at its end, not the browser). */
async function connectOrLaunch(name) {
  if (runner?.browser) return { browser: await runner.browser(), shared: true };
  const ws = process.env.IOWATT_BROWSER_WS;
  if (ws) {
    try {
      return { browser: await chromium.connect(ws, { timeout: 10_000 }), shared: false };
    } catch (err) {
      console.log(
        `# ${name}: browser server ${ws} did not answer (${err?.message ?? err}): launching`,
      );
    }
  }
  return { browser: await launchChromium(), shared: false };
}

/** Debian's Chromium with CHROMIUM_ARGS (headless). */
export function launchChromium() {
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
}

/** Chromium reads the last --disable-features only: the features of Playwright's own list that the
 * command line of process `pid` (a Chromium Playwright launched) loses, so that ours must repeat
 * them (a Playwright upgrade: copy its list into PLAYWRIGHT_DISABLED_FEATURES). */
export function lostDisabledFeatures(pid) {
  const argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
  const lists = argv
    .filter((a) => a.startsWith("--disable-features="))
    .map((a) => a.slice("--disable-features=".length).split(","));
  return lists
    .slice(0, -1)
    .flat()
    .filter((f) => !lists.at(-1).includes(f));
}

/** With IOWATT_STEP_CPU=1, the CPU seconds of this process's cgroup (v1 cpuacct): the test process
 * and everything it started, the browser and the stack included (tests/conftest.py's timeline puts
 * each test process in one), printed per step to find what a script spends; else null. */
function treeCpu() {
  if (process.env.IOWATT_STEP_CPU !== "1") return null;
  try {
    const line = readFileSync("/proc/self/cgroup", "utf8")
      .split("\n")
      .find((l) => l.split(":")[1] === "cpuacct");
    const dir = line.split(":").slice(2).join(":").replace(/\/$/, "");
    return Number(readFileSync(`/sys/fs/cgroup/cpuacct${dir}/cpuacct.usage`, "utf8")) / 1e9;
  } catch {
    return null;
  }
}

/** With IOWATT_STEP_METRICS=1, Chromium's own counters of the script's page (DevTools'
 * Performance.getMetrics: its renderer's main thread busy, running JavaScript, laying out,
 * recalculating styles) read around each step, to find the expensive page; else null. */
async function pageMetrics(context, page) {
  if (process.env.IOWATT_STEP_METRICS !== "1") return null;
  const cdp = await context.newCDPSession(page);
  await cdp.send("Performance.enable");
  return async () => {
    const { metrics } = await cdp.send("Performance.getMetrics");
    return Object.fromEntries(metrics.map((m) => [m.name, m.value]));
  };
}

/** A step's share of pageMetrics: seconds of the main thread's tasks, JavaScript, layout, style. */
function metricsDelta(a, b) {
  const d = (k) => ((b[k] ?? 0) - (a[k] ?? 0)).toFixed(2);
  return `task ${d("TaskDuration")} s, script ${d("ScriptDuration")}, layout ${d("LayoutDuration")}, style ${d("RecalcStyleDuration")}`;
}

/** The script's contexts closed, then the browser unless it is runner.mjs's (`shared`): a launched
 * one exits, a server's stays up for the next script (close() only disconnects from it). */
async function closeAll(browser, shared) {
  if (!browser) return;
  await Promise.all(browser.contexts().map((c) => c.close().catch(() => {})));
  if (!shared) await browser.close().catch(() => {});
}

/**
 * One Chromium for the script, and a fresh context (its own cookies and storage, like a fresh
 * profile) for the page. A second person (a link opened without login) is another context of the
 * same browser: `browser.newContext(...)`, never a second launch. `run(name, fn)` is one numbered
 * step: any error in it (or anywhere after the launch) prints `not ok - <step>: <reason>`, saves
 * failure.png and exits 1. `onFail` runs first on failure (e.g. to stop a background heartbeat).
 * Downloads are accepted (Playwright's default) unless acceptDownloads is false.
 */
export async function openBrowser(
  name,
  { acceptDownloads = true, timed = false, onFail = () => {} } = {},
) {
  const state = {
    step: "launch",
    passed: 0,
    browser: null,
    shared: false,
    context: null,
    page: null,
  };
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
    await closeAll(state.browser, state.shared);
    console.log(`${name}: ${state.passed} passed, 1 failed`);
    exit(1);
  };
  // an error outside a step fails the script; a ScriptExit is the script ending (runner.mjs)
  const stray = (err) => {
    if (!(err instanceof ScriptExit)) fail(err).catch(() => {});
  };
  if (inRunner) runner?.onStray(stray);
  else {
    process.on("uncaughtException", stray);
    process.on("unhandledRejection", stray);
  }

  try {
    ({ browser: state.browser, shared: state.shared } = await connectOrLaunch(name));
    state.context = await state.browser.newContext({
      acceptDownloads,
      viewport: { width: 1440, height: 900 },
    });
  } catch (err) {
    await fail(err);
  }
  const { browser, context } = state;
  context.setDefaultTimeout(TIMEOUT_MS);
  const page = await context.newPage();
  state.page = page;
  page.on("pageerror", (err) => pageErrors.push(String(err)));

  const metrics = await pageMetrics(context, page);
  const run = async (stepName, fn) => {
    state.step = stepName;
    const t0 = Date.now();
    const cpu0 = treeCpu();
    const m0 = await metrics?.();
    try {
      await fn();
    } catch (err) {
      if (err instanceof ScriptExit) throw err; // a step inside this one failed: said once
      await fail(err);
    }
    state.passed += 1;
    const m = m0 ? `, page ${metricsDelta(m0, await metrics())}` : "";
    const cpu = (cpu0 === null ? "" : `, tree ${(treeCpu() - cpu0).toFixed(2)} CPU-s`) + m;
    console.log(
      `ok ${state.passed} - ${stepName}${timed || cpu ? ` (${Date.now() - t0} ms${cpu})` : ""}`,
    );
  };

  /** `shotOf` the page: IOWATT_ARTIFACTS/FILE.png (the whole page unless fullPage is false). */
  const shot = (file, fullPage = true) => shotOf(page, join(ARTIFACTS, `${file}.png`), fullPage);

  /** Logs in as the log-in form does, without drawing the form: the session from POST
   * /api/v1/auth/login kept where the app keeps it (frontend/src/lib/auth.ts: localStorage
   * `iowatt.token`), put there before the first page of this tab starts (once: a log-out stays
   * one), then opens `next` (a path; the dashboard without one) and waits for `ready` (a test id)
   * on it. The form itself is smoke.mjs's (a wrong password refused, then the landing page),
   * pages.mjs's (audited) and oidc.mjs's; here it cost one more page drawn and typed into: ~0.2
   * CPU-s a script (a fresh context to the runs list, six alternating pairs: 0.95 -> 0.75 tree
   * CPU-s). The dashboard draws the latest runs' comparison, charts and all (landing there cost
   * ~0.7 CPU-s more than the runs list with six runs on the server, more with many): a script
   * that starts elsewhere lands there. */
  const login = async (ready = "runs-table", next = "") => {
    const r = await page.request.post(`${BASE}/api/v1/auth/login`, {
      data: { email: EMAIL, password: PASSWORD },
    });
    check(r.ok(), `log-in refused: ${r.status()} ${await r.text()}`);
    const { access_token: token } = await r.json();
    await page.addInitScript((t) => {
      if (sessionStorage.getItem("iowatt.test-login") === t) return;
      sessionStorage.setItem("iowatt.test-login", t);
      localStorage.setItem("iowatt.token", t);
    }, token);
    await page.goto(`${BASE}${next || "/"}`);
    await page.getByTestId(ready).waitFor();
  };

  /** The end: no uncaught errors in the page, the summary line, the browser closed, exit 0. */
  const done = async () => {
    state.step = "no uncaught errors in the page";
    if (pageErrors.length) await fail(new Error(`page errors: ${pageErrors.join(" | ")}`));
    console.log(`${name}: ${state.passed} passed, 0 failed`);
    await closeAll(browser, state.shared);
    exit(0); // nothing left to wait for (a script's timers or sockets must not hold it)
  };

  return { page, browser, context, run, shot, login, done, fail, pageErrors };
}

/** A named view's table rows as {column: text}, one object per `view-row` (its `td[data-col]` cells). */
export async function viewRows(page) {
  return page
    .getByTestId("view-row")
    .evaluateAll((trs) =>
      trs.map((tr) =>
        Object.fromEntries(
          [...tr.querySelectorAll("td[data-col]")].map((td) => [
            td.getAttribute("data-col"),
            td.textContent.trim(),
          ]),
        ),
      ),
    );
}
