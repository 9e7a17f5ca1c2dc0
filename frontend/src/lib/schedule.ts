import type { ScheduleRead } from "../client/types";

/** The browser's IANA time zone (a new schedule's default), UTC when it cannot tell. */
export function localTimeZone(): string {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
  } catch {
    return "UTC";
  }
}

/** Every IANA zone the browser knows (for the time-zone field's suggestions). */
export function timeZones(): string[] {
  const intl = Intl as unknown as { supportedValuesOf?: (k: string) => string[] };
  try {
    return intl.supportedValuesOf ? intl.supportedValuesOf("timeZone") : ["UTC"];
  } catch {
    return ["UTC"];
  }
}

/** An instant as wall-clock time in `timeZone`: "2026-12-07 02:00 CET". */
export function formatInZone(iso: string, timeZone: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return "—";
  let parts: Intl.DateTimeFormatPart[];
  try {
    parts = new Intl.DateTimeFormat("en-GB", {
      timeZone,
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      hourCycle: "h23",
      timeZoneName: "short",
    }).formatToParts(d);
  } catch {
    return `${d.toISOString().slice(0, 16).replace("T", " ")} UTC`;
  }
  const get = (t: Intl.DateTimeFormatPartTypes) => parts.find((p) => p.type === t)?.value ?? "";
  return `${get("year")}-${get("month")}-${get("day")} ${get("hour")}:${get("minute")} ${get("timeZoneName")}`;
}

/** What a schedule's rule says, in words a person reads at a glance. */
export function ruleText(s: Pick<ScheduleRead, "cron" | "every_hours" | "timezone">): string {
  if (s.every_hours != null) {
    if (s.every_hours % 24 === 0) {
      const days = s.every_hours / 24;
      return days === 1 ? "every day" : `every ${days} days`;
    }
    return s.every_hours === 1 ? "every hour" : `every ${s.every_hours} hours`;
  }
  const daily = /^(\d{1,2}) (\d{1,2}) \* \* \*$/.exec(s.cron ?? "");
  if (daily) {
    const hh = (daily[2] ?? "").padStart(2, "0");
    const mm = (daily[1] ?? "").padStart(2, "0");
    return `daily at ${hh}:${mm} (${s.timezone})`;
  }
  return `cron ${s.cron} (${s.timezone})`;
}
