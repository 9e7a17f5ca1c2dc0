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
