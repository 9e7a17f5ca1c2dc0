// Browser test of the host-policy UI (issue 9, ADR 0009) against a running server.
//
//   IOWATT_URL=http://127.0.0.1:8000 IOWATT_EMAIL=... IOWATT_PASSWORD=... \
//   IOWATT_ARTIFACTS=/tmp/iowatt-browser node tests/browser/policy.mjs
//
// Through the real API it enrols a stand-in agent (no engine: it only heartbeats) whose
// reported policy has a directory, a read-only file and a raw device the host marked
// destructive, then drives Debian's Chromium at 1440×900: the new-run form offers only those
// targets and meters, refuses writes on the read-only file, asks for the device's model before a
// destructive write and only then sends `destructive: true` (checked on the stored run, then
// cancelled: nothing ever runs); the agents page shows the policy, creates an enrolment token
// (shown once with the safe enrol command), revokes it and revokes the agent (its token is then
// refused); Settings → API tokens creates and revokes a token (refused afterwards); log out ends
// the server session (the old token is refused). Screenshots of each page go to IOWATT_ARTIFACTS.
// Exit 0 on success; 1 with the failing step and failure.png; 2 for a bad environment.
import { BASE, check, EMAIL, navigate, needs, openBrowser, PASSWORD } from "./lib.mjs";

needs("policy");

const AGENT = `browser-policy-${Date.now()}`;
const DIR = "/srv/iowatt-browser";
const FILE = "/srv/iowatt-browser-ref.bin";
const DEVICE = "/dev/disk/by-id/nvme-IOWATT_BROWSER_TEST_SN0001";
const MODEL = "IOWATT BROWSER TEST 1TB";
const POLICY = {
  targets: [
    { path: DIR, kind: "directory", writable: true, destructive: false },
    { path: FILE, kind: "file", writable: false, destructive: false },
    {
      path: DEVICE,
      kind: "device",
      writable: true,
      destructive: true,
      model: MODEL,
      serial_sha256: null,
      size_bytes: 1_000_204_886_016,
    },
  ],
  meters: [
    { name: "bmc", driver: "ipmi", tier: "bmc" },
    { name: "plug", driver: "shelly", tier: "plug" },
  ],
  default_meter: "bmc",
  limits: {},
};

