import "./more-targets.css";
import type { Errors } from "../../components/Field";
import { TargetSelect } from "../../components/Policy/TargetSelect";
import { type HostPolicy, MAX_TARGETS, type PolicyTarget } from "../../lib/policy";
import { targetErrorKey } from "./plan";

/** A multi-target run's other targets (the first is the form's Target field): each a target of
 * the same host, run at the same time as the first, up to the one limit of a run's targets. */
export function MoreTargets({
  policy,
  more,
  chosen,
  nextTarget,
  multiTarget,
  multiNote,
  errors,
  onAdd,
  onSet,
  onRemove,
}: {
  policy: HostPolicy | null;
  /** the other targets as chosen (paths) */
  more: readonly string[];
  /** every target the run goes to, the first included */
  chosen: readonly PolicyTarget[];
  nextTarget: PolicyTarget | undefined;
  multiTarget: boolean;
  multiNote: string | null;
  errors: Errors;
  onAdd: (path: string) => void;
  onSet: (index: number, path: string) => void;
  onRemove: (index: number) => void;
}) {
  if (!multiTarget && !multiNote) return null;
  const taken = new Set(chosen.map((t) => t.path));
  const n = chosen.length;
  return (
    <div className="span-all more-targets" data-testid="more-targets">
      {multiTarget &&
        more.map((path, i) => {
          const key = targetErrorKey(i + 1);
          const err = errors[key];
          const id = `f-target-${i + 1}`;
          return (
            // biome-ignore lint/suspicious/noArrayIndexKey: a target's place in the run is its identity
            <div key={i} className={`field more-target${err ? " has-error" : ""}`}>
              <label htmlFor={id} className="more-target-label">
                Target {i + 2}, at the same time
              </label>
              <div className="more-target-row">
                <TargetSelect
                  id={id}
                  policy={policy}
                  value={path}
                  onChange={(p) => onSet(i, p)}
                  testId="more-target-select"
                  taken={taken}
                />
                <button
                  type="button"
                  className="btn btn-small"
                  onClick={() => onRemove(i)}
                  aria-label={`Remove target ${i + 2}`}
                  data-testid="more-target-remove"
                >
                  Remove
                </button>
              </div>
              {err && (
                <small
                  className="field-error"
                  data-testid={`field-error-${key}`}
                  data-source={err.source}
                  role="alert"
                >
                  {err.message}
                </small>
              )}
            </div>
          );
        })}
      {multiTarget && (
        <div className="more-targets-actions">
          <button
            type="button"
            className="btn btn-small"
            disabled={!nextTarget}
            onClick={() => nextTarget && onAdd(nextTarget.path)}
            data-testid="add-target"
          >
            Add a target
          </button>{" "}
          <small className="muted" data-testid="targets-note">
            {n > 1
              ? `${n} targets of this host at the same time: each target's results and the combined figure. The host's thread, bytes-written and memory limits are shared between them (each gets 1/${n}).`
              : `Run the workload on several targets of this host at the same time (at most ${MAX_TARGETS}).`}
            {n >= MAX_TARGETS
              ? ` At most ${MAX_TARGETS} targets in one run.`
              : !nextTarget
                ? " Every target the host allows is chosen."
                : ""}
          </small>
        </div>
      )}
      {multiNote && (
        <small className="muted" data-testid="targets-note">
          {multiNote}
        </small>
      )}
    </div>
  );
}
