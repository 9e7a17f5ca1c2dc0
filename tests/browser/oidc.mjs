// Sign-in with OpenID Connect in Chromium (issue 13, V5): the login page's "Sign in with …" button,
// the real provider's login form (panva's oidc-provider, started by test_oidc_browser.py), back into
// the app signed in; a person the server does not know gets the page that says why, never a login
// loop. Needs IOWATT_OIDC_KNOWN (a provider login whose verified e-mail has an account) and
// IOWATT_OIDC_STRANGER (one whose e-mail has none); screenshots V5-*.png go to IOWATT_OIDC_SHOTS
// (default IOWATT_ARTIFACTS). With IOWATT_OIDC_UNPROVEN (a login whose address belongs to an account
// made from an invitation, never proven) and IOWATT_OIDC_UNPROVEN_PASSWORD (that account's password):
// the link step of issue 22 / ADR 0026 — a wrong password is refused, the right one links and signs in.
import { join } from "node:path";
import { ARTIFACTS, BASE, check, needs, openBrowser, shotOf } from "./lib.mjs";

const KNOWN = process.env.IOWATT_OIDC_KNOWN ?? "";
const STRANGER = process.env.IOWATT_OIDC_STRANGER ?? "";
const SHOTS = process.env.IOWATT_OIDC_SHOTS ?? ARTIFACTS;
const UNPROVEN = process.env.IOWATT_OIDC_UNPROVEN ?? "";
const UNPROVEN_PASSWORD = process.env.IOWATT_OIDC_UNPROVEN_PASSWORD ?? "";
needs("oidc", KNOWN !== "" && STRANGER !== "", "IOWATT_OIDC_KNOWN, IOWATT_OIDC_STRANGER");

const { page, context, run, done } = await openBrowser("oidc");
const shot = (name) => shotOf(page, join(SHOTS, `${name}.png`), false);

/** From the login page through the provider's form; returns when back at the app. */
async function signInAtProvider(login, shotName) {
  await page.goto(`${BASE}/login`);
  const button = page.getByTestId("oidc-login");
  await button.waitFor();
  await button.click();
  await page.waitForURL((url) => !url.href.startsWith(BASE));
  await page.locator('input[name="login"]').waitFor();
  if (shotName) await shot(shotName);
  await page.fill('input[name="login"]', login);
  await page.fill('input[name="password"]', "any password");
  await page.click('button[type="submit"]');
  await page.waitForURL((url) => url.href.startsWith(BASE));
}

await run("the login page offers the provider's button", async () => {
  await page.goto(`${BASE}/login`);
  const button = page.getByTestId("oidc-login");
  await button.waitFor();
  const text = (await button.textContent()) ?? "";
  check(text === "Sign in with Test SSO", `the button reads ${JSON.stringify(text)}`);
  check(await page.getByTestId("login-form").isVisible(), "the password form is still there");
  await shot("V5-login");
});

await run("a person without an account is refused with a page that says why", async () => {
  await signInAtProvider(STRANGER, "V5-provider");
  const refused = page.getByTestId("oidc-refused");
  await refused.waitFor();
  const code = await refused.getAttribute("data-code");
  check(code === "unknown_account", `refusal code ${code}`);
  const text = (await refused.textContent()) ?? "";
  check(text.includes("No iowatt account uses this e-mail address"), `the page says: ${text}`);
  check(!page.url().includes("code="), `the address bar keeps a code: ${page.url()}`);
  await shot("V5-refused");
  await page.getByRole("link", { name: "Back to sign in" }).click();
  await page.getByTestId("login-form").waitFor();
});

await run("a known person signs in through the provider into the app", async () => {
  await context.clearCookies(); // a new person at the provider, too
  await signInAtProvider(KNOWN);
  await page.getByRole("link", { name: "Runs" }).first().waitFor();
  const path = new URL(page.url()).pathname;
  check(!path.startsWith("/login"), `still on ${page.url()}`);
  check(new URL(page.url()).hash === "", `the fragment stayed: ${page.url()}`);
  const token = await page.evaluate(() => localStorage.getItem("iowatt.token"));
  check(token?.startsWith("iwu_"), "no session token in the browser");
  const me = await page.evaluate(async (t) => {
    const r = await fetch("/api/v1/auth/me", { headers: { Authorization: `Bearer ${t}` } });
    return r.json();
  }, token);
  console.log(`oidc: signed in as ${me.email}`);
  await page.getByText("Loading…").first().waitFor({ state: "detached" });
  await shot("V5-signed-in");
});

if (UNPROVEN) {
  await run("an account made from an invitation is linked only with its password", async () => {
    await page.evaluate(() => localStorage.removeItem("iowatt.token"));
    await context.clearCookies();
    await signInAtProvider(UNPROVEN);
    const form = page.getByTestId("oidc-link");
    await form.waitFor();
    check(!page.url().includes("link="), `the address bar keeps the link code: ${page.url()}`);
    check(
      (await page.evaluate(() => localStorage.getItem("iowatt.token"))) === null,
      "signed in before the link step",
    );
    await form.locator('input[name="password"]').fill("not the password");
    await form.getByRole("button", { name: "Link and sign in" }).click();
    const refused = page.getByTestId("oidc-link-error");
    await refused.waitFor();
    const code = await refused.getAttribute("data-code");
    check(code === "bad_credentials", `a wrong password: ${code}`);
    await shot("V5-link");
    // the right password, in the same browser (the code is bound to its flow cookie)
    await form.locator('input[name="password"]').fill(UNPROVEN_PASSWORD);
    await form.getByRole("button", { name: "Link and sign in" }).click();
    await page.getByRole("link", { name: "Runs" }).first().waitFor();
    const token = await page.evaluate(() => localStorage.getItem("iowatt.token"));
    const me = await page.evaluate(async (t) => {
      const r = await fetch("/api/v1/auth/me", { headers: { Authorization: `Bearer ${t}` } });
      return r.json();
    }, token);
    check(me.email_verified === true, `the address is proven now: ${JSON.stringify(me)}`);
    console.log(`oidc: linked ${me.email}`);
  });
}

await done();
