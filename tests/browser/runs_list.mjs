// The runs list in Chromium at 1440×900 (issue 13, V3) against a running server whose runs were
// uploaded from "CI" (POST /api/v1/results): IOWATT_RUNS_PHASE=two checks the page with two runs;
// IOWATT_RUNS_PHASE=forty with forty: filters are controls whose state lives in the URL (a reload
// keeps them), the server filters (the range says "of N matching"), an empty state clears them, tag
// chips filter the list, and a run's tags are edited on its page.
//
//   IOWATT_URL=... IOWATT_EMAIL=... IOWATT_PASSWORD=... IOWATT_ARTIFACTS=DIR \
//   IOWATT_RUNS_PHASE=two|forty|two,forty node tests/browser/runs_list.mjs
//
// Both phases in one browser: with IOWATT_PAUSES=1 the script stops before `forty` (lib.mjs pause)
// while tests/browser/test_runs_list.py uploads the other 38.
// Prints `ok N - ...` per check and `runs_list: N passed, 0 failed`; exit 1 with `failure.png`.
import { BASE, check, navigate, needs, noOverflow, openBrowser, pause } from "./lib.mjs";

const PHASES = (process.env.IOWATT_RUNS_PHASE ?? "").split(",").filter(Boolean);
// runs the stack held before this test uploaded its own (other browser tests share the stack)
const BASE_TOTAL = Number(process.env.IOWATT_RUNS_BASE ?? 0);
const TWO = BASE_TOTAL + 2;
const FORTY = BASE_TOTAL + 40;
const PAGE = 50;
const first = (total) => Math.min(PAGE, total);
needs(
  "runs_list",
  PHASES.length > 0 && PHASES.every((p) => p === "two" || p === "forty"),
  "IOWATT_RUNS_PHASE=two|forty|two,forty",
);
const { page, run, shot, login, done } = await openBrowser("runs_list");

const rows = () => page.getByTestId("run-row");
const range = async () => (await page.getByTestId("runs-range").textContent()) ?? "";

/** Waits until the list shows the answer to the URL's filters (not the previous page's rows). */
async function settled() {
  await page.waitForFunction(
    () =>
      (document.querySelector('[data-testid="runs-range"]')?.textContent ?? "").includes(
        "matching",
      ) && document.querySelector('[data-testid="runs-list"]')?.getAttribute("data-stale") === "0",
  );
}

/** Waits until the list shows `n` rows and the server's range line says `text`. */
async function showing(n, text) {
  await page.waitForFunction(
    ([want, t]) =>
      document.querySelectorAll('[data-testid="run-row"]').length === want &&
      document.querySelector('[data-testid="runs-list"]')?.getAttribute("data-stale") === "0" &&
      (document.querySelector('[data-testid="runs-range"]')?.textContent ?? "").includes(t),
    [n, text],
  );
}

// onto the runs list (the dashboard draws the latest runs' comparison); after the pause's uploads
// and for other filters of the list it is loaded again, a run's page leads to it inside the app
await run("log in", async () => {
  await login("runs-table", "/runs");
});

