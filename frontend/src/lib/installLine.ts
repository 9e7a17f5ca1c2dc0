/** The one line that installs the agent on another host (the server's install.sh). */

/** POSIX shell single quotes: safe for any text, a quote becomes '\'' */
export function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

export const TOKEN_FILE = "/root/iowatt-enroll.token";

export interface ServerPins {
  fingerprint_sha256: string;
  pubkey_pin: string;
}

/**
 * With the server's pins, every download checks the server's public key (curl --pinnedpubkey,
 * which holds with -k: the key decides, not a CA) and the agent pins the certificate at enrolment;
 * without them, curl and the agent trust the host's CA store.
 */
export function installLine(server: string, scriptPath: string, tls: ServerPins | null): string {
  const url = shellQuote(server + scriptPath);
  const args = [`--server ${shellQuote(server)}`];
  let curl = `curl -fsSL ${url}`;
  if (tls) {
    curl = `curl -fsSL -k --pinnedpubkey ${shellQuote(tls.pubkey_pin)} ${url}`;
    args.push(`--pin ${shellQuote(tls.pubkey_pin)}`);
    args.push(`--fingerprint ${shellQuote(tls.fingerprint_sha256)}`);
  }
  args.push(`--token-file ${TOKEN_FILE}`);
  return `${curl} | sudo sh -s -- ${args.join(" ")}`;
}
