// Deletion and comments in Chromium at 1440×900 (issue 13, V4) against a running server with two
// succeeded runs of the stack's team (IOWATT_DELETE_RUN, IOWATT_KEEP_RUN): a Markdown comment
// with an XSS attempt shows as text on the run page; Delete asks first, then the run is gone from
// the runs list and its page; the Team page's Delete team dialog offers the export and keeps its
// button disabled until the name is typed exactly; an environment a run uses (IOWATT_ENV_NAME)
// answers "used by 1 run" in the dialog, which then deletes it anyway; a comment on the comparison
// of IOWATT_KEEP_RUN and IOWATT_OTHER_RUN is found again with the runs in the other order.
//
//   IOWATT_URL=... IOWATT_EMAIL=... IOWATT_PASSWORD=... IOWATT_ARTIFACTS=DIR \
//   IOWATT_DELETE_RUN=<run id> IOWATT_KEEP_RUN=<run id> node tests/browser/deletion.mjs
//
// Prints `ok N - ...` per check and `deletion: N passed, 0 failed`; exit 1 with `failure.png`.
import { BASE, check, needs, noOverflow, openBrowser, visit } from "./lib.mjs";

const GONE = process.env.IOWATT_DELETE_RUN ?? "";
const KEEP = process.env.IOWATT_KEEP_RUN ?? "";
const ENV_NAME = process.env.IOWATT_ENV_NAME ?? "";
const OTHER = process.env.IOWATT_OTHER_RUN ?? "";
needs(
  "deletion",
  GONE !== "" && KEEP !== "" && ENV_NAME !== "" && OTHER !== "",
  "IOWATT_DELETE_RUN, IOWATT_KEEP_RUN, IOWATT_ENV_NAME, IOWATT_OTHER_RUN",
);
const { page, run, shot, login, done } = await openBrowser("deletion");

const XSS = 'Fast **enough**. <img src=x onerror="window.__xss=1"> <script>window.__xss=2</script>';

// the other pages are opened inside the app (lib.mjs visit) but for the deleted run's page, which
// the app has cached from before the deletion, and a comparison after a comparison
await run("log in", async () => {
  await login("comment-thread", `/runs/${GONE}`);
});

await run("a Markdown comment with an XSS attempt shows as text on the run page", async () => {
  await page.getByTestId("comment-thread").waitFor();
  await page.getByTestId("comment-input").fill(XSS);
  await page.getByTestId("comment-format").selectOption("markdown");
  await page.getByTestId("comment-submit").click();
  const body = page.getByTestId("comment-body").first();
  await body.waitFor();
  const text = (await body.textContent()) ?? "";
  check(text.includes("<script>window.__xss=2</script>"), `the script is shown as text: ${text}`);
  check((await body.locator("strong").textContent()) === "enough", "Markdown still renders bold");
  check((await body.locator("img, script").count()) === 0, "no element came from the body");
  check((await page.evaluate(() => window.__xss)) === undefined, "nothing in the comment ran");
  await noOverflow(page);
  await page.getByTestId("comment-thread").scrollIntoViewIfNeeded();
  await shot("V4-run-comments", false);
});

await run("Delete asks first; Cancel keeps the run", async () => {
  await page.getByTestId("delete-run").click();
  const dialog = page.getByTestId("confirm-dialog");
  await dialog.waitFor();
  check((await dialog.textContent())?.includes("cannot be undone"), "the dialog says it is final");
  await shot("V4-run-delete-dialog", false);
  await dialog.getByRole("button", { name: "Cancel" }).click();
  await dialog.waitFor({ state: "detached" });
  check(page.url().endsWith(`/runs/${GONE}`), "still on the run page");
});

await run("confirmed, the run is gone from the runs list", async () => {
  await page.getByTestId("delete-run").click();
  await page.getByTestId("confirm-action").click();
  await page.waitForURL(`${BASE}/runs`);
  await page.waitForFunction(
    ([keep]) => document.querySelector(`a[href="/runs/${keep}"]`) !== null,
    [KEEP],
  );
  check((await page.locator(`a[href="/runs/${GONE}"]`).count()) === 0, "the deleted run is listed");
  await shot("V4-runs-after-delete");
});

