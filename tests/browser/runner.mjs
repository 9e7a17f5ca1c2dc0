// One node for every browser script a test process runs: test_browser.py's `_node()` starts this
// once per pytest process and asks it for each script instead of starting `node SCRIPT` (each of
// those paid node's start and loading playwright-core's two bundles, 0.5–0.6 CPU-s; here once).
//
// On stdin, one JSON line per script: {"script": "tests/browser/X.mjs", "env": {...}}. The runner
// makes process.env that environment (exactly: what the last script had and this one has not is
// removed), lets lib.mjs read it (readEnv) and imports the script under a URL of its own
// (`?run=N`), so its module-level code runs again and its module-level state is new; lib.mjs and
// what it loaded (playwright-core) are loaded once. What the script prints goes to stdout as it
// would (stderr too: the test merges both); then one line `\0iowatt-runner exit CODE`: 0 after
// `done()`, 1 after a failed step or an uncaught error (its stack printed, as node does), 2 from
// `needs()`. While a script runs, the next stdin line answers its `pause` (lib.mjs). A script that
// hangs is the test's to end: it kills this process (pytest's timeout), and the next test starts
// another. The runner exits when stdin closes (the test process ended).
//
// The runner launches Chromium itself, once, when a script first opens a browser (lib.mjs
// `openBrowser`), and keeps it for every later script: each script works in contexts of its own,
// which the runner closes when the script ends, whatever way it ended (as a browser server closes
// a client's contexts when it disconnects). Playwright's client and server then live in one
// process and talk in memory, where a browser server (browser_server.mjs, a node of its own) had
// every call and every DevTools event it forwards encoded as JSON over a WebSocket on both sides.
// A browser that has exited (crashed, killed) is launched again for the next script. A script whose
// environment names IOWATT_BROWSER_WS connects to that server instead (IOWATT_BROWSER_SERVER=1: the
// old way, to compare). Killed, the runner takes its Chromium with it (Playwright's launch pipe).
import { appendFileSync, readdirSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";
import { launchChromium, lostDisabledFeatures, readEnv, ScriptExit, setRunner } from "./lib.mjs";

const END = "\0iowatt-runner exit ";

const queued = [];
let waiting = null;
const input = createInterface({ input: process.stdin });
input.on("line", (l) => {
  if (waiting) {
    const w = waiting;
    waiting = null;
    w(l);
  } else queued.push(l);
});
input.on("close", async () => {
  await (await launched)?.close().catch(() => {});
  process.exit(0);
});

/** This process's Chromium: launched at the first script that opens a browser, again when the last
 * one has exited. */
let launched = null;
async function browser() {
  const b = await launched?.catch(() => null);
  if (b?.isConnected()) return b;
  launched = launchChromium().then((b) => {
    const lost = lostDisabledFeatures(chromiumPid());
    if (lost.length) {
      b.close().catch(() => {});
      throw new Error(`lib.mjs's --disable-features drops Playwright's ${lost.join(",")}`);
    }
    return b;
  });
  return launched;
}

/** The pid of the Chromium this process launched (its child whose command line names CHROMIUM
 * flags: Playwright starts the browser process directly). */
function chromiumPid() {
  for (const pid of readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (
        ppid === process.pid &&
        readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("--disable-features=")
      )
        return pid;
    } catch {} // a process that has gone
  }
  throw new Error("runner: the Chromium it launched is not among its children");
}

/** The script's contexts closed, whatever way it ended (runner.mjs's browser outlives it). */
async function closeContexts() {
  const b = await launched?.catch(() => null);
  if (b?.isConnected()) await Promise.all(b.contexts().map((c) => c.close().catch(() => {})));
}

/** The next line on stdin. */
function line() {
  if (queued.length) return Promise.resolve(queued.shift());
  return new Promise((r) => {
    waiting = r;
  });
}

// the script running now: where an uncaught error goes (lib.mjs's handlers once it has opened its
// browser, else the error ends it with 1, as it ends node)
let current = null;
const stray = (err) => {
  if (err instanceof ScriptExit) return; // a script's end, thrown where nothing catches it
  if (current) current(err);
  else console.error(`# runner: an error after its script had ended: ${err?.stack ?? err}`);
};
process.on("uncaughtException", stray);
process.on("unhandledRejection", stray);

async function runScript({ script, env }, n) {
  for (const k of Object.keys(process.env)) if (!(k in env)) delete process.env[k];
  Object.assign(process.env, env);
  readEnv();
  let code = null;
  let ended;
  const end = new Promise((r) => {
    ended = r;
  });
  const exit = (c) => {
    if (code === null) {
      code = c;
      ended();
    }
  };
  const handlers = [];
  current = (err) => {
    if (handlers.length) for (const h of handlers) h(err);
    else {
      console.error(err?.stack ?? String(err));
      exit(1);
    }
  };
  setRunner({
    exit,
    line,
    onStray: (h) => handlers.push(h),
    browser: env.IOWATT_BROWSER_WS ? null : browser,
  });
  import(`${pathToFileURL(resolve(script)).href}?run=${n}`).then(
    () => exit(0), // its code ran to the end without done(): node would exit 0 once idle
    (err) => {
      if (err instanceof ScriptExit) return;
      console.error(err?.stack ?? String(err));
      exit(1);
    },
  );
  await end;
  setRunner(null);
  current = null;
  await closeContexts();
  return code;
}

for (let n = 1; ; n += 1) {
  const request = JSON.parse(await line());
  const code = await runScript(request, n);
  const memory = process.env.IOWATT_RUNNER_MEMORY; // a file: one line per script (node --expose-gc)
  if (memory) {
    globalThis.gc?.();
    const { heapUsed, rss } = process.memoryUsage();
    const mb = (b) => (b / 2 ** 20).toFixed(1);
    appendFileSync(
      memory,
      `${process.pid} ${n} ${request.script}: heap ${mb(heapUsed)} MB, rss ${mb(rss)} MB\n`,
    );
  }
  process.stdout.write(`${END}${code}\n`);
}
