// Share links in Chromium (issue 13, V2): a member shares a comparison from the compare page; a
// second browser context, never logged in, opens the link and sees the frozen comparison and
// nothing else of the team — every link on the page is walked and every request the page makes
// is recorded: only /api/v1/shared/<token>[...] and static assets; the link preview (OpenGraph
// tags, a 1200x630 PNG) is checked; the member revokes the link under Shared links and the
// page now says the link is gone; a comparison filtered by environment keeps its filter on the
// link (only the matching runs, the filter said). Screenshots of the shared page with 2 and 8 runs.
//
//   IOWATT_SHARE_RUNS=id,id  IOWATT_SHARE_RUNS_8=8 ids  IOWATT_SHARE_TEAM=team name
//   IOWATT_SHARE_SHOTS=dir (default IOWATT_ARTIFACTS)  + lib.mjs's variables (a member's login)
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  ARTIFACTS,
  BASE,
  check,
  needs,
  noOverflow,
  openBrowser,
  shotOf,
  TIMEOUT_MS,
  visit,
} from "./lib.mjs";

const RUNS = (process.env.IOWATT_SHARE_RUNS ?? "").split(",").filter(Boolean);
const RUNS8 = (process.env.IOWATT_SHARE_RUNS_8 ?? "").split(",").filter(Boolean);
const TEAM = process.env.IOWATT_SHARE_TEAM ?? "";
const SHOTS = process.env.IOWATT_SHARE_SHOTS ?? ARTIFACTS;
needs(
  "share",
  RUNS.length === 2 && RUNS8.length === 8 && TEAM !== "",
  "IOWATT_SHARE_RUNS (2 ids), IOWATT_SHARE_RUNS_8 (8 ids), IOWATT_SHARE_TEAM",
);

const { page, browser, run, shot, login, done } = await openBrowser("share", {
  onFail: async () => anon?.close(),
});

// the second context (of the same Chromium): a fresh profile, no token, every request recorded
let anon = null;
const requests = [];

/** The member shares the comparison the compare page shows; returns the link's path /s/<token>.
 * The compare page is opened inside the app from another page (lib.mjs visit), loaded after a
 * compare page. */
async function shareFromCompare(runs, title, charts = "bars,latency,energy", more = "") {
  const q = `runs=${runs.join(",")}&group_by=none&charts=${charts}&table=runs${more}`;
  await visit(page, `/compare?${q}`);
  await page.getByTestId("compare-table").first().waitFor();
  await page.getByTestId("share-button").click();
  await page.getByTestId("share-title").fill(title);
  await page.getByTestId("share-create").click();
  const url = (await page.getByTestId("share-url").innerText()).trim();
  check(/\/s\/[A-Za-z0-9_-]{20,}$/.test(url), `the dialog shows a share URL: ${url}`);
  await page.getByTestId("share-done").click();
  return new URL(url).pathname;
}

/** Whether a request the shared page made is one it may make. */
function allowed(url, path) {
  const u = new URL(url);
  if (u.protocol === "data:" || u.protocol === "blob:") return true;
  if (u.origin !== new URL(BASE).origin) return false;
  const token = path.split("/").pop();
  if (u.pathname === path) return true; // the page itself
  if (u.pathname.startsWith("/assets/") || u.pathname === "/favicon.ico") return true;
  return (
    u.pathname === `/api/v1/shared/${token}` ||
    u.pathname === `/api/v1/shared/${token}/export.csv` ||
    u.pathname === `/api/v1/shared/${token}/export.json`
  );
}

await run("a member logs in", () => login("runs-table", "/runs")); // not the dashboard: lib.mjs login

let path2 = "";
await run("the member shares a comparison of 2 runs from the compare page", async () => {
  path2 = await shareFromCompare(RUNS, "Disk vs RAM, 4 KiB random reads");
});

