// One candidate of a review: device model × count × protection × unit price, its failure rate
// and embodied carbon with their source, and where its performance comes from — a measured run,
// a run of a comparison, or published figures with their reference (then power is published too).
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import {
  addCandidate,
  type CandidateCreate,
  type CandidateRead,
  reviewKeys,
  updateCandidate,
} from "../../queries/reviews";
import { runsQuery } from "../../queries/runs";
import { FromEnvironment } from "../Environment/FromEnvironment";
import { type Errors, Field, FormFooter, formErrorsFrom } from "../Field";
import { decimalBytes, parseCapacity } from "./units";

export const PROTECTIONS = [
  "jbod",
  "raid0",
  "raid1",
  "raid5",
  "raid6",
  "raid10",
  "ec:K+M",
  "replica:N",
];

const ALIASES: Record<string, string> = {
  name: "name",
  model: "model",
  capacity_bytes: "capacity",
  unit_price: "price",
  afr: "afr",
  embodied_kg: "embodied",
  embodied_source: "embodied_source",
  media: "media",
  count: "count",
  protection: "protection",
  hot_spares: "hot_spares",
  over_provisioning: "over_provisioning",
  run_id: "run",
  run_ids: "runs",
  value: "perf_value",
  metric: "metric",
  reference: "reference",
  mb_s: "mb_s",
  idle_w: "idle_w",
  load_w: "load_w",
  per: "per",
  power: "power_reference",
};

type Source = "published" | "run" | "comparison";

function initial(c: CandidateRead | undefined) {
  return {
    name: c?.name ?? "",
    model: c?.model ?? "",
    capacity: c ? decimalBytes(c.capacity_bytes) : "",
    price: c?.unit_price ?? "",
    afr: c?.afr ?? "0",
    embodied: c?.embodied_kg ?? "",
    embodiedSource: c?.embodied_source ?? "",
    media: "",
    count: c ? String(c.count) : "2",
    protection: c?.protection ?? "raid1",
    hotSpares: c ? String(c.hot_spares) : "0",
    overProvisioning: c?.over_provisioning ?? "0",
    source: (c?.performance_source as Source | undefined) ?? "published",
    metric: c?.performance_metric ?? "iops",
    value: c?.performance_source === "published" ? (c.performance_value ?? "") : "",
    reference: c?.performance_source === "published" ? c.performance_reference : "",
    mbS: c?.performance_source === "published" ? (c.mb_s ?? "") : "",
    runId: c?.run_id ?? "",
    runIds: c?.run_ids ?? [],
    idleW:
      c?.power_source === "published" || c?.power_source === "estimated" ? (c.idle_w ?? "") : "",
    loadW:
      c?.power_source === "published" || c?.power_source === "estimated" ? (c.load_w ?? "") : "",
    per: c ? "set" : "drive",
    powerReference: c?.power_reference ?? "",
    estimated: c?.power_source === "estimated",
  };
}

/** A linked run's metric: IOPS, MB/s, or a QoS run's IOPS at its latency target (docs/qos.md). */
function runMetric(metric: string): "iops" | "mb_s" | "iops_at_target" {
  return metric === "mb_s" || metric === "iops_at_target" ? metric : "iops";
}

