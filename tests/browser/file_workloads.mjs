// File workloads in the web UI at 1440×900 (issue 14), against a running server with real runs
// of the file presets: the workloads list (kinds, seeds, file sets) and vdbench-big's page (its
// parameter file, the file set at its scale and at full size), a custom PostMark workload whose
// server 422 lands beside the field, New run with a scale (the file set as typed, directory
// targets only, no shorten), the run page of a PostMark and of a vdbench run (operations, report,
// per-interval charts, scale, cache_resident beside the figures), the two seed views with 2 and
// 8+ runs, and compare of two PostMark and two vdbench runs. No page wider than the window.
//
//   IOWATT_URL=... IOWATT_EMAIL=... IOWATT_PASSWORD=... IOWATT_ARTIFACTS=DIR \
//   IOWATT_FILE_PM=<9 postmark run ids> IOWATT_FILE_VD=<8 vdbench run ids> \
//   IOWATT_FILE_PM2=<2 postmark ids> IOWATT_FILE_VD2=<2 vdbench ids> \
//   IOWATT_FILE_PM_TRANSACTIONS=<the first postmark run's transactions> \
//   [IOWATT_FILE_PM_CUSTOM=<a custom PostMark run> IOWATT_FILE_VD_CUSTOM=<a custom vdbench run>] \
//   node tests/browser/file_workloads.mjs
//
// Q's checks that the figures read right: the cache flag once and above the figures, CPU labelled
// whose, time axes in the unit of their size, no chart of one interval, warm-up points named, the
// views' CSVs (rows as on the page, scales not rounded to 0). Q-*.png and Q-*.csv beside U-*.png.
//
// tests/browser/test_file_workloads.py runs it. Screenshots U-*.png go to IOWATT_ARTIFACTS.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { check, needs, noOverflow, openBrowser, visit as visitPage } from "./lib.mjs";

const ids = (name) => (process.env[name] ?? "").split(",").filter(Boolean);
const PM = ids("IOWATT_FILE_PM");
const VD = ids("IOWATT_FILE_VD");
const PM2 = ids("IOWATT_FILE_PM2");
const VD2 = ids("IOWATT_FILE_VD2");
const PM_TX = process.env.IOWATT_FILE_PM_TRANSACTIONS ?? "";
const PM_LIKE = ids("IOWATT_FILE_PM_LIKE");
const VD_LIKE = ids("IOWATT_FILE_VD_LIKE");
const VD_RUN = process.env.IOWATT_FILE_VD_RUN ?? "";
// Q's walk: a team's own PostMark and vdbench workloads run on the disk (/var/tmp), optional
const PM_CUSTOM = process.env.IOWATT_FILE_PM_CUSTOM ?? "";
const VD_CUSTOM = process.env.IOWATT_FILE_VD_CUSTOM ?? "";
const ARTIFACTS = process.env.IOWATT_ARTIFACTS ?? ".";

needs(
  "file_workloads",
  PM.length >= 8 &&
    VD.length >= 8 &&
    PM2.length === 2 &&
    VD2.length === 2 &&
    PM_LIKE.length === 2 &&
    VD_LIKE.length === 2 &&
    VD_RUN &&
    PM_TX,
  "IOWATT_FILE_PM, IOWATT_FILE_VD (8+ each), IOWATT_FILE_PM2, IOWATT_FILE_VD2, IOWATT_FILE_PM_LIKE, IOWATT_FILE_VD_LIKE, IOWATT_FILE_VD_RUN, IOWATT_FILE_PM_TRANSACTIONS",
);
const { page, run, shot, login, done } = await openBrowser("file_workloads");

/** The numbers on a chart's value axis (the left one): a time axis in the unit of its size reads
 * 1–999 at its top, never 0.06 (s) for milliseconds nor 100k (µs) for a tenth of a second. */
