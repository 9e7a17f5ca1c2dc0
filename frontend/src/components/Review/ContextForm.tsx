// A review's context: the question, currency, horizon, duty cycle, tariff and grid intensity
// (from an environment unless overridden), PUE and the criteria weights. Creates a review
// (POST) or edits one (PATCH: the environment stays the one it was made from).
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { environmentsQuery } from "../../queries/environments";
import {
  CRITERIA,
  type Criterion,
  createReview,
  type ReviewCreate,
  type ReviewRead,
  reviewKeys,
  updateReview,
} from "../../queries/reviews";
import { type Errors, Field, FormFooter, formErrorsFrom } from "../Field";

const ALIASES: Record<string, string> = {
  name: "name",
  question: "question",
  currency: "currency",
  horizon_years: "horizon",
  duty_cycle: "duty",
  tariff_per_kwh: "tariff",
  tariff_source: "tariff_source",
  grid_g_per_kwh: "grid",
  grid_source: "grid_source",
  pue: "pue",
  environment_id: "environment",
  weights: "weights",
};

const DEFAULT_WEIGHTS: Partial<Record<Criterion, string>> = {
  tco: "1",
  performance: "1",
  co2e_lifetime: "1",
};

/** The text of an optional number: "" → null (the environment's figure). */
function optional(text: string): string | null {
  return text.trim() === "" ? null : text.trim();
}