await run("a second context without login opens the link: the frozen comparison", async () => {
  anon = await browser.newContext({
    viewport: { width: 1440, height: 900 },
    acceptDownloads: true,
  });
  anon.setDefaultTimeout(TIMEOUT_MS);
  anon.on("request", (r) => requests.push(r.url()));
  const p = await anon.newPage();
  await p.goto(`${BASE}${path2}`);
  await p.getByTestId("shared-runs").waitFor();
  const by = await p.getByTestId("shared-by").innerText();
  check(
    by.startsWith(`Shared by the team ${TEAM} on `),
    `"Shared by the team TEAM on DATE": ${by}`,
  );
  check(
    (await p.getByTestId("shared-title").innerText()) === "Disk vs RAM, 4 KiB random reads",
    "the title",
  );
  check((await p.locator('[data-testid="shared-runs"] tbody tr').count()) === 2, "2 runs");
  await p.getByTestId("shared-table").first().waitFor();
  // the latency chart was on: drawn from the link's own answer (no /compare/latency call)
  await p.getByTestId("shared-latency").waitFor();
  check(
    (await p.locator("nav, [data-testid=logout], input[name=password]").count()) === 0,
    "no nav, no login",
  );
  const token = await p.evaluate(() => localStorage.length);
  check(token === 0, "nothing stored in the anonymous browser");
  await shotOf(p, join(SHOTS, "V2-shared-2-runs.png"), false);
  await shotOf(p, join(SHOTS, "V2-shared-2-runs-full.png"));
  await p.close();
});

await run("every link on the shared page is walked and stays on the link", async () => {
  const p = await anon.newPage();
  await p.goto(`${BASE}${path2}`);
  await p.getByTestId("shared-table").first().waitFor();
  const hrefs = await p.$$eval("a[href]", (as) => as.map((a) => a.href));
  for (const href of hrefs) {
    check(allowed(href, path2), `a link leads off the shared view: ${href}`);
    await p.goto(href);
    await p.getByTestId("shared-page").waitFor();
  }
  // the exports are the page's only other actions: both downloads come from the link's API
  // (back on the link's page first if a link led away from it)
  if (hrefs.length) {
    await p.goto(`${BASE}${path2}`);
    await p.getByTestId("shared-table").first().waitFor();
  }
  const [csv] = await Promise.all([
    p.waitForEvent("download"),
    p.getByTestId("shared-csv").click(),
  ]);
  const [json] = await Promise.all([
    p.waitForEvent("download"),
    p.getByTestId("shared-json").click(),
  ]);
  check(csv.suggestedFilename() === "iowatt-shared.csv", "the CSV download");
  check(json.suggestedFilename() === "iowatt-shared.json", "the JSON download");
  console.log(`share: ${hrefs.length} link(s) on the shared page walked`);
  await p.close();
});

await run("every request the shared page made is the link's API or a static asset", async () => {
  const api = requests.filter((u) => new URL(u).pathname.startsWith("/api/"));
  check(api.length >= 3, `the page called the link's API (${api.length} calls)`);
  const bad = requests.filter((u) => !allowed(u, path2));
  check(bad.length === 0, `requests outside the link: ${bad.join(", ")}`);
  writeFileSync(join(ARTIFACTS, "share-requests.txt"), `${requests.join("\n")}\n`);
  console.log(
    `share: ${requests.length} requests recorded, ${api.length} to /api/v1/shared/<token>`,
  );
});

await run("the link preview: escaped OpenGraph tags and a 1200x630 PNG", async () => {
  const html = await (await fetch(`${BASE}${path2}`)).text();
  check(html.includes('property="og:title" content="Disk vs RAM, 4 KiB random reads"'), "og:title");
  check(/property="og:description" content="[^"]*Shared by /.test(html), "og:description");
  check(html.includes(`${path2}/preview.png"`), "og:image");
  const png = Buffer.from(await (await fetch(`${BASE}${path2}/preview.png`)).arrayBuffer());
  check(png.subarray(1, 4).toString() === "PNG", "a PNG");
  check(png.readUInt32BE(16) === 1200 && png.readUInt32BE(20) === 630, "1200x630");
  writeFileSync(join(SHOTS, "V2-preview-2-runs.png"), png);
});

