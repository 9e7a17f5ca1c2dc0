// SNIA PTS in Chromium at 1440×900, as steps of another script's session (run_page.mjs calls
// them after its own; one browser, one log-in): the New run form's PTS mode on a raw device of a
// host that marked it destructive (the plan before queueing, a short trial said not
// PTS-compliant, the typed key), the run's report page once the host has answered (verdict,
// steady-state convergence plot, measurement window with its fit and bands, IOPS heat map, CSV),
// a Write Saturation run's two plots (over time and over total GB written), and a Host Idle
// Recovery run's IOPS per burst over time with its wait states; the form's Client profile (never
// compliant: what the sources do not state listed) and a Client run's report (its profile).
//
// The test (test_run_page.py) gives IOWATT_PTS_AGENT (the host's name), IOWATT_PTS_MODEL (the
// device's model: the typed confirmation), IOWATT_PTS_WSAT_RUN_ID and IOWATT_PTS_HIR_RUN_ID (a
// Write Saturation and a Host Idle Recovery run it queued and had answered); at `pause: pts-host` it makes the host fresh (a heartbeat), at
// `pause: pts-queued` the host answers the form's run with a recorded PTS document.
import { BASE, check, pause } from "./lib.mjs";

/** The largest recharts surface of a chart card: its plot. */
async function plotHeight(card) {
  const hs = await card
    .locator(".recharts-surface")
    .evaluateAll((els) => els.map((e) => e.getBoundingClientRect().height));
  return Math.max(0, ...hs);
}

/** A chart card whose plot is drawn with at least `min` points on its line. */
async function drawn(page, testId, min) {
  const card = page.getByTestId(testId);
  await card.waitFor();
  check((await plotHeight(card)) >= 200, `${testId}: no plot`);
  const dots = await card
    .locator(".recharts-line-curve")
    .evaluateAll((els) =>
      els.map((e) => (e.getAttribute("d") ?? "").split(/[LM]/).filter((x) => x.trim()).length),
    );
  check(Math.max(0, ...dots) >= min, `${testId}: a line of ${Math.max(0, ...dots)} points`);
}

/** Whether the test asked for the PTS steps (IOWATT_PTS_AGENT). */
export const wantsPts = () => Boolean(process.env.IOWATT_PTS_AGENT);