async function axisTicks(testId) {
  return page
    .getByTestId(testId)
    .locator(
      ".recharts-yAxis .recharts-cartesian-axis-tick-value, .recharts-yAxis-tick-labels .recharts-cartesian-axis-tick-value",
    )
    .evaluateAll((els) => els.map((e) => e.textContent ?? ""));
}
const tickValue = (t) => {
  const m = /^([\d.]+)(k|M)?$/.exec(t.trim());
  return m ? Number(m[1]) * (m[2] === "k" ? 1e3 : m[2] === "M" ? 1e6 : 1) : Number.NaN;
};

/** The panel's figures read right: the cache flag once, above the figures; CPU without 0.00 %. */
async function panelReadsRight(expectFlag) {
  const panel = page.getByTestId("file-workload-panel");
  const flags = await panel.getByTestId("cache-resident").count();
  check(
    flags === (expectFlag ? 1 : 0),
    `${flags} cache flags in the panel (once, above the figures)`,
  );
  if (expectFlag) {
    const before = await page.evaluate(() => {
      const note = document.querySelector("[data-testid=cache-note]");
      const figs = document.querySelector("[data-testid=file-figures]");
      return !!(
        note &&
        figs &&
        note.compareDocumentPosition(figs) & Node.DOCUMENT_POSITION_FOLLOWING
      );
    });
    check(before, "the cache note is not above the figures it qualifies");
  }
  const cpu = await text("fig-cpu");
  check(/CPU, (engine process|host)/.test(cpu), `whose CPU: ${cpu}`);
  check(!/\.\d*0 %/.test(cpu), `CPU with absurd precision: ${cpu}`);
}

/** Every chart's plot area on the page is at least 200 px high; at least `count` of them. */
async function plotsAtLeast200(count) {
  await page.waitForTimeout(300); // ResponsiveContainer's own size pass
  const heights = await page
    .locator(".recharts-cartesian-grid")
    .evaluateAll((els) => els.map((e) => e.getBoundingClientRect().height));
  check(heights.length >= count, `${heights.length} charts, expected ${count}`);
  check(
    heights.every((h) => h >= 200),
    `plot heights ${heights.map((h) => Math.round(h))}`,
  );
}

/** `visit(path)`: lib.mjs `visit` on this script's page (here 8 of 12 page loads are navigations
 * inside the app: ~2.2 CPU-s less for the test). */
const visit = (path) => visitPage(page, path);

let energyShown = false;
const text = async (testId) => (await page.getByTestId(testId).first().textContent()) ?? "";

await run("log in", login);

let bigId = "";
await run("the workloads list names each preset's kind, report and file set", async () => {
  await visit(`/workloads`);
  await page.getByTestId("workloads-table").waitFor();
  const row = (name) => page.locator(`[data-testid=workload-row][data-name="${name}"]`);
  for (const [name, kind, seed] of [
    ["postmark-low", "postmark", "Song & Lee"],
    ["postmark-high", "postmark", "Song & Lee"],
    ["vdbench-big", "vdbench", "Schulz"],
    ["vdbench-small", "vdbench", "Schulz"],
  ]) {
    const r = row(name);
    check(
      (await r.getByTestId("workload-kind").getAttribute("data-kind")) === kind,
      `${name} is not shown as ${kind}`,
    );
    check((await r.getByTestId("preset-seed").textContent()).includes(seed), `${name}: ${seed}`);
  }
  const table = (await page.getByTestId("workloads-table").textContent()) ?? "";
  check(!/\b1 directories/.test(table), "'1 directories' on the workloads list");
  const big = (await row("vdbench-big").textContent()) ?? "";
  check(/65 files/.test(big) && /scale ×0\.001/.test(big), `vdbench-big's row: ${big}`);
  check(
    (await row("quick").getByTestId("workload-kind").getAttribute("data-kind")) === "block",
    "quick is a block workload",
  );
  await noOverflow(page);
  await shot("U-workloads");
  const href = await row("vdbench-big").locator("a").first().getAttribute("href");
  bigId = href.split("/").pop();
});

