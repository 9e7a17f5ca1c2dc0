// Share links end with their creator's membership (issue 22): after the sharer is removed from the
// team, an admin's Settings → Shared links says "creator left" for every link the sharer made (and
// may revoke it), and the link's page, opened without login, says the link is not available.
//
//   IOWATT_SHARE_LEFT_TOKEN=a token the removed member made  IOWATT_SHARE_SHOTS=dir
//   + lib.mjs's variables (an admin's login)
import { join } from "node:path";
import { ARTIFACTS, BASE, check, navigate, needs, openBrowser, shotOf } from "./lib.mjs";

const TOKEN = process.env.IOWATT_SHARE_LEFT_TOKEN ?? "";
const SHOTS = process.env.IOWATT_SHARE_SHOTS ?? ARTIFACTS;
needs("share_creator_left", TOKEN !== "", "IOWATT_SHARE_LEFT_TOKEN");

const { page, run, login, done } = await openBrowser("share_creator_left");
await run("log in as the team's admin", () => login("shares-table", "/shares"));

await run(
  "the removed member's links read 'creator left', and the admin may revoke them",
  async () => {
    await navigate(page, "/shares"); // there already (the login's next)
    await page.getByTestId("shares-table").waitFor();
    const left = page.getByTestId("share-row").filter({ hasText: "creator left" });
    check((await left.count()) >= 1, "a row says creator left");
    check(
      (await left.first().getByTestId("share-revoke").count()) === 1,
      "the admin may revoke it",
    );
    await shotOf(page, join(SHOTS, "S5-shares-creator-left.png"), false);
  },
);

await run("the link's page says it is not available", async () => {
  await page.goto(`${BASE}/s/${TOKEN}`);
  await page.getByTestId("shared-gone").waitFor();
  const text = await page.getByTestId("shared-gone").innerText();
  check(/not available/.test(text), `the gone page: ${text}`);
  const r = await fetch(`${BASE}/api/v1/shared/${TOKEN}`);
  check(r.status === 404, `the API answers 404 (${r.status})`);
  await shotOf(page, join(SHOTS, "S5-shared-creator-left.png"), false);
});

await done();
