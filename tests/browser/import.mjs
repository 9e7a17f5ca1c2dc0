// The Import page in Chromium at 1440×900 (issue 26) against the shared stack: two fio files
// chosen (fio 3.33 JSON and fio 2.x normal output), previewed before anything is stored (format,
// jobs, units), a pasted text that is no tool's output refused with the format and line, a label
// fixed, both stored, then the run page and the runs list say "imported from fio 3.x".
//
//   IOWATT_URL=... IOWATT_EMAIL=... IOWATT_PASSWORD=... IOWATT_ARTIFACTS=DIR \
//   IOWATT_IMPORT_FILES=a.json,b.normal node tests/browser/import.mjs
//
// Prints `ok N - ...` per check and `import: N passed, 0 failed`; exit 1 with `failure.png`.
import { readFileSync } from "node:fs";
import {
  ARTIFACTS,
  BASE,
  check,
  downloaded,
  navigate,
  needs,
  noOverflow,
  openBrowser,
  shotOf,
} from "./lib.mjs";

const FILES = (process.env.IOWATT_IMPORT_FILES ?? "").split(",").filter(Boolean);
// the origin label names the tool's version as the file states it
const FIO = /^imported from fio \d+\.\d+/;
const HOST = process.env.IOWATT_IMPORT_HOST ?? "lab-7";
needs("import", FILES.length === 2, "IOWATT_IMPORT_FILES=two files");
const { page, browser, run, shot, login, done } = await openBrowser("import");

const items = () => page.getByTestId("import-item");

await run("log in", async () => {
  // onto the runs list (the dashboard draws the latest runs' comparison); the list may have no
  // runs yet: wait for the header. The pages after it are opened inside the app (lib.mjs
  // navigate), the shared link in a context of its own
  await login("logout", "/runs");
});

await run("the Import page is in the navigation", async () => {
  await page.getByRole("link", { name: "Import", exact: true }).click();
  await page.getByTestId("import-page").waitFor();
  check(await page.getByTestId("import-drop").isVisible(), "a drop zone");
  check(await page.getByTestId("import-paste").isVisible(), "a paste box");
  await noOverflow(page);
  await shot("I-import-empty");
});

await run("two files are previewed before anything is stored, with their units", async () => {
  await page.getByTestId("import-file-input").setInputFiles(FILES);
  await page.waitForFunction(
    () => document.querySelectorAll('[data-testid="import-preview"]').length === 2,
  );
  const formats = await page.getByTestId("import-format").allTextContents();
  check(formats.includes("fio-json") && formats.includes("fio-normal"), `formats: ${formats}`);
  const jobs = await page.getByTestId("import-job").count();
  check(jobs >= 4, `jobs previewed: ${jobs}`);
  const head = (await page.getByTestId("import-jobs").first().textContent()) ?? "";
  check(
    head.includes("MB/s") && head.includes("IOPS") && head.includes("p99"),
    `units: ${head.slice(0, 200)}`,
  );
  const cells = (await page.getByTestId("import-job").first().textContent()) ?? "";
  check(/MB\/s/.test(cells) && /(µs|ms|ns)/.test(cells), `a job's figures with units: ${cells}`);
  check((await page.getByTestId("import-stored").count()) === 0, "nothing stored yet");
  await noOverflow(page);
  await shot("I-import-preview");
});

await run(
  "pasted text that is no tool's output is refused, naming the format and line",
  async () => {
    await page
      .getByTestId("import-paste")
      .fill("Hello,\nthis is a shopping list, not a benchmark.\n");
    await page.getByTestId("import-paste-add").click();
    const err = page.getByTestId("import-error");
    await err.waitFor();
    const text = (await err.textContent()) ?? "";
    check(text.includes("line 1") && text.includes("fio-terse"), `the error: ${text}`);
    await shot("I-import-error");
    await items().last().getByRole("button", { name: "Remove" }).click();
    await page.waitForFunction(
      () => document.querySelectorAll('[data-testid="import-item"]').length === 2,
    );
  },
);

await run("the format list is the server's registry (GET /imports/formats)", async () => {
  const options = await items()
    .first()
    .getByTestId("import-format-select")
    .locator("option")
    .allTextContents();
  check(options[0] === "Detect" && options.length >= 15, `${options.length} formats: ${options}`);
  check(
    options.some((o) => o.startsWith("CrystalDiskMark")) &&
      options.some((o) => o.startsWith("fio")),
    `formats: ${options}`,
  );
});