export function ContextForm({
  teamId,
  review,
  onDone,
}: {
  teamId: string;
  /** the review to edit; none: a new one */
  review?: ReviewRead;
  onDone: (r: ReviewRead) => void;
}) {
  const qc = useQueryClient();
  const envs = useQuery(environmentsQuery(teamId));
  const [name, setName] = useState(review?.name ?? "");
  const [question, setQuestion] = useState(review?.question ?? "");
  const [currency, setCurrency] = useState(review?.currency ?? "USD");
  const [horizon, setHorizon] = useState(review?.horizon_years ?? "5");
  const [duty, setDuty] = useState(review?.duty_cycle ?? "0.5");
  const [environment, setEnvironment] = useState(review?.environment_id ?? "");
  const [tariff, setTariff] = useState(review ? review.tariff_per_kwh : "");
  const [tariffSource, setTariffSource] = useState(review ? review.tariff_source : "");
  const [grid, setGrid] = useState(review ? review.grid_g_per_kwh : "");
  const [gridSource, setGridSource] = useState(review ? review.grid_source : "");
  const [pue, setPue] = useState(review?.pue ?? "");
  const [weights, setWeights] = useState<Partial<Record<Criterion, string>>>(
    review
      ? Object.fromEntries(Object.entries(review.weights).map(([k, v]) => [k, String(v)]))
      : DEFAULT_WEIGHTS,
  );
  const [errors, setErrors] = useState<Errors>({});
  const [formError, setFormError] = useState<string | null>(null);
  const env = envs.data?.items.find((e) => e.id === environment);

  const save = useMutation({
    mutationFn: async () => {
      const w = Object.fromEntries(
        CRITERIA.map((c) => [c.key, (weights[c.key] ?? "").trim()]).filter(([, v]) => v !== ""),
      ) as NonNullable<ReviewCreate["weights"]>;
      const common = {
        name: name.trim(),
        question,
        currency: currency.trim().toUpperCase(),
        horizon_years: horizon.trim(),
        duty_cycle: duty.trim(),
        tariff_per_kwh: optional(tariff),
        tariff_source: optional(tariffSource),
        grid_g_per_kwh: optional(grid),
        grid_source: optional(gridSource),
        pue: optional(pue),
        weights: w,
      };
      if (review) return updateReview(review.id, common);
      return createReview({ ...common, team_id: teamId, environment_id: environment || null });
    },
    onSuccess: (r) => {
      qc.invalidateQueries({ queryKey: reviewKeys.all() });
      onDone(r);
    },
    onError: (err) => {
      const r = formErrorsFrom(err, {
        ...ALIASES,
        ...Object.fromEntries(CRITERIA.map((c) => [c.key, "weights"])),
      });
      setErrors(r.errors);
      setFormError(r.formError);
    },
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    setErrors({});
    setFormError(null);
    if (name.trim() === "") {
      setErrors({ name: { message: "a review needs a name", source: "client" } });
      return;
    }
    save.mutate();
  };
  const fromEnv = (what: string, value: unknown) =>
    env && value != null
      ? `empty: ${env.name}'s ${what} (${String(value)})`
      : "empty: the environment's";
  return (
    <form className="card form" onSubmit={submit} noValidate data-testid="review-context-form">
      <h3>{review ? "Edit the context" : "New review"}</h3>
      <div className="form-grid">
        <Field label="Name" name="name" errors={errors}>
          <input id="f-name" value={name} onChange={(e) => setName(e.target.value)} />
        </Field>
        <Field label="Currency (ISO 4217)" name="currency" errors={errors}>
          <input
            id="f-currency"
            value={currency}
            maxLength={3}
            onChange={(e) => setCurrency(e.target.value)}
          />
        </Field>
        <Field label="The question" name="question" errors={errors} className="span-2">
          <textarea
            id="f-question"
            rows={2}
            value={question}
            onChange={(e) => setQuestion(e.target.value)}
            placeholder="Which drives for the new file server?"
          />
        </Field>
        <Field label="Horizon (years)" name="horizon" errors={errors} hint="0.1–50">
          <input
            id="f-horizon"
            inputMode="decimal"
            value={horizon}
            onChange={(e) => setHorizon(e.target.value)}
          />
        </Field>
        <Field
          label="Duty cycle"
          name="duty"
          errors={errors}
          hint="share of the hours under load, 0–1 (the rest idle)"
        >
          <input
            id="f-duty"
            inputMode="decimal"
            value={duty}
            onChange={(e) => setDuty(e.target.value)}
          />
        </Field>
        <Field
          label="Environment"
          name="environment"
          errors={errors}
          hint={
            review ? "fixed once the review exists" : "tariff, grid intensity and PUE come from it"
          }
        >
          <select
            id="f-environment"
            value={environment}
            disabled={review !== undefined}
            onChange={(e) => setEnvironment(e.target.value)}
          >
            <option value="">— none —</option>
            {envs.data?.items.map((e) => (
              <option key={e.id} value={e.id}>
                {e.name}
              </option>
            ))}
          </select>
        </Field>
        <Field
          label={`Tariff (${currency || "…"}/kWh)`}
          name="tariff"
          errors={errors}
          hint={fromEnv("price", env?.electricity_price_per_kwh)}
        >
          <input
            id="f-tariff"
            inputMode="decimal"
            value={tariff}
            onChange={(e) => setTariff(e.target.value)}
          />
        </Field>
        <Field label="Tariff source" name="tariff_source" errors={errors}>
          <input
            id="f-tariff_source"
            value={tariffSource}
            onChange={(e) => setTariffSource(e.target.value)}
          />
        </Field>
        <Field
          label="Grid intensity (gCO2e/kWh)"
          name="grid"
          errors={errors}
          hint={fromEnv("grid intensity", env?.effective_g_per_kwh)}
        >
          <input
            id="f-grid"
            inputMode="decimal"
            value={grid}
            onChange={(e) => setGrid(e.target.value)}
          />
        </Field>
        <Field label="Grid source" name="grid_source" errors={errors}>
          <input
            id="f-grid_source"
            value={gridSource}
            onChange={(e) => setGridSource(e.target.value)}
          />
        </Field>
        <Field label="PUE" name="pue" errors={errors} hint={fromEnv("PUE", env?.pue)}>
          <input
            id="f-pue"
            inputMode="decimal"
            value={pue}
            onChange={(e) => setPue(e.target.value)}
          />
        </Field>
      </div>
      <h4>Criteria weights</h4>
      <p className="muted small">
        Each weighted criterion is scored against the best candidate (1 = best); the ranking is the
        weighted mean. Empty or 0: not counted.
      </p>
      {errors.weights && (
        <p className="field-error" role="alert" data-testid="field-error-weights">
          {errors.weights.message}
        </p>
      )}
      <div className="form-grid" data-testid="weights">
        {CRITERIA.map((c) => (
          <label key={c.key} className="field" htmlFor={`f-w-${c.key}`}>
            <span>
              {c.label} <small className="muted">({c.better} is better)</small>
            </span>
            <input
              id={`f-w-${c.key}`}
              inputMode="decimal"
              value={weights[c.key] ?? ""}
              onChange={(e) => setWeights((w) => ({ ...w, [c.key]: e.target.value }))}
            />
          </label>
        ))}
      </div>
      <FormFooter
        error={formError}
        pending={save.isPending}
        label={review ? "Save" : "Create review"}
        pendingLabel="Saving…"
        testId="submit-review"
      />
    </form>
  );
}
