// Every page on a desktop (1440×900) and a phone (390×844), light and dark (issue 25):
// axe-core finds no serious or critical violation on any page, the phone's header is the brand
// and a Menu that holds the navigation and Log out, the shared pages, the dashboard and the
// review fit the phone's width, a modal dialog keeps the focus inside it and gives it back, and
// the review page's figures are dumped (review-figures.json) for test_pages.py to find in the PDF.
// The app's pages and the shared ones are opened inside the app (lib.mjs navigate), not loaded one
// by one: the app starts and axe-core is sent once per document, not once per page (~56 audits).
// Each page is opened once and audited at both widths (the window resized), the dark theme on the
// same signed-in page (emulated). axe-core runs every rule on each page once (at 1440 px, the login
// page at 390) and, on the same page at the other width or in the dark theme, only the rules whose
// outcome those change (WIDTH_RULES, COLOUR_RULES); the app's header, the same on every page, once
// per width, theme and highlighted item (headerKind). A page whose code does not arrive shows a
// message and Reload (PageErrorBoundary).
//
//   IOWATT_PAGES_RUNS       two run ids (comma-separated)
//   IOWATT_PAGES_REVIEW     a review id
//   IOWATT_PAGES_SHARED     share-link paths (/s/…), comma-separated: a comparison, a review
import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import {
  ARTIFACTS,
  BASE,
  check,
  navigate,
  needs,
  openBrowser,
  pageOverflow,
  shotOf,
} from "./lib.mjs";

const RUNS = (process.env.IOWATT_PAGES_RUNS ?? "").split(",").filter(Boolean);
const REVIEW = process.env.IOWATT_PAGES_REVIEW ?? "";
const SHARED = (process.env.IOWATT_PAGES_SHARED ?? "").split(",").filter(Boolean);
needs(
  "pages",
  RUNS.length === 2 && REVIEW && SHARED.length === 2,
  "IOWATT_PAGES_RUNS, IOWATT_PAGES_REVIEW, IOWATT_PAGES_SHARED",
);
const require = createRequire(new URL("../../frontend/package.json", import.meta.url));
// evaluated through the DevTools protocol: the app's CSP (script-src 'self') refuses a script tag
const AXE = `${readFileSync(require.resolve("axe-core/axe.min.js"), "utf8")}\n;true`;

const DESKTOP = { width: 1440, height: 900 };
const PHONE = { width: 390, height: 844 };

// [path, must fit a phone's width (the pages this issue makes work there), screenshot name,
//  what to wait for beyond the heading (a test id drawn once the page's data is in)]
const APP_PAGES = [
  ["/", true, "dashboard", "dashboard-compare"],
  ["/runs", true, "runs"],
  [`/runs/${RUNS[0]}`, false, "run"],
  [`/compare?runs=${RUNS.join(",")}`, true, "compare"],
  ["/compare/devices", true, "compare-devices"],
  ["/runs/new", true, "new-run"],
  ["/import", true, "import"],
  ["/workloads", true, "workloads"],
  ["/views", true, "views"],
  ["/campaigns", true, "campaigns"],
  ["/reviews", true, "reviews"],
  [`/reviews/${REVIEW}`, true, "review", "figures-table"],
  ["/agents", true, "agents"],
  ["/settings/devices", true, "devices"],
  ["/settings/environments", true, "environments"],
  ["/settings/tokens", true, "tokens"],
  ["/settings/alerts", true, "alerts", "channels-table"],
  ["/shares", true, "shares"],
  ["/team", true, "team"],
  ["/settings/account", true, "account"],
];

const { page, browser, run, shot, login, done } = await openBrowser("pages");

/** Waits until the page has its heading and nothing says "Loading…". */
async function settle(p) {
  await p.locator("main h1").first().waitFor();
  await p.waitForFunction(() => !document.querySelector("main")?.innerText.includes("Loading…"));
}

// axe-core's rules that read colours: the text's contrast with what is drawn behind it, and a
// link told apart from the text around it by its colour alone
const COLOUR_RULES = ["color-contrast", "link-in-text-block"];
// The rules (of axe-core's default set) whose outcome depends on the window's width, for a page
// audited whole at the other width: the colour rules (what is drawn behind a text moves with the
// layout) and a region that scrolls. The rest read the document, the same at both widths (no
// script reads the width), and what is shown: styles.css's phone block ("Phones") shows only the
// Menu button and the menu it opens, audited whole in the phone's header step, and turns the
// tables into blocks that scroll (scrollable-region-focusable).
const WIDTH_RULES = [...COLOUR_RULES, "scrollable-region-focusable"];

/** axe-core's serious and critical violations on the page, one line each; `rules` limits the run
 * to those rules (the dark theme: below); `exclude`: selectors of parts left out. */