await run(
  "vdbench-big's page: parameter file, file set at its scale and at full size",
  async () => {
    await visit(`/workloads/${bigId}`);
    await page.getByTestId("vdbench-parameters").waitFor();
    const params = await text("vdbench-parameters");
    check(
      params.includes("fsd=fsd1,anchor=H:,depth=1,width=5,files=20,size=5G"),
      "Schulz's script",
    );
    check((await text("vdbench-scale")) === "×0.001", "the scale");
    check((await text("fileset-size")).includes("65 files"), await text("fileset-size"));
    // full size from the engine at scale 1: 100 files of 5 GiB, 10 h
    await page.waitForFunction(() =>
      document.querySelector("[data-testid=fileset-full]")?.textContent?.includes("500 GiB"),
    );
    check((await text("fileset-full")).includes("10 h"), await text("fileset-full"));
    await noOverflow(page);
    await shot("U-workload-vdbench-big");
  },
);

await run("a custom PostMark workload: the server's 422 beside the field, then saved", async () => {
  await visit(`/workloads`);
  await page.getByTestId("new-file-workload").click();
  const form = page.getByTestId("file-workload-form");
  await form.locator("#f-name").fill("u-browser postmark");
  check((await form.textContent()).includes("bytes, e.g. 500"), "the size fields do not say bytes");
  await form.locator("[id='f-pm.number']").fill("200000000"); // above PostMark's limit (server)
  await page.getByTestId("submit-workload").click();
  const err = page.getByTestId("field-error-pm.number");
  await err.waitFor();
  check((await err.getAttribute("data-source")) === "server", "the 422 is the server's");
  await shot("U-workload-form-422");
  await form.locator("[id='f-pm.number']").fill("50");
  await form.locator("[id='f-pm.transactions']").fill("100");
  await page.getByTestId("submit-workload").click();
  await page.getByTestId("postmark-settings").waitFor();
  check((await text("workload-kind")) === "PostMark", "the new workload's kind");
  check((await text("fileset-size")).includes("50 files"), await text("fileset-size"));
});

await run("New run with vdbench-big: scale as typed, directory targets, no shorten", async () => {
  await visit(`/runs/new?workload=${bigId}`);
  const scale = page.getByTestId("scale-input");
  await scale.waitFor();
  check(
    (await scale.inputValue()) === "0.001",
    `the preset's scale, not ${await scale.inputValue()}`,
  );
  check((await page.getByTestId("shorten-select").count()) === 0, "shorten offered");
  check((await text("directory-note")).includes("directory"), "why directories only");
  const kinds = await page
    .getByTestId("target-select")
    .locator("option:not([disabled])")
    .evaluateAll((os) => os.map((o) => o.getAttribute("data-kind")));
  check(kinds.length > 0 && kinds.every((k) => k === "directory"), `targets ${kinds}`);
  const before = await text("scale-fileset");
  await scale.fill("0.01");
  await page.waitForFunction((b) => {
    const t = document.querySelector("[data-testid=scale-fileset]")?.textContent ?? "";
    return t !== "" && t !== b;
  }, before);
  const after = await text("scale-fileset");
  // the engine keeps 65 files (64 exclusive threads) and makes each 10× larger, for 6 min
  check(after.includes("65 files") && after.includes("6 min"), after);
  await noOverflow(page);
  await shot("U-new-run-scale");
});

