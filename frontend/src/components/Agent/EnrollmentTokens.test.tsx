import { fireEvent, screen } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { setToken } from "../../lib/auth";
import { Agents } from "../../routes/Agents";
import { renderAt, stubApi } from "../../test/render";

const ME = {
  body: {
    id: "u1",
    email: "a@b.c",
    display_name: "a",
    teams: [{ id: "t1", name: "lab", role: "admin" }],
  },
};

function stub(dist: unknown) {
  return stubApi({
    "GET /api/v1/agents": () => ({ body: { items: [], total: 0 } }),
    "GET /api/v1/auth/me": () => ME,
    "GET /api/v1/agents/enrollment-tokens": () => ({ body: { items: [], total: 0 } }),
    "GET /api/v1/agent-dist": () => ({ body: dist }),
    "POST /api/v1/agents/enrollment-tokens": () => ({
      status: 201,
      body: { id: "et1", team_id: "t1", token: "iwe_secret123", expires_at: null, max_uses: 1 },
    }),
  });
}

async function createToken() {
  renderAt(<Agents />);
  await screen.findByText("No enrolment tokens.");
  fireEvent.click(screen.getByTestId("create-enrollment-token"));
  await screen.findByTestId("secret-value");
}

describe("the enrolment token's install line", () => {
  it("shows the one line with the server's pins, the token in a file, never on the line", async () => {
    setToken("t");
    stub({
      version: "0.1.0",
      bundles: [],
      install_script_url: "/api/v1/agent-dist/install.sh",
      tls: { fingerprint_sha256: "SHA256:AB:CD", pubkey_pin: "sha256//K3y=" },
      tls_ca: null,
    });
    await createToken();
    const line = (await screen.findByTestId("install-line")).textContent ?? "";
    const origin = window.location.origin;
    expect(line).toBe(
      `curl -fsSL -k --pinnedpubkey 'sha256//K3y=' '${origin}/api/v1/agent-dist/install.sh'` +
        ` | sudo sh -s -- --server '${origin}' --pin 'sha256//K3y=' --fingerprint 'SHA256:AB:CD'` +
        " --token-file /root/iowatt-enroll.token",
    );
    expect(line).not.toContain("iwe_secret123");
  });

  it("with the server's CA, the line checks its SHA-256 first and says so", async () => {
    setToken("t");
    stub({
      version: "0.1.0",
      bundles: [],
      install_script_url: "/api/v1/agent-dist/install.sh",
      tls: null,
      tls_ca: {
        sha256: "cd".repeat(32),
        fingerprint_sha256: "SHA256:EF",
        subject: "CN=Caddy Local Authority - 2026 ECC Root",
        url: "/api/v1/agent-dist/ca.pem",
      },
    });
    await createToken();
    const line = (await screen.findByTestId("install-line")).textContent ?? "";
    expect(line).toContain(`echo '${"cd".repeat(32)}  iowatt-ca.pem' | sha256sum -c --quiet &&`);
    expect(line).toContain('--ca-file "$PWD/iowatt-ca.pem" --token-file /root/iowatt-enroll.token');
    expect(screen.getByTestId("install-line-ca").textContent).toContain("Caddy Local Authority");
  });

  it("says when the server serves no bundle, and shows no line", async () => {
    setToken("t");
    stub({
      version: null,
      bundles: [],
      install_script_url: "/api/v1/agent-dist/install.sh",
      tls: null,
      tls_ca: null,
    });
    await createToken();
    expect((await screen.findByTestId("install-line-none")).textContent).toContain(
      "make agent-dist",
    );
    expect(screen.queryByTestId("install-line")).toBeNull();
  });

  it("says which glibc the served bundle needs (its manifest's floor), when it states one", async () => {
    setToken("t");
    const tar = { kind: "tar", arch: "x86_64", version: "0.1.0", glibc_floor: "2.36" };
    stub({
      version: "0.1.0",
      bundles: [
        {
          ...tar,
          name: "iowatt-agent-0.1.0-linux-x86_64.tar.gz",
          size_bytes: 1,
          sha256: "ab",
          url: "/x",
        },
        {
          ...tar,
          kind: "deb",
          glibc_floor: null,
          name: "iowatt-agent_0.1.0_amd64.deb",
          size_bytes: 1,
          sha256: "ab",
          url: "/y",
        },
        {
          ...tar,
          version: "0.0.9",
          glibc_floor: "2.17",
          name: "iowatt-agent-0.0.9-linux-x86_64.tar.gz",
          size_bytes: 1,
          sha256: "ab",
          url: "/z",
        },
      ],
      install_script_url: "/api/v1/agent-dist/install.sh",
      tls: null,
      tls_ca: null,
    });
    await createToken();
    const says = (await screen.findByTestId("install-line-glibc")).textContent ?? "";
    expect(says).toContain("The agent 0.1.0 needs glibc 2.36 or newer on the host");
    expect(says).not.toContain("2.17");
  });
});
