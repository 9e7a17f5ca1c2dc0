// The team switcher scopes the runs list (issue 13, T) in Chromium at 1440×900: a user who is an
// admin of team A and a viewer of team B sees only A's runs with A picked, only B's with B picked
// (and no "New run": a viewer there), and under "All my teams" both, each naming its team.
//
//   IOWATT_URL=... IOWATT_EMAIL=... IOWATT_PASSWORD=... IOWATT_ARTIFACTS=DIR \
//   IOWATT_TEAM_A=<id> IOWATT_TEAM_B=<id> IOWATT_TEAM_B_NAME=... node tests/browser/team_scope.mjs
import { check, navigate, needs, noOverflow, openBrowser } from "./lib.mjs";

const A = process.env.IOWATT_TEAM_A ?? "";
const B = process.env.IOWATT_TEAM_B ?? "";
const B_NAME = process.env.IOWATT_TEAM_B_NAME ?? "";
needs("team_scope", A && B && B_NAME, "IOWATT_TEAM_A, IOWATT_TEAM_B, IOWATT_TEAM_B_NAME");
const { page, run, shot, login, done } = await openBrowser("team_scope");

const names = () => page.getByTestId("run-link").allTextContents();
/** Picks `value` in the header's switcher and waits until the list shows a run starting with each
 * of `want` and none starting with any of `forbid` (the stack is shared: team A also holds other
 * browser tests' runs). */
async function pick(value, want, forbid = []) {
  await page.getByTestId("team-switcher").selectOption(value);
  await page.waitForFunction(
    ([want, forbid]) => {
      const links = [...document.querySelectorAll('[data-testid="run-link"]')].map(
        (a) => a.textContent ?? "",
      );
      return (
        want.every((p) => links.some((n) => n.startsWith(p))) &&
        !links.some((n) => forbid.some((p) => n.startsWith(p)))
      );
    },
    [want, forbid],
  );
}

await run("log in and open the runs list", async () => {
  await login("runs-list", "/runs"); // not the dashboard, which draws the latest runs' comparison
  await page.getByTestId("runs-list").waitFor();
});
await run("team A picked: only A's runs, no team chips", async () => {
  await pick(A, ["Acme"], ["Bolt"]);
  check((await page.getByTestId("run-team").count()) === 0, "a chip in a one-team list");
  check(await page.getByTestId("new-run").isVisible(), "an admin of A sees New run");
  await noOverflow(page);
  await shot("T-runs-teamA", false);
});
await run("team B picked: only B's runs, no New run for its viewer", async () => {
  await pick(B, ["Bolt"], ["Acme"]);
  check((await page.getByTestId("new-run").count()) === 0, "a viewer of B sees New run");
  await shot("T-runs-teamB", false);
});
await run("All my teams: both teams' runs, each naming its team", async () => {
  await pick("__all__", ["Acme", "Bolt"]);
  const chips = await page.getByTestId("run-team").allTextContents();
  check(chips.includes(B_NAME), `no ${B_NAME} chip: ${chips}`);
  check(new Set(chips).size === 2, `chips name two teams: ${chips}`);
  check((await names()).length === chips.length, "every row names its team");
  await shot("T-runs-all", false);
});
await run("a reload keeps All my teams (localStorage)", async () => {
  await page.reload();
  await page.getByTestId("run-team").first().waitFor();
  check((await page.getByTestId("team-switcher").inputValue()) === "__all__", "switcher reset");
});
await run(
  "environments under All my teams: each names its team, Edit only where allowed",
  async () => {
    await navigate(page, "/settings/environments");
    const row = (name) => page.getByTestId("environment-row").filter({ hasText: name });
    await row("Bolt cold aisle").waitFor();
    await row("Acme lab rack").waitFor();
    check(
      (await row("Bolt cold aisle").getByTestId("team-chip").textContent()) === B_NAME,
      "the Bolt environment's chip",
    );
    // the row's team decides: a viewer of B gets no Edit there, an admin of A does on A's row
    check(
      (await row("Bolt cold aisle").getByTestId("edit-environment").count()) === 0,
      "Edit in B",
    );
    check(
      (await row("Acme lab rack").getByTestId("edit-environment").count()) === 1,
      "no Edit in A",
    );
    await noOverflow(page);
    await shot("T-environments-all", false);
  },
);
await run("environments with B picked: only B's, no chips", async () => {
  await page.getByTestId("team-switcher").selectOption(B);
  await page.waitForFunction(() =>
    [...document.querySelectorAll('[data-testid="environment-row"]')].every((r) =>
      (r.textContent ?? "").includes("Bolt cold aisle"),
    ),
  );
  check((await page.getByTestId("team-chip").count()) === 0, "a chip in a one-team list");
  await shot("T-environments-teamB", false);
});
await done();
