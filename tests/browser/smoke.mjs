// Browser smoke test of the iowatt web UI against a running server.
//
//   IOWATT_URL=http://127.0.0.1:8000 IOWATT_EMAIL=... IOWATT_PASSWORD=... \
//   IOWATT_ARTIFACTS=/tmp/iowatt-browser node tests/browser/smoke.mjs
//
// Drives Debian's Chromium (lib.mjs CHROMIUM: its headless shell when installed, else
// /usr/bin/chromium; or IOWATT_CHROMIUM) through playwright-core
// from frontend/node_modules. Preconditions: >= 2 succeeded runs with results and series,
// >= 1 online agent. Exit 0 on success; on failure prints the step and reason, saves a
// screenshot into IOWATT_ARTIFACTS and exits 1 (2 for a bad environment).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ARTIFACTS, BASE, check, EMAIL, needs, openBrowser, PASSWORD, visit } from "./lib.mjs";

// The server's version the footer must show (IOWATT_SMOKE_VERSION; else any semantic version).
// Opt-in: also queue a small real run from the form and wait for it to succeed.
const QUEUE = process.env.IOWATT_SMOKE_QUEUE === "1";
const QUEUE_TARGET = process.env.IOWATT_SMOKE_TARGET ?? "/tmp/iowatt-browser-smoke";
const QUEUE_TIMEOUT_MS = Number(process.env.IOWATT_SMOKE_QUEUE_TIMEOUT_MS ?? 120_000);
// the workload the queued campaign runs (a team's own short one in the tests; `quick` by hand)
const CAMPAIGN_WORKLOAD = process.env.IOWATT_SMOKE_WORKLOAD ?? "quick";

needs("smoke");
// after the log-in, pages are opened inside the app (lib.mjs visit) as its links do; the reload and
// the fresh page of the shared comparison are page loads, as what they check is
const { page, context, run, shot, done } = await openBrowser("smoke", { timed: true });

await run("an unauthenticated visit lands on the login page", async () => {
  await page.goto(`${BASE}/runs`);
  await page.getByTestId("login-form").waitFor();
  check(page.url().includes("/login"), `expected /login, got ${page.url()}`);
});

await run("a wrong password is refused with a message", async () => {
  await page.fill('input[name="email"]', EMAIL);
  await page.fill('input[name="password"]', `${PASSWORD}-wrong`);
  await page.click('button[type="submit"]');
  await page.getByTestId("login-error").waitFor();
});

await run("log in and return to the runs list", async () => {
  await page.fill('input[name="password"]', PASSWORD);
  await page.click('button[type="submit"]');
  await page.getByTestId("runs-table").waitFor();
  check(new URL(page.url()).pathname === "/runs", `expected /runs, got ${page.url()}`);
  const rows = await page.getByTestId("run-row").count();
  check(rows >= 1, `expected at least one run row, found ${rows}`);
  await page.locator('[data-testid="run-row"][data-status="succeeded"]').nth(1).waitFor();
  // the footer names the server's version (issue 30): the one the server says it is, when given
  const footer = (await page.getByTestId("server-version").innerText()).trim();
  const version = process.env.IOWATT_SMOKE_VERSION;
  check(
    version ? footer === `iowatt ${version}` : /^iowatt \d+\.\d+\.\d+/.test(footer),
    `the footer says ${JSON.stringify(footer)}, not the server's version ${version ?? ""}`,
  );
  await shot("runs");
});

const succeeded = page.locator('[data-testid="run-row"][data-status="succeeded"]');
let firstId = "";
let secondId = "";

await run("open a succeeded run: key figures and a line chart", async () => {
  // Two succeeded runs of the same workload spec, so the comparison is like for like.
  const seen = new Map();
  for (let i = 0; i < (await succeeded.count()); i += 1) {
    const id = (await succeeded.nth(i).getAttribute("data-run-id")) ?? "";
    const jobs = (await succeeded.nth(i).getAttribute("data-workload")) ?? "";
    if (seen.has(jobs)) {
      firstId = seen.get(jobs);
      secondId = id;
      break;
    }
    seen.set(jobs, id);
  }
  check(firstId && secondId, "no two succeeded runs of the same workload on the runs page");
  await page
    .locator(`[data-testid="run-row"][data-run-id="${firstId}"] [data-testid="run-link"]`)
    .click();
  await page.getByTestId("run-detail").waitFor();
  check(page.url().endsWith(`/runs/${firstId}`), `expected /runs/${firstId}, got ${page.url()}`);
  const figures = (await page.getByTestId("key-figures").first().textContent()) ?? "";
  check(/IOPS/.test(figures) && /MB\/s/.test(figures), `key figures lack units: ${figures}`);
  const line = page.locator('[data-testid="run-chart"] svg path.recharts-line-curve').first();
  await line.waitFor();
  const d = (await line.getAttribute("d")) ?? "";
  check(d.length > 10, `chart line has no geometry (d="${d}")`);
  const chartText = (await page.getByTestId("run-chart").first().textContent()) ?? "";
  check(chartText.includes("MB/s"), "the chart's throughput axis has no unit label");
  await shot("run-detail");
});

