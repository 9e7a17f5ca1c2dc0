import { fireEvent, screen, waitFor, within } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import type { EnrollmentTokenRead, Inventory } from "../client/types";
import { setToken } from "../lib/auth";
import { setCurrentTeamId } from "../lib/role";
import { policyAgent } from "../test/fixtures";
import { renderAt, stubApi } from "../test/render";
import { Agents } from "./Agents";

const realFetch = globalThis.fetch;
afterEach(() => {
  globalThis.fetch = realFetch;
});

const ME = (role: "admin" | "member") => ({
  body: {
    id: "u1",
    email: "a@b.c",
    display_name: "a",
    teams: [{ id: "t1", name: "lab", role }],
  },
});

const TOKEN: EnrollmentTokenRead = {
  id: "et1",
  team_id: "t1",
  created_by: "u1",
  created_at: "2026-11-22T10:00:00Z",
  expires_at: "2099-01-01T00:00:00Z",
  uses: 0,
  max_uses: 1,
  revoked_at: null,
};

describe("Agents", () => {
  it("shows each agent's allowed targets and meters", async () => {
    setToken("t");
    stubApi({
      "GET /api/v1/agents": () => ({ body: { items: [policyAgent()], total: 1 } }),
      "GET /api/v1/auth/me": () => ME("member"),
    });
    renderAt(<Agents />);
    const row = await screen.findByTestId("agent-row");
    fireEvent.click(within(row).getByRole("button", { name: /Show details/ }));
    const targets = screen.getByTestId("policy-targets");
    expect(within(targets).getAllByRole("row")).toHaveLength(5);
    expect(targets.textContent).toContain("/data/ref.bin");
    expect(targets.textContent).toContain("read-only");
    expect(targets.textContent).toContain("destructive writes allowed");
    expect(targets.textContent).toContain("Samsung SSD 990 PRO 2TB");
    const meters = screen.getByTestId("policy-meters");
    expect(meters.textContent).toContain("bmc");
    expect(meters.textContent).toContain("host default");
    // A member sees no admin controls.
    expect(screen.queryByTestId("revoke-agent")).toBeNull();
    expect(screen.queryByTestId("enrollment-tokens")).toBeNull();
  });

  it("shows the host inventory the server serves (the generated type), keys from newer agents aside", async () => {
    const inventory: Inventory = {
      hostname: "lab1",
      os: { kernel: "6.1.0-18-amd64", distro: "Debian GNU/Linux 12" },
      cpu: { model: "AMD EPYC 7B13", cores: 16 },
      mem_bytes: 64 * 1024 ** 3,
      virtualization: "none",
      capabilities: {
        workload_kinds: ["block"],
        tpch_dbms: [],
        multi_target: false,
        protocol: null,
        engine_version: null,
        engine_features: null,
      },
      block_devices: [
        {
          name: "nvme0n1",
          model: "Samsung SSD 990 PRO 2TB",
          serial_sha256: null,
          firmware: "4B2QJXD7",
          size_bytes: 2_000_398_934_016,
          rotational: false,
          interface: "nvme",
          scheduler: "none",
          logical_block_bytes: 512,
          physical_block_bytes: 512,
          dm_name: null,
          slaves: [],
          zoned: "none", // a key this UI does not know: kept, not shown
        },
      ],
      mounts: [
        { mountpoint: "/data", source: "/dev/nvme0n1p1", fstype: "xfs", options: "rw,noatime" },
      ],
      policy: null,
      topology: null,
    };
    setToken("t");
    stubApi({
      "GET /api/v1/agents": () => ({ body: { items: [policyAgent({ inventory })], total: 1 } }),
      "GET /api/v1/auth/me": () => ME("member"),
    });
    renderAt(<Agents />);
    const row = await screen.findByTestId("agent-row");
    expect(row.textContent).toContain("6.1.0-18-amd64");
    expect(row.textContent).toContain("AMD EPYC 7B13 (16 cores)");
    fireEvent.click(within(row).getByRole("button", { name: /Show details/ }));
    const detail = screen.getByTestId("agent-detail");
    expect(detail.textContent).toContain("Debian GNU/Linux 12 · 6.1.0-18-amd64");
    expect(detail.textContent).toContain("Samsung SSD 990 PRO 2TB");
    expect(detail.textContent).toContain("solid state");
    expect(detail.textContent).toContain("/dev/nvme0n1p1");
    expect(detail.textContent).not.toContain("zoned");
  });

  it("says which agent is older than the bundle served, with the line that upgrades it, and its engine", async () => {
    setToken("t");
    const caps = (over: Partial<Inventory["capabilities"] & object>) => ({
      workload_kinds: ["block"],
      tpch_dbms: [],
      multi_target: true,
      protocol: null,
      engine_version: null,
      engine_features: null,
      ...over,
    });
    const inv = (c: ReturnType<typeof caps>): Inventory => ({
      hostname: null,
      os: null,
      cpu: null,
      mem_bytes: null,
      virtualization: null,
      block_devices: [],
      mounts: [],
      policy: null,
      topology: null,
      capabilities: c,
    });
    stubApi({
      "GET /api/v1/agents": () => ({
        body: {
          items: [
            policyAgent({
              agent_version: "0.1.10",
              inventory: inv(
                caps({
                  protocol: 2,
                  engine_version: "0.1.10",
                  engine_features: ["io_uring", "libaio"],
                }),
              ),
            }),
            policyAgent({
              id: "a2",
              name: "old",
              agent_version: "0.1.9",
              inventory: inv(caps({})),
            }),
          ],
          total: 2,
        },
      }),
      "GET /api/v1/auth/me": () => ME("member"),
      "GET /api/v1/agent-dist": () => ({
        body: {
          version: "0.1.10",
          bundles: [],
          install_script_url: "/api/v1/agent-dist/install.sh",
          tls: { fingerprint_sha256: "SHA256:AB", pubkey_pin: "sha256//pin" },
          tls_ca: null,
        },
      }),
    });
    renderAt(<Agents />);
    const [current, old] = await screen.findAllByTestId("agent-row");
    if (!current || !old) throw new Error("two agent rows expected");
    await within(old).findByTestId("agent-outdated");
    expect(within(current).queryByTestId("agent-outdated")).toBeNull();
    fireEvent.click(within(current).getByRole("button", { name: /Show details/ }));
    expect(screen.getByTestId("agent-engine").textContent).toBe("0.1.10 · io_uring, libaio");
    expect(screen.queryByTestId("agent-upgrade")).toBeNull();
    fireEvent.click(within(old).getByRole("button", { name: /Show details/ }));
    expect(screen.getByTestId("agent-engine").textContent).toContain("not reported");
    const upgrade = screen.getByTestId("agent-upgrade");
    expect(upgrade.textContent).toContain("--pinnedpubkey 'sha256//pin'");
    expect(upgrade.textContent).toContain("--upgrade");
    expect(upgrade.textContent).not.toContain("--token-file");
  });

  it("shows when an agent's token expires, and an expired one with the re-enrol command", async () => {
    setToken("t");
    const expired = new Date(Date.now() - 2 * 86400 * 1000).toISOString();
    stubApi({
      "GET /api/v1/agents": () => ({
        body: {
          items: [policyAgent(), policyAgent({ id: "a2", name: "old", token_expires_at: expired })],
          total: 2,
        },
      }),
      "GET /api/v1/auth/me": () => ME("member"),
    });
    renderAt(<Agents />);
    const [fresh, old] = await screen.findAllByTestId("agent-row");
    if (!fresh || !old) throw new Error("two agent rows expected");
    expect(within(fresh).queryByTestId("token-expired")).toBeNull();
    expect(within(old).getByTestId("token-expired").textContent).toBe("token expired");
    fireEvent.click(within(fresh).getByRole("button", { name: /Show details/ }));
    expect(screen.getByTestId("token-expiry").textContent).toBe("in 29 days");
    fireEvent.click(within(old).getByRole("button", { name: /Show details/ }));
    const text = screen.getByTestId("token-expiry").textContent ?? "";
    expect(text).toContain("expired 2 days ago");
    expect(text).toContain("iowatt-agent enroll --replace");
  });

  it("marks an external host (CI uploads) as such, never as an agent whose token expired", async () => {
    setToken("t");
    const expired = new Date(Date.now() - 86400 * 1000).toISOString();
    stubApi({
      "GET /api/v1/agents": () => ({
        body: {
          items: [
            policyAgent({
              id: "x1",
              name: "ci-runner-1",
              kind: "external",
              online: false,
              inventory: null,
              policy: null,
              token_expires_at: expired,
            }),
          ],
          total: 1,
        },
      }),
      "GET /api/v1/auth/me": () => ME("member"),
    });
    renderAt(<Agents />);
    const [row] = await screen.findAllByTestId("agent-row");
    if (!row) throw new Error("one agent row expected");
    expect(within(row).getByTestId("agent-external").textContent).toBe("external · uploads");
    expect(within(row).queryByTestId("token-expired")).toBeNull();
  });

  it("lets an admin revoke an agent after confirming", async () => {
    setToken("t");
    let revoked = false;
    const calls = stubApi({
      "GET /api/v1/agents": () => ({
        body: {
          items: [policyAgent({ revoked_at: revoked ? "2026-11-22T11:00:00Z" : null })],
          total: 1,
        },
      }),
      "GET /api/v1/auth/me": () => ME("admin"),
      "GET /api/v1/agents/enrollment-tokens": () => ({ body: { items: [], total: 0 } }),
      "POST /api/v1/agents/a1/revoke": () => {
        revoked = true;
        return { body: policyAgent({ revoked_at: "2026-11-22T11:00:00Z" }) };
      },
    });
    renderAt(<Agents />);
    fireEvent.click(await screen.findByTestId("revoke-agent"));
    const dialog = screen.getByTestId("confirm-dialog");
    expect(dialog.textContent).toContain("Revoke agent local?");
    // Cancel first: nothing is sent.
    fireEvent.click(within(dialog).getByRole("button", { name: "Cancel" }));
    expect(calls.some((c) => c.method === "POST")).toBe(false);
    fireEvent.click(screen.getByTestId("revoke-agent"));
    fireEvent.click(screen.getByTestId("confirm-action"));
    await waitFor(() => expect(screen.queryByTestId("confirm-dialog")).toBeNull());
    expect(calls.filter((c) => c.method === "POST").map((c) => c.path)).toEqual([
      "/api/v1/agents/a1/revoke",
    ]);
    // The list is fetched again and shows the agent revoked, with Delete instead of Revoke.
    await screen.findByText("revoked", { selector: ".badge" });
    expect(screen.queryByTestId("revoke-agent")).toBeNull();
    expect(screen.getByTestId("delete-agent")).toBeTruthy();
  });

  it("creates an enrolment token, shows it once with the safe enrol command, lists and revokes", async () => {
    setToken("t");
    let tokens: EnrollmentTokenRead[] = [];
    const calls = stubApi({
      "GET /api/v1/agents": () => ({ body: { items: [], total: 0 } }),
      "GET /api/v1/auth/me": () => ME("admin"),
      "GET /api/v1/agents/enrollment-tokens": () => ({
        body: { items: tokens, total: tokens.length },
      }),
      "POST /api/v1/agents/enrollment-tokens": () => {
        tokens = [TOKEN];
        return {
          status: 201,
          body: {
            id: "et1",
            team_id: "t1",
            token: "iwe_secret123",
            expires_at: TOKEN.expires_at,
            max_uses: 3,
          },
        };
      },
      "DELETE /api/v1/agents/enrollment-tokens/et1": () => {
        tokens = [{ ...TOKEN, revoked_at: "2026-11-22T12:00:00Z" }];
        return { status: 204, body: null };
      },
    });
    renderAt(<Agents />);
    await screen.findByText("No enrolment tokens.");
    fireEvent.change(screen.getByRole("combobox", { name: /Expires after/ }), {
      target: { value: "3600" },
    });
    fireEvent.change(screen.getByRole("textbox", { name: /Max uses/ }), { target: { value: "3" } });
    fireEvent.click(screen.getByTestId("create-enrollment-token"));
    expect((await screen.findByTestId("secret-value")).textContent).toBe("iwe_secret123");
    expect(calls.find((c) => c.method === "POST")?.body).toEqual({
      team_id: "t1",
      ttl_s: 3600,
      max_uses: 3,
    });
    const cmd = screen.getByTestId("enroll-command").textContent ?? "";
    expect(cmd).toBe(
      `IOWATT_ENROLL_TOKEN='iwe_secret123' iowatt-agent enroll --server ${window.location.origin}`,
    );
    // Never as an argument (ps shows arguments to every user).
    expect(cmd).not.toContain("--token ");
    expect(screen.getByTestId("enroll-command-file").textContent).toContain("--token-file");
    // The list shows the token's metadata, never the secret.
    const row = await screen.findByTestId("enrollment-token-row");
    expect(row.textContent).not.toContain("iwe_secret123");
    expect(row.dataset.state).toBe("usable");
    // Done: the secret is gone from the page.
    fireEvent.click(screen.getByTestId("secret-done"));
    expect(screen.queryByTestId("secret-value")).toBeNull();
    expect(document.body.textContent).not.toContain("iwe_secret123");

    fireEvent.click(within(row).getByTestId("revoke-enrollment-token"));
    fireEvent.click(screen.getByTestId("confirm-action"));
    await waitFor(() =>
      expect(screen.getByTestId("enrollment-token-row").dataset.state).toBe("revoked"),
    );
    expect(calls.some((c) => c.method === "DELETE")).toBe(true);
    expect(screen.queryByTestId("revoke-enrollment-token")).toBeNull();
  });

  it("refuses a max-uses count that is not a positive whole number without a request", async () => {
    setToken("t");
    const calls = stubApi({
      "GET /api/v1/agents": () => ({ body: { items: [], total: 0 } }),
      "GET /api/v1/auth/me": () => ME("admin"),
      "GET /api/v1/agents/enrollment-tokens": () => ({ body: { items: [], total: 0 } }),
    });
    renderAt(<Agents />);
    await screen.findByText("No enrolment tokens.");
    fireEvent.change(screen.getByRole("textbox", { name: /Max uses/ }), { target: { value: "0" } });
    fireEvent.click(screen.getByTestId("create-enrollment-token"));
    expect((await screen.findByTestId("field-error-uses")).dataset.source).toBe("client");
    expect(calls.some((c) => c.method === "POST")).toBe(false);
  });
});