async function call(method, path, token, body) {
  const res = await fetch(`${BASE}/api/v1${path}`, {
    method,
    headers: {
      ...(token ? { Authorization: `Bearer ${token}` } : {}),
      ...(body === undefined ? {} : { "Content-Type": "application/json" }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let json = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = text;
  }
  return { status: res.status, body: json };
}

async function must(method, path, token, body, want) {
  const r = await call(method, path, token, body);
  check(
    r.status === want,
    `${method} ${path}: expected ${want}, got ${r.status} ${JSON.stringify(r.body)}`,
  );
  return r.body;
}

let heartbeat;
const { page, run, shot, login, done } = await openBrowser("policy", {
  timed: true,
  onFail: () => clearInterval(heartbeat),
});

// --- the stand-in agent: enrolled with a real enrolment token, reporting POLICY --------------
const session = (await must("POST", "/auth/login", null, { email: EMAIL, password: PASSWORD }, 200))
  .access_token;
const me = await must("GET", "/auth/me", session, undefined, 200);
const team = me.teams.find((t) => t.role === "admin");
check(team, `${EMAIL} administers no team`);
const enrol = await must(
  "POST",
  "/agents/enrollment-tokens",
  session,
  { team_id: team.id, ttl_s: 600, max_uses: 1 },
  201,
);
const agent = await must(
  "POST",
  "/agents/enroll",
  null,
  {
    enrollment_token: enrol.token,
    name: AGENT,
    hostname: "browser-host",
    agent_version: "browser-test",
    inventory: { policy: POLICY },
  },
  201,
);
const beat = () =>
  call("POST", `/agents/${agent.agent_id}/heartbeat`, agent.agent_token, { state: "idle" });
await beat();
heartbeat = setInterval(beat, 3000);

const browserToken = () => page.evaluate(() => localStorage.getItem("iowatt.token"));

// onto the new-run form, where the steps start (not the dashboard, which draws the latest runs'
// comparison); the other pages are opened inside the app (lib.mjs navigate)
await run("log in", () => login("logout", "/runs/new"));

await run("the new-run form offers exactly the host's targets and meters", async () => {
  await navigate(page, "/runs/new"); // there already
  const agentSelect = page.locator('select[name="agent"]');
  await agentSelect.locator("option", { hasText: AGENT }).waitFor({ state: "attached" });
  await agentSelect.selectOption({ label: `${AGENT} (browser-host)` });
  const targets = page.getByTestId("target-select");
  await targets.locator(`option[value="${DEVICE}"]`).waitFor({ state: "attached" });
  const values = await targets.locator("option").evaluateAll((os) => os.map((o) => o.value));
  check(
    JSON.stringify(values) === JSON.stringify([DIR, FILE, DEVICE]),
    `targets offered: ${values}`,
  );
  check((await page.locator('input[name="target"]').count()) === 0, "a free-text target exists");
  const meters = await page
    .getByTestId("meter-select")
    .locator("option")
    .evaluateAll((os) => os.map((o) => o.textContent));
  check(
    meters.join("|") ===
      "bmc (ipmi, bmc) — host default|plug (shelly, plug)|none (no power measurement)",
    `meters offered: ${meters}`,
  );
  check(
    (await page.getByTestId("meter-select").inputValue()) === "bmc",
    "default meter not chosen",
  );
  await shot("policy-new-run");
});

await run("writes on the read-only file are disabled with the host command", async () => {
  await page.getByTestId("target-select").selectOption(FILE);
  await page.getByTestId("mode-custom").check();
  for (const rw of ["write", "randwrite", "rw", "randrw"]) {
    check(
      await page.locator(`select[name="jobs.0.rw"] option[value="${rw}"]`).isDisabled(),
      `${rw} is not disabled on a read-only file`,
    );
  }
  check(
    !(await page.locator('select[name="jobs.0.rw"] option[value="randread"]').isDisabled()),
    "randread is disabled",
  );
  const why = (await page.getByTestId("write-refusal").textContent()) ?? "";
  check(why.includes(`iowatt-agent targets add --file ${FILE} --allow-write`), `reason: ${why}`);
  await shot("policy-read-only");
});

let runId = "";
await run("a destructive write asks for the device's model, then sends destructive", async () => {
  await page.getByTestId("target-select").selectOption(DEVICE);
  await page.locator('select[name="jobs.0.rw"]').selectOption("randwrite");
  await page.fill('input[name="jobs.0.bs"]', "4k");
  await page.fill('input[name="jobs.0.size"]', "16m");
  await page.fill('input[name="jobs.0.runtime"]', "1");
  await page.fill('input[name="name"]', "browser destructive confirm");
  await page.getByTestId("submit-run").click();
  const dialog = page.getByTestId("destructive-dialog");
  await dialog.waitFor();
  check(
    ((await dialog.textContent()) ?? "").includes(DEVICE),
    "the dialog does not name the device",
  );
  const confirm = page.getByTestId("destructive-confirm");
  check(await confirm.isDisabled(), "confirm enabled before typing");
  await page.getByTestId("destructive-input").fill(MODEL.toLowerCase());
  // React has handled the input and the page has painted since (two frames), not a fixed 200 ms
  await page.evaluate(
    () => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done))),
  );
  check(await confirm.isDisabled(), "a lower-case model confirms");
  await page.getByTestId("destructive-input").fill(MODEL);
  await page.waitForFunction(
    () => !document.querySelector('[data-testid="destructive-confirm"]')?.disabled,
  );
  await shot("policy-destructive-dialog");
  check(new URL(page.url()).pathname === "/runs/new", "a run was queued before confirming");
  await confirm.click();
  await page.waitForURL(/\/runs\/[0-9a-f-]{36}$/);
  runId = new URL(page.url()).pathname.split("/").pop();
  const stored = await must("GET", `/runs/${runId}`, session, undefined, 200);
  check(stored.destructive === true, `stored run destructive=${stored.destructive}`);
  check(stored.target_path === DEVICE, `stored target ${stored.target_path}`);
  // Nothing runs: the stand-in agent never leases, and the run is cancelled here.
  await must("POST", `/runs/${runId}/cancel`, session, undefined, 200);
});

