// The New run form at 1440×900 against a running server with a real agent (issue 12 "Forms"):
// several jobs built in the form, each server error shown at its own job's field in plain words,
// real runs queued from the builder and from a preset shortened ×0.1 (the run page flags it
// "shortened ×0.1"), clone and re-run prefilled from the run page, a run on two targets at once
// (a stale policy's third target refused on its own row); then the README's screenshots
// (dashboard, compare, run page) from the stack's real runs.
//
//   IOWATT_URL=... IOWATT_EMAIL=... IOWATT_PASSWORD=... IOWATT_ARTIFACTS=DIR \
//   IOWATT_NR_TARGET=<a directory the host allows> IOWATT_NR_TARGET2=<another one> \
//   IOWATT_NR_COMPARE=<run id>,<run id> \
//   node tests/browser/new_run.mjs
//
// tests/browser/test_new_run.py runs it. Prints `ok N - ...` per check and `new-run: N passed,
// 0 failed`; exit 1 with `failure.png` on failure, 2 on bad env.
import { BASE, check, navigate, needs, noOverflow, openBrowser } from "./lib.mjs";

const TARGET = process.env.IOWATT_NR_TARGET;
// a second directory of the same host: a multi-target run's other target
const TARGET2 = process.env.IOWATT_NR_TARGET2;
const COMPARE = (process.env.IOWATT_NR_COMPARE ?? "").split(",").filter(Boolean);
const RUN_TIMEOUT_MS = 180_000;
// field names and pydantic's words that must never reach a person under a form field
const INTERNAL = ["_bytes", "runtime_s", "time_based", "Input should", "Value error"];

needs(
  "new-run",
  TARGET && TARGET2 && COMPARE.length >= 2,
  "IOWATT_NR_TARGET, IOWATT_NR_TARGET2, IOWATT_NR_COMPARE",
);
const { page, run, shot, login, done } = await openBrowser("new-run");

/** The form as a link opens it (lib.mjs navigate: inside the app, no page load; the log-in lands
 * on it, so the first call finds it there), or by a page load (`load`) where the step must see
 * the agents list fetched afresh. */
async function openForm(path = "/runs/new", { load = false } = {}) {
  if (load) await page.goto(`${BASE}${path}`);
  else await navigate(page, path);
  await page.getByTestId("new-run-form").waitFor();
  await page
    .locator('select[name="agent"] option:not([value=""])')
    .first()
    .waitFor({ state: "attached" });
  await page.getByTestId("target-select").locator("option").first().waitFor({ state: "attached" });
  await page.getByTestId("target-select").selectOption(TARGET);
  await page.fill('input[name="idle"]', "0");
}

/** Waits on the run page until the run is final; returns its status. */
async function finalStatus() {
  await page.getByTestId("run-detail").waitFor();
  const status = page.getByTestId("run-detail").getByTestId("run-status").first();
  await page.waitForFunction(
    (el) => ["succeeded", "failed", "cancelled"].includes(el?.textContent ?? ""),
    await status.elementHandle(),
    { timeout: RUN_TIMEOUT_MS, polling: 500 },
  );
  return (await status.textContent()) ?? "";
}

await run("log in", () => login("new-run-form", "/runs/new"));

await run("two jobs: each server error at its own job's field, in plain words", async () => {
  await openForm();
  await page.getByTestId("mode-custom").check();
  const direct = page.locator('input[name="jobs.0.direct"]');
  check(await direct.isChecked(), "the single-job form does not default to direct I/O");
  await page.getByTestId("add-job").click();
  check((await page.locator("fieldset[data-testid^='job-']").count()) === 2, "no second job");
  await page.fill('input[name="jobs.0.distribution"]', "zipf:1");
  await page.fill('input[name="jobs.1.bs"]', "1000");
  await page.getByTestId("submit-run").click();
  const dist = page.getByTestId("field-error-jobs.0.distribution");
  const align = page.getByTestId("field-error-jobs.1.direct");
  await dist.waitFor();
  await align.waitFor();
  for (const err of [dist, align]) {
    check((await err.getAttribute("data-source")) === "server", "not the server's error");
    const text = (await err.textContent()) ?? "";
    check(!INTERNAL.some((w) => text.includes(w)), `internal words in "${text}"`);
  }
  check(((await align.textContent()) ?? "").includes("multiples of 512 bytes"), "direct's reason");
  // each error sits inside its own job's box, beside the field it names
  check(
    (await page.getByTestId("job-0").getByTestId("field-error-jobs.0.distribution").count()) === 1,
    "job 1's error is not in job 1's box",
  );
  check(
    (await page.getByTestId("job-1").getByTestId("field-error-jobs.1.direct").count()) === 1,
    "job 2's error is not in job 2's box",
  );
  check(new URL(page.url()).pathname === "/runs/new", "a run was created from an invalid form");
  await noOverflow(page);
  await shot("N-new-run-errors");
});

