// Time the compare page to interactive in Debian's Chromium: log in, then for each URL measure from
// navigation start to the comparison table and first chart being visible. Prints one JSON line.
// node bench/compare/page.mjs BASE EMAIL PASSWORD URL [URL ...]
import { createRequire } from "node:module";

const require = createRequire(new URL("../../frontend/package.json", import.meta.url));
const { chromium } = require("playwright-core");
const [base, email, password, ...paths] = process.argv.slice(2);
const browser = await chromium.launch({
  executablePath: "/usr/bin/chromium", headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync"],
});
// a fresh profile: launch() gives every context its own temporary user data directory
const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
await page.goto(`${base}/login`);
await page.fill('input[name="email"]', email);
await page.fill('input[name="password"]', password);
await page.click('button[type="submit"]');
await page.getByTestId("runs-table").waitFor({ timeout: 20000 });
const times = [];
for (const p of paths) {
  const t0 = Date.now();
  await page.goto(`${base}${p}`);
  await page.locator('[data-testid="compare-table"]').first().waitFor({ state: "visible", timeout: 20000 });
  await page.locator(".recharts-surface").first().waitFor({ state: "visible", timeout: 20000 });
  times.push(Date.now() - t0);
}
await browser.close();
console.log(JSON.stringify({ times_ms: times }));