await run("its page says it is not found", async () => {
  await page.goto(`${BASE}/runs/${GONE}`);
  await page.getByText("run not found").waitFor();
  check((await page.getByTestId("run-detail").count()) === 0, "no run page for a deleted run");
});

await run("Delete team offers the export and wants the exact name", async () => {
  await visit(page, "/team");
  await page.getByTestId("delete-team").click();
  const dialog = page.getByTestId("delete-team-dialog");
  await dialog.waitFor();
  check(await dialog.getByTestId("export-team").isVisible(), "the export is offered first");
  const confirm = dialog.getByTestId("delete-team-confirm");
  await dialog.getByTestId("delete-team-name").fill("not the name");
  check(await confirm.isDisabled(), "a wrong name keeps the button disabled");
  await shot("V4-team-delete-dialog", false);
  await dialog.getByRole("button", { name: "Cancel" }).click();
  await dialog.waitFor({ state: "detached" });
});

// issue 27 part 3: the environment's topology is edited (fields by kind), the run keeps the
// environment it was queued in, compare groups and filters by a topology field; both viewports
await run("the environment form edits the topology, shown by kind", async () => {
  await visit(page, "/settings/environments");
  const row = page.getByTestId("environment-row").filter({ hasText: ENV_NAME });
  await row.getByTestId("edit-environment").click();
  const form = row.getByTestId("environment-form");
  await form.locator("#f-kind").selectOption("das");
  check((await form.locator("#f-nasProtocol").count()) === 0, "a DAS has no NAS protocol field");
  await form.locator("#f-raidLevel").selectOption("raid10");
  await form.locator("#f-memberCount").fill("3");
  await form.locator("#f-memberModel").fill("PM1733");
  await form.locator("#f-transport").selectOption("sas");
  await form.locator("#f-linkGbps").fill("12");
  await form.locator("#f-fstype").fill("xfs");
  await form.getByTestId("save-environment").click();
  const err = form.getByTestId("field-error-memberCount");
  await err.waitFor();
  check(
    (await err.textContent())?.includes("raid10"),
    "RAID 10 of 3 devices: the 422 on its input",
  );
  await form.locator("#f-memberCount").fill("4");
  await form.getByTestId("save-environment").click();
  await form.waitFor({ state: "detached" });
  await row.getByTestId("environment-topology").first().waitFor(); // the list's refetch
  const facts = (await row.getByTestId("environment-topology").allTextContents()).join(" | ");
  check(facts.includes("raid10") && facts.includes("4 × PM1733"), `topology shown: ${facts}`);
  check(facts.includes("sas 12 Gb/s"), `fabric shown: ${facts}`);
  await noOverflow(page);
  await row.scrollIntoViewIfNeeded();
  await shot("E-environment-topology", false);
  await page.setViewportSize({ width: 390, height: 844 });
  await row.getByTestId("edit-environment").click();
  await row.getByTestId("topology-fields").waitFor();
  await noOverflow(page);
  await row.getByTestId("topology-fields").scrollIntoViewIfNeeded();
  await shot("E-environment-form-390", false);
  await row.getByTestId("edit-environment").click(); // Close
  await page.setViewportSize({ width: 1440, height: 900 });
});

await run("the run page shows the environment as recorded, not as edited", async () => {
  await visit(page, `/runs/${OTHER}`);
  const panel = page.getByTestId("run-environment");
  await panel.waitFor();
  const text = (await panel.textContent()) ?? "";
  check(text.includes(ENV_NAME) && text.includes("(san)"), `recorded name and kind: ${text}`);
  check((await panel.getByTestId("run-environment-topology").count()) === 0, "no RAID recorded");
  const changed = (await panel.getByTestId("run-environment-changed").textContent()) ?? "";
  check(changed.includes("kind") && changed.includes("topology.raid.level"), `changed: ${changed}`);
  await panel.scrollIntoViewIfNeeded();
  await shot("E-run-environment-1440", false);
  await page.setViewportSize({ width: 390, height: 844 });
  await page.reload();
  await page.getByTestId("run-environment").waitFor();
  await noOverflow(page);
  await page.getByTestId("run-environment").scrollIntoViewIfNeeded();
  await shot("E-run-environment-390", false);
  await page.setViewportSize({ width: 1440, height: 900 });
});

