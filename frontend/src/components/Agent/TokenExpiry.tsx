import { formatTimestamp } from "../../lib/format";

const UNITS: [number, string][] = [
  [86400, "day"],
  [3600, "hour"],
  [60, "minute"],
  [1, "second"],
];

/** 29.6 days → "29 days", 1 hour → "1 hour": the largest whole unit, for people. */
export function humanDuration(seconds: number): string {
  const abs = Math.abs(seconds);
  for (const [size, name] of UNITS) {
    const n = Math.floor(abs / size);
    if (n >= 1) return `${n} ${name}${n === 1 ? "" : "s"}`;
  }
  return "0 seconds";
}

/** When an agent's token expires, for people: "in 29 days", or "expired 2 days ago". */
export function tokenExpiryText(
  iso: string,
  now: number = Date.now(),
): { text: string; expired: boolean } {
  const left = (new Date(iso).getTime() - now) / 1000;
  if (Number.isNaN(left)) return { text: "—", expired: false };
  if (left <= 0) return { text: `expired ${humanDuration(left)} ago`, expired: true };
  return { text: `in ${humanDuration(left)}`, expired: false };
}

/** The agent rotates its token before it expires (docs/adr/0011); an expired one needs the host
 * to re-enrol, which the hint says. */
export function TokenExpiry({
  expiresAt,
  revoked,
  now,
}: {
  expiresAt: string;
  revoked: boolean;
  now?: number;
}) {
  const { text, expired } = tokenExpiryText(expiresAt, now);
  return (
    <span data-testid="token-expiry" title={formatTimestamp(expiresAt)}>
      {revoked ? "— (revoked)" : text}
      {expired && !revoked && (
        <>
          {" "}
          <span className="field-error">
            re-enrol on the host: <code>iowatt-agent enroll --replace</code>
          </span>
        </>
      )}
    </span>
  );
}
