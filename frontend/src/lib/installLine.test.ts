import { describe, expect, it } from "vitest";
import { installLine, isOlder, shellQuote, upgradeLine } from "./installLine";

describe("installLine", () => {
  it("quotes what it puts on the line", () => {
    expect(shellQuote("a'b")).toBe("'a'\\''b'");
    const line = installLine("https://x'; rm -rf /;'", "/api/v1/agent-dist/install.sh", null);
    expect(line).toContain("'https://x'\\''; rm -rf /;'\\''/api/v1/agent-dist/install.sh'");
    expect(line).not.toContain("--pin");
  });

  it("pins the downloads and the enrolment when the server knows its certificate", () => {
    const line = installLine("https://iowatt.example", "/api/v1/agent-dist/install.sh", {
      fingerprint_sha256: "SHA256:AB:CD",
      pubkey_pin: "sha256//abc+/=",
    });
    expect(line).toBe(
      "curl -fsSL -k --pinnedpubkey 'sha256//abc+/=' 'https://iowatt.example/api/v1/agent-dist/install.sh'" +
        " | sudo sh -s -- --server 'https://iowatt.example' --pin 'sha256//abc+/='" +
        " --fingerprint 'SHA256:AB:CD' --token-file /root/iowatt-enroll.token",
    );
  });
});

describe("installLine with the server's CA", () => {
  const ca = { sha256: "ab".repeat(32), url: "/api/v1/agent-dist/ca.pem" };

  it("checks the CA's SHA-256 before anything trusts it, then trusts that CA alone", () => {
    const pins = { fingerprint_sha256: "SHA256:AB:CD", pubkey_pin: "sha256//abc" };
    const line = installLine("https://iowatt.example", "/api/v1/agent-dist/install.sh", pins, ca);
    expect(line).toBe(
      "curl -fsSk -o iowatt-ca.pem 'https://iowatt.example/api/v1/agent-dist/ca.pem'" +
        ` && echo '${"ab".repeat(32)}  iowatt-ca.pem' | sha256sum -c --quiet` +
        " && curl -fsSL --cacert iowatt-ca.pem 'https://iowatt.example/api/v1/agent-dist/install.sh'" +
        " | sudo sh -s -- --server 'https://iowatt.example' --ca-file \"$PWD/iowatt-ca.pem\"" +
        " --token-file /root/iowatt-enroll.token",
    );
    // the CA outlives the leaf: no leaf pin beside it
    expect(line).not.toContain("--pinnedpubkey");
    expect(line).not.toContain("--fingerprint");
  });

  it("upgrades through the same CA", () => {
    const line = upgradeLine("https://iowatt.example", "/api/v1/agent-dist/install.sh", null, ca);
    expect(line).toContain("| sha256sum -c --quiet && curl -fsSL --cacert iowatt-ca.pem");
    expect(line).toMatch(/--ca-file "\$PWD\/iowatt-ca.pem" --upgrade$/);
  });
});

describe("upgradeLine and versions", () => {
  it("upgrades with the pin and without a token", () => {
    const line = upgradeLine("https://iowatt.example", "/api/v1/agent-dist/install.sh", {
      fingerprint_sha256: "SHA256:AB:CD",
      pubkey_pin: "sha256//abc",
    });
    expect(line).toBe(
      "curl -fsSL -k --pinnedpubkey 'sha256//abc' 'https://iowatt.example/api/v1/agent-dist/install.sh'" +
        " | sudo sh -s -- --server 'https://iowatt.example' --pin 'sha256//abc' --upgrade",
    );
    expect(line).not.toContain("token");
  });

  it("compares versions as numbers", () => {
    expect(isOlder("0.1.9", "0.1.10")).toBe(true);
    expect(isOlder("0.1.10", "0.1.9")).toBe(false);
    expect(isOlder("0.1.0", "0.1.0")).toBe(false);
    expect(isOlder("0.1", "0.1.1")).toBe(true);
    expect(isOlder("", "0.1.0")).toBe(false);
    expect(isOlder("0.1.0", null)).toBe(false);
  });
});
