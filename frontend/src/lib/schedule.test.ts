import { describe, expect, it } from "vitest";
import { formatInZone, ruleText } from "./schedule";

describe("schedule rules and instants", () => {
  it("says a rule in words", () => {
    expect(ruleText({ cron: null, every_hours: 6, timezone: "UTC" })).toBe("every 6 hours");
    expect(ruleText({ cron: null, every_hours: 1, timezone: "UTC" })).toBe("every hour");
    expect(ruleText({ cron: null, every_hours: 48, timezone: "UTC" })).toBe("every 2 days");
    expect(ruleText({ cron: "0 2 * * *", every_hours: null, timezone: "Europe/Berlin" })).toBe(
      "daily at 02:00 (Europe/Berlin)",
    );
    expect(ruleText({ cron: "30 1 * * 1-5", every_hours: null, timezone: "UTC" })).toBe(
      "cron 30 1 * * 1-5 (UTC)",
    );
  });

  it("shows an instant as the schedule's wall clock, summer and winter", () => {
    // 01:00 UTC is 02:00 in Berlin in winter (CET) and 03:00 in summer (CEST)
    expect(formatInZone("2026-12-07T01:00:00Z", "Europe/Berlin")).toBe("2026-12-07 02:00 CET");
    expect(formatInZone("2026-07-07T01:00:00Z", "Europe/Berlin")).toBe("2026-07-07 03:00 CEST");
    expect(formatInZone("2026-07-07T01:00:00Z", "UTC")).toBe("2026-07-07 01:00 UTC");
    expect(formatInZone("not a date", "UTC")).toBe("—");
  });
});
