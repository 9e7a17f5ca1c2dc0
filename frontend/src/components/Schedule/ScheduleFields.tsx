import { localTimeZone, timeZones } from "../../lib/schedule";
import { type Errors, Field } from "../Field";
import "./schedule.css";

/** When a campaign form's campaign runs: now, or on a schedule (a cron rule or every N hours). */
export type When = {
  mode: "now" | "schedule";
  rule: "cron" | "every";
  cron: string;
  everyHours: string;
  timezone: string;
};

export function initialWhen(): When {
  return {
    mode: "now",
    rule: "cron",
    cron: "0 2 * * *",
    everyHours: "24",
    timezone: localTimeZone(),
  };
}

/** The schedule's fields of a ScheduleCreate body. */
export function ruleBody(w: When): {
  cron: string | null;
  every_hours: number | null;
  timezone: string;
} {
  return w.rule === "cron"
    ? { cron: w.cron.trim(), every_hours: null, timezone: w.timezone.trim() }
    : { cron: null, every_hours: Number(w.everyHours), timezone: w.timezone.trim() };
}

export function WhenFields({
  value,
  onChange,
  errors,
}: {
  value: When;
  onChange: (w: When) => void;
  errors: Errors;
}) {
  const set = (patch: Partial<When>) => onChange({ ...value, ...patch });
  return (
    <fieldset className="when" data-testid="campaign-when">
      <legend>When</legend>
      <label className="inline">
        <input
          type="radio"
          name="when"
          checked={value.mode === "now"}
          onChange={() => set({ mode: "now" })}
        />{" "}
        now, once
      </label>{" "}
      <label className="inline">
        <input
          type="radio"
          name="when"
          data-testid="when-schedule"
          checked={value.mode === "schedule"}
          onChange={() => set({ mode: "schedule" })}
        />{" "}
        on a schedule (each slot queues this campaign on the targets that are online and free)
      </label>
      {value.mode === "schedule" && (
        <div className="form-grid">
          <Field label="Repeat" name="rule" errors={errors}>
            <select
              id="f-rule"
              value={value.rule}
              onChange={(e) => set({ rule: e.target.value as When["rule"] })}
            >
              <option value="cron">by a cron expression</option>
              <option value="every">every N hours</option>
            </select>
          </Field>
          {value.rule === "cron" ? (
            <Field
              label="Cron expression"
              name="cron"
              errors={errors}
              hint="minute hour day month weekday, e.g. 0 2 * * * (02:00 daily)"
            >
              <input
                id="f-cron"
                className="mono"
                value={value.cron}
                onChange={(e) => set({ cron: e.target.value })}
              />
            </Field>
          ) : (
            <Field label="Every (hours)" name="every_hours" errors={errors} hint="1 to 8784">
              <input
                id="f-every_hours"
                inputMode="numeric"
                value={value.everyHours}
                onChange={(e) => set({ everyHours: e.target.value })}
              />
            </Field>
          )}
          <Field
            label="Time zone"
            name="timezone"
            errors={errors}
            hint="the cron expression's wall clock (IANA name)"
          >
            <input
              id="f-timezone"
              list="iowatt-time-zones"
              value={value.timezone}
              onChange={(e) => set({ timezone: e.target.value })}
            />
          </Field>
          <datalist id="iowatt-time-zones">
            {timeZones().map((z) => (
              <option key={z} value={z} />
            ))}
          </datalist>
        </div>
      )}
    </fieldset>
  );
}
