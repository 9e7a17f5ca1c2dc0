// Procurement reviews in Chromium (issue 16): a member-admin builds a small review from the UI
// (two candidates with published figures, one linked to a measured run), reads its figures,
// ranking, sensitivity and charts, comments, decides it (the review freezes: edits gone, the
// reason and "New version" shown), downloads the PDF and the CSV (IOWATT_ARTIFACTS/review.pdf,
// review.csv: test_reviews.py reads the PDF's text) and starts a new version. Screenshots at
// 1440×900: the list with 2 and with 9 reviews, a review with 2 and with 8+ candidates, the
// decided review, the sensitivity view. The decided review is shared by link (the page opens).
//
//   IOWATT_REVIEW_RUN=a succeeded run id   IOWATT_REVIEW_MANY=id of a review with 8+ candidates
//   + lib.mjs's variables (an admin's login)
import { copyFileSync, readFileSync } from "node:fs";
import { join } from "node:path";
import {
  ARTIFACTS,
  BASE,
  check,
  downloaded,
  navigate,
  needs,
  noOverflow,
  openBrowser,
} from "./lib.mjs";

const RUN = process.env.IOWATT_REVIEW_RUN ?? "";
const MANY = process.env.IOWATT_REVIEW_MANY ?? "";
// the reviews listed before this test's own (the team's, with MANY; reviews have no delete)
const BEFORE = Number(process.env.IOWATT_REVIEW_BEFORE ?? "");
needs(
  "reviews",
  RUN !== "" && MANY !== "" && BEFORE >= 1,
  "IOWATT_REVIEW_RUN, IOWATT_REVIEW_MANY, IOWATT_REVIEW_BEFORE",
);

const { page, run, shot, login, done } = await openBrowser("reviews");
const view = (name) => shot(name, false); // the 1440×900 window, not the whole page

/** Fills the candidate form (published figures unless `runId`) and waits for its row. */
async function addCandidate(c) {
  const rows = await page.getByTestId("candidate-row").count();
  await page.getByTestId("add-candidate").click();
  const form = page.getByTestId("candidate-form");
  await form.locator("#f-name").fill(c.name);
  await form.locator("#f-model").fill(c.model);
  await form.locator("#f-capacity").fill(c.capacity);
  await form.locator("#f-price").fill(c.price);
  await form.locator("#f-count").fill(c.count);
  await form.locator("#f-protection").fill(c.protection);
  await form.locator("#f-afr").fill(c.afr);
  await form.locator("#f-embodied").fill(c.embodied);
  await form.locator("#f-embodied_source").fill("manufacturer PCF sheet");
  if (c.runId) {
    await form.locator("#f-source").selectOption("run");
    await form.locator(`#f-run option[value="${c.runId}"]`).waitFor({ state: "attached" });
    await form.locator("#f-run").selectOption(c.runId);
  } else {
    await form.locator("#f-metric").selectOption("rps");
    await form.locator("#f-perf_value").fill(c.value);
    await form.locator("#f-reference").fill(c.reference);
  }
  await form.locator("#f-idle_w").fill(c.idle);
  await form.locator("#f-load_w").fill(c.load);
  await form.locator("#f-power_reference").fill("datasheet typicals");
  await page.getByTestId("submit-candidate").click();
  await page.getByTestId("candidate-form").waitFor({ state: "detached" });
  await page.waitForFunction(
    (n) => document.querySelectorAll('[data-testid="candidate-row"]').length === n,
    rows + 1,
  );
}

let reviewUrl = "";

await run("log in", () => login("reviews-table", "/reviews"));

await run("the reviews list shows the team's review and offers New review", async () => {
  await navigate(page, "/reviews"); // there already (the login's next)
  await page.getByTestId("reviews-table").waitFor();
  const rows = await page.getByTestId("review-row").count();
  check(rows === BEFORE, `${BEFORE} reviews before this test's (${rows} listed)`);
});

await run(
  "a bad currency is refused next to its field (422), then the review is created",
  async () => {
    await page.getByTestId("new-review").click();
    const form = page.getByTestId("review-context-form");
    await form.locator("#f-name").fill("File server drives");
    await form
      .locator("#f-question")
      .fill("Which mirrored drives for the file server, over 5 years?");
    await form.locator("#f-currency").fill("XXY");
    await form.locator("#f-horizon").fill("5");
    await form.locator("#f-duty").fill("0.3");
    await form.locator("#f-tariff").fill("0.15");
    await form.locator("#f-tariff_source").fill("utility contract 2026");
    await form.locator("#f-grid").fill("400");
    await form.locator("#f-grid_source").fill("national grid average");
    await form.locator("#f-pue").fill("1.5");
    await page.getByTestId("submit-review").click();
    await page.getByTestId("field-error-currency").waitFor();
    await form.locator("#f-currency").fill("USD");
    await page.getByTestId("submit-review").click();
    await page.getByTestId("review-page").waitFor();
    reviewUrl = page.url();
    check(/\/reviews\/[0-9a-f-]{36}$/.test(reviewUrl), `on the review's page: ${reviewUrl}`);
    const ctx = await page.getByTestId("review-context").innerText();
    check(ctx.includes("utility contract 2026") && ctx.includes("400 gCO2e/kWh"), ctx);
  },
);