describe("enrolment tokens and the current team", () => {
  it("creates the token in the header's current team when the user is its admin", async () => {
    setToken("t");
    setCurrentTeamId("t2");
    const calls = stubApi({
      "GET /api/v1/agents": () => ({ body: { items: [], total: 0 } }),
      "GET /api/v1/auth/me": () => ({
        body: {
          id: "u1",
          email: "a@b.c",
          display_name: "a",
          teams: [
            { id: "t1", name: "lab", role: "admin" },
            { id: "t2", name: "procurement", role: "admin" },
          ],
        },
      }),
      "GET /api/v1/agents/enrollment-tokens": () => ({ body: { items: [], total: 0 } }),
      "POST /api/v1/agents/enrollment-tokens": () => ({
        status: 201,
        body: {
          id: "et9",
          team_id: "t2",
          token: "iwe_x",
          expires_at: TOKEN.expires_at,
          max_uses: 1,
        },
      }),
    });
    renderAt(<Agents />);
    await screen.findByText("No enrolment tokens.");
    const team = screen.getByRole("combobox", { name: /Team/ }) as HTMLSelectElement;
    expect(team.value).toBe("t2");
    fireEvent.click(screen.getByTestId("create-enrollment-token"));
    await screen.findByTestId("secret-value");
    expect(calls.find((c) => c.method === "POST")?.body).toMatchObject({ team_id: "t2" });
  });
});