await run("PostMark's run page: operations, report, scale, cache flag", async () => {
  await visit(`/runs/${PM[0]}`);
  const panel = page.getByTestId("file-workload-panel");
  await panel.waitFor();
  check((await panel.getAttribute("data-mode")) === "postmark", "the panel's mode");
  check((await text("run-scale")) === "scale ×0.002", await text("run-scale"));
  const ops = await page
    .getByTestId("file-ops")
    .locator("tbody tr")
    .evaluateAll((rs) => rs.map((r) => r.getAttribute("data-op")));
  check(ops.join(",") === "create,read,append,delete", `operations ${ops}`);
  check((await text("postmark-report")).includes(PM_TX), `transactions ${PM_TX}`);
  // tmpfs: the file set is in RAM, not O_DIRECT
  // the flag comes with the run's validity, which may land after the panel: wait for it
  await page
    .getByTestId("cache-resident")
    .first()
    .waitFor()
    .catch(() => {
      throw new Error("cache_resident not shown");
    });
  await panelReadsRight(true);
  // the phases of a scaled run take milliseconds: the axis in ms (1–999 at its top), not 0.06 s
  const phaseUnit = await page.getByTestId("postmark-phases").getAttribute("data-unit");
  const phaseTicks = (await axisTicks("postmark-phases")).map(tickValue);
  const top = Math.max(...phaseTicks);
  const allTicks = await page
    .getByTestId("postmark-phases")
    .locator(".recharts-cartesian-axis-tick-value")
    .evaluateAll((els) =>
      els.map((e) => `${e.closest("[class*=Axis]")?.getAttribute("class")}:${e.textContent}`),
    );
  check(top >= 1 && top < 1000, `phase axis (${phaseUnit}) ticks ${phaseTicks} of ${allTicks}`);
  check((await text("run-file-spec")).includes("PostMark"), "the workload's kind");
  await plotsAtLeast200(2);
  await noOverflow(page);
  await shot("U-run-postmark");
});

await run("vdbench's run page: per-interval rates and response times", async () => {
  await visit(`/runs/${VD_RUN}`);
  const panel = page.getByTestId("file-workload-panel");
  await panel.waitFor();
  check((await panel.getAttribute("data-mode")) === "vdbench", "the panel's mode");
  await page.getByTestId("file-rate-chart").locator(".recharts-cartesian-grid").waitFor();
  check((await text("run-scale")) === "scale ×1", await text("run-scale"));
  const n = Number(/(\d+) intervals/.exec(await text("interval-note"))?.[1] ?? 0);
  check(n >= 8, `${n} intervals`);
  // warmup=2 of 1 s intervals: the note names the warm-up points the charts draw
  check(
    /warm-up \(points \d+–\d+ s\)/.test(await text("interval-note")),
    await text("interval-note"),
  );
  // one line per operation, a point per interval
  const dots = await page
    .getByTestId("file-rate-chart")
    .locator(".recharts-line-dot, .recharts-dot")
    .count();
  check(dots === 0 || dots >= n, `${dots} points for ${n} intervals`);
  const ops = await page
    .getByTestId("file-ops")
    .locator("tbody tr")
    .evaluateAll((rs) => rs.map((r) => r.getAttribute("data-op")));
  check(ops[0] === "read" && ops.includes("write"), `operations ${ops}`);
  check((await text("run-file-spec")).includes("fsd=fsd1"), "the parameter file");
  await panelReadsRight(true);
  // mean responses of µs on tmpfs: the log axis in µs or ms whose top is at least 1 (not 0.0001 ms)
  const respTicks = (await axisTicks("file-resp-chart")).map(tickValue);
  check(Math.max(...respTicks) >= 1, `response axis ticks ${respTicks}`);
  await plotsAtLeast200(2);
  await noOverflow(page);
  await shot("U-run-vdbench");
  // then a preset's run (the checks above are this page's: it is not opened a second time)
  await visit(`/runs/${VD[0]}`);
  await page.getByTestId("file-workload-panel").waitFor();
  // the preset's 30 s interval on a 1 s run: one interval, a note instead of two charts of a dot
  check((await page.getByTestId("file-rate-chart").count()) === 0, "a chart of one interval");
  check((await text("interval-note")).includes("One interval"), await text("interval-note"));
  // the page's scale is the run's (×0.03) times the preset's (×0.001)
  check(
    (await text("run-scale")) === "scale ×0.00003",
    `a preset ×0.03: ${await text("run-scale")}`,
  );
  await noOverflow(page);
  await shot("U-run-vdbench-preset");
});