async function axe(p, rules = null, exclude = []) {
  if (!(await p.evaluate(() => "axe" in window))) {
    await p.evaluate(AXE);
    // no HTML snippet per node: axe-core takes each checked element's outerHTML (the whole
    // document's for <html> and <body>) to cut a snippet from it, and the report here names the
    // violations' nodes by their selectors only. Each audit pass ~9 % less (57 audits of the
    // pages, each run both ways in the same document: 38.1 -> 34.6 s in all)
    await p.evaluate(() => window.axe.configure({ noHtml: true }));
  }
  const found = await p.evaluate(
    async ([only, out]) => {
      const options = { resultTypes: ["violations"] };
      if (only) options.runOnly = { type: "rule", values: only };
      const r = await window.axe.run(
        out.length ? { exclude: out.map((s) => [s]) } : document,
        options,
      );
      return r.violations
        .filter((v) => v.impact === "serious" || v.impact === "critical")
        .map(
          (v) =>
            `${v.id} (${v.impact}): ${v.nodes
              .map((n) => n.target.join(" "))
              .slice(0, 3)
              .join(", ")}`,
        );
    },
    [rules, exclude],
  );
  return found;
}

/** The outermost elements reaching past the window's right edge (what makes a page too wide). */
async function widest(p) {
  return p.evaluate(() => {
    const edge = document.documentElement.clientWidth;
    const out = [];
    for (const el of document.querySelectorAll("body *")) {
      const r = el.getBoundingClientRect();
      if (r.right <= edge + 1 || r.width === 0) continue;
      if (out.some((o) => o.el.contains(el))) continue;
      out.push({ el, right: Math.round(r.right) });
    }
    return out.slice(0, 4).map(({ el, right }) => {
      const id = el.getAttribute("data-testid");
      const cls = typeof el.className === "string" ? el.className.split(" ")[0] : "";
      return `${el.tagName.toLowerCase()}${id ? `[${id}]` : cls ? `.${cls}` : ""} to ${right}`;
    });
  });
}

// Violations in the components of the run, compare and views pages (issue 25's other half, another
// change's files): reported with a `# known` line until fixed there, any other one fails the test.
// Each entry: [page pattern, axe rule].
// violations let through while they were being fixed elsewhere (none left: a new one fails)
const KNOWN = [];

// The app's header is the same on every page but for which of its items is highlighted (the
// page's link, Settings on a settings page, or none): it is audited once for each kind of
// highlighted item (no style tells one link from another) at each width, theme and set of rules,
// and left out of the page's later audits (a tenth of the colour-contrast rule's nodes were the
// header's, the same ones on 20 pages: the audits' renderer CPU 10.35 -> 9.84 s). The shared
// pages' header (no navigation) is a kind of its own; the open menu is audited whole below.
const headersSeen = new Set();
async function headerKind(p, rules) {
  const kind = await p.evaluate(() => {
    const h = document.querySelector("header.topbar");
    if (!h) return null;
    const lit = [...h.querySelectorAll(".active")].map((e) => `${e.tagName}.${e.className}`);
    return `${h.querySelector("nav") ? "app" : "shared"} [${lit.join(",")}] ${innerWidth} ${
      matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light"
    }`;
  });
  return kind && `${kind} ${rules ?? "all"}`;
}

const problems = [];
async function audit(p, where, fit, name, rules = null) {
  const header = await headerKind(p, rules);
  const exclude = header && headersSeen.has(header) ? ["header.topbar"] : [];
  if (header) headersSeen.add(header);
  for (const v of await axe(p, rules, exclude)) {
    const rule = v.split(" ")[0];
    if (KNOWN.some(([page, r]) => r === rule && page.test(where)))
      console.log(`# known: ${where}: ${v}`);
    else problems.push(`${where}: ${v}`);
  }
  const { scroll, width } = await pageOverflow(p);
  if (scroll > width) {
    const what = `${scroll} px wide in ${width} px (${(await widest(p)).join(", ")})`;
    if (fit) problems.push(`${where}: the page is ${what}`);
    else console.log(`# ${where}: ${what} (not this test's page)`);
  }
  if (name) await shotOf(p, join(ARTIFACTS, `${name}.png`));
}

/** The pointer away from the pages: it stays where the log-in's submit was, and a page drawn
 * under it inside the app (navigate: no new document) shows that spot hovered, a chart's tooltip
 * included, which axe-core then reads as part of the page. */
const parkPointer = (p) => p.mouse.move(1439, 899);

await run("log in", async () => {
  await login("runs-table");
  await parkPointer(page);
});

/** The window at `viewport`, and the page's layout and charts redrawn for it: the charts' size
 * pass (ResponsiveContainer's ResizeObserver, then React) is done two frames after the resize. */
async function resize(p, viewport) {
  await p.setViewportSize(viewport);
  await p.evaluate(
    () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => r()))),
  );
}