await run("the list now has 2 reviews", async () => {
  await page.goto(`${BASE}/reviews`);
  await page.getByTestId("reviews-table").waitFor();
  check(
    (await page.getByTestId("review-row").count()) === BEFORE + 1,
    "this test's review listed too",
  );
  await noOverflow(page);
  await view("V2-list-2");
  await navigate(page, new URL(reviewUrl).pathname); // back to the review: inside the app
  await page.getByTestId("review-page").waitFor();
});

await run("two candidates with published figures, labelled published", async () => {
  await addCandidate({
    name: "ENT 15K R1",
    model: "ENT 15K",
    capacity: "600 GB",
    price: "595",
    count: "2",
    protection: "raid1",
    afr: "0.0044",
    embodied: "20",
    value: "1250",
    reference: "seed 001 Table 3",
    idle: "5.5",
    load: "9.5",
  });
  await addCandidate({
    name: "ENT CAP R1",
    model: "ENT CAP",
    capacity: "2 TB",
    price: "399",
    count: "2",
    protection: "raid1",
    afr: "0.0044",
    embodied: "18",
    value: "520",
    reference: "seed 001 Table 5",
    idle: "4",
    load: "7",
  });
  const rows = page.getByTestId("candidate-row");
  check((await rows.nth(0).getByTestId("source-published").count()) >= 1, "published badge");
  check((await rows.nth(0).innerText()).includes("seed 001 Table 3"), "the reference is shown");
  // set price 1,190.00 over a mirror of two 600 GB drives: 600 GB usable → 1.9833 per usable GB
  const usable = await page.getByTestId("figure-cost_per_gb_usable").innerText();
  check(usable.includes("1.9833 USD"), `cost per usable GB: ${usable}`);
  check(usable.includes("GB = 10^9 bytes"), "GB = 10^9 bytes beside cost per GB");
  const price = await page.getByTestId("figure-price_total").innerText();
  check(price.includes("1,190.00 USD"), `set price as the API's decimal string: ${price}`);
  await page.getByTestId("ranking-table").waitFor();
  await noOverflow(page);
  await view("V2-review-2");
});

await run(
  "a third candidate linked to a measured run, with its figures read from the run",
  async () => {
    await addCandidate({
      name: "Measured disk",
      model: "lab disk",
      capacity: "1.8 TB",
      price: "875",
      count: "1",
      protection: "jbod",
      afr: "0.01",
      embodied: "25",
      runId: RUN,
      idle: "6",
      load: "10",
    });
    const row = page.getByTestId("candidate-row").nth(2);
    check((await row.getByTestId("source-measured").count()) >= 1, "measured badge");
    check((await row.locator(`a[href="/runs/${RUN}"]`).count()) === 1, "a link to its run");
    check((await page.getByTestId("ranking-row").count()) === 3, "three ranked candidates");
  },
);

await run("sensitivity, scatter and stacked TCO bars are drawn", async () => {
  await page.getByTestId("sensitivity-table").waitFor();
  for (const p of ["price", "tariff", "grid_intensity", "duty_cycle", "horizon"]) {
    check((await page.getByTestId(`sensitivity-${p}`).count()) === 1, `sensitivity row ${p}`);
  }
  await page.locator('[data-testid="cost-scatter"] .recharts-scatter-symbol').first().waitFor();
  check(
    (await page.locator('[data-testid="tco-bars"] .recharts-bar-rectangle').count()) >= 9,
    "three stacked parts per candidate",
  );
});

await run("a comment is posted", async () => {
  await page
    .getByTestId("comment-body")
    .fill("The mirror halves the usable capacity; price per usable GB doubles.");
  await page.getByTestId("add-comment").click();
  await page.getByTestId("review-comment").first().waitFor();
});

await run(
  "deciding freezes the review: reason shown, edits gone, New version offered",
  async () => {
    const chosen = await page
      .locator("#f-decision-candidate option", { hasText: "ENT 15K R1" })
      .getAttribute("value");
    await page.locator("#f-decision-candidate").selectOption(chosen ?? "");
    await page.locator("#f-decision-reason").fill("Fastest per drive; the capacity is enough.");
    await page.getByTestId("decide").click();
    await page.getByTestId("decision").waitFor();
    check(
      (await page.getByTestId("decision-reason").innerText()).includes("capacity is enough"),
      "the reason",
    );
    check((await page.getByTestId("add-candidate").count()) === 0, "no Add candidate when frozen");
    check((await page.getByTestId("edit-candidate").count()) === 0, "no edit when frozen");
    check((await page.getByTestId("edit-review").count()) === 0, "no Edit context when frozen");
    check(
      (await page.getByTestId("read-only").innerText()).includes("frozen"),
      "the reason for read only",
    );
    await page.getByTestId("new-version").waitFor();
    await page.evaluate(() => window.scrollTo(0, 0));
    await view("V2-decided");
  },
);

