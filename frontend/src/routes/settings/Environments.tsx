import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import type { EnvironmentCreate, EnvironmentRead } from "../../client/types";
import { DeleteButton } from "../../components/Deletion/DeleteButton";
import { TOPOLOGY_ALIASES, TopologyFields } from "../../components/Environment/TopologyFields";
import {
  describeTopology,
  type TopologyDraft,
  topologyDraftOf,
  topologyOf,
} from "../../components/Environment/topologyDraft";
import { type Errors, Field, FormFooter, formErrorsFrom } from "../../components/Field";
import { QueryState } from "../../components/QueryState";
import { TeamChip } from "../../components/Team/TeamChip";
import { ApiError, errorMessage } from "../../lib/errors";
import { formatGridIntensity, formatPricePerKwh, sig3 } from "../../lib/format";
import { useCan, useCurrentTeam, useListTeam, useMayDelete } from "../../lib/role";
import { deleteEnvironment } from "../../queries/deletion";
import { gridIntensitiesQuery } from "../../queries/energy";
import {
  createEnvironment,
  environmentsQuery,
  importGridSeries,
  suggestTopology,
  updateEnvironment,
} from "../../queries/environments";
import { keys } from "../../queries/keys";

const KINDS = ["local", "das", "san", "nas", "raid", "cloud", "other"] as const;

const ALIASES: Record<string, string> = {
  ...TOPOLOGY_ALIASES,
  name: "name",
  kind: "kind",
  region: "region",
  grid_g_per_kwh: "grid",
  grid_source: "grid_source",
  pue: "pue",
  electricity_price_per_kwh: "price",
  currency: "currency",
  description: "description",
  notes: "notes",
};

interface Draft {
  name: string;
  kind: EnvironmentCreate["kind"];
  description: string;
  region: string;
  grid: string;
  gridSource: string;
  pue: string;
  price: string;
  currency: string;
  notes: string;
  topology: TopologyDraft;
}

function draftOf(e?: EnvironmentRead): Draft {
  return {
    name: e?.name ?? "",
    kind: (KINDS.find((k) => k === e?.kind) ?? "local") as Draft["kind"],
    description: e?.description ?? "",
    region: e?.region ?? "",
    grid: e?.grid_g_per_kwh == null ? "" : String(e.grid_g_per_kwh),
    gridSource: e?.grid_source ?? "",
    pue: String(e?.pue ?? 1),
    price: e?.electricity_price_per_kwh == null ? "" : String(e.electricity_price_per_kwh),
    currency: e?.currency ?? "EUR",
    notes: e?.notes ?? "",
    topology: topologyDraftOf(e?.topology),
  };
}

/** Numbers typed by a person: "" → null; anything unparsable → NaN (the server says why). */
function num(s: string): number | null {
  return s.trim() === "" ? null : Number(s.replace(",", "."));
}

function bodyOf(d: Draft) {
  return {
    name: d.name.trim(),
    kind: d.kind,
    description: d.description,
    region: d.region || null,
    grid_g_per_kwh: num(d.grid),
    grid_source: d.gridSource.trim() || null,
    pue: num(d.pue) ?? 1,
    electricity_price_per_kwh: num(d.price),
    currency: d.currency.trim().toUpperCase() || "EUR",
    notes: d.notes,
    topology: topologyOf(d.topology, d.kind),
  };
}