export async function ptsSteps({ page, run, shot }) {
  // read when the steps run, not when this module is loaded: runner.mjs loads it once for every
  // run_page.mjs it runs, each with its own environment
  const PTS_AGENT = process.env.IOWATT_PTS_AGENT ?? "";
  const MODEL = process.env.IOWATT_PTS_MODEL ?? "";
  const WSAT = process.env.IOWATT_PTS_WSAT_RUN_ID ?? "";
  const HIR = process.env.IOWATT_PTS_HIR_RUN_ID ?? "";
  const CLIENT = process.env.IOWATT_PTS_CLIENT_RUN_ID ?? "";
  let runId = "";
  await run(
    "New run: a SNIA PTS test on a raw device, planned before queueing, with the typed key",
    async () => {
      await pause("pts-host");
      await page.goto(`${BASE}/runs/new`);
      const host = page.locator("#f-agent option", { hasText: PTS_AGENT });
      await host.waitFor({ state: "attached" });
      await page.selectOption("#f-agent", (await host.getAttribute("value")) ?? "");
      await page.getByTestId("mode-pts").check();
      const plan = page.getByTestId("pts-plan");
      await plan.waitFor();
      // the specification's run: compliant, 56 one-minute elements a round, 5 to 25 rounds
      const full = (await plan.textContent()) ?? "";
      check(full.includes("Rounds: 4 h 40 min to 23 h 20 min"), `plan: ${full}`);
      check(full.includes("PTS-compliant parameters"), `plan: ${full}`);
      // PTS Client: never called compliant, what the sources do not state listed; then back
      await page.selectOption("[data-testid=pts-profile]", "client");
      await page.waitForFunction(() =>
        document
          .querySelector("[data-testid=pts-plan-compliance]")
          ?.textContent?.includes("not PTS Client-compliant"),
      );
      const client = (await page.getByTestId("pts-plan-compliance").textContent()) ?? "";
      check(
        client.includes("PTS Client: the sources at hand do not state its ActiveRange"),
        `Client plan: ${client}`,
      );
      await shot("M-new-run-pts-client", false);
      await page.selectOption("[data-testid=pts-profile]", "enterprise");
      await page.waitForFunction(() =>
        document
          .querySelector("[data-testid=pts-plan-compliance]")
          ?.textContent?.includes("PTS-compliant parameters"),
      );
      // only raw devices can be chosen
      const kinds = await page
        .locator("[data-testid=target-select] option:not([disabled])")
        .evaluateAll((els) => els.map((e) => e.dataset.kind));
      check(kinds.length > 0 && kinds.every((k) => k === "device"), `targets offered: ${kinds}`);
      await page.selectOption("[data-testid=pts-scale]", "0.001");
      const compliance = page.getByTestId("pts-plan-compliance");
      await page.waitForFunction(() =>
        document.querySelector("[data-testid=pts-plan-compliance]")?.textContent?.includes("not"),
      );
      const said = (await compliance.textContent()) ?? "";
      check(said.includes("rounds of 1 s per element, not 60 s"), `compliance: ${said}`);
      check(
        ((await plan.textContent()) ?? "").includes("Rounds: 4 min 40 s to 23 min 20 s"),
        `trial plan: ${await plan.textContent()}`,
      );
      // Host Idle Recovery's plan: its wait states, and no workload-independent preconditioning
      await page.selectOption("[data-testid=pts-test]", "hir");
      const hir = (await page.getByTestId("pts-plan-hir").textContent()) ?? "";
      check(hir.includes("WS1: 1 s idle") && hir.includes("WS10: 10 s idle"), `HIR plan: ${hir}`);
      const hirPlan = (await plan.textContent()) ?? "";
      check(hirPlan.includes("the test starts from the purged state"), `HIR plan: ${hirPlan}`);
      // five one-second rounds at least, 25 at most, and 62 s of wait states and baselines
      check(
        hirPlan.includes("Rounds and wait states: 1 min 7 s to 1 min 27 s"),
        `HIR plan: ${hirPlan}`,
      );
      await shot("M-new-run-pts-hir", false);
      // Write Saturation's plan: 4 x the region or its 24 hours (1,440 rounds), whichever first;
      // at x0.001 the rounds are 1 s, so the 24 hours are 24 minutes
      await page.selectOption("[data-testid=pts-test]", "wsat");
      await page.waitForFunction(() =>
        document.querySelector("[data-testid=pts-plan]")?.textContent?.includes("1440 rounds"),
      );
      const wsatPlan = (await plan.textContent()) ?? "";
      check(
        wsatPlan.includes("Rounds: 1 s to 24 min") &&
          wsatPlan.includes("is written or 1440 rounds have run, whichever first") &&
          wsatPlan.includes("24 hours at 60 s rounds"),
        `WSAT plan: ${wsatPlan}`,
      );
      await shot("M-new-run-pts-wsat", false);
      await page.selectOption("[data-testid=pts-test]", "iops");
      await page.waitForFunction(() =>
        document
          .querySelector("[data-testid=pts-plan]")
          ?.textContent?.includes("Rounds: 4 min 40 s to 23 min 20 s"),
      );
      await shot("M-new-run-pts", false);
      await page.getByTestId("submit-run").click();
      const dialog = page.getByTestId("destructive-dialog");
      await dialog.waitFor();
      await page.getByTestId("destructive-input").fill(MODEL);
      await page.locator("[data-testid=destructive-input][data-ok=true]").waitFor();
      await page.getByTestId("destructive-confirm").click();
      await page.waitForURL(/\/runs\/[0-9a-f-]{36}$/);
      runId = page.url().split("/").at(-1) ?? "";
    },
  );

  await run(
    "the run's SNIA PTS report: verdict, convergence, window with its fit and bands, IOPS heat map",
    async () => {
      await pause("pts-queued");
      await page.goto(`${BASE}/runs/${runId}`);
      await page.getByTestId("pts-report-link").click();
      await page.waitForURL(new RegExp(`/runs/${runId}/pts$`));
      const verdict = page.getByTestId("pts-verdict");
      await verdict.waitFor();
      check(
        ((await page.getByTestId("pts-compliance").textContent()) ?? "").includes(
          "not PTS-compliant",
        ),
        "the short trial is not said not PTS-compliant",
      );
      check(
        /steady state/.test((await page.getByTestId("pts-steady").textContent()) ?? ""),
        "no verdict",
      );
      await drawn(page, "pts-convergence", 5);
      await drawn(page, "pts-window", 5);
      const window = (await page.getByTestId("pts-window-table").textContent()) ?? "";
      check(
        window.includes("limit 20 %") && window.includes("limit 10 %"),
        `window table: ${window}`,
      );
      // the fit and the four band lines beside the tracking variable and the average
      const lines = await page.getByTestId("pts-window").locator(".recharts-line").count();
      check(lines === 7, `window chart lines: ${lines}`);
      const shaded = await page.getByTestId("pts-iops").locator("td[style*='background']").count();
      check(shaded >= 1, "the IOPS table has no heat map");
      await page.getByTestId("pts-csv").waitFor();
      const profile = (await page.getByTestId("pts-report-profile").textContent()) ?? "";
      check(profile === "Enterprise", `profile: ${profile}`);
      await shot("M-pts-report");
    },
  );

  await run("Write Saturation over time and over total GB written", async () => {
    await page.goto(`${BASE}/runs/${WSAT}/pts`);
    await page.getByTestId("pts-wsat").waitFor();
    check(
      ((await page.getByTestId("pts-steady").textContent()) ?? "").includes("no steady-state rule"),
      "a WSAT run is judged by the steady-state rule",
    );
    await drawn(page, "pts-wsat-time", 10);
    await drawn(page, "pts-wsat-gb", 10);
    const axis = (await page.getByTestId("pts-wsat-gb").textContent()) ?? "";
    check(axis.includes("GB"), "no GB axis");
    check(
      ((await page.getByTestId("pts-wipc").textContent()) ?? "").includes("purged state"),
      "a Write Saturation run says it had the workload-independent preconditioning",
    );
    // the rule that stopped it, and no steady-state window: none applies to Write Saturation
    const stop = (await page.getByTestId("pts-stop").textContent()) ?? "";
    check(
      stop.startsWith("4 × the tested region written") && stop.endsWith("in round 27"),
      `stop: ${stop}`,
    );
    check(
      (await page.getByTestId("pts-window").count()) === 0,
      "a WSAT report shows a measurement window",
    );
    const body = (await page.getByTestId("pts-report").textContent()) ?? "";
    check(!/measurement window|window averages/i.test(body), "a WSAT report speaks of a window");
    check(
      body.includes("the average of rounds 23–27, the last ones run"),
      "WSAT's figures' rounds",
    );
    await shot("M-pts-wsat");
  });

  await run("Host Idle Recovery: IOPS per burst over time, wait state by wait state", async () => {
    await page.goto(`${BASE}/runs/${HIR}/pts`);
    await page.getByTestId("pts-hir").waitFor();
    await drawn(page, "pts-hir-time", 4);
    // one line per wait state and per return to baseline
    const lines = await page.getByTestId("pts-hir-time").locator(".recharts-line").count();
    check(lines === 10, `HIR chart lines: ${lines}`);
    const table = (await page.getByTestId("pts-hir-table").textContent()) ?? "";
    check(table.includes("WS1") && table.includes("WS10"), `HIR table: ${table}`);
    check(
      ((await page.getByTestId("pts-wipc").textContent()) ?? "").includes("purged state"),
      "HIR's preconditioning",
    );
    await shot("M-pts-hir");
  });

  await run("a PTS Client run: its profile, never called compliant", async () => {
    await page.goto(`${BASE}/runs/${CLIENT}/pts`);
    await page.getByTestId("pts-verdict").waitFor();
    const profile = (await page.getByTestId("pts-report-profile").textContent()) ?? "";
    check(profile === "Client", `profile: ${profile}`);
    const compliance = (await page.getByTestId("pts-compliance").textContent()) ?? "";
    check(compliance === "not PTS Client-compliant", `compliance: ${compliance}`);
    const deviations = (await page.getByTestId("pts-deviations").textContent()) ?? "";
    check(deviations.includes("PTS Client: the sources at hand do not state"), deviations);
    const verdict = (await page.getByTestId("pts-verdict").textContent()) ?? "";
    check(verdict.includes("SNIA SSS PTS v2.0.x Client") && verdict.includes("zram"), verdict);
    await drawn(page, "pts-convergence", 5);
    await shot("M-pts-client");
  });
}
