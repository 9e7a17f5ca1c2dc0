// A procurement review shared by read-only link (issue 16 on issue 13's links), opened in a
// Chromium profile that never logs in: the decided review (its frozen figures: decision, ranking,
// charts, every figure, sources, methodology) and a later undecided version ("not decided yet");
// every link on the page is walked and stays on the link; the CSV and JSON downloads; every
// request the page made is /api/v1/shared/<token>[/export.*] or a static asset; the link preview
// (OpenGraph tags, a 1200x630 PNG of the ranking). Screenshots V3-*.png at 1440x900.
//
//   IOWATT_SHARE_DECIDED=/s/<token>  IOWATT_SHARE_UNDECIDED=/s/<token>  IOWATT_SHARE_TEAM=name
//   IOWATT_SHARE_HIDDEN=a target path the page must not show  IOWATT_SHARE_SHOTS=dir
//   + lib.mjs's variables (IOWATT_EMAIL/PASSWORD are required by lib but never used: no login)
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { ARTIFACTS, BASE, check, needs, noOverflow, openBrowser, shotOf } from "./lib.mjs";

const DECIDED = process.env.IOWATT_SHARE_DECIDED ?? "";
const UNDECIDED = process.env.IOWATT_SHARE_UNDECIDED ?? "";
const TEAM = process.env.IOWATT_SHARE_TEAM ?? "";
const HIDDEN = process.env.IOWATT_SHARE_HIDDEN ?? "";
const SHOTS = process.env.IOWATT_SHARE_SHOTS ?? ARTIFACTS;
needs(
  "share_review",
  DECIDED.startsWith("/s/") && UNDECIDED.startsWith("/s/") && TEAM !== "" && HIDDEN !== "",
  "IOWATT_SHARE_DECIDED, IOWATT_SHARE_UNDECIDED (/s/<token>), IOWATT_SHARE_TEAM, IOWATT_SHARE_HIDDEN",
);

const { page, run, done } = await openBrowser("share_review");
const requests = [];
page.on("request", (r) => requests.push(r.url()));

/** Whether a URL the shared page reached is one it may reach (the link's page, API, assets). */
function allowed(url) {
  const u = new URL(url);
  if (u.protocol === "data:" || u.protocol === "blob:") return true;
  if (u.origin !== new URL(BASE).origin) return false;
  if (u.pathname.startsWith("/assets/") || u.pathname === "/favicon.ico") return true;
  return [DECIDED, UNDECIDED].some((path) => {
    const token = path.split("/").pop();
    return (
      u.pathname === path ||
      u.pathname === `/api/v1/shared/${token}` ||
      u.pathname === `/api/v1/shared/${token}/export.csv` ||
      u.pathname === `/api/v1/shared/${token}/export.json`
    );
  });
}

await run(
  "the decided review opens without login: decision, ranking, charts, figures",
  async () => {
    await page.goto(`${BASE}${DECIDED}`);
    await page.getByTestId("shared-review").waitFor();
    const by = await page.getByTestId("shared-by").innerText();
    check(
      by.startsWith(`Shared by the team ${TEAM} on `),
      `"Shared by the team TEAM on DATE": ${by}`,
    );
    const state = await page.getByTestId("shared-review-state").innerText();
    check(/Decided: ENT 15K R1/.test(state), `the decision: ${state}`);
    check(state.includes("lowest TCO per usable GB"), `the reason: ${state}`);
    check((await page.getByTestId("ranking-row").count()) === 3, "3 ranked candidates");
    const chosen = await page.getByTestId("ranking-row").filter({ hasText: "chosen" }).innerText();
    check(
      chosen.includes("ENT 15K R1"),
      `the chosen candidate is marked in the ranking: ${chosen}`,
    );
    await page.getByTestId("cost-scatter").waitFor();
    await page.locator(".recharts-surface").first().waitFor();
    const tco = await page.getByTestId("figure-price_total").innerText();
    check(tco.includes("1,190.00"), `the set price of the decided version: ${tco}`);
    await page.getByTestId("shared-review-methodology").waitFor();
    const text = await page.locator("body").innerText();
    check(!text.includes(HIDDEN), "the linked run's target path is not shown");
    check(/target-\d/.test(text), "the linked run's path is shown as target-N");
    check(
      (await page.locator("nav, [data-testid=logout], input[name=password], textarea").count()) ===
        0,
      "no nav, no login, nothing to edit",
    );
    check((await page.evaluate(() => localStorage.length)) === 0, "nothing stored");
    await noOverflow(page);
    await page.waitForTimeout(400); // charts settle
    await shotOf(page, join(SHOTS, "V3-shared-review-decided.png"), false);
    await shotOf(page, join(SHOTS, "V3-shared-review-decided-full.png"));
  },
);