await run("select two succeeded runs and compare them", async () => {
  await visit(page, "/runs");
  await page.getByTestId("runs-table").waitFor();
  for (const id of [firstId, secondId]) {
    await page
      .locator(`[data-testid="run-row"][data-run-id="${id}"] [data-testid="run-select"]`)
      .check();
  }
  await page.getByTestId("compare-button").click();
  await page.getByTestId("compare-table").first().waitFor();
  const url = new URL(page.url());
  check(url.pathname === "/compare", `expected /compare, got ${page.url()}`);
  const ids = (url.searchParams.get("runs") ?? "").split(",");
  check(
    ids.length === 2 && ids.includes(firstId) && ids.includes(secondId),
    `compare URL does not name both runs: ${page.url()}`,
  );
  const table = (await page.getByTestId("compare-table").first().textContent()) ?? "";
  check(
    (await page.getByTestId("ratio-cell").count()) > 0,
    `compare table has no change against the baseline: ${table}`,
  );
  const verdict = await page.getByTestId("comparability").getAttribute("data-verdict");
  check(verdict === "comparable", `same-workload runs judged ${verdict}`);
  await page.locator('[data-testid="compare-chart"] svg .recharts-bar-rectangle').first().waitFor();
  await shot("compare");
});

await run("the compare URL is shareable (reload keeps the selection)", async () => {
  await page.reload();
  await page.getByTestId("compare-table").first().waitFor();
  const headers = await page.getByTestId("compare-table").first().locator("thead th").count();
  check(headers >= 4, `expected metric + unit + 2 runs columns, found ${headers}`);
});

// The baseline column's header, and the first change's ratio to the baseline (issue 12: the
// cell shows the direction-aware phrase, the ratio is its data-ratio).
const ratioHead = () =>
  page
    .getByTestId("compare-table")
    .first()
    .locator("thead th[data-baseline]")
    .first()
    .textContent();
const firstRatio = () => page.getByTestId("ratio-cell").first().getAttribute("data-ratio");

await run("changing the baseline changes the ratio column and the URL", async () => {
  const ratioChart = page.locator('[data-testid="compare-chart"][data-kind="change-iops"] h3');
  const before = {
    head: await ratioHead(),
    ratio: await firstRatio(),
    chart: await ratioChart.textContent(),
  };
  const select = page.getByTestId("baseline-select");
  const current = await select.inputValue();
  const other = [firstId, secondId].find((id) => id !== current);
  await select.selectOption(other);
  await page.waitForFunction(
    (h) =>
      document.querySelector('[data-testid="compare-table"] thead th[data-baseline]')
        ?.textContent !== h,
    before.head,
  );
  const after = { head: await ratioHead(), ratio: await firstRatio() };
  check(after.head !== before.head, `ratio header did not change: ${after.head}`);
  const chart = await ratioChart.textContent();
  check(chart !== before.chart, `the ratio chart still reads "${chart}"`);
  const num = (t) => Number.parseFloat((t ?? "").replace(/[^0-9.]/g, ""));
  // The ratio against the other run is the reciprocal (shown with 3 significant digits).
  const product = num(before.ratio) * num(after.ratio);
  check(
    Math.abs(product - 1) < 0.05,
    `ratios are not reciprocal: ${before.ratio} → ${after.ratio}`,
  );
  check(
    new URL(page.url()).searchParams.get("baseline") === other,
    `baseline not in the URL: ${page.url()}`,
  );
  await shot("compare-baseline");
});

await run("a copied link reproduces the same view in a fresh page", async () => {
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: BASE });
  await page.getByTestId("copy-link").click();
  await page.getByTestId("share-note").waitFor();
  const link = await page.evaluate(() => navigator.clipboard.readText().catch(() => ""));
  const url = link || page.url();
  check(url === page.url(), `copied link ${url} differs from the page ${page.url()}`);
  const table = await page.getByTestId("compare-table").first().textContent();
  const fresh = await context.newPage();
  try {
    await fresh.goto(url);
    await fresh.getByTestId("compare-table").first().waitFor();
    await fresh.waitForFunction(
      (t) => document.querySelector('[data-testid="compare-table"]')?.textContent === t,
      table,
    );
    check(
      (await fresh.getByTestId("baseline-select").inputValue()) ===
        (await page.getByTestId("baseline-select").inputValue()),
      "the fresh page has another baseline",
    );
  } finally {
    await fresh.close();
  }
});