await run("the fixed jobs (reordered, with engine options) run on the real agent", async () => {
  await page.fill('input[name="jobs.0.distribution"]', "zipf:1.2");
  await page.fill('input[name="jobs.1.bs"]', "64k");
  await page.fill('input[name="jobs.1.name"]', "seq-64k");
  await page.locator('select[name="jobs.1.rw"]').selectOption("read");
  await page.getByRole("button", { name: "move job 2 up" }).click();
  check((await page.inputValue('input[name="jobs.0.name"]')) === "seq-64k", "not reordered");
  for (const i of [0, 1]) {
    await page.fill(`input[name="jobs.${i}.runtime"]`, "1");
    await page.fill(`input[name="jobs.${i}.size"]`, "4m");
  }
  await page.fill('input[name="jobs.1.randseed"]', "42");
  await page.fill('input[name="jobs.1.rateiops"]', "500");
  const estimate = (await page.getByTestId("duration-estimate").textContent()) ?? "";
  check(estimate.includes("idle baseline") && estimate.includes("overhead"), estimate);
  // iodepth 8 on psync: the form says the engine runs it at depth 1, as fio notes (issue 25)
  await page.fill('input[name="jobs.0.iodepth"]', "8");
  const capped = (await page.getByTestId("depth-cap-0").textContent()) ?? "";
  check(capped.includes("capped at 1"), `iodepth 8 on psync: ${capped}`);
  await page.fill('input[name="jobs.0.iodepth"]', "1");
  check((await page.getByTestId("depth-cap-0").count()) === 0, "the depth note stays at 1");
  await page.fill('input[name="name"]', "browser: two jobs from the builder");
  await shot("N-new-run-builder");
  await page.getByTestId("submit-run").click();
  const final = await finalStatus();
  check(final === "succeeded", `the builder's run ${final}`);
});

let shortRun = "";
await run("a preset shortened ×0.1 runs and its run page flags it", async () => {
  await openForm();
  await page.locator("#f-workload").selectOption({ label: "quick" });
  await page.getByTestId("shorten-select").selectOption("0.1");
  const estimate = (await page.getByTestId("duration-estimate").textContent()) ?? "";
  check(estimate.includes("(shortened ×0.1)"), `estimate: ${estimate}`);
  await page.fill('input[name="name"]', "browser: quick shortened");
  await shot("N-new-run-preset");
  await page.getByTestId("submit-run").click();
  const final = await finalStatus();
  check(final === "succeeded", `the shortened run ${final}`);
  shortRun = page.url().split("/").pop() ?? "";
  const flag = page.locator('[data-flag="shortened"]').first();
  await flag.waitFor();
  check(((await flag.textContent()) ?? "").includes("shortened"), await flag.textContent());
  await noOverflow(page);
  await shot("N-run-shortened");
  // the runs list names the preset the run was queued from, not its jobs (issue 25)
  await navigate(page, "/runs");
  const preset = page.locator(`[data-run-id="${shortRun}"] [data-testid="run-preset"]`);
  await preset.waitFor();
  check((await preset.textContent()) === "quick", `preset cell: ${await preset.textContent()}`);
  await navigate(page, `/runs/${shortRun}`);
  await page.getByTestId("run-detail").waitFor();
});

await run("clone and re-run: the form opens prefilled and keeps the shortening", async () => {
  await page.getByTestId("clone-run").click();
  await page.getByTestId("clone-note").waitFor();
  await page.waitForFunction(() =>
    (document.querySelector("[data-testid='clone-note']")?.textContent ?? "").includes("re-run"),
  );
  check(new URL(page.url()).searchParams.get("from") === shortRun, page.url());
  check(await page.getByTestId("mode-custom").isChecked(), "the clone is not shown as jobs");
  check(
    (await page.getByTestId("kept-shortened").textContent()).includes("×0.1"),
    "shortening lost",
  );
  check(
    (await page.inputValue('input[name="name"]')) === "re-run of browser: quick shortened",
    await page.inputValue('input[name="name"]'),
  );
  await shot("N-new-run-clone");
  await page.getByTestId("submit-run").click();
  check((await finalStatus()) === "succeeded", "the re-run did not succeed");
  await page.locator('[data-flag="shortened"]').first().waitFor();
});

