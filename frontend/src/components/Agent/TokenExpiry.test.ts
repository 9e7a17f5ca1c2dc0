import { describe, expect, it } from "vitest";
import { humanDuration, tokenExpiryText } from "./TokenExpiry";

describe("token expiry for people", () => {
  const now = Date.parse("2026-11-22T12:00:00Z");
  it("says the largest whole unit, singular or plural", () => {
    expect(humanDuration(29.6 * 86400)).toBe("29 days");
    expect(humanDuration(86400)).toBe("1 day");
    expect(humanDuration(5 * 3600 + 59)).toBe("5 hours");
    expect(humanDuration(61)).toBe("1 minute");
    expect(humanDuration(0.5)).toBe("0 seconds");
  });
  it("reads in N days ahead and expired N ago after", () => {
    expect(tokenExpiryText("2026-12-22T00:00:00Z", now)).toEqual({
      text: "in 29 days",
      expired: false,
    });
    expect(tokenExpiryText("2026-11-20T12:00:00Z", now)).toEqual({
      text: "expired 2 days ago",
      expired: true,
    });
    expect(tokenExpiryText("not a date", now)).toEqual({ text: "—", expired: false });
  });
});