await run("a label fixed, then both stored", async () => {
  const host = items().first().getByTestId("import-host");
  await host.fill(HOST);
  await page.getByTestId("import-store-all").click();
  await page.waitForFunction(
    () => document.querySelectorAll('[data-testid="import-stored"]').length === 2,
  );
  const said = await page.getByTestId("import-stored").allTextContents();
  check(
    said.every((s) => s.includes("imported from fio") || s.includes("Imported before")),
    `stored: ${said}`,
  );
  await noOverflow(page);
  await shot("I-import-stored");
});

let storedIds = [];
await run("a comparison of the two labels both runs", async () => {
  const hrefs = await page
    .getByTestId("import-stored-link")
    .evaluateAll((as) => as.map((a) => a.getAttribute("href") ?? ""));
  storedIds = hrefs.map((h) => h.split("/").pop());
  check(storedIds.length === 2, `two stored runs: ${hrefs}`);
  await navigate(page, `/compare?runs=${storedIds.join(",")}`);
  await page.getByTestId("run-origin").first().waitFor();
  const labels = await page.getByTestId("run-origin").allTextContents();
  check(labels.filter((l) => FIO.test(l)).length === 2, `compare labels: ${labels}`);
  await noOverflow(page);
  await shot("I-import-compare");
});

await run("a share link of the comparison labels both runs too (issue 26)", async () => {
  await navigate(page, `/compare?runs=${storedIds.join(",")}`); // there already: stays
  await page.getByTestId("run-origin").first().waitFor();
  await page.getByTestId("share-button").click();
  await page.getByTestId("share-create").click();
  const url = (await page.getByTestId("share-url").innerText()).trim();
  await page.getByTestId("share-done").click();
  // opened by someone without an account
  const other = await browser.newContext({ viewport: { width: 390, height: 844 } });
  try {
    const p = await other.newPage();
    await p.goto(`${BASE}${new URL(url).pathname}`); // the link's path on this stack
    await p.getByTestId("shared-runs").waitFor();
    const labels = await p.getByTestId("run-origin").allTextContents();
    check(labels.filter((l) => FIO.test(l)).length === 2, `shared labels: ${labels}`);
    await noOverflow(p);
    await shotOf(p, `${ARTIFACTS}/I-import-shared-390.png`);
  } finally {
    await other.close();
  }
});

await run("the named views' page labels them (issue 26)", async () => {
  await navigate(page, `/views?runs=${storedIds.join(",")}`);
  await page.getByTestId("views-for-runs").waitFor();
  const labels = await page
    .getByTestId("views-for-runs")
    .getByTestId("run-origin")
    .allTextContents();
  check(labels.filter((l) => FIO.test(l)).length === 2, `views labels: ${labels}`);
  await shot("I-import-views");
  await navigate(page, `/runs/${storedIds[0]}`);
});

await run("the run page says where its figures come from", async () => {
  await page.getByTestId("run-detail").waitFor();
  const origin = page.getByTestId("run-origin").first();
  await origin.waitFor();
  check(FIO.test((await origin.textContent()) ?? ""), "the run page's badge names fio's version");
  await page.getByText("settings, host and device were not controlled by iowatt").first().waitFor();
  await noOverflow(page);
  await shot("I-import-run");
});

await run("the original file downloads byte for byte", async () => {
  const [dl] = await Promise.all([
    page.waitForEvent("download"),
    page.getByTestId("source-download").click(),
  ]);
  check(
    dl.suggestedFilename() === FILES[0].split("/").pop(),
    `its name: ${dl.suggestedFilename()}`,
  );
  const got = readFileSync(await downloaded(dl));
  check(got.equals(readFileSync(FILES[0])), `${got.length} bytes, the same as the file`);
});

await run("the runs list labels imported runs", async () => {
  await navigate(page, "/runs?source=import");
  await page.getByTestId("run-row").first().waitFor();
  const labels = await page.getByTestId("run-origin").allTextContents();
  check(labels.filter((l) => FIO.test(l)).length >= 1, `labels: ${labels}`);
  await shot("I-import-runs");
});

await done();