await run(
  "several targets at once: the host's 422 on its own row, then one run on two",
  async () => {
    // a stale host policy (the agents list as an earlier heartbeat had it) still offers a target the
    // host removed: the server's check answers 422 naming that target, which lands on its own row
    const GONE = "/srv/iowatt-target-removed-from-the-host";
    const stale = async (route) => {
      const res = await route.fetch();
      const body = await res.json();
      for (const a of body.items ?? [])
        a.policy?.targets?.push({
          path: GONE,
          kind: "directory",
          writable: true,
          destructive: false,
        });
      await route.fulfill({ response: res, json: body });
    };
    const agentsList = (url) => url.pathname === "/api/v1/agents";
    await page.route(agentsList, stale);
    await openForm("/runs/new", { load: true }); // the app's cache has the list as it was
    await page.getByTestId("mode-custom").check();
    await page.fill('input[name="jobs.0.runtime"]', "1");
    await page.fill('input[name="jobs.0.size"]', "4m");
    await page.fill('input[name="name"]', "browser: two targets at once");
    await page.getByTestId("add-target").click();
    await page.getByTestId("more-target-select").nth(0).selectOption(TARGET2);
    await page.getByTestId("add-target").click();
    await page.getByTestId("more-target-select").nth(1).selectOption(GONE);
    const note = (await page.getByTestId("targets-note").textContent()) ?? "";
    check(note.includes("3 targets") && note.includes("1/3"), `the shared limits note: ${note}`);
    await page.getByTestId("submit-run").click();
    const err = page.getByTestId("field-error-targets.2.target");
    await err.waitFor();
    check((await err.getAttribute("data-source")) === "server", "not the server's answer");
    const text = (await err.textContent()) ?? "";
    check(text.includes("not one of this host's targets"), `the 422 on target 3: ${text}`);
    const rows = page.locator(".more-target");
    check(
      (await rows.nth(1).getByTestId("field-error-targets.2.target").count()) === 1,
      "not its row",
    );
    check((await rows.nth(0).locator(".field-error").count()) === 0, "an error on target 2's row");
    check((await page.getByTestId("field-error-target").count()) === 0, "an error on target 1");
    check(new URL(page.url()).pathname === "/runs/new", "a run was created");
    await noOverflow(page);
    await shot("N-new-run-targets-422");
    await page.unroute(agentsList, stale);
    await page.getByTestId("more-target-remove").nth(1).click();
    await page.getByTestId("submit-run").click();
    check((await finalStatus()) === "succeeded", "the two-target run did not succeed");
    const targets = (await page.getByTestId("run-targets").textContent()) ?? "";
    check(targets.includes(TARGET) && targets.includes(TARGET2), `the run's targets: ${targets}`);
    check((await page.getByTestId("target-row").count()) === 2, "a row per target");
    await page.getByTestId("combined-caption").waitFor();
    await noOverflow(page);
    await shot("N-run-two-targets");
  },
);

await run("README screenshots: dashboard, compare, run page at 1440x900", async () => {
  await navigate(page, "/");
  await page.getByTestId("stats").waitFor();
  // the latest runs' comparison draws its charts once its data is in
  await page
    .locator("[data-testid='dashboard-compare'] .recharts-cartesian-grid")
    .first()
    .waitFor()
    .catch(() => {});
  await page.waitForTimeout(800); // charts animate in
  await shot("readme-dashboard", false);
  await navigate(page, `/compare?runs=${COMPARE.join(",")}`);
  await page.locator(".recharts-cartesian-grid").first().waitFor();
  await page.waitForTimeout(500);
  await shot("readme-compare", false);
  await navigate(page, `/runs/${COMPARE[0]}`);
  await page.getByTestId("run-detail").waitFor();
  await page.locator(".recharts-cartesian-grid").first().waitFor();
  await page.waitForTimeout(500);
  await shot("readme-run", false);
});

await done();