await run("every link on the shared review is walked and stays on the link", async () => {
  const hrefs = await page.$$eval("a[href]", (as) => as.map((a) => a.href));
  check(hrefs.length >= 1, "the methodology link");
  for (const href of hrefs) {
    check(allowed(href), `a link leads off the shared review: ${href}`);
    await page.goto(href);
    await page.getByTestId("shared-page").waitFor();
  }
  await page.goto(`${BASE}${DECIDED}`);
  await page.getByTestId("shared-review").waitFor();
  const [csv] = await Promise.all([
    page.waitForEvent("download"),
    page.getByTestId("shared-csv").click(),
  ]);
  const [json] = await Promise.all([
    page.waitForEvent("download"),
    page.getByTestId("shared-json").click(),
  ]);
  check(csv.suggestedFilename() === "iowatt-shared.csv", "the CSV download");
  check(json.suggestedFilename() === "iowatt-shared.json", "the JSON download");
  await csv.saveAs(join(ARTIFACTS, "shared-review.csv"));
  await json.saveAs(join(ARTIFACTS, "shared-review.json"));
  console.log(`share_review: ${hrefs.length} link(s) walked`);
});

await run('the later, undecided version says "not decided yet" with its own figures', async () => {
  await page.goto(`${BASE}${UNDECIDED}`);
  await page.getByTestId("shared-review").waitFor();
  const state = await page.getByTestId("shared-review-state").innerText();
  check(/^Not decided yet\./.test(state), `undecided: ${state}`);
  check((await page.getByText("chosen", { exact: true }).count()) === 0, "nothing chosen");
  const price = await page.getByTestId("figure-price_total").innerText();
  check(price.includes("1,100.00"), `v2's changed price: ${price}`);
  await noOverflow(page);
  await page.waitForTimeout(400);
  await shotOf(page, join(SHOTS, "V3-shared-review-undecided.png"), false);
});

await run("every request the shared pages made is the links' API or a static asset", async () => {
  const api = requests.filter((u) => new URL(u).pathname.startsWith("/api/"));
  check(api.length >= 4, `the pages called the links' API (${api.length} calls)`);
  const bad = requests.filter((u) => !allowed(u));
  check(bad.length === 0, `requests outside the links: ${bad.join(", ")}`);
  writeFileSync(join(ARTIFACTS, "share-review-requests.txt"), `${requests.join("\n")}\n`);
  console.log(`share_review: ${requests.length} requests, ${api.length} to /api/v1/shared/<token>`);
});

await run("the link preview: OpenGraph tags and a 1200x630 PNG of the ranking", async () => {
  const html = await (await fetch(`${BASE}${DECIDED}`)).text();
  check(/property="og:title" content="Review [^"]+ \(version 1\)"/.test(html), "og:title");
  check(
    /property="og:description" content="Decided: ENT 15K R1 on [^"]*Ranking/.test(html),
    "og:description",
  );
  check(html.includes(`${DECIDED}/preview.png"`), "og:image");
  const png = Buffer.from(await (await fetch(`${BASE}${DECIDED}/preview.png`)).arrayBuffer());
  check(png.subarray(1, 4).toString() === "PNG", "a PNG");
  check(png.readUInt32BE(16) === 1200 && png.readUInt32BE(20) === 630, "1200x630");
  writeFileSync(join(SHOTS, "V3-preview-review.png"), png);
});

await done();