await run("the server refuses the same write without the typed confirmation", async () => {
  const r = await call("POST", "/runs", session, {
    agent_id: agent.agent_id,
    target_path: DEVICE,
    workload: {
      jobs: [
        {
          name: "w",
          rw: "randwrite",
          bs_bytes: 4096,
          size_bytes: 16 << 20,
          runtime_s: 1,
          time_based: true,
        },
      ],
    },
    meter: "",
    destructive: false,
  });
  check(r.status === 422, `expected 422, got ${r.status} ${JSON.stringify(r.body)}`);
  check(
    JSON.stringify(r.body).includes("destructive"),
    `422 does not name destructive: ${JSON.stringify(r.body)}`,
  );
});

await run("the campaign form offers each row its host's targets", async () => {
  await navigate(page, "/campaigns");
  await page.getByTestId("new-campaign").click();
  const form = page.getByTestId("campaign-form");
  const agentSelect = form.getByLabel("Agent of target 1");
  await agentSelect.locator("option", { hasText: AGENT }).waitFor({ state: "attached" });
  await agentSelect.selectOption({ label: `${AGENT} (online)` });
  const targets = form.getByLabel("Path of target 1");
  await targets.locator(`option[value="${DEVICE}"]`).waitFor({ state: "attached" });
  const values = await targets.locator("option").evaluateAll((os) => os.map((o) => o.value));
  check(JSON.stringify(values) === JSON.stringify([DIR, FILE, DEVICE]), `targets: ${values}`);
  check(
    (await form.locator('input[aria-label^="Path of target"]').count()) === 0,
    "free-text path",
  );
  await shot("policy-campaign-form");
});

await run("the agents page shows the host's targets and meters", async () => {
  await navigate(page, "/agents");
  const row = page.locator(`[data-testid="agent-row"][data-agent="${AGENT}"]`);
  await row.waitFor();
  await row.getByRole("button", { name: /Show details/ }).click();
  const targets = page.getByTestId("policy-targets");
  await targets.waitFor();
  const text = (await targets.textContent()) ?? "";
  for (const want of [DIR, FILE, DEVICE, MODEL, "read-only", "destructive writes allowed"])
    check(text.includes(want), `policy table lacks ${want}`);
  check(
    ((await page.getByTestId("policy-meters").textContent()) ?? "").includes("host default"),
    "no default meter",
  );
  await shot("policy-agents");
});

