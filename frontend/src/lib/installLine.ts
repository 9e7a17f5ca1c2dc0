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

export interface ServerCa {
  sha256: string;
  url: string;
}

/** Where the line saves the server's CA, in the directory it is run from. */
export const CA_FILE = "iowatt-ca.pem";

/**
 * The server's CA (a reverse proxy's own, such as Caddy's `tls internal` root, whose leaf
 * certificates renew too often to pin): downloaded without trust, then checked against the SHA-256
 * this page shows (the operator's own trusted session is the anchor) before anything trusts it;
 * a different file stops the line there.
 */
function caFirst(server: string, ca: ServerCa): string {
  return (
    `curl -fsSk -o ${CA_FILE} ${shellQuote(server + ca.url)}` +
    ` && echo ${shellQuote(`${ca.sha256}  ${CA_FILE}`)} | sha256sum -c --quiet && `
  );
}

/**
 * With the server's CA, the script, the bundle and the agent trust that CA alone (curl --cacert,
 * enrol --ca-file), which outlives every renewed leaf: preferred when the server names one. With the
 * server's pins, every download checks the server's public key (curl --pinnedpubkey, which holds
 * with -k: the key decides, not a CA) and the agent pins the certificate at enrolment; without
 * either, curl and the agent trust the host's CA store.
 */
export function installLine(
  server: string,
  scriptPath: string,
  tls: ServerPins | null,
  ca: ServerCa | null = null,
): string {
  const url = shellQuote(server + scriptPath);
  const args = [`--server ${shellQuote(server)}`];
  let curl = `curl -fsSL ${url}`;
  if (ca) {
    curl = `${caFirst(server, ca)}curl -fsSL --cacert ${CA_FILE} ${url}`;
    args.push(`--ca-file "$PWD/${CA_FILE}"`);
  } else if (tls) {
    curl = `curl -fsSL -k --pinnedpubkey ${shellQuote(tls.pubkey_pin)} ${url}`;
    args.push(`--pin ${shellQuote(tls.pubkey_pin)}`);
    args.push(`--fingerprint ${shellQuote(tls.fingerprint_sha256)}`);
  }
  args.push(`--token-file ${TOKEN_FILE}`);
  return `${curl} | sudo sh -s -- ${args.join(" ")}`;
}

/**
 * The line that upgrades an enrolled host to the newest bundle: the install line with --upgrade in
 * place of the token file (the enrolment in the state directory is kept; no fingerprint to pin).
 */
export function upgradeLine(
  server: string,
  scriptPath: string,
  tls: ServerPins | null,
  ca: ServerCa | null = null,
): string {
  const url = shellQuote(server + scriptPath);
  const args = [`--server ${shellQuote(server)}`];
  let curl = `curl -fsSL ${url}`;
  if (ca) {
    curl = `${caFirst(server, ca)}curl -fsSL --cacert ${CA_FILE} ${url}`;
    args.push(`--ca-file "$PWD/${CA_FILE}"`);
  } else if (tls) {
    curl = `curl -fsSL -k --pinnedpubkey ${shellQuote(tls.pubkey_pin)} ${url}`;
    args.push(`--pin ${shellQuote(tls.pubkey_pin)}`);
  }
  args.push("--upgrade");
  return `${curl} | sudo sh -s -- ${args.join(" ")}`;
}

/** Versions compared as numbers where they are numbers (0.1.10 is newer than 0.1.9). */
export function compareVersions(a: string, b: string): number {
  const pa = a.split(/[.+~-]/);
  const pb = b.split(/[.+~-]/);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const x = pa[i] ?? "";
    const y = pb[i] ?? "";
    if (x === y) continue;
    const nx = /^\d+$/.test(x);
    const ny = /^\d+$/.test(y);
    if (nx && ny) return Number(x) - Number(y);
    if (x === "") return -1;
    if (y === "") return 1;
    return nx ? -1 : ny ? 1 : x < y ? -1 : 1;
  }
  return 0;
}

/** The agent reports a version older than the bundle the server serves (unknown: not older). */
export function isOlder(
  agentVersion: string | null | undefined,
  served: string | null | undefined,
): boolean {
  return !!agentVersion && !!served && compareVersions(agentVersion, served) < 0;
}
