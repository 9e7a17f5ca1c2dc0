// One Chromium for many browser scripts run as nodes of their own (IOWATT_BROWSER_RUNNER=0, or
// IOWATT_BROWSER_SERVER=1; runner.mjs otherwise launches a Chromium of its own for the scripts it
// runs): launches Debian's Chromium as a Playwright browser server (lib.mjs's flags), prints its
// WebSocket endpoint as one line (`ws://…`) and serves until its stdin closes (the test process
// that started it ended) or the browser exits. A script connects when IOWATT_BROWSER_WS names the
// endpoint (lib.mjs `openBrowser`) and works in contexts of its own, which close when it
// disconnects; test_browser.py's `_browser_ws()` starts one per test process and starts another
// when this one has gone.
import { createRequire } from "node:module";
import { CHROMIUM, CHROMIUM_ARGS, lostDisabledFeatures } from "./lib.mjs";

const require = createRequire(new URL("../../frontend/package.json", import.meta.url));
const { chromium } = require("playwright-core");

const server = await chromium.launchServer({
  executablePath: CHROMIUM,
  headless: true,
  args: CHROMIUM_ARGS,
  host: "127.0.0.1",
});
// Chromium reads the last --disable-features only: ours must hold every one Playwright passes
const lost = lostDisabledFeatures(server.process().pid);
if (lost.length) {
  console.log(`browser_server: lib.mjs's --disable-features drops Playwright's ${lost.join(",")}`);
  await server.close();
  process.exit(1);
}

let closing = false;
server.on("close", () => {
  if (closing) return;
  console.error("browser_server: the browser exited");
  process.exit(1);
});
console.log(server.wsEndpoint());
process.stdin.resume();
process.stdin.on("end", async () => {
  closing = true;
  await server.close().catch(() => {});
  process.exit(0);
});