await run(
  "the PDF downloads (kept for its text) and the CSV has one row per candidate",
  async () => {
    const [pdf] = await Promise.all([
      page.waitForEvent("download"),
      page.getByTestId("export-pdf").click(),
    ]);
    check(pdf.suggestedFilename().endsWith(".pdf"), pdf.suggestedFilename());
    const pdfPath = join(ARTIFACTS, "review.pdf");
    copyFileSync(await downloaded(pdf), pdfPath);
    check(readFileSync(pdfPath).subarray(0, 5).toString() === "%PDF-", "a PDF");
    const [csv] = await Promise.all([
      page.waitForEvent("download"),
      page.getByTestId("export-csv").click(),
    ]);
    const csvPath = join(ARTIFACTS, "review.csv");
    copyFileSync(await downloaded(csv), csvPath);
    const lines = readFileSync(csvPath, "utf8").trim().split(/\r?\n/);
    check(
      lines[0]?.startsWith("candidate,drives,protection,raw_bytes,usable_bytes,price_total"),
      `CSV header: ${lines[0]}`,
    );
    check(lines.length === 4, `three candidate rows: ${lines.length - 1}`);
  },
);

await run(
  "Share makes a read-only link that shows the decided review without the app",
  async () => {
    await page.getByTestId("share-button").click();
    await page.getByTestId("share-create").click();
    const url = (await page.getByTestId("share-url").innerText()).trim();
    check(/\/s\/[A-Za-z0-9_-]{20,}$/.test(url), `a share URL: ${url}`);
    await page.getByTestId("share-done").click();
    // the link's page inside the app's document and back (lib.mjs visit: a page load starts the
    // app again); a link opened as a new document by a second person is share_review.mjs's subject.
    // The server's public URL may differ in tests: its path
    await navigate(page, new URL(url).pathname);
    await page.getByText("Fastest per drive", { exact: false }).first().waitFor();
    check((await page.getByTestId("add-candidate").count()) === 0, "nothing to edit on the link");
    await navigate(page, new URL(reviewUrl).pathname);
    await page.getByTestId("review-page").waitFor();
  },
);

await run("New version: an undecided copy, version 2, editable", async () => {
  await page.getByTestId("new-version").click();
  await page.waitForURL((u) => u.toString() !== reviewUrl);
  await page.getByTestId("add-candidate").waitFor();
  check((await page.getByTestId("decision").count()) === 0, "undecided");
  check((await page.locator("h1").innerText()).includes("v2"), "version 2");
  check((await page.getByTestId("candidate-row").count()) === 3, "the candidates copied");
});

await run("a review with 8+ candidates and its sensitivity", async () => {
  await page.goto(`${BASE}/reviews/${MANY}`);
  await page.getByTestId("figures-table").waitFor();
  check((await page.getByTestId("candidate-row").count()) >= 8, "8+ candidates");
  await noOverflow(page);
  await view("V2-review-8");
  await page.getByTestId("figures-table").scrollIntoViewIfNeeded();
  await view("V2-review-8-figures");
  await page.getByTestId("cost-scatter").scrollIntoViewIfNeeded();
  await view("V2-review-8-charts");
  await page.getByRole("heading", { name: "Sensitivity" }).scrollIntoViewIfNeeded();
  await view("V2-sensitivity");
});

await run("the list with 9+ reviews", async () => {
  // seven more through the API, as a script would make them
  const ok = await page.evaluate(async (n) => {
    const token = localStorage.getItem("iowatt.token");
    const h = { Authorization: `Bearer ${token}`, "Content-Type": "application/json" };
    const me = await (await fetch("/api/v1/auth/me", { headers: h })).json();
    const team = localStorage.getItem("iowatt.team") ?? me.teams[0].id;
    let made = 0;
    for (let i = 0; i < n; i += 1) {
      const r = await fetch("/api/v1/reviews", {
        method: "POST",
        headers: h,
        body: JSON.stringify({
          team_id: team,
          name: `Archive tier option ${i + 1}`,
          currency: i % 2 ? "EUR" : "USD",
          horizon_years: 3 + i,
          tariff_per_kwh: 0.2,
        }),
      });
      if (r.status === 201) made += 1;
    }
    return made;
  }, 7);
  check(ok === 7, `created ${ok} of 7`);
  await page.goto(`${BASE}/reviews`);
  await page.getByTestId("reviews-table").waitFor();
  check((await page.getByTestId("review-row").count()) >= BEFORE + 8, "the 7 more reviews listed");
  await noOverflow(page);
  await view("V2-list-10");
});

await done();