await run("download the comparison as CSV", async () => {
  const [download] = await Promise.all([
    page.waitForEvent("download"),
    page.getByTestId("download-csv").click(),
  ]);
  const file = join(ARTIFACTS, "compare.csv");
  await download.saveAs(file);
  const csv = readFileSync(file, "utf8");
  const header = csv.split(/\r?\n/)[0] ?? "";
  check(/^job,metric,unit,/.test(header), `unexpected CSV header: ${header}`);
  check(/ratio/.test(header), `CSV has no ratio columns: ${header}`);
  check(csv.trim().split(/\r?\n/).length > 2, "CSV has no data rows");
});

await run("a run without a meter shows the no-meter note", async () => {
  await visit(page, "/runs?status=succeeded");
  const row = page.locator('[data-testid="run-row"][data-energy="none"]').first();
  await row.waitFor();
  await row.getByTestId("run-link").click();
  const panel = page.getByTestId("energy-panel");
  await panel.waitFor();
  check((await panel.getAttribute("data-status")) === "none", "energy panel is not 'none'");
  const note = (await page.getByTestId("energy-none").textContent()) ?? "";
  check(/No meter/.test(note), `no-meter note missing: ${note}`);
  await shot("run-no-meter");
});

await run("the new-run form shows the server's field error for a bad block size", async () => {
  await visit(page, "/runs/new");
  await page.getByTestId("new-run-form").waitFor();
  await page
    .locator('select[name="agent"] option:not([value=""])')
    .first()
    .waitFor({ state: "attached" });
  await page.getByTestId("mode-custom").check();
  // Targets come from the host's policy (ADR 0009): the form has no free-text path.
  await page.getByTestId("target-select").locator("option").first().waitFor({ state: "attached" });
  await page.fill('input[name="jobs.0.bs"]', "0");
  await page.getByTestId("submit-run").click();
  const err = page.getByTestId("field-error-jobs.0.bs");
  await err.waitFor();
  check(
    (await err.getAttribute("data-source")) === "server",
    "bs error did not come from the server",
  );
  check(((await err.textContent()) ?? "").trim().length > 0, "bs error is empty");
  check(new URL(page.url()).pathname === "/runs/new", "a run was created from an invalid form");
  await shot("new-run-error");
});

if (QUEUE) {
  await run("queue a real run from the form and watch it complete", async () => {
    await page.fill('input[name="jobs.0.bs"]', "4k");
    await page.fill('input[name="jobs.0.size"]', "16m");
    await page.fill('input[name="jobs.0.runtime"]', "2");
    // the form defaults to direct I/O; the smoke target may be on tmpfs, which has no O_DIRECT
    await page.locator('input[name="jobs.0.direct"]').uncheck();
    await page.getByTestId("target-select").selectOption(QUEUE_TARGET);
    await page.fill('input[name="name"]', "browser smoke run");
    await page.getByTestId("submit-run").click();
    await page.getByTestId("run-detail").waitFor();
    check(/\/runs\/[0-9a-f-]{36}$/.test(page.url()), `expected a run page, got ${page.url()}`);
    const status = page.getByTestId("run-detail").getByTestId("run-status").first();
    await page.waitForFunction(
      (el) => ["succeeded", "failed", "cancelled"].includes(el?.textContent ?? ""),
      await status.elementHandle(),
      { timeout: QUEUE_TIMEOUT_MS, polling: 500 },
    );
    const final = (await status.textContent()) ?? "";
    if (final !== "succeeded") {
      const why =
        (await page
          .getByTestId("run-error")
          .textContent()
          .catch(() => "")) ?? "";
      throw new Error(`the queued run ended ${final}: ${why}`);
    }
    await page.locator('[data-testid="run-chart"] svg path.recharts-line-curve').first().waitFor();
    await shot("queued-run");
  });
}

