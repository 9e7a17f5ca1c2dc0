// A run page left open on an active run (bench/pages/live.py starts the platform and the run):
// each build's run page opened in Debian's Chromium at 1440×900 and left open SECONDS, the builds
// alternating (ABBA...) for ROUNDS rounds; per page the CPU of the browser's renderer processes
// (SystemInfo.getProcessInfo: one page open at a time, so the page's) and the main thread's figures
// (Performance.getMetrics), from 6 s after the live chart is drawn; what the page received from the
// API (Network.loadingFinished's encodedDataLength: bytes on the wire) and the CPU of the API process
// serving that build (`pids`: its process group; nothing else calls it). Chromium's default flags for
// JavaScript (a user's browser), unlike the tests' (lib.mjs CHROMIUM_ARGS: no optimising compiler).
//
//   node bench/pages/live.mjs '{"urls": {"NAME": URL, ...}, "login": URL, "email": ..., "password":
//     ..., "path": "/runs/ID", "rounds": 3, "seconds": 60, "pids": {"NAME": PGID, ...}}'
import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";

const require = createRequire(new URL("../../frontend/package.json", import.meta.url));
const { chromium } = require("playwright-core");
const cfg = JSON.parse(process.argv[2]);
const names = Object.keys(cfg.urls);

const browser = await chromium.launch({
  executablePath: "/usr/bin/chromium-headless-shell",
  headless: true,
  args: [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
  ],
});
const cdp = await browser.newBrowserCDPSession();
const cpuByType = async () => {
  const { processInfo } = await cdp.send("SystemInfo.getProcessInfo");
  const by = {};
  for (const p of processInfo) by[p.type] = (by[p.type] ?? 0) + p.cpuTime;
  return by;
};
const res = await fetch(`${cfg.login}/api/v1/auth/login`, {
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify({ email: cfg.email, password: cfg.password }),
});
const { access_token: token } = await res.json();
const load = () => readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
// CPU seconds of the processes of one process group (an API process that serves only this build's
// page: the agent reports to the stack's own API): utime + stime, 100 ticks a second
const groupCpuS = (pgid) => {
  let ticks = 0;
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    let f;
    try {
      f = readFileSync(`/proc/${d}/stat`, "utf8").split(") ").pop().split(" ");
    } catch {
      continue;
    }
    if (Number(f[2]) === pgid) ticks += Number(f[11]) + Number(f[12]);
  }
  return ticks / 100;
};

const rows = [];
for (let r = 0; r < cfg.rounds; r++) {
  for (const name of r % 2 ? [...names].reverse() : names) {
    const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    await context.addInitScript((t) => localStorage.setItem("iowatt.token", t), token);
    const page = await context.newPage();
    const pageCdp = await context.newCDPSession(page);
    await pageCdp.send("Performance.enable");
    // what the page received from the API: bytes on the wire (headers included) and requests
    await pageCdp.send("Network.enable");
    const api = new Set();
    const wire = { bytes: 0, requests: 0, counting: false };
    pageCdp.on("Network.requestWillBeSent", (e) => {
      if (e.request.url.includes("/api/v1/")) api.add(e.requestId);
    });
    pageCdp.on("Network.loadingFinished", (e) => {
      if (!wire.counting || !api.has(e.requestId)) return;
      wire.bytes += e.encodedDataLength;
      wire.requests += 1;
    });
    await page.goto(`${cfg.urls[name]}${cfg.path}`);
    await page.getByTestId("run-chart-live").waitFor({ timeout: 60_000 });
    await page.waitForTimeout(6_000);
    const metrics = async () =>
      Object.fromEntries(
        (await pageCdp.send("Performance.getMetrics")).metrics.map((m) => [m.name, m.value]),
      );
    const [m0, p0, l0, s0] = [await metrics(), await cpuByType(), load(), groupCpuS(cfg.pids[name])];
    wire.counting = true;
    await page.waitForTimeout(cfg.seconds * 1000);
    wire.counting = false;
    const [m1, p1, s1] = [await metrics(), await cpuByType(), groupCpuS(cfg.pids[name])];
    const d = (k) => +(m1[k] - m0[k]).toFixed(3);
    const row = {
      build: name,
      round: r,
      load: `${l0} -> ${load()}`,
      renderer_cpu_s: +(p1.renderer - p0.renderer).toFixed(3),
      browser_cpu_s: +(p1.browser - p0.browser).toFixed(3),
      api_cpu_s: +(s1 - s0).toFixed(2),
      api_requests: wire.requests,
      api_kb: +(wire.bytes / 1000).toFixed(1),
      task_s: d("TaskDuration"),
      script_s: d("ScriptDuration"),
      layout_s: d("LayoutDuration"),
      layouts: d("LayoutCount"),
      style_s: d("RecalcStyleDuration"),
    };
    console.log(JSON.stringify(row));
    rows.push(row);
    await context.close();
  }
}
for (const name of names) {
  const mine = rows.filter((x) => x.build === name);
  const list = (k) => mine.map((x) => x[k]).join(", ");
  const median = (k) => mine.map((x) => x[k]).sort((a, b) => a - b)[Math.floor(mine.length / 2)];
  console.log(
    `${name}: renderer CPU-s in ${cfg.seconds} s ${list("renderer_cpu_s")} (median ${median("renderer_cpu_s")}); ` +
      `script s ${list("script_s")}; layouts ${list("layouts")}; API CPU-s ${list("api_cpu_s")}; ` +
      `API requests ${list("api_requests")}, kB ${list("api_kb")}`,
  );
}
await browser.close();