function EnvironmentForm({
  env,
  onDone,
}: {
  env?: EnvironmentRead;
  onDone: (e: EnvironmentRead) => void;
}) {
  const qc = useQueryClient();
  const current = useCurrentTeam();
  const grids = useQuery(gridIntensitiesQuery());
  const [d, setD] = useState<Draft>(() => draftOf(env));
  const [errors, setErrors] = useState<Errors>({});
  const [formError, setFormError] = useState<string | null>(null);
  const save = useMutation({
    mutationFn: async () => {
      const body = bodyOf(d);
      if (env) return updateEnvironment(env.id, body);
      // created in the header's current team
      const teamId = current.team?.id;
      if (!teamId) throw new Error("you are in no team");
      return createEnvironment({ ...body, team_id: teamId });
    },
    onSuccess: (e) => {
      qc.invalidateQueries({ queryKey: keys.environments.all() });
      onDone(e);
    },
    onError: (err) => {
      const r = formErrorsFrom(err, ALIASES);
      setErrors(r.errors);
      setFormError(r.formError);
    },
  });
  const set = (k: keyof Draft) => (e: { target: { value: string } }) =>
    setD((x) => ({ ...x, [k]: e.target.value }));
  const region = grids.data?.find((g) => g.region === d.region);
  const [evidence, setEvidence] = useState<string[] | null>(null);
  const suggest = useMutation({
    mutationFn: () => suggestTopology(env?.id ?? ""),
    onSuccess: (s) => {
      setD((x) => ({ ...x, topology: topologyDraftOf(s.topology) }));
      setEvidence([`${s.agent_name ?? "agent"}: ${s.target_path ?? ""}`, ...s.evidence]);
    },
    onError: (err) => setEvidence([errorMessage(err)]),
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    setErrors({});
    setFormError(null);
    save.mutate();
  };
  return (
    <form className="card form" onSubmit={submit} data-testid="environment-form" noValidate>
      <h3>{env ? `Edit ${env.name}` : "New environment"}</h3>
      <div className="form-grid">
        <Field label="Name" name="name" errors={errors}>
          <input
            id="f-name"
            name="name"
            value={d.name}
            onChange={set("name")}
            placeholder="lab rack 3"
          />
        </Field>
        <Field label="Kind" name="kind" errors={errors}>
          <select id="f-kind" name="kind" value={d.kind} onChange={set("kind")}>
            {KINDS.map((k) => (
              <option key={k}>{k}</option>
            ))}
          </select>
        </Field>
        <Field
          label="Grid region"
          name="region"
          errors={errors}
          hint={
            region
              ? `${formatGridIntensity(region.g_per_kwh)} · ${region.source}, ${region.year}`
              : "the world average applies without one"
          }
        >
          <select
            id="f-region"
            name="region"
            value={d.region}
            onChange={set("region")}
            data-testid="region-select"
          >
            <option value="">— none —</option>
            {grids.data?.map((g) => (
              <option key={g.region} value={g.region}>
                {g.region} — {g.name} ({sig3(g.g_per_kwh)} gCO2e/kWh, {g.source} {g.year})
              </option>
            ))}
          </select>
        </Field>
        <Field
          label="Grid intensity override (gCO2e/kWh)"
          name="grid"
          errors={errors}
          hint="empty: the region's figure"
        >
          <input
            id="f-grid"
            name="grid"
            inputMode="decimal"
            value={d.grid}
            onChange={set("grid")}
          />
        </Field>
        <Field label="Source of the override" name="grid_source" errors={errors}>
          <input
            id="f-grid_source"
            name="grid_source"
            value={d.gridSource}
            onChange={set("gridSource")}
            placeholder="supplier's 2025 disclosure"
          />
        </Field>
        <Field
          label="PUE"
          name="pue"
          errors={errors}
          hint="1.0 = no overhead; a typical data centre is 1.3–1.6"
        >
          <input id="f-pue" name="pue" inputMode="decimal" value={d.pue} onChange={set("pue")} />
        </Field>
        <Field label="Electricity price per kWh" name="price" errors={errors}>
          <input
            id="f-price"
            name="price"
            inputMode="decimal"
            value={d.price}
            onChange={set("price")}
          />
        </Field>
        <Field label="Currency" name="currency" errors={errors} hint="ISO code, e.g. EUR, USD">
          <input
            id="f-currency"
            name="currency"
            value={d.currency}
            onChange={set("currency")}
            maxLength={3}
          />
        </Field>
        <TopologyFields
          kind={d.kind}
          draft={d.topology}
          errors={errors}
          onChange={(patch) => setD((x) => ({ ...x, topology: { ...x.topology, ...patch } }))}
        />
        {env && (
          <div className="span-2 small" data-testid="topology-suggest">
            <button
              type="button"
              className="btn btn-small"
              disabled={suggest.isPending}
              onClick={() => suggest.mutate()}
              data-testid="suggest-topology"
            >
              {suggest.isPending ? "Reading…" : "Fill in from the agent's inventory"}
            </button>{" "}
            <span className="muted">
              the newest run's host and path: file system, btrfs/md/LVM level, members
            </span>
            {evidence && (
              <ul className="muted" data-testid="topology-evidence">
                {evidence.map((l) => (
                  <li key={l}>{l}</li>
                ))}
              </ul>
            )}
          </div>
        )}
        <Field label="Description" name="description" errors={errors}>
          <input
            id="f-description"
            name="description"
            value={d.description}
            onChange={set("description")}
          />
        </Field>
        <Field
          label="Notes"
          name="notes"
          errors={errors}
          hint="the team's notes: cabling, firmware, quirks"
        >
          <textarea
            id="f-notes"
            name="notes"
            rows={3}
            value={d.notes}
            onChange={set("notes")}
            maxLength={20000}
            data-testid="environment-notes-input"
          />
        </Field>
      </div>
      <FormFooter
        error={formError}
        pending={save.isPending}
        label="Save"
        pendingLabel="Saving…"
        testId="save-environment"
      />
    </form>
  );
}

function TopologyRow({ label, value }: { label: string; value: string }) {
  return (
    <>
      <dt>{label}</dt>
      <dd data-testid="environment-topology">{value}</dd>
    </>
  );
}

/** Upload of an hourly intensity series (CSV: hour_utc,g_per_kwh); the server's line errors are shown. */
function GridSeriesUpload({ env }: { env: EnvironmentRead }) {
  const qc = useQueryClient();
  const [message, setMessage] = useState<{ ok: boolean; lines: string[] } | null>(null);
  const upload = useMutation({
    mutationFn: (text: string) => importGridSeries(env.id, text),
    onSuccess: (r) => {
      qc.invalidateQueries({ queryKey: keys.environments.all() });
      setMessage({
        ok: true,
        lines: [`Imported ${r.hours} hours, ${r.first_hour_utc} to ${r.last_hour_utc} (UTC).`],
      });
    },
    onError: (err) => {
      const lines =
        err instanceof ApiError && err.fieldErrors.length > 0
          ? err.fieldErrors.map((f) => {
              const m = /line\.(\d+)/.exec(f.field);
              return m ? `line ${m[1]}: ${f.message}` : f.message;
            })
          : [errorMessage(err)];
      setMessage({ ok: false, lines });
    },
  });
  return (
    <div className="small" data-testid="grid-upload">
      <label className="inline" style={{ flexWrap: "wrap", maxWidth: "100%" }}>
        Hourly series (CSV <span className="mono">hour_utc,g_per_kwh</span>):{" "}
        <input
          style={{ maxWidth: "100%" }}
          type="file"
          accept=".csv,text/csv"
          data-testid="grid-file"
          onChange={async (e) => {
            const file = e.target.files?.[0];
            if (file) upload.mutate(await file.text());
            e.target.value = "";
          }}
        />
      </label>
      {upload.isPending && <span className="muted"> uploading…</span>}
      {message && (
        <div
          className={`alert ${message.ok ? "alert-info" : "alert-error"}`}
          data-testid="grid-upload-result"
        >
          {message.lines.map((l) => (
            <div key={l}>{l}</div>
          ))}
        </div>
      )}
    </div>
  );
}

/** Admins delete an environment; runs that name it are listed first and detached on "Delete anyway". */
function DeleteEnvironment({ env }: { env: EnvironmentRead }) {
  const qc = useQueryClient();
  if (!useMayDelete(env.team_id)) return null;
  return (
    <DeleteButton
      label="Delete"
      title={`Delete the environment ${env.name}?`}
      testId="delete-environment"
      forceLabel="Delete anyway (keep the runs, without it)"
      onDelete={(force) => deleteEnvironment(env.id, force)}
      onDone={() => {
        qc.invalidateQueries({ queryKey: keys.environments.all() });
        qc.invalidateQueries({ queryKey: keys.runs.lists() });
      }}
    >
      <p>Its settings and its hourly grid series go.</p>
    </DeleteButton>
  );
}

export function Environments() {
  const list = useListTeam();
  const q = useQuery({ ...environmentsQuery(list.teamId), enabled: list.ready });
  const [editing, setEditing] = useState<string | "new" | null>(null);
  const can = useCan();
  return (
    <section>
      <div className="page-head">
        <h1>Environments</h1>
        {can("environment.edit") && (
          <div className="actions">
            <button
              type="button"
              className="btn btn-primary"
              onClick={() => setEditing("new")}
              data-testid="new-environment"
            >
              New environment
            </button>
          </div>
        )}
      </div>
      <p className="muted small">
        Where runs happen: the storage topology (RAID, controller, fabric, NAS, file system) that
        compare groups by, and the grid's carbon intensity, the site's PUE and the price of
        electricity that turn a run's energy into CO2 and cost. Each run keeps the environment as it
        was when it was queued.
      </p>
      {editing === "new" && <EnvironmentForm onDone={() => setEditing(null)} />}
      <QueryState isPending={q.isPending} error={q.error} />
      {q.data && q.data.items.length === 0 && <p className="muted">No environments yet.</p>}
      {q.data?.items.map((e) => (
        <div className="card" key={e.id} data-testid="environment-row">
          <div className="page-head">
            <h3>
              {e.name} <span className="muted small">{e.kind}</span>
              <TeamChip teamId={e.team_id} />
            </h3>
            <div className="actions">
              {can("environment.edit", e.team_id) && (
                <button
                  type="button"
                  className="btn btn-small"
                  data-testid="edit-environment"
                  onClick={() => setEditing(editing === e.id ? null : e.id)}
                >
                  {editing === e.id ? "Close" : "Edit"}
                </button>
              )}
              <DeleteEnvironment env={e} />
            </div>
          </div>
          <dl className="facts">
            <dt>Grid intensity</dt>
            <dd data-testid="effective-intensity">
              {formatGridIntensity(e.effective_g_per_kwh)}{" "}
              <span className="muted">({e.effective_source})</span>
            </dd>
            <dt>Region</dt>
            <dd>{e.region ?? "—"}</dd>
            <dt>Override</dt>
            <dd>
              {e.grid_g_per_kwh == null
                ? "—"
                : `${formatGridIntensity(e.grid_g_per_kwh)} (${e.grid_source ?? "no source"})`}
            </dd>
            <dt>Hourly series</dt>
            <dd>{e.hourly_hours > 0 ? `${e.hourly_hours} hours` : "—"}</dd>
            <dt>PUE</dt>
            <dd>{sig3(e.pue)}</dd>
            <dt>Electricity</dt>
            <dd>{formatPricePerKwh(e.electricity_price_per_kwh, e.currency)}</dd>
            {describeTopology(e.topology).map(([k, v]) => (
              <TopologyRow key={k} label={k} value={v} />
            ))}
            {e.notes && (
              <>
                <dt>Notes</dt>
                <dd className="pre-wrap" data-testid="environment-notes">
                  {e.notes}
                </dd>
              </>
            )}
          </dl>
          {editing === e.id && (
            <>
              <EnvironmentForm env={e} onDone={() => setEditing(null)} />
              <GridSeriesUpload env={e} />
            </>
          )}
        </div>
      ))}
    </section>
  );
}