if (QUEUE) {
  await run("queue a campaign from the UI and land on its comparison", async () => {
    await visit(page, "/campaigns");
    await page.getByTestId("new-campaign").click();
    const form = page.getByTestId("campaign-form");
    await form
      .locator("#f-workload option", { hasText: CAMPAIGN_WORKLOAD })
      .first()
      .waitFor({ state: "attached" });
    await form.locator("#f-name").fill("browser smoke campaign");
    await form.locator("#f-workload").selectOption({ label: CAMPAIGN_WORKLOAD });
    await form.getByLabel("Path of target 1").selectOption(QUEUE_TARGET);
    await page.getByTestId("add-target").click();
    await form.getByLabel("Path of target 2").selectOption(`${QUEUE_TARGET}-b`);
    await form.locator("#f-repeats").fill("1");
    await form.locator("#f-idle").fill("0");
    await page.getByTestId("submit-campaign").click();
    await page.getByTestId("campaign-detail").waitFor();
    await page.waitForURL(/\/compare\?/, { timeout: QUEUE_TIMEOUT_MS * 2 });
    const url = new URL(page.url());
    // the campaign page lands on its comparison by target (two directories on one disk are
    // two columns, issue 12)
    check(url.searchParams.get("group_by") === "target", `not grouped by target: ${page.url()}`);
    check((url.searchParams.get("runs") ?? "").split(",").length === 2, "expected 2 runs");
    await page.getByTestId("compare-table").first().waitFor();
    const columns = await page.getByTestId("compare-table").first().locator("thead th").count();
    check(columns >= 4, `expected a column per target, found ${columns} header cells`);
    await shot("campaign-compare");
  });

  await run("schedule the same campaign nightly in Berlin, pause it, delete it", async () => {
    await visit(page, "/campaigns");
    await page.getByTestId("new-campaign").click();
    const form = page.getByTestId("campaign-form");
    await form.locator("#f-workload option", { hasText: /^quick$/ }).waitFor({ state: "attached" });
    await form.locator("#f-name").fill("browser nightly");
    await form.locator("#f-workload").selectOption({ label: "quick" });
    await form.getByLabel("Path of target 1").selectOption(QUEUE_TARGET);
    await page.getByTestId("when-schedule").check();
    await form.locator("#f-cron").fill("0 2 * * *");
    await form.locator("#f-timezone").fill("Europe/Berlin");
    await page.getByTestId("submit-campaign").click();
    const row = page.getByTestId("schedule-row").filter({ hasText: "browser nightly" });
    await row.waitFor();
    const text = (await row.textContent()) ?? "";
    check(text.includes("daily at 02:00 (Europe/Berlin)"), `rule not shown: ${text}`);
    // the next slot in the schedule's own wall clock: 02:00 CET or CEST, whatever the browser's zone
    check(
      /\d{4}-\d\d-\d\d 02:00 (CET|CEST|GMT\+[12])/.test(text),
      `next slot not at 02:00 Berlin: ${text}`,
    );
    check(text.includes("none yet"), `a new schedule shows a last slot: ${text}`);
    await shot("schedules");
    // a matrix: the server's plan shows before anything is queued
    await page.getByTestId("new-campaign").click();
    const matrixForm = page.getByTestId("campaign-form");
    await matrixForm
      .locator("#f-workload option", { hasText: /^quick$/ })
      .waitFor({ state: "attached" });
    await matrixForm.locator("#f-workload").selectOption({ label: "quick" });
    await matrixForm.getByLabel("Path of target 1").selectOption(QUEUE_TARGET);
    await matrixForm.locator("#f-repeats").fill("2");
    await matrixForm.locator("#f-sweep_qd").fill("1, 8, 32");
    await matrixForm.locator("#f-sweep_bs").fill("4k, 64k");
    // the plan follows the form (debounced): wait for the one of both sweeps
    const plan = page.getByTestId("campaign-plan").filter({ hasText: "6 cells" });
    await plan.waitFor();
    const planText = (await plan.textContent()) ?? "";
    check(planText.includes("6 cells × 1 target × 2 repeats = 12 runs"), `plan: ${planText}`);
    check(planText.includes("; 64 KiB · QD 32"), `plan names no cell: ${planText}`);
    await shot("campaign-matrix-plan");
    await page.getByTestId("new-campaign").click();
    await row.getByTestId("schedule-toggle").click();
    await row.getByText("paused").waitFor();
    await row.getByTestId("delete-schedule").click();
    await page.getByTestId("confirm-action").click();
    await row.waitFor({ state: "detached" });
  });
}

await run("dashboard and agents pages render", async () => {
  await visit(page, "/");
  await page.getByTestId("stats").waitFor();
  await page.getByTestId("runs-table").waitFor();
  await page
    .locator('[data-testid="dashboard-compare"] svg .recharts-bar-rectangle')
    .first()
    .waitFor();
  await shot("dashboard");
  await visit(page, "/agents");
  await page.getByTestId("agent-row").first().waitFor();
  check(
    ((await page.getByTestId("agents-table").textContent()) ?? "").includes("online"),
    "no online agent shown",
  );
  await page
    .getByTestId("agent-row")
    .first()
    .getByRole("button", { name: /Show details/ })
    .click();
  const detail = (await page.getByTestId("agent-detail").textContent()) ?? "";
  check(
    detail.includes("Block devices") && detail.includes("Mounts"),
    "agent details lack devices/mounts",
  );
  await shot("agents");
});

await run("log out returns to the login page", async () => {
  await page.getByTestId("logout").click();
  await page.getByTestId("login-form").waitFor();
});

await done();
