import { describe, expect, it } from "vitest";
import { installLine, shellQuote } from "./installLine";

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