await run(
  "create an enrolment token: shown once with the safe command; then revoke it",
  async () => {
    await page.getByTestId("enrollment-tokens").waitFor();
    await page.locator("#f-ttl").selectOption("3600");
    await page.locator("#f-uses").fill("2");
    await page.getByTestId("create-enrollment-token").click();
    const secret = ((await page.getByTestId("secret-value").textContent()) ?? "").trim();
    check(secret.length >= 16, `token too short: ${secret}`);
    const cmd = (await page.getByTestId("enroll-command").textContent()) ?? "";
    check(
      cmd === `IOWATT_ENROLL_TOKEN='${secret}' iowatt-agent enroll --server ${BASE}`,
      `enrol command: ${cmd}`,
    );
    const fileCmd = (await page.getByTestId("enroll-command-file").textContent()) ?? "";
    check(
      fileCmd.includes("--token-file") && !fileCmd.includes(secret),
      `file command: ${fileCmd}`,
    );
    // Ours is the only unused token allowing two hosts; the list never shows the secret.
    const ours = page.locator('[data-testid="enrollment-token-row"][data-state="usable"]', {
      hasText: "0 / 2",
    });
    await ours.waitFor();
    check(
      !((await page.getByTestId("enrollment-tokens-table").textContent()) ?? "").includes(secret),
      "the list shows the secret",
    );
    await shot("policy-enrollment-token");
    await page.getByTestId("secret-done").click();
    check(!(await page.content()).includes(secret), "the token is still on the page after Done");
    await ours.getByTestId("revoke-enrollment-token").click();
    await page.getByTestId("confirm-action").click();
    await page
      .locator('[data-testid="enrollment-token-row"][data-state="revoked"]', { hasText: "0 / 2" })
      .waitFor();
    const r = await call("POST", "/agents/enroll", null, {
      enrollment_token: secret,
      name: `${AGENT}-2`,
      hostname: "browser-host",
    });
    check(r.status === 401 || r.status === 403, `a revoked token answered ${r.status}`);
  },
);

await run("revoke the agent after confirming: its token is refused at once", async () => {
  const row = page.locator(`[data-testid="agent-row"][data-agent="${AGENT}"]`);
  await row.getByTestId("revoke-agent").click();
  const dialog = page.getByTestId("confirm-dialog");
  check(((await dialog.textContent()) ?? "").includes(`Revoke agent ${AGENT}?`), "dialog text");
  await page.getByTestId("confirm-action").click();
  await row.locator(".badge-revoked").waitFor();
  await shot("policy-agent-revoked");
  clearInterval(heartbeat);
  const r = await beat();
  check(r.status === 401, `a revoked agent's heartbeat answered ${r.status}`);
});

await run("delete the revoked agent after confirming", async () => {
  const row = page.locator(`[data-testid="agent-row"][data-agent="${AGENT}"]`);
  await row.getByTestId("delete-agent").click();
  await page.getByTestId("confirm-action").click();
  await row.waitFor({ state: "detached" });
  const agents = await must("GET", "/agents", session, undefined, 200);
  check(!agents.items.some((a) => a.name === AGENT), "the deleted agent is still listed");
});

await run("Settings → API tokens: create (shown once) and revoke", async () => {
  await navigate(page, "/settings/tokens");
  await page.getByTestId("token-form").waitFor();
  const name = `browser ${AGENT}`;
  await page.locator("#f-name").fill(name);
  await page.getByTestId("create-token").click();
  const secret = ((await page.getByTestId("secret-value").textContent()) ?? "").trim();
  await must("GET", "/auth/me", secret, undefined, 200);
  await shot("policy-api-token");
  await page.getByTestId("secret-done").click();
  const row = page.locator('[data-testid="token-row"]', { hasText: name });
  await row.getByTestId("revoke-token").click();
  await page.getByTestId("confirm-action").click();
  // Gone from the usable tokens; listed as revoked when asked for.
  await row.waitFor({ state: "detached" });
  await page.getByTestId("show-inactive").check();
  await page
    .locator('[data-testid="token-row"][data-state="revoked"]', { hasText: name })
    .waitFor();
  await must("GET", "/auth/me", secret, undefined, 401);
  await shot("policy-api-tokens");
});

await run("log out ends the server session", async () => {
  const token = await browserToken();
  check(token, "no session token in the browser");
  await must("GET", "/auth/me", token, undefined, 200);
  await page.getByTestId("logout").click();
  await page.getByTestId("login-form").waitFor();
  check((await browserToken()) === null, "the token is still in localStorage");
  await must("GET", "/auth/me", token, undefined, 401);
});

await call("POST", "/auth/logout", session);
await done();