await run("a comparison of 8 runs shared and opened without login", async () => {
  const path8 = await shareFromCompare(RUNS8, "8 runs: four directories, two repeats each");
  const p = await anon.newPage();
  await p.goto(`${BASE}${path8}`);
  await p.getByTestId("shared-table").first().waitFor();
  check((await p.locator('[data-testid="shared-runs"] tbody tr').count()) === 8, "8 runs");
  await p.waitForTimeout(500); // charts settle
  await shotOf(p, join(SHOTS, "V2-shared-8-runs.png"), false);
  await shotOf(p, join(SHOTS, "V2-shared-8-runs-full.png"));
  const png = Buffer.from(await (await fetch(`${BASE}${path8}/preview.png`)).arrayBuffer());
  writeFileSync(join(SHOTS, "V2-preview-8-runs.png"), png);
  // shared links are opened on phones first (issue 25): the 8 runs' page fits 390 px
  await p.setViewportSize({ width: 390, height: 844 });
  await p.getByTestId("shared-table").first().waitFor();
  // the charts follow the new width on their ResizeObserver's next turn: under a loaded machine
  // the first look came before it (CI: 601 px in 390 with the 1440 px charts still drawn); the
  // same check once the layout has had up to 10 s to follow
  await p
    .waitForFunction(() => document.documentElement.scrollWidth <= window.innerWidth, null, {
      timeout: 10_000,
    })
    .catch(() => {});
  await noOverflow(p);
  await shotOf(p, join(SHOTS, "V2-shared-8-runs-390.png"));
  await p.close();
});

await run(
  "the runs list filters by the recorded environment's fields, kept in its URL",
  async () => {
    await visit(page, "/runs?q=share%3A"); // from the compare page: inside the app
    await page.getByTestId("runs-table").waitFor();
    await page.getByTestId("env-filter-field").selectOption("raid_level");
    await page.getByTestId("env-filter-value").fill("raid10");
    await page.getByTestId("env-filter-add").click();
    await page.waitForFunction(
      () => new URL(location.href).searchParams.get("env") === "raid_level:raid10",
    );
    const rows = page.locator("[data-testid=runs-table] tbody tr");
    await page.waitForFunction(
      () => document.querySelectorAll("[data-testid=runs-table] tbody tr").length === 4,
    );
    const names = await rows.allInnerTexts();
    check(
      names.every((n) => n.includes("share: share-disk")),
      `only the disk runs: ${names}`,
    );
    await page.reload();
    await page.getByTestId("env-filter-chip").waitFor();
    check(
      (await page.getByTestId("env-filter-chip").innerText()).startsWith("RAID level = raid10"),
      "the filter is kept in the URL",
    );
    await page.waitForFunction(
      () => document.querySelectorAll("[data-testid=runs-table] tbody tr").length === 4,
    );
  },
);

await run("a comparison filtered by environment keeps its filter on the link", async () => {
  // the 8 runs: four on disk directories in a RAID 10 environment, four on tmpfs in a local one
  const path = await shareFromCompare(RUNS8, "RAID 10 only", "bars", "&env=raid_level:raid10");
  const p = await anon.newPage();
  await p.goto(`${BASE}${path}`);
  await p.getByTestId("shared-table").first().waitFor();
  check((await p.locator('[data-testid="shared-runs"] tbody tr').count()) === 4, "4 runs");
  const note = (await p.getByTestId("shared-env-filter").innerText()).trim();
  check(
    note.includes("RAID level = raid10") && note.includes("4 of the runs shared left out"),
    `the filter on the link: ${note}`,
  );
  await shotOf(p, join(SHOTS, "V2-shared-env-filter.png"), false);
  await p.close();
});

await run("the member sees the links under Shared links and revokes the first", async () => {
  await visit(page, "/shares"); // from the compare page: inside the app, nothing of it cached
  await page.getByTestId("shares-table").waitFor();
  const row = page.getByTestId("share-row").filter({ hasText: "Disk vs RAM" });
  const views = Number(await row.getByTestId("share-views").innerText());
  check(views >= 2, `views counted: ${views}`);
  await shot("V2-shares");
  await row.getByTestId("share-revoke").click();
  await page.getByTestId("confirm-action").click();
  await row.getByTestId("share-state").getByText("revoked").waitFor();
  await shotOf(page, join(SHOTS, "V2-shares-revoked.png"), false);
});

await run("the revoked link's page says the link is gone (no login prompt)", async () => {
  const p = await anon.newPage();
  await p.goto(`${BASE}${path2}`);
  await p.getByTestId("shared-gone").waitFor();
  const text = await p.getByTestId("shared-gone").innerText();
  check(/not available/.test(text) && /revoked/.test(text), `the gone page: ${text}`);
  check((await p.locator("input[name=password], nav").count()) === 0, "no login prompt");
  const r = await fetch(`${BASE}/api/v1/shared/${path2.split("/").pop()}`);
  check(r.status === 404, `the API answers 404 after revoke (${r.status})`);
  await shotOf(p, join(SHOTS, "V2-shared-revoked.png"), false);
  await p.close();
  await anon.close();
});

await done();