export function CandidateForm({
  reviewId,
  teamId,
  candidate,
  onDone,
}: {
  reviewId: string;
  teamId: string;
  /** the candidate to edit; none: a new one */
  candidate?: CandidateRead;
  onDone: () => void;
}) {
  const qc = useQueryClient();
  const [f, setF] = useState(() => initial(candidate));
  const set = (patch: Partial<typeof f>) => setF((o) => ({ ...o, ...patch }));
  const runs = useQuery({
    ...runsQuery({ team_id: teamId, status: "succeeded", limit: 200 }),
    enabled: f.source !== "published",
  });
  const [errors, setErrors] = useState<Errors>({});
  const [formError, setFormError] = useState<string | null>(null);

  const body = (): CandidateCreate | null => {
    const capacity = parseCapacity(f.capacity);
    if (capacity === null || capacity <= 0) {
      setErrors({ capacity: { message: "a capacity such as 600 GB or 1.8 TB", source: "client" } });
      return null;
    }
    const performance: CandidateCreate["performance"] =
      f.source === "published"
        ? {
            source: "published",
            metric: f.metric as "iops" | "rps" | "mb_s",
            value: f.value.trim(),
            reference: f.reference.trim(),
            mb_s: f.mbS.trim() === "" ? null : f.mbS.trim(),
          }
        : f.source === "run"
          ? {
              source: "run",
              run_id: f.runId,
              job_index: 0,
              metric: runMetric(f.metric),
            }
          : {
              source: "comparison",
              run_ids: f.runIds,
              run_id: f.runId,
              job_index: 0,
              metric: runMetric(f.metric),
            };
    const power =
      f.idleW.trim() !== "" || f.loadW.trim() !== ""
        ? {
            idle_w: f.idleW.trim(),
            load_w: f.loadW.trim(),
            per: f.per as "drive" | "set",
            reference: f.powerReference.trim(),
            estimated: f.estimated,
          }
        : null;
    return {
      name: f.name.trim(),
      device: {
        model: f.model.trim(),
        capacity_bytes: capacity,
        unit_price: f.price.trim(),
        afr: f.afr.trim() || "0",
        embodied_kg: f.embodied.trim() === "" ? null : f.embodied.trim(),
        embodied_source: f.embodiedSource.trim() === "" ? null : f.embodiedSource.trim(),
        media: f.media === "" ? null : (f.media as "hdd" | "ssd" | "ram"),
      },
      count: Number(f.count),
      protection: f.protection.trim(),
      hot_spares: Number(f.hotSpares || "0"),
      over_provisioning: f.overProvisioning.trim() || "0",
      performance,
      power,
    };
  };

  const save = useMutation({
    mutationFn: async (b: CandidateCreate) =>
      candidate ? updateCandidate(reviewId, candidate.id, b) : addCandidate(reviewId, b),
    onSuccess: () => {
      qc.invalidateQueries({ queryKey: reviewKeys.all() });
      onDone();
    },
    onError: (err) => {
      const r = formErrorsFrom(err, ALIASES);
      setErrors(r.errors);
      setFormError(r.formError);
    },
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    setErrors({});
    setFormError(null);
    const b = body();
    if (b) save.mutate(b);
  };
  const succeeded = runs.data?.items ?? [];
  const pickable =
    f.source === "comparison" ? succeeded.filter((r) => f.runIds.includes(r.id)) : succeeded;
  return (
    <form className="card form" onSubmit={submit} noValidate data-testid="candidate-form">
      <h3>{candidate ? `Edit ${candidate.name}` : "Add a candidate"}</h3>
      <div className="form-grid">
        <Field label="Name" name="name" errors={errors}>
          <input id="f-name" value={f.name} onChange={(e) => set({ name: e.target.value })} />
        </Field>
        <Field label="Device model" name="model" errors={errors}>
          <input id="f-model" value={f.model} onChange={(e) => set({ model: e.target.value })} />
        </Field>
        <Field
          label="Capacity per drive"
          name="capacity"
          errors={errors}
          hint="e.g. 600 GB, 1.8 TB (GB = 10^9 bytes)"
        >
          <input
            id="f-capacity"
            value={f.capacity}
            onChange={(e) => set({ capacity: e.target.value })}
          />
        </Field>
        <Field
          label="Unit price"
          name="price"
          errors={errors}
          hint="one drive, in the review's currency"
        >
          <input
            id="f-price"
            inputMode="decimal"
            value={f.price}
            onChange={(e) => set({ price: e.target.value })}
          />
        </Field>
        <FromEnvironment
          teamId={teamId}
          onPick={(p) =>
            set({
              protection: p.protection,
              count: String(p.count),
              hotSpares: String(p.hotSpares),
            })
          }
        />
        <Field label="Drives" name="count" errors={errors} hint="hot spares included">
          <input
            id="f-count"
            inputMode="numeric"
            value={f.count}
            onChange={(e) => set({ count: e.target.value })}
          />
        </Field>
        <Field
          label="Protection"
          name="protection"
          errors={errors}
          hint="jbod, raid0/1/5/6/10, ec:K+M, replica:N"
        >
          <input
            id="f-protection"
            list="review-protections"
            value={f.protection}
            onChange={(e) => set({ protection: e.target.value })}
          />
        </Field>
        <datalist id="review-protections">
          {PROTECTIONS.map((p) => (
            <option key={p} value={p} />
          ))}
        </datalist>
        <Field label="Hot spares" name="hot_spares" errors={errors}>
          <input
            id="f-hot_spares"
            inputMode="numeric"
            value={f.hotSpares}
            onChange={(e) => set({ hotSpares: e.target.value })}
          />
        </Field>
        <Field
          label="Over-provisioning"
          name="over_provisioning"
          errors={errors}
          hint="share held back, 0–0.9"
        >
          <input
            id="f-over_provisioning"
            inputMode="decimal"
            value={f.overProvisioning}
            onChange={(e) => set({ overProvisioning: e.target.value })}
          />
        </Field>
        <Field label="Annual failure rate" name="afr" errors={errors} hint="0–1 (0.0044 = 0.44 %)">
          <input
            id="f-afr"
            inputMode="decimal"
            value={f.afr}
            onChange={(e) => set({ afr: e.target.value })}
          />
        </Field>
        <Field
          label="Embodied carbon per drive (kg CO2e)"
          name="embodied"
          errors={errors}
          hint="empty: the default for its media"
        >
          <input
            id="f-embodied"
            inputMode="decimal"
            value={f.embodied}
            onChange={(e) => set({ embodied: e.target.value })}
          />
        </Field>
        <Field label="Embodied carbon source" name="embodied_source" errors={errors}>
          <input
            id="f-embodied_source"
            value={f.embodiedSource}
            onChange={(e) => set({ embodiedSource: e.target.value })}
          />
        </Field>
        <Field label="Media" name="media" errors={errors} hint="for the embodied default">
          <select id="f-media" value={f.media} onChange={(e) => set({ media: e.target.value })}>
            <option value="">—</option>
            <option value="hdd">HDD</option>
            <option value="ssd">SSD</option>
            <option value="ram">RAM</option>
          </select>
        </Field>
      </div>
      <h4>Performance</h4>
      <div className="form-grid">
        <Field label="From" name="source" errors={errors}>
          <select
            id="f-source"
            value={f.source}
            onChange={(e) => set({ source: e.target.value as Source })}
          >
            <option value="published">published figures (datasheet, review, lab report)</option>
            <option value="run">a measured run</option>
            <option value="comparison">a run of a comparison</option>
          </select>
        </Field>
        <Field label="Metric" name="metric" errors={errors}>
          <select id="f-metric" value={f.metric} onChange={(e) => set({ metric: e.target.value })}>
            <option value="iops">IOPS</option>
            {f.source === "published" && <option value="rps">file reads/s (RPS)</option>}
            <option value="mb_s">MB/s (10^6 B/s)</option>
            {f.source !== "published" && (
              <option value="iops_at_target">IOPS at the latency target (a qos-* run)</option>
            )}
          </select>
        </Field>
        {f.source === "published" ? (
          <>
            <Field label="Value (the configuration's)" name="perf_value" errors={errors}>
              <input
                id="f-perf_value"
                inputMode="decimal"
                value={f.value}
                onChange={(e) => set({ value: e.target.value })}
              />
            </Field>
            <Field
              label="Reference"
              name="reference"
              errors={errors}
              hint="where the figure is published"
            >
              <input
                id="f-reference"
                value={f.reference}
                onChange={(e) => set({ reference: e.target.value })}
              />
            </Field>
            <Field label="MB/s too (optional)" name="mb_s" errors={errors}>
              <input
                id="f-mb_s"
                inputMode="decimal"
                value={f.mbS}
                onChange={(e) => set({ mbS: e.target.value })}
              />
            </Field>
          </>
        ) : (
          <>
            {f.source === "comparison" && (
              <Field
                label="The comparison's runs"
                name="runs"
                errors={errors}
                hint="ctrl-click for several"
              >
                <select
                  id="f-runs"
                  multiple
                  size={4}
                  value={f.runIds}
                  onChange={(e) =>
                    set({ runIds: Array.from(e.target.selectedOptions, (o) => o.value) })
                  }
                >
                  {succeeded.map((r) => (
                    <option key={r.id} value={r.id}>
                      {r.name} · {r.device_name ?? r.target_path}
                    </option>
                  ))}
                </select>
              </Field>
            )}
            <Field label="Run" name="run" errors={errors} hint="a succeeded run of the team">
              <select id="f-run" value={f.runId} onChange={(e) => set({ runId: e.target.value })}>
                <option value="">— pick a run —</option>
                {pickable.map((r) => (
                  <option key={r.id} value={r.id}>
                    {r.name} · {r.device_name ?? r.target_path}
                  </option>
                ))}
              </select>
            </Field>
          </>
        )}
      </div>
      <h4>
        Power {f.source === "published" ? "(published)" : "(a linked run's measured power wins)"}
      </h4>
      <div className="form-grid">
        <Field label="Idle (W)" name="idle_w" errors={errors}>
          <input
            id="f-idle_w"
            inputMode="decimal"
            value={f.idleW}
            onChange={(e) => set({ idleW: e.target.value })}
          />
        </Field>
        <Field label="Load (W)" name="load_w" errors={errors}>
          <input
            id="f-load_w"
            inputMode="decimal"
            value={f.loadW}
            onChange={(e) => set({ loadW: e.target.value })}
          />
        </Field>
        <Field label="Per" name="per" errors={errors}>
          <select id="f-per" value={f.per} onChange={(e) => set({ per: e.target.value })}>
            <option value="drive">drive (× count)</option>
            <option value="set">the whole set</option>
          </select>
        </Field>
        <Field label="Power reference" name="power_reference" errors={errors}>
          <input
            id="f-power_reference"
            value={f.powerReference}
            onChange={(e) => set({ powerReference: e.target.value })}
          />
        </Field>
        <label className="inline">
          <input
            type="checkbox"
            checked={f.estimated}
            onChange={(e) => set({ estimated: e.target.checked })}
          />{" "}
          an estimate (datasheet typicals)
        </label>
      </div>
      <FormFooter
        error={formError}
        pending={save.isPending}
        label={candidate ? "Save candidate" : "Add candidate"}
        pendingLabel="Saving…"
        testId="submit-candidate"
      />
    </form>
  );
}