if (PHASES.includes("two")) {
  await run("two uploaded runs: rows with their tags and the uploaded badge", async () => {
    await navigate(page, "/runs"); // there already
    await showing(first(TWO), `1–${first(TWO)} of ${TWO}`);
    check((await page.getByTestId("run-imported").count()) >= 2, "each uploaded row says so");
    const chips = await page.getByTestId("tag-chip").allTextContents();
    check(chips.includes("nightly"), `tag chips: ${chips}`);
    check(await page.getByTestId("run-filters").isVisible(), "the filter bar is shown");
    await noOverflow(page);
    await shot("V3-runs-2");
  });
  await run("a filter that matches nothing: the empty state clears it", async () => {
    await page.getByTestId("filter-status-failed").click();
    await page.waitForURL(/status=failed/);
    await page.getByTestId("filter-q").fill("no-such-run-anywhere");
    await page.getByTestId("runs-empty").waitFor();
    check(page.url().includes("status=failed"), `the URL keeps the filter: ${page.url()}`);
    check(
      ((await page.getByTestId("runs-empty").textContent()) ?? "").includes("No runs match"),
      "the empty state says the filters match nothing",
    );
    await shot("V3-runs-empty");
    await page.getByTestId("filter-clear").click();
    await showing(first(TWO), `of ${TWO}`);
    // Playwright learns of a same-document navigation from a DevTools event that can trail the
    // page's render under load: wait for it (bounded), then check
    await page
      .waitForURL((u) => !u.search.includes("status="), { timeout: 10_000 })
      .catch(() => {});
    check(!page.url().includes("status="), `cleared from the URL: ${page.url()}`);
  });
}
if (PHASES.includes("forty")) {
  await pause("forty");
  await run("forty runs: one server page with the total", async () => {
    await page.goto(`${BASE}/runs`);
    await showing(first(FORTY), `1–${first(FORTY)} of ${FORTY}`);
    await noOverflow(page);
    // the newest run's 160-character name: two lines at most (it took four, 15 at 390 px wide),
    // the whole of it in the link's title
    const heights = await page
      .getByTestId("run-link")
      .evaluateAll((links) =>
        links.map((a) => [a.title, a.getBoundingClientRect().height, a.scrollHeight]),
      );
    const long = heights.find(([title]) => title.startsWith("nightly randread #40: procurement"));
    const oneLine = Math.min(...heights.map(([, h]) => h));
    check(
      long && long[1] < 2.5 * oneLine && long[2] > long[1],
      `a long name clamped to two lines: ${JSON.stringify(long)}, one line ${oneLine}`,
    );
    await shot("V3-runs-40");
  });
  await run("search, host and tag filters narrow on the server and live in the URL", async () => {
    await page.getByTestId("filter-q").fill("optane");
    await page.waitForURL(/q=optane/);
    await settled();
    const optane = await rows().count();
    check(optane > 0 && optane < 40, `search matched ${optane} rows`);
    check((await range()).includes(`of ${optane} matching`), `range: ${await range()}`);
    await page.getByTestId("filter-tag-input").fill("fw 2.1");
    await page.getByTestId("filter-tag-input").press("Enter");
    await page.waitForURL(/tag=fw/);
    await page.waitForFunction(
      (before) => document.querySelectorAll('[data-testid="run-row"]').length < before,
      optane,
    );
    const both = await rows().count();
    await shot("V3-runs-filtered");
    // a reload (or a shared link) keeps every control as it was
    const url = page.url();
    await page.reload();
    await showing(both, `of ${both} matching`);
    check((await page.getByTestId("filter-q").inputValue()) === "optane", "search box restored");
    check(
      (await page.getByTestId("filter-tag").allTextContents()).some((t) => t.startsWith("fw 2.1")),
      "tag filter restored",
    );
    check(page.url() === url, `same URL after reload: ${page.url()}`);
    await page.getByTestId("filter-clear").click();
    await showing(first(FORTY), `of ${FORTY}`);
  });
  await run("a host select and a tag chip in a row filter the list", async () => {
    const host = page.getByTestId("filter-agent_id");
    const option = await host.locator("option").nth(1).getAttribute("value");
    await host.selectOption(option ?? "");
    await page.waitForURL(/agent_id=/);
    await settled();
    const n = await rows().count();
    check(n > 0 && n < first(FORTY), `host filter: ${n} rows`);
    await page.getByTestId("filter-clear").click();
    await showing(first(FORTY), `of ${FORTY}`);
    await page.getByTestId("tag-chip").filter({ hasText: "hdd" }).first().click();
    await page.waitForURL(/tag=hdd/);
    await settled();
    check((await rows().count()) < first(FORTY), "a chip filters by its tag");
  });
  await run("a member edits a run's tags on its page", async () => {
    await page.goto(`${BASE}/runs?q=nightly`);
    await showing(40, "of 40 matching");
    await page.getByTestId("run-link").first().click();
    await page.getByTestId("run-tags").waitFor();
    await page.getByTestId("tag-input").fill("golden");
    await page.getByTestId("tag-input").press("Enter");
    await page.getByRole("link", { name: "golden" }).waitFor();
    await page.getByTestId("tag-input").fill("bad;tag");
    await page.getByTestId("tag-input").press("Enter");
    await page.getByTestId("tag-error").waitFor();
    await shot("V3-run-tags", false);
    await navigate(page, "/runs?tag=golden");
    await showing(1, "1–1 of 1 matching");
  });
}

await done();
