import type { WorkloadRead } from "../../client/types";
import { errorMessage } from "../../lib/errors";
import {
  baseScale,
  describeFileSet,
  describeRuntime,
  kindOf,
  parseScale,
  specOf,
} from "../../lib/fileWorkload";
import { type Errors, Field } from "../Field";
import { useFileFacts } from "./useFileFacts";
import "./fileWorkload.css";

/**
 * The scale a user types is the file set's scale against the workload as written (vdbench: the
 * parameter file, whose preset already has a small scale; PostMark: its files and transactions,
 * 1 = as saved). The run's `scale` is the factor on the saved workload: typed ÷ the saved scale.
 * Null when the text is not a scale; undefined when it is the saved one (nothing to send).
 */
export function runScaleFactor(w: WorkloadRead, text: string): number | null | undefined {
  const typed = parseScale(text);
  if (typed === null) return null;
  const s0 = baseScale(specOf(w));
  const factor = Number((typed / s0).toPrecision(12));
  return factor === 1 ? undefined : factor;
}

/** What the scale field starts at: the workload's own scale (vdbench) or 1. */
export function defaultScaleText(w: WorkloadRead): string {
  return String(baseScale(specOf(w)));
}

/**
 * New run / campaign: the scale of a file workload, with the file set and time it gives shown as
 * the user types (the engine's facts at that scale: useFileFacts).
 */
export function ScaleField({
  workload,
  value,
  onChange,
  errors,
  name = "scale",
}: {
  workload: WorkloadRead;
  value: string;
  onChange: (text: string) => void;
  errors: Errors;
  name?: string;
}) {
  const spec = specOf(workload);
  const kind = kindOf(spec);
  const factor = runScaleFactor(workload, value);
  const s0 = baseScale(spec);
  const at = useFileFacts(workload, factor === null ? null : (factor ?? 1));
  const full = useFileFacts(workload, kind === "vdbench" && s0 !== 1 ? 1 / s0 : null);
  if (kind === "block") return null;
  const f = at.facts;
  return (
    <>
      <Field
        label="Scale"
        name={name}
        errors={errors}
        hint={
          kind === "vdbench"
            ? "of the parameter file as written (1 = full size): files, file sizes, elapsed"
            : "files and transactions × this (1 = as saved)"
        }
      >
        <input
          id={`f-${name}`}
          name={name}
          inputMode="decimal"
          value={value}
          onChange={(e) => onChange(e.target.value)}
          data-testid="scale-input"
        />
      </Field>
      <div className="small span-2 scale-estimate" data-testid="scale-estimate">
        {factor === null ? (
          <span className="field-error">enter a number above 0, at most 1000</span>
        ) : f ? (
          <>
            <strong data-testid="scale-fileset">
              File set: {describeFileSet(f)}; duration {describeRuntime(f, f.transactions)}
            </strong>
            {kind === "vdbench" && full.facts && (
              <span className="muted" data-testid="scale-full">
                {" "}
                — full size (scale 1): {describeFileSet(full.facts)}, {describeRuntime(full.facts)}
              </span>
            )}
            <br />
            <span className="muted">
              The engine's figures for this scale; the result records the scale that ran.
            </span>
          </>
        ) : at.pending ? (
          <span className="muted">asking the engine for the file set at this scale…</span>
        ) : (
          <span className="field-error">
            {at.error ? errorMessage(at.error) : "the file set's size is not known yet"}
          </span>
        )}
      </div>
    </>
  );
}