const WIDTHS = [
  [DESKTOP, "1440", null], // every rule
  [PHONE, "390", WIDTH_RULES], // the rules that depend on the width
];

// Each page is audited at both widths where it was opened, the window resized between them: no
// script reads the width (styles.css's media blocks lay the page out, the charts follow their
// boxes), so a page resized to 390 px is the page opened at 390. The order alternates page by
// page (1440 then 390, then 390 then 1440), one resize a page instead of opening each page again.
await run("every page at 1440 and 390 px: axe-core clean", async () => {
  let at = 0; // WIDTHS[at] is the window's width now
  const both = async (where, fit, name) => {
    for (const k of [at, 1 - at]) {
      const [viewport, tag, rules] = WIDTHS[k];
      if (k !== at) {
        await resize(page, viewport);
        at = k;
      }
      await audit(page, `${where} at ${tag}`, fit || tag === "1440", `P-${name}-${tag}`, rules);
    }
  };
  await resize(page, WIDTHS[at][0]);
  for (const [path, fit, name, ready] of APP_PAGES) {
    await navigate(page, path);
    await settle(page);
    if (ready) await page.getByTestId(ready).waitFor();
    await both(path, fit, name);
  }
  // the shared pages too, inside the app's document (the same routes, no log-in needed): a link
  // opened as a new document, by a second person, is share.mjs's and share_review.mjs's subject.
  // Chromium's CPU to open one and have axe-core in it, four alternating rounds: 0.54 by a new
  // document, 0.25 inside the app. The second after the first is the same page with another
  // token: its view not yet fetched, the first's content leaves before it comes (what navigate
  // waits for), so nothing here reads the page before it
  for (const [i, path] of SHARED.entries()) {
    await navigate(page, path);
    await page.getByTestId("shared-title").waitFor();
    await both(`shared ${i}`, true, `shared-${i}`);
  }
});

await run(
  "the phone's header: brand and Menu; the menu holds the navigation and Log out",
  async () => {
    await page.setViewportSize(PHONE);
    await navigate(page, "/reviews");
    await settle(page);
    const toggle = page.getByTestId("menu-toggle");
    check(await toggle.isVisible(), "no Menu button on a phone");
    check(!(await page.getByTestId("logout").isVisible()), "Log out shows before the menu opens");
    check((await toggle.getAttribute("aria-expanded")) === "false", "aria-expanded is not false");
    await toggle.click();
    check((await toggle.getAttribute("aria-expanded")) === "true", "aria-expanded is not true");
    const logout = page.getByTestId("logout");
    check(await logout.isVisible(), "Log out is not visible in the open menu");
    const box = await logout.boundingBox();
    check(box && box.x >= 0 && box.x + box.width <= PHONE.width, "Log out is outside the screen");
    await shot("P-menu-open-390", false);
    for (const v of await axe(page)) problems.push(`open menu at 390: ${v}`);
    await page.getByRole("link", { name: "Runs", exact: true }).click();
    await page.getByTestId("runs-table").waitFor();
    await parkPointer(page);
    check(!(await logout.isVisible()), "the menu stays open after navigating");
    // the desktop keeps the whole navigation in the bar, without a Menu button
    await page.setViewportSize(DESKTOP);
    check(!(await toggle.isVisible()), "a Menu button on the desktop");
    check(await page.getByTestId("logout").isVisible(), "Log out is not in the desktop's bar");
  },
);

await run("a modal dialog keeps the focus inside and gives it back (New team)", async () => {
  await navigate(page, "/team");
  await settle(page);
  const switcher = page.getByTestId("team-switcher");
  await switcher.focus();
  await switcher.selectOption("__new__");
  const dialog = page.getByTestId("new-team-dialog");
  await dialog.waitFor();
  check(
    await dialog.evaluate((d) => d.tagName === "DIALOG" && d.matches(":modal")),
    "not a modal <dialog>",
  );
  for (let i = 0; i < 8; i += 1) {
    await page.keyboard.press("Tab");
    const inside = await dialog.evaluate((d) => d.contains(document.activeElement));
    check(inside, `Tab ${i + 1} left the dialog`);
  }
  // the title reads (issue 25: slate-200 on white): axe checks its contrast with the dialog open
  for (const v of await axe(page)) problems.push(`New team dialog: ${v}`);
  await shot("P-new-team-dialog-1440", false);
  await page.keyboard.press("Escape");
  await dialog.waitFor({ state: "detached" });
  const back = await page.evaluate(() => document.activeElement?.getAttribute("data-testid"));
  check(back === "team-switcher", `the focus went to ${back}, not back to the team switcher`);
});

