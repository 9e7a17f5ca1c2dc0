import { useQuery } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import type { CampaignCreate } from "../../client/types";
import { errorMessage } from "../../lib/errors";
import { formatSpan, type SweepText } from "../../lib/matrix";
import { campaignPlanQuery } from "../../queries/campaigns";
import { type Errors, Field } from "../Field";
import "./matrix.css";

const FIELDS: readonly { key: keyof SweepText; label: string; hint: string; error: string }[] = [
  { key: "bs", label: "Block sizes", hint: "e.g. 4k, 64k, 1m", error: "sweep_bs" },
  { key: "qd", label: "Queue depths", hint: "e.g. 1, 8, 32", error: "sweep_qd" },
  { key: "threads", label: "Threads", hint: "fio's numjobs, e.g. 1, 4", error: "sweep_threads" },
  { key: "read", label: "Read %", hint: "of mixed jobs, e.g. 0, 70, 100", error: "sweep_read" },
];

/** The sweep inputs: each a list; a cell per combination, set on every job of each workload. */
export function SweepFields({
  value,
  onChange,
  errors,
}: {
  value: SweepText;
  onChange: (v: SweepText) => void;
  errors: Errors;
}) {
  return (
    <fieldset className="matrix" data-testid="campaign-sweep">
      <legend>Sweep (optional)</legend>
      <p className="muted small">
        Every combination of the values runs on every target, each set on every job of each block
        workload; empty: the workloads as saved.
      </p>
      <div className="form-grid">
        {FIELDS.map((f) => (
          <Field key={f.key} label={f.label} name={f.error} errors={errors} hint={f.hint}>
            <input
              id={`f-${f.error}`}
              className="mono"
              value={value[f.key]}
              onChange={(e) => onChange({ ...value, [f.key]: e.target.value })}
            />
          </Field>
        ))}
      </div>
    </fieldset>
  );
}

function useDebounced<T>(value: T, ms: number): T {
  const [v, setV] = useState(value);
  useEffect(() => {
    const t = setTimeout(() => setV(value), ms);
    return () => clearTimeout(t);
  }, [value, ms]);
  return v;
}

/** The server's expansion of the campaign before it is queued: cells, runs, measuring time. */
export function PlanSummary({
  body,
  perSlot = false,
}: {
  body: CampaignCreate | null;
  /** on a schedule: a target set's targets are chosen at each slot */
  perSlot?: boolean;
}) {
  const debounced = useDebounced(body, 400);
  const q = useQuery(campaignPlanQuery(debounced));
  if (body === null) return null;
  if (q.error) {
    return (
      <p className="field-error small" data-testid="campaign-plan-error">
        {errorMessage(q.error)}
      </p>
    );
  }
  const p = q.data;
  if (!p) return <p className="muted small">working out the runs…</p>;
  const cells = p.cells.length;
  const shown = p.cells.slice(0, 12);
  const oneWorkload = new Set(p.cells.map((c) => c.workload)).size === 1;
  return (
    <div className="small" data-testid="campaign-plan">
      <p>
        {cells} {cells === 1 ? "cell" : "cells"} × {p.targets} target{p.targets === 1 ? "" : "s"} ×{" "}
        {p.repeats} repeat{p.repeats === 1 ? "" : "s"} = <strong>{p.runs} runs</strong>
        {p.measure_s != null
          ? `, measuring ${formatSpan(p.measure_s)} in all (plus idle baselines and set-up)`
          : " (a size-bound workload: how long depends on the device)"}
        {p.per_slot && (perSlot ? " per slot" : "")}
      </p>
      {p.per_slot && (
        <p className="muted" data-testid="campaign-plan-per-slot">
          Counted on the targets the hosts list now, of agents online now
          {p.left_out.length > 0 ? ` (${p.left_out.length} left out now)` : ""}:{" "}
          {perSlot ? "each slot chooses again" : "chosen again when it is queued"}, and each host's
          policy is asked then (a target it refuses for this workload is left out with its reason).
        </p>
      )}
      {cells > 1 && (
        <p className="muted">
          {shown
            .map((c) => [oneWorkload ? "" : c.workload, c.label].filter(Boolean).join(" · "))
            .join("; ")}
          {cells > shown.length ? `; … ${cells - shown.length} more` : ""}
        </p>
      )}
    </div>
  );
}
