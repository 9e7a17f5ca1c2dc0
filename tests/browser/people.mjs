// People and teams in Chromium (issue 13, V7), two browser contexts: the team's admin invites a
// viewer and a second person from the team page (the link is shown once); a second context, never
// logged in, opens the viewer's link, sees team, role and inviter, sets a name and a password,
// joins, lands on the team's runs and has no "New run" anywhere, nor the team page's admin parts;
// the admin revokes the second invitation and that link opens a page that says it was revoked
// (not the login page); the audit log lists the invitations; a personal API token is created with
// a scope (shown once), then revoked. Screenshots V7-*.png at 1440×900.
//
//   IOWATT_PEOPLE_VIEWER=<e-mail to invite>  IOWATT_PEOPLE_SHOTS=dir (default IOWATT_ARTIFACTS)
//   + lib.mjs's variables (the admin's login; the team has at least one run)
import { join } from "node:path";
import { ARTIFACTS, BASE, check, needs, openBrowser, shotOf, TIMEOUT_MS } from "./lib.mjs";

const VIEWER = process.env.IOWATT_PEOPLE_VIEWER ?? "";
const SHOTS = process.env.IOWATT_PEOPLE_SHOTS ?? ARTIFACTS;
needs("people", VIEWER.includes("@"), "IOWATT_PEOPLE_VIEWER (an e-mail)");

let other = null; // the second context (of the same Chromium): the invited person's
const { page, browser, run, shot, login, done } = await openBrowser("people", {
  onFail: async () => other?.close(),
});
const shotTo = (p, name) => shotOf(p, join(SHOTS, `${name}.png`));

/** Invites `email` as `role` from the open team page; returns the link's path /invite/<token>. */
async function invite(email, role) {
  await page.getByTestId("tab-invitations").click();
  await page.getByTestId("invite").click();
  const dialog = page.getByTestId("invite-dialog");
  await dialog.locator("#f-email").fill(email);
  await dialog.locator("#f-role").selectOption(role);
  await page.getByTestId("invite-dialog-submit").click();
  const url = (await page.getByTestId("secret-value").innerText()).trim();
  check(/\/invite\/\S{20,}$/.test(url), `the link is shown: ${url}`);
  return new URL(url).pathname;
}

let team = "";
let viewerLink = "";
let secondLink = "";
let viewerPage = null;

await run("the admin logs in and opens the team page from the header", async () => {
  await login("runs-table", "/runs"); // not the dashboard, which draws the latest runs' comparison
  await page.getByTestId("settings-menu").locator("summary").click(); // the header's Settings menu
  await page.getByRole("link", { name: "Team", exact: true }).click();
  await page.getByTestId("team-page").waitFor();
  check((await page.getByTestId("my-role").innerText()) === "admin", "the admin's role is shown");
  team = (await page.locator("[data-testid=team-page] h1").innerText()).replace(/\s*admin$/, "");
  check(team.length > 0, "the team's name is the title");
  const switcher = await page.getByTestId("team-switcher").locator("option:checked").innerText();
  check(switcher === `${team} · admin`, `the header's switcher names the team: ${switcher}`);
  await page.getByTestId("members-table").waitFor();
  check((await page.getByTestId("member-role").count()) >= 1, "an admin gets role selects");
});

await run("the admin invites a viewer: the link is shown once with a copy button", async () => {
  viewerLink = await invite(VIEWER, "viewer");
  check(
    (await page.getByTestId("once-secret").innerText()).includes(`${VIEWER} (viewer)`),
    "the box names who and which role",
  );
  await page.getByTestId("once-secret").getByTestId("copy").waitFor();
  await shotTo(page, "V7-team-invite-link");
  await page.getByTestId("secret-done").click();
  check(
    !(await page.locator("body").innerText()).includes(viewerLink.split("/").pop()),
    "after Done the link is nowhere on the page",
  );
  const row = page.locator(`[data-testid=invitation-row][data-email="${VIEWER}"]`);
  check((await row.getAttribute("data-state")) === "pending", "the invitation is pending");
});

