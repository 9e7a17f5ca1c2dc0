import type { JobSpec } from "../../client/types";

/** The tooltip of a setting an imported file did not state. */
export const NOT_STATED = "not in the imported file";

type Setting = NonNullable<JobSpec["unstated"]>[number];

/** Whether an imported job's file left this setting out: the API answers it null, never a default. */
export function unstated(j: Pick<JobSpec, "unstated">, key: Setting): boolean {
  return (j.unstated ?? []).includes(key);
}

/** "—" for a setting the imported file did not state. */
export function NotStated() {
  return (
    <span className="muted" data-testid="not-stated" title={NOT_STATED}>
      —
    </span>
  );
}