for (const [view, sets] of [
  [
    "vdbench-filesets",
    [
      [VD2, "2"],
      [VD, "8"],
    ],
  ],
  [
    "postmark-levels",
    [
      [PM2, "2"],
      [PM, "9"],
    ],
  ],
]) {
  for (const [runs, label] of sets) {
    await run(`${view} with ${runs.length} runs`, async () => {
      await visit(`/views/${view}?runs=${runs.join(",")}`);
      await page.getByTestId("view-grid").waitFor();
      const rows = await page.getByTestId("view-row").count();
      check(rows >= 1, "no rows");
      const body = (await page.getByTestId("view-grid").locator("table").textContent()) ?? "";
      check(!/NaN|undefined/.test(body), "a figure reads NaN or undefined");
      check(!/\(B\/s\)|\(ns\)/.test(body), "a header in base units (B/s, ns)");
      if (view === "postmark-levels" && /energy|power/i.test(body)) {
        // the meter is an estimate (datasheet watts): every energy row says so
        check(/estimated/i.test(body), "energy from an estimate meter is not labelled estimated");
        energyShown = true;
      }
      await noOverflow(page);
      await shot(`U-view-${view}-${label}`);
      const [download] = await Promise.all([
        page.waitForEvent("download"),
        page.getByTestId("view-csv").click(),
      ]);
      const file = join(ARTIFACTS, `Q-${view}-${label}.csv`);
      await download.saveAs(file);
      const csv = readFileSync(file, "utf8").trim().split(/\r?\n/);
      check(csv.length > rows, `${csv.length - 1} CSV rows for ${rows} on the page`);
      check(!/NaN|undefined|\(B\/s\)|\(ns\)/.test(csv.join("\n")), `CSV: ${csv[0]}`);
      if (view === "vdbench-filesets") {
        // the scale as on the page (0.00003), not rounded to 0.0 by the ratio's three decimals
        const col = csv[0].split(",").indexOf("Scale");
        const scales = csv.slice(1).map((l) => Number(l.split(",")[col]));
        check(col > 0 && scales.every((v) => v > 0), `CSV scales ${scales}`);
      }
    });
  }
}

for (const [name, runs] of [
  ["postmark", PM_LIKE],
  ["vdbench", VD_LIKE],
]) {
  await run(`compare two ${name} runs`, async () => {
    await visit(`/compare?runs=${runs.join(",")}&render=all`);
    await page.getByTestId("compare-runs").waitFor();
    await page.getByTestId("compare-table").first().waitFor();
    const body = (await page.getByTestId("compare-page").textContent()) ?? "";
    check(!/NaN|undefined/.test(body), "a figure reads NaN or undefined");
    await noOverflow(page);
    await shot(`U-compare-${name}`);
  });
}

for (const [name, id] of [
  ["postmark", PM_CUSTOM],
  ["vdbench", VD_CUSTOM],
]) {
  if (!id) continue;
  await run(`a team's own ${name} workload run on the disk (/var/tmp)`, async () => {
    // the run's system facts carry the cache flag and can come after the figures: the flag is
    // expected as the server's answer says (GET /runs/{id}/system's validity), then waited for.
    // (Counting the flags after `networkidle` was a race: Playwright resolves networkidle at once
    // when the page had 500 ms without requests before the system facts were asked for, as on a
    // loaded machine while the charts draw; the count read 0, then 1.)
    const system = page.waitForResponse(
      (r) =>
        new URL(r.url()).pathname === `/api/v1/runs/${id}/system` &&
        r.request().method() === "GET" &&
        r.ok(),
    );
    await visit(`/runs/${id}`);
    const panel = page.getByTestId("file-workload-panel");
    await panel.waitFor();
    check((await panel.getAttribute("data-mode")) === name, "the panel's mode");
    const body = (await panel.textContent()) ?? "";
    check(!/NaN|undefined/.test(body), "a figure reads NaN or undefined");
    await panel.getByTestId("file-figures").waitFor();
    const flagged = ((await (await system).json()).validity ?? []).some(
      (f) => f.flag === "cache_resident",
    );
    if (flagged) await panel.getByTestId("cache-resident").first().waitFor();
    await panelReadsRight(flagged);
    if (name === "vdbench") await plotsAtLeast200(2);
    await noOverflow(page);
    await shot(`Q-run-${name}-custom-disk`);
  });
}

console.log(`file_workloads: postmark-levels energy rows ${energyShown ? "shown" : "absent"}`);
await done();