await run("a second invitation is created (to be revoked)", async () => {
  secondLink = await invite(`second-${VIEWER}`, "member");
  await page.getByTestId("secret-done").click();
});

await run(
  "a second context without login opens the viewer's link: team, role, inviter",
  async () => {
    other = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    const ctx = other;
    ctx.setDefaultTimeout(TIMEOUT_MS);
    viewerPage = await ctx.newPage();
    await viewerPage.goto(`${BASE}${viewerLink}`);
    const summary = await viewerPage.getByTestId("invite-summary").innerText();
    check(summary.includes(team), `the team is named: ${summary}`);
    check(summary.includes(VIEWER), "the invited e-mail is named");
    check(/ invites /.test(summary), "the inviter is named");
    check((await viewerPage.getByTestId("invite-role").innerText()) === "viewer", "role viewer");
    check(!viewerPage.url().includes("/login"), "no login page");
    await shotTo(viewerPage, "V7-invite");
  },
);

await run("the viewer sets a name and a password, joins and sees the team's runs", async () => {
  await viewerPage.fill("#f-name", "Vera Viewer");
  await viewerPage.fill("#f-password", "a viewer's long password");
  await viewerPage.fill("#f-confirm", "a viewer's long password");
  await viewerPage.getByTestId("accept-invite").click();
  await viewerPage.getByTestId("runs-table").waitFor();
  check(new URL(viewerPage.url()).pathname === "/runs", `lands on /runs: ${viewerPage.url()}`);
  check((await viewerPage.getByTestId("run-row").count()) >= 1, "the team's runs are listed");
});

await run("the viewer has no New run (nav, runs page), and the switcher says viewer", async () => {
  await viewerPage.getByTestId("team-switcher").waitFor();
  const opt = await viewerPage.getByTestId("team-switcher").locator("option:checked").innerText();
  check(opt === `${team} · viewer`, `the switcher: ${opt}`);
  check((await viewerPage.getByRole("link", { name: "New run" }).count()) === 0, "no New run");
  check((await viewerPage.getByTestId("new-run").count()) === 0, "no New run button");
  await shotTo(viewerPage, "V7-viewer-runs");
  // a run of the team: readable, but no Clone and re-run for a viewer
  await viewerPage.getByTestId("run-link").first().click();
  await viewerPage.getByTestId("run-detail").waitFor();
  await viewerPage.getByTestId("run-status").first().waitFor();
  check((await viewerPage.getByTestId("clone-run").count()) === 0, "no Clone and re-run");
  await viewerPage.getByRole("link", { name: "Campaigns" }).click();
  await viewerPage.getByRole("heading", { name: "Campaigns" }).waitFor();
  check((await viewerPage.getByTestId("new-campaign").count()) === 0, "no New campaign");
  await viewerPage.getByTestId("settings-menu").locator("summary").click();
  await viewerPage.getByRole("link", { name: "Team", exact: true }).click();
  await viewerPage.getByTestId("members-table").waitFor();
  check((await viewerPage.getByTestId("member-role").count()) === 0, "no role selects");
  check((await viewerPage.getByTestId("tab-invitations").count()) === 0, "no invitations tab");
  check((await viewerPage.getByTestId("tab-audit").count()) === 0, "no audit tab");
  const me = viewerPage.locator(`[data-testid=member-row][data-email="${VIEWER}"]`);
  await me.getByTestId("leave-team").waitFor();
});

await run("the admin sees the viewer joined and the invitation accepted", async () => {
  await page.getByTestId("tab-members").click();
  await page.reload();
  await page.locator(`[data-testid=member-row][data-email="${VIEWER}"]`).waitFor();
  await shotTo(page, "V7-team");
  await page.getByTestId("tab-invitations").click();
  const row = page.locator(`[data-testid=invitation-row][data-email="${VIEWER}"]`);
  await row.waitFor();
  check((await row.getAttribute("data-state")) === "accepted", "the viewer's is accepted");
});