await run("compare groups by an environment field and filters by another", async () => {
  await visit(page, `/compare?runs=${KEEP},${OTHER}&group_by=env.kind&force=1`);
  await page.getByTestId("compare-controls").waitFor();
  await page.waitForFunction(() => document.body.textContent?.includes("kind: san"));
  const body = (await page.textContent("body")) ?? "";
  check(body.includes("kind: not set"), "the run without an environment is its own column");
  const filters = page.getByTestId("env-filters");
  await filters.getByTestId("env-filter-field").selectOption("kind");
  await filters.getByTestId("env-filter-value").fill("san");
  await filters.getByTestId("env-filter-add").click();
  await page.waitForURL(/env=kind%3Asan|env=kind:san/);
  await page.waitForFunction(() => {
    const t = document.body.textContent ?? "";
    return t.includes("kind: san") && !t.includes("kind: not set") && !t.includes("Loading…");
  });
  check((await filters.getByTestId("env-filter-chip").count()) === 1, "the filter is a chip");
  check(
    (await filters.getByTestId("env-filter-left-out").textContent()) === "1 run left out",
    "the page says what the filter left out",
  );
  await noOverflow(page);
  await shot("E-compare-env-1440", false);
  await page.setViewportSize({ width: 390, height: 844 });
  // the charts resize on their observers' next frames: give them a moment, then it must fit
  await page
    .waitForFunction(() => document.documentElement.scrollWidth <= window.innerWidth, null, {
      timeout: 5000,
    })
    .catch(() => {});
  await noOverflow(page);
  await shot("E-compare-env-390", false);
  await page.setViewportSize({ width: 1440, height: 900 });
});

await run("an environment in use: the dialog says what uses it, then Delete anyway", async () => {
  await visit(page, "/settings/environments");
  const row = page.getByTestId("environment-row").filter({ hasText: ENV_NAME });
  await row.waitFor();
  check(
    (await row.getByTestId("environment-notes").textContent()) === "rack 4, row B",
    "notes shown",
  );
  await row.getByTestId("delete-environment").click();
  const dialog = page.getByTestId("confirm-dialog");
  await dialog.getByTestId("confirm-action").click();
  const inUse = dialog.getByTestId("delete-in-use");
  await inUse.waitFor();
  check((await inUse.textContent())?.includes("used by 1 run"), "the 409 names what uses it");
  check(
    (await dialog.getByTestId("confirm-action").textContent())?.includes("Delete anyway"),
    "the dialog offers to delete anyway",
  );
  await shot("V4-environment-in-use", false);
  await dialog.getByTestId("confirm-action").click();
  await dialog.waitFor({ state: "detached" });
  await page.waitForFunction(
    (name) =>
      ![...document.querySelectorAll('[data-testid="environment-row"]')].some((r) =>
        r.textContent?.includes(name),
      ),
    ENV_NAME,
  );
});

await run("a comparison's thread is found by its runs in any order", async () => {
  await visit(page, `/compare?runs=${KEEP},${OTHER}`);
  const thread = page.getByTestId("comment-thread");
  await thread.waitFor();
  await page.getByTestId("comment-input").fill("Re-run after the firmware update, please.");
  await page.getByTestId("comment-submit").click();
  await thread.getByTestId("comment").first().waitFor();
  await visit(page, `/compare?runs=${OTHER},${KEEP}`); // a page load: the same page
  await page
    .getByTestId("comment-thread")
    .getByText("Re-run after the firmware update, please.")
    .waitFor();
  await page.getByTestId("comment-thread").scrollIntoViewIfNeeded();
  await shot("V4-compare-comments", false);
});

await run("devices list their notes and offer Delete to an admin", async () => {
  await visit(page, "/settings/devices");
  await page.getByTestId("devices-table").waitFor();
  check((await page.getByTestId("delete-device").count()) > 0, "an admin sees Delete");
  await shot("V4-devices", false);
});

await done();
