// A series' history page with N points (IOWATT_SERIES_SETS="10:<series id>;1000:<id>", seeded by
// tests/browser/series_seed.py): the chart drawn with its line, the left-out runs apart, the
// kernel change and the change found marked, a point picked links to its run and to a comparison
// with the previous good run, no sideways scroll at 1440×900; `timing N runs: X ms` from
// navigation start to the chart drawn (best of two loads). Used by tests/browser/
// test_series_history.py and bench/series/run.py.
import { BASE, check, needs, noOverflow, openBrowser } from "./lib.mjs";

const SETS = (process.env.IOWATT_SERIES_SETS ?? "")
  .split(";")
  .filter(Boolean)
  .map((s) => {
    const [n, id] = s.split(":");
    return { n: Number(n), id };
  });
needs("series", SETS.length > 0, "IOWATT_SERIES_SETS");
const { page, run, shot, login, done } = await openBrowser("series");

await run("log in", login);

const drawn = () =>
  page.waitForFunction(() => {
    const c = document.querySelector('[data-testid="history-chart"]');
    const line = c?.querySelector(".recharts-line path.recharts-curve");
    return (
      Boolean(line?.getAttribute("d")) && document.querySelector('[data-testid="history-summary"]')
    );
  });

for (const { n, id } of SETS) {
  await run(`${n} runs: the history drawn, timed from navigation start`, async () => {
    await page.goto(`${BASE}/series/${id}`);
    await drawn(); // the app's code warm, as when opened from the series list
    let ms = Number.POSITIVE_INFINITY;
    for (let k = 0; k < 2; k += 1) {
      await page.goto(`${BASE}/series/${id}`);
      await drawn();
      ms = Math.min(ms, await page.evaluate(() => performance.now()));
    }
    console.log(`timing ${n} runs: ${Math.round(ms)} ms`);
  });

  await run(`${n} runs: validity, host change and the change found are on the page`, async () => {
    const summary = await page.getByTestId("history-summary").textContent();
    check(summary?.includes(`${n} runs`), `summary: ${summary}`);
    check(summary?.includes("host change"), `no host change said: ${summary}`);
    if (n >= 97) check(summary?.includes("left out"), `no left-out runs said: ${summary}`);
    const chart = page.getByTestId("history-chart");
    const labels = await chart.locator(".recharts-reference-line").count();
    check(labels >= 2, `${labels} marked lines (a kernel change and a change found expected)`);
    check(
      (await chart.textContent())?.includes("kernel 6.1.0 → 6.8.0"),
      "the kernel change unlabelled",
    );
    const rows = await page.getByTestId("detections-table").locator("tbody tr").count();
    check(rows === 1, `${rows} changes listed`);
    await noOverflow(page);
  });

  await run(`${n} runs: a point links to its run and to the previous good one`, async () => {
    const box = await page
      .getByTestId("history-chart")
      .locator(".recharts-cartesian-grid")
      .boundingBox();
    check(box, "no plot area");
    await page.mouse.move(box.x + box.width * 0.9, box.y + box.height / 2);
    await page.mouse.click(box.x + box.width * 0.9, box.y + box.height / 2);
    const picked = page.getByTestId("history-picked");
    await picked.waitFor();
    const run = await picked.getByRole("link", { name: "open the run" }).getAttribute("href");
    check(/^\/runs\/[0-9a-f-]{36}$/.test(run ?? ""), `run link ${run}`);
    const cmp = await picked
      .getByRole("link", { name: /compare with the previous good run/ })
      .getAttribute("href");
    check(/^\/compare\?runs=[0-9a-f-]{36},[0-9a-f-]{36}$/.test(cmp ?? ""), `compare link ${cmp}`);
    await shot(`series-${n}`, false);
  });
}

await done();
