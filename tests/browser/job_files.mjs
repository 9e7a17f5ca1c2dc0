// fio job files in the web UI at 1440×900 (issue 24, ADR 0029), against a running server with a
// real agent and an engine that reads job files: New run → fio job file, pasted, shows the jobs
// the engine makes of it (groups, options, the filename the target replaces); a line the engine
// refuses shows under the text as "line N: OPTION: ..."; an uploaded .fio replaces the text; the
// run is queued and runs; the run page and a saved workload's page show the job file verbatim.
//
//   IOWATT_URL=... IOWATT_EMAIL=... IOWATT_PASSWORD=... IOWATT_ARTIFACTS=DIR \
//   IOWATT_JF_TARGET=<a directory the host allows> IOWATT_JF_WORKLOAD=<a saved jobfile workload id> \
//   IOWATT_JF_UPLOAD=<a .fio file> node tests/browser/job_files.mjs
//
// tests/browser/test_job_files.py runs it. Screenshots J-*.png go to IOWATT_ARTIFACTS.
import { readFileSync } from "node:fs";
import { check, navigate, needs, noOverflow, openBrowser } from "./lib.mjs";

const TARGET = process.env.IOWATT_JF_TARGET;
const WORKLOAD = process.env.IOWATT_JF_WORKLOAD;
const UPLOAD = process.env.IOWATT_JF_UPLOAD;
const RUN_TIMEOUT_MS = 180_000;
needs(
  "job-files",
  TARGET && WORKLOAD && UPLOAD,
  "IOWATT_JF_TARGET, IOWATT_JF_WORKLOAD, IOWATT_JF_UPLOAD",
);

// what a storage engineer pastes: comments, [global], a device filename the target replaces
const PASTED = `; two groups, as fio's examples write them
[global]
ioengine=psync
bs=4k
size=2m
filename=/dev/sdb

[writer]
rw=write

[reader]
stonewall=1
rw=randread
`;

const { page, run, shot, login, done } = await openBrowser("job-files");

/** The new-run form, where the log-in lands (lib.mjs login's next: not the dashboard, which draws
 * the latest runs' comparison); the saved job file's page is opened inside the app. */
async function openForm() {
  await navigate(page, "/runs/new"); // there already
  await page.getByTestId("new-run-form").waitFor();
  await page
    .locator('select[name="agent"] option:not([value=""])')
    .first()
    .waitFor({ state: "attached" });
  await page.getByTestId("mode-jobfile").check();
  await page.getByTestId("target-select").locator("option").first().waitFor({ state: "attached" });
  await page.getByTestId("target-select").selectOption(TARGET);
  await page.fill('input[name="idle"]', "0");
}

await run("log in", () => login("logout", "/runs/new"));

await run("a pasted job file shows the jobs the engine makes of it", async () => {
  await openForm();
  await page.getByTestId("jobfile-input").fill(PASTED);
  const summary = page.getByTestId("jobfile-summary");
  await summary.waitFor();
  const text = (await summary.textContent()) ?? "";
  check(text.includes("2 jobs in 2 groups"), `summary reads "${text}"`);
  const rows = page.getByTestId("jobfile-job");
  check((await rows.count()) === 2, "not one row per job");
  check(((await rows.nth(1).textContent()) ?? "").includes("rw=randread"), "the reader's options");
  const replaced = (await page.getByTestId("jobfile-replaced").textContent()) ?? "";
  check(replaced.includes("filename=/dev/sdb"), `the replaced filename is not named: ${replaced}`);
  await noOverflow(page);
  await shot("J-new-run-jobfile");
});

await run("a line the engine refuses is named under the text", async () => {
  await page.getByTestId("jobfile-input").fill(`${PASTED}bogus_option=1\n`);
  const refused = page.getByTestId("jobfile-refused");
  await refused.waitFor();
  const text = (await refused.textContent()) ?? "";
  check(/line 14: bogus_option: unknown option/.test(text), `the refusal reads "${text}"`);
  check(!text.includes("/tmp/"), "a server path is shown");
  await shot("J-new-run-refused");
});

await run("an uploaded .fio file replaces the text", async () => {
  await page.getByTestId("jobfile-upload").setInputFiles(UPLOAD);
  const want = readFileSync(UPLOAD, "utf8");
  await page.waitForFunction(
    (w) => document.querySelector('[data-testid="jobfile-input"]')?.value === w,
    want,
  );
  await page.getByTestId("jobfile-summary").waitFor();
  await page.getByTestId("jobfile-input").fill(PASTED);
  await page.getByTestId("jobfile-summary").waitFor();
});

await run("queued, it runs, and the run page shows the job file verbatim", async () => {
  await page.getByTestId("submit-run").click();
  await page.waitForURL(/\/runs\/[0-9a-f-]{36}$/);
  await page.getByTestId("run-detail").waitFor();
  const status = page.getByTestId("run-detail").getByTestId("run-status").first();
  await page.waitForFunction(
    (el) => ["succeeded", "failed", "cancelled"].includes(el?.textContent ?? ""),
    await status.elementHandle(),
    { timeout: RUN_TIMEOUT_MS, polling: 500 },
  );
  check((await status.textContent()) === "succeeded", `the run ${await status.textContent()}`);
  const shown = await page.getByTestId("jobfile-text").textContent();
  check(shown === PASTED, "the run page's job file is not the text as pasted");
  check((await page.getByTestId("jobfile-job").count()) === 2, "the run page's jobs");
  await noOverflow(page);
  await shot("J-run-jobfile");
});

await run("a saved job file's page shows it verbatim", async () => {
  await navigate(page, `/workloads/${WORKLOAD}`);
  await page.getByTestId("workload-page").waitFor();
  const kind = page.getByTestId("workload-kind").first();
  check((await kind.getAttribute("data-kind")) === "jobfile", "not labelled a fio job file");
  const shown = (await page.getByTestId("jobfile-text").textContent()) ?? "";
  check(
    shown.startsWith("; saved\n") && shown.includes("[seq]"),
    "the saved text is not shown as saved",
  );
  await noOverflow(page);
  await shot("J-workload-jobfile");
});

await done();