await run("the admin revokes the second invitation; its link says it was revoked", async () => {
  const row = page.locator(`[data-testid=invitation-row][data-email="second-${VIEWER}"]`);
  await row.getByTestId("revoke-invitation").click();
  await page.getByTestId("confirm-dialog").getByTestId("confirm-action").click();
  await page.waitForFunction(
    (email) =>
      document
        .querySelector(`[data-testid=invitation-row][data-email="${email}"]`)
        ?.getAttribute("data-state") === "revoked",
    `second-${VIEWER}`,
  );
  await shotTo(page, "V7-team-invitations");
  const p = await viewerPage.context().newPage();
  await p.goto(`${BASE}${secondLink}`);
  const gone = p.getByTestId("invite-gone");
  await gone.waitFor();
  check((await gone.getAttribute("data-code")) === "invitation_revoked", "code revoked");
  const text = await gone.innerText();
  check(text.includes("Invitation revoked"), `the title says revoked: ${text}`);
  check(text.includes("was revoked on"), `the server's message says when: ${text}`);
  check(!p.url().includes("/login"), "not the login page");
  check((await p.getByTestId("invite-form").count()) === 0, "no form to join");
  await shotTo(p, "V7-invite-revoked");
  // the viewer's used link says so too
  await p.goto(`${BASE}${viewerLink}`);
  check(
    (await p.getByTestId("invite-gone").getAttribute("data-code")) === "invitation_used",
    "a used link says it was used",
  );
});

await run("the audit log lists the invitations, filtered by action", async () => {
  await page.getByTestId("tab-audit").click();
  await page.getByTestId("audit-row").first().waitFor();
  await page.getByTestId("audit-filter").selectOption("invitation.");
  await page.waitForFunction(() => {
    const rows = [...document.querySelectorAll("[data-testid=audit-row]")];
    return rows.length > 0 && rows.every((r) => r.dataset.action?.startsWith("invitation."));
  });
  const actions = await page
    .getByTestId("audit-row")
    .evaluateAll((rows) => rows.map((r) => r.dataset.action));
  for (const a of ["invitation.created", "invitation.revoked", "invitation.accepted"])
    check(actions.includes(a), `${a} is logged: ${actions.join(", ")}`);
  await shotTo(page, "V7-team-audit");
});

await run("a personal API token with a scope is shown once, works, and is revoked", async () => {
  await page.getByTestId("settings-menu").locator("summary").click();
  await page.getByRole("link", { name: "API tokens" }).click();
  await page.getByTestId("token-form").waitFor();
  await page.locator("#f-name").fill("dashboard script");
  await page.locator("#f-scope").selectOption("read");
  await page.getByTestId("create-token").click();
  const secret = (await page.getByTestId("secret-value").innerText()).trim();
  const ok = await fetch(`${BASE}/api/v1/runs?limit=1`, {
    headers: { Authorization: `Bearer ${secret}` },
  });
  check(ok.status === 200, `the read token reads: ${ok.status}`);
  const refused = await fetch(`${BASE}/api/v1/teams`, {
    method: "POST",
    headers: { Authorization: `Bearer ${secret}`, "Content-Type": "application/json" },
    body: JSON.stringify({ name: "not with a read token" }),
  });
  check(refused.status === 403, `a read token cannot write: ${refused.status}`);
  await shotTo(page, "V7-tokens");
  await page.getByTestId("secret-done").click();
  const row = page.getByTestId("token-row").filter({ hasText: "dashboard script" }).first();
  check((await row.innerText()).includes("read"), "the list shows the scope");
  await row.getByTestId("revoke-token").click();
  await page.getByTestId("confirm-dialog").getByTestId("confirm-action").click();
  await page.getByTestId("confirm-dialog").waitFor({ state: "detached" });
  const after = await fetch(`${BASE}/api/v1/runs?limit=1`, {
    headers: { Authorization: `Bearer ${secret}` },
  });
  check(after.status === 401, `revoked: ${after.status}`);
});

await other?.close();
await shot("people-end");
await done();
