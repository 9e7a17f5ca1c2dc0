// A series' history page with N points (IOWATT_SERIES_SETS="10:<series id>;1000:<id>", seeded by
// tests/browser/series_seed.py): the chart drawn with its line, the left-out runs apart, the
// kernel change and the change found marked, a point picked links to its run and to a comparison
// with the previous good run, no sideways scroll at 1440×900; `timing N runs: X ms` from
// navigation start to the chart drawn (best of two loads). Used by tests/browser/
// test_series_history.py and bench/series/run.py.
import { BASE, check, navigate, needs, noOverflow, openBrowser } from "./lib.mjs";

const SETS = (process.env.IOWATT_SERIES_SETS ?? "")
  .split(";")
  .filter(Boolean)
  .map((s) => {
    const [n, id] = s.split(":");
    return { n: Number(n), id };
  });
needs("series", SETS.length > 0, "IOWATT_SERIES_SETS");
const { page, run, shot, login, done } = await openBrowser("series");

await run("log in", () => login("runs-table", "/runs")); // not the dashboard: lib.mjs login

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
    if (n === SETS[0].n) {
      // the app's code warm, as when opened from the series list (the next sets find it loaded)
      await page.goto(`${BASE}/series/${id}`);
      await drawn();
    }
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

// The Alerts page and the campaign form's matrix plan, in the same session, when the test seeded
// alerts (IOWATT_ALERT_POINT: "<series id>?metric=…&job=…&run=<run id>", the history point its
// regression alert links to, as the server writes it; bench/series does not).
const ALERT_POINT = process.env.IOWATT_ALERT_POINT ?? "";
if (ALERT_POINT) {
  await run(
    "Settings → Alerts: each alert with its deliveries' state, attempts and error",
    async () => {
      await navigate(page, "/settings/alerts");
      const table = page.getByTestId("alerts-table");
      await table.waitFor();
      const rows = table.getByTestId("alert-row");
      check((await rows.count()) >= 3, `${await rows.count()} alerts listed`);
      const regression = rows.filter({ hasText: "Regression in series: 1000 synthetic runs" });
      const text = (await regression.textContent()) ?? "";
      check(text.includes("read_iops -12.0 %"), `regression alert: ${text}`);
      check(/lab webhook:\s*sent/.test(text), `regression delivery: ${text}`);
      const failed = (await rows.filter({ hasText: "Run failed" }).textContent()) ?? "";
      check(/failed after 8 attempts/.test(failed), `given-up delivery: ${failed}`);
      check(failed.includes("HTTP 503 from the receiver"), `its error: ${failed}`);
      const pending = (await rows.filter({ hasText: "Agent offline" }).textContent()) ?? "";
      check(/pending after 2 attempts · next try/.test(pending), `retried delivery: ${pending}`);
      await noOverflow(page);
      await shot("alerts", false);
    },
  );

  await run(
    "Settings → Alerts pages through hundreds of alerts and filters by kind (in its URL)",
    async () => {
      // the three alerts above, 120 older failed runs (the test's BULK_ALERTS) and whatever the
      // stack's own runs raised: counted from the API, not guessed
      const count = page.getByTestId("alerts-count");
      const total = Number(
        ((await count.textContent()) ?? "").match(/of ([\d,]+)/)?.[1].replace(/,/g, ""),
      );
      check(total >= 123, `total ${total}`);
      check(
        (await count.textContent())?.startsWith("1–50 of"),
        `first page: ${await count.textContent()}`,
      );
      check(await page.getByTestId("alerts-prev").isDisabled(), "Newer enabled on the first page");
      await page.getByTestId("alerts-next").click();
      await count.filter({ hasText: "51–100 of" }).waitFor();
      check(page.url().includes("offset=50"), `URL ${page.url()}`);
      await page.getByTestId("alerts-next").click();
      await count.filter({ hasText: "101–" }).waitFor();
      const rows = page.getByTestId("alert-row");
      check(
        (await rows.count()) === Math.min(50, total - 100),
        `${await rows.count()} rows on page 3`,
      );
      check(
        (await rows.first().textContent())?.includes("Older failed run"),
        `page 3 starts: ${await rows.first().textContent()}`,
      );
      await noOverflow(page);
      await shot("alerts-page-3", false);
      // a kind: its own count, from its first page; the URL holds it (a reload keeps it)
      await page.getByTestId("alerts-kind").selectOption("agent_offline");
      await count.filter({ hasText: "of this kind" }).waitFor();
      check(!page.url().includes("offset="), `a new kind kept the page: ${page.url()}`);
      await page.reload();
      await count.filter({ hasText: "of this kind" }).waitFor();
      check((await rows.count()) >= 1, "no agent-offline alert listed");
      for (const r of await rows.all())
        check(
          ((await r.textContent()) ?? "").includes("Agent offline"),
          `not offline: ${await r.textContent()}`,
        );
      check(await page.getByTestId("alerts-next").isDisabled(), "Older enabled on the only page");
      await noOverflow(page);
      await shot("alerts-one-kind", false);
      await page.getByTestId("alerts-kind").selectOption("");
      await count.filter({ hasText: "1–50 of" }).waitFor();
    },
  );

  await run("a webhook channel added from the form shows its signing key once", async () => {
    await page.getByTestId("new-channel").click();
    const form = page.getByTestId("channel-form");
    await form.locator("#f-name").fill("storage team webhook");
    await form.locator("#f-kind").selectOption("webhook");
    await form.locator("#f-url").fill("http://127.0.0.1:9/iowatt-browser");
    await form.getByRole("button", { name: "Add channel" }).click();
    const key = await page.getByTestId("secret-value").textContent();
    check((key ?? "").trim().length >= 32, `signing key ${key}`);
    await page.getByTestId("secret-done").click();
    const row = page.getByTestId("channel-row").filter({ hasText: "storage team webhook" });
    await row.waitFor();
    check(!((await row.textContent()) ?? "").includes(key ?? "-"), "the key shown in the table");
    await page.reload();
    await page.getByTestId("channels-table").waitFor();
    check((await page.getByTestId("once-secret").count()) === 0, "the key shown again");
  });

  await run(
    "an alert links to its history point: that run picked on the series' page",
    async () => {
      const link = page
        .getByTestId("alert-row")
        .filter({ hasText: "Regression in series" })
        .getByRole("link");
      await link.click();
      await page.waitForURL(`${BASE}/series/${ALERT_POINT}`);
      await drawn();
      const picked = page.getByTestId("history-picked");
      await picked.waitFor();
      const run = await picked.getByRole("link", { name: "open the run" }).getAttribute("href");
      const named = new URLSearchParams(ALERT_POINT.split("?")[1]).get("run");
      check(run === `/runs/${named}`, `picked ${run}, the alert named ${named}`);
    },
  );

  await run(
    "New campaign: a sweep expanded on the server, its count and time before queueing",
    async () => {
      await navigate(page, "/campaigns");
      await page.getByTestId("new-campaign").click();
      const form = page.getByTestId("campaign-form");
      await form.locator("#f-workload").selectOption({ label: "quick" });
      await form.locator("#f-repeats").fill("2");
      await form.locator("#f-sweep_bs").fill("4k, 64k, 1m");
      await form.locator("#f-sweep_qd").fill("1, 32");
      const plan = page.getByTestId("campaign-plan");
      await plan.filter({ hasText: "6 cells" }).waitFor();
      const text = (await plan.textContent()) ?? "";
      check(
        /6 cells × 1 target × 2 repeats = 12 runs, measuring .+ in all/.test(text),
        `plan: ${text}`,
      );
      check(text.includes("64 KiB") && text.includes("QD 32"), `the cells unnamed: ${text}`);
      await shot("campaign-plan", false);
      // what a sweep cannot mean is the server's 422, shown before anything is queued
      await form.locator("#f-sweep_read").fill("70");
      const refused = page.getByTestId("campaign-plan-error");
      await refused.waitFor();
      check(/read/i.test((await refused.textContent()) ?? ""), "the refusal names no read share");
      await form.locator("#f-sweep_read").fill("");
      await plan.filter({ hasText: "12 runs" }).waitFor();
      await noOverflow(page);
    },
  );

  await run(
    "New campaign on a schedule over every agent's targets: counted now, chosen at each slot",
    async () => {
      const form = page.getByTestId("campaign-form");
      await form.getByTestId("when-schedule").check();
      await form.getByTestId("pick-set").check();
      check(
        (await form.getByTestId("campaign-targets").count()) === 0,
        "the target list still shown",
      );
      await form.getByTestId("target-set").waitFor();
      const note = page.getByTestId("campaign-plan-per-slot");
      await note.waitFor();
      const text = (await page.getByTestId("campaign-plan").textContent()) ?? "";
      // the stack's agent lists its directories: every one of them, 6 cells × 2 repeats each
      const m = text.match(/6 cells × (\d+) targets? × 2 repeats = (\d+) runs/);
      check(m !== null && Number(m[1]) >= 1 && Number(m[2]) === 12 * Number(m[1]), `plan: ${text}`);
      check(
        text.includes("per slot") && text.includes("each slot chooses again"),
        `per slot: ${text}`,
      );
      await noOverflow(page);
      await shot("campaign-target-set", false);
    },
  );
}

await done();