await run("the review page's figures, for the PDF check", async () => {
  await navigate(page, `/reviews/${REVIEW}`);
  await page.getByTestId("figures-table").waitFor();
  const figures = await page.getByTestId("figures-table").evaluate((t) =>
    [...t.querySelectorAll("tbody tr")].map((tr) => ({
      key: tr.getAttribute("data-testid"),
      values: [...tr.querySelectorAll("td")].map((td) => td.innerText.trim()),
    })),
  );
  check(figures.length > 10, "no figures");
  const text = await page.getByTestId("review-page").innerText();
  check(!/\d(\.\d+)?E[-+]\d/.test(text), "a figure in exponent form on the review page");
  writeFileSync(join(ARTIFACTS, "review-figures.json"), JSON.stringify(figures, null, 1));
});

await run("a page whose code does not arrive: a message and Reload, not a blank page", async () => {
  // the Series page's chunk (not opened before in this document) refused, as when the network
  // drops or an upgrade removed the build this tab started with (PageErrorBoundary.tsx)
  const chunk = "**/assets/Series-*.js";
  await page.route(chunk, (r) => r.abort());
  await navigate(page, "/series");
  const box = page.getByTestId("page-error");
  await box.waitFor();
  check((await box.getAttribute("data-kind")) === "load", "told as a page's own error");
  const title = await page.locator("main h1").innerText();
  check(title === "This page could not be loaded", `the message's title is ${title}`);
  check(await page.getByTestId("logout").isVisible(), "the app's bar is gone with the page");
  await audit(page, "a page that did not load", true, "P-page-error-1440");
  // the chunk is there again: Reload loads the page
  await page.unroute(chunk);
  await page.getByTestId("page-error-reload").click();
  await page.getByRole("heading", { name: "Series", exact: true }).waitFor();
  check((await page.getByTestId("page-error").count()) === 0, "the message stays after Reload");
});

// The dark theme is styles.css's one `prefers-color-scheme: dark` block: colours, borders, strokes
// and fills only (no display, visibility, content or size), and no script reads the scheme. The
// same pages' structure, names, roles and layout are audited in the light theme above, so here
// axe-core runs its colour rules alone (~70 % of a whole audit's CPU: colour contrast is most).
// The system's setting is emulated on the signed-in page (the prefers-color-scheme media feature,
// as a dark context's colorScheme sets it): the pages are the same app's, not a second context
// that loads the app and logs in again.
await run(
  "dark theme (the system's setting): pages and charts readable, axe-core clean",
  async () => {
    await page.emulateMedia({ colorScheme: "dark" });
    try {
      await resize(page, DESKTOP);
      // the app's pages whose charts and tables changed (issue 25: error bars, sortable metric
      // tables, the estimate's idle baseline, the views' origin badges), dark at 1440
      for (const [path, name, ready] of [
        ["/", "dashboard", "dashboard-compare"],
        [`/compare?runs=${RUNS.join(",")}`, "compare", "compare-table"],
        [`/runs/${RUNS[0]}`, "run", null],
        ["/runs/new", "new-run", null],
        ["/import", "import", null],
        [`/views?runs=${RUNS.join(",")}`, "views", null],
      ]) {
        await navigate(page, path);
        await settle(page);
        if (ready) await page.getByTestId(ready).first().waitFor();
        const bg = await page.evaluate(
          () => getComputedStyle(document.documentElement).backgroundColor,
        );
        check(bg !== "rgb(246, 247, 249)", `${path}: the body is light in the dark theme (${bg})`);
        await audit(page, `dark ${path}`, true, `P-dark-${name}-1440`, COLOUR_RULES);
      }
      await navigate(page, SHARED[0]);
      await page.getByTestId("shared-title").waitFor();
      const bg = await page.evaluate(
        () => getComputedStyle(document.documentElement).backgroundColor,
      );
      check(bg !== "rgb(246, 247, 249)", `the shared page is light in the dark theme (${bg})`);
      await audit(page, "dark shared comparison", true, "P-dark-shared-1440", COLOUR_RULES);
      await resize(page, PHONE);
      await audit(page, "dark shared comparison at 390", true, "P-dark-shared-390", COLOUR_RULES);
    } finally {
      await page.emulateMedia({ colorScheme: null });
      await page.setViewportSize(DESKTOP);
    }
  },
);

await run("the login page at both sizes", async () => {
  const out = await browser.newContext({ viewport: PHONE });
  const p = await out.newPage();
  await p.goto(`${BASE}/login`);
  await p.locator('input[name="email"]').waitFor();
  await audit(p, "login at 390", true, "P-login-390");
  await p.setViewportSize(DESKTOP);
  await audit(p, "login at 1440", true, null, WIDTH_RULES);
  await out.close();
});

await run("no serious or critical axe-core violation, nothing wider than a phone", async () => {
  check(problems.length === 0, `\n  ${problems.join("\n  ")}`);
});

await done();
