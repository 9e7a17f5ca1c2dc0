import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useEffect, useRef, useState } from "react";
import { Link, useNavigate, useParams } from "react-router-dom";
import {
  type CampaignCreate,
  type CampaignRead,
  type CampaignTarget,
  FINAL_STATUSES,
} from "../client/types";
import { CommentThread } from "../components/Comments/CommentThread";
import { WorkloadScaleField } from "../components/DbWorkload/DbScaleField";
import { isDbKind } from "../components/DbWorkload/dbWorkload";
import { DeleteButton } from "../components/Deletion/DeleteButton";
import { type Errors, Field, FormFooter, formErrorsFrom } from "../components/Field";
import { defaultScaleText, runScaleFactor } from "../components/FileWorkload/ScaleField";
import { PlanSummary, SweepFields } from "../components/Matrix/MatrixFields";
import { DestructiveConfirm } from "../components/Policy/DestructiveConfirm";
import { type MeterChoice, MeterSelect } from "../components/Policy/MeterSelect";
import { DirectoryNote, NoTargets, TargetSelect } from "../components/Policy/TargetSelect";
import { QueryState } from "../components/QueryState";
import { ProgressBar } from "../components/Run/ProgressBar";
import { StatusBadge } from "../components/Run/StatusBadge";
import {
  initialWhen,
  ruleBody,
  type When,
  WhenFields,
} from "../components/Schedule/ScheduleFields";
import { ScheduleList } from "../components/Schedule/ScheduleList";
import { ScrollBox } from "../components/ScrollBox";
import { ShareButton } from "../components/Share/ShareButton";
import { TeamChip } from "../components/Team/TeamChip";
import { fileWrites, isFileKind, kindOf, specOf } from "../lib/fileWorkload";
import { formatRelative, formatTimestamp } from "../lib/format";
import { EMPTY_SWEEP, hasSweep, type SweepText, sweepOf } from "../lib/matrix";
import {
  commonMeters,
  needsDestructiveConfirm,
  type PolicyTarget,
  policyOf,
  workloadWrites,
  writeRefusal,
} from "../lib/policy";
import { useCan, useCurrentTeam, useListTeam, useMayDelete } from "../lib/role";
import { agentsQuery } from "../queries/agents";
import { campaignQuery, campaignsQuery, createCampaign } from "../queries/campaigns";
import { deleteCampaign } from "../queries/deletion";
import { environmentsQuery } from "../queries/environments";
import { keys } from "../queries/keys";
import { runsQuery } from "../queries/runs";
import { createSchedule, schedulesQuery } from "../queries/schedules";
import { workloadsQuery } from "../queries/workloads";

/** Finished runs / all runs of a campaign, in percent. */
/** How many of the campaign's runs have ended (succeeded, failed or cancelled). */
export function campaignDone(c: Pick<CampaignRead, "counts">): number {
  return FINAL_STATUSES.reduce((n, s) => n + (c.counts[s] ?? 0), 0);
}

export function campaignPercent(c: Pick<CampaignRead, "counts" | "run_ids">): number {
  if (c.run_ids.length === 0) return 0;
  return Math.round((100 * campaignDone(c)) / c.run_ids.length);
}

function Counts({ c }: { c: CampaignRead }) {
  return (
    <span className="small" data-testid="campaign-counts">
      {Object.entries(c.counts)
        .map(([s, n]) => `${n} ${s}`)
        .join(" · ")}
    </span>
  );
}

const ALIASES: Record<string, string> = {
  name: "name",
  workload_id: "workload",
  scale: "scale",
  repeats: "repeats",
  meter: "meter",
  idle_s: "idle",
  targets: "targets",
  target_set: "target_set",
  team_id: "target_set",
  agent_ids: "target_set",
  kinds: "target_set",
  agent_id: "targets",
  target_path: "targets",
  destructive: "targets",
  environment_id: "targets",
  bs_bytes: "sweep_bs",
  iodepth: "sweep_qd",
  numjobs: "sweep_threads",
  rwmixread: "sweep_read",
  workload_ids: "workloads",
  cron: "cron",
  every_hours: "every_hours",
  timezone: "timezone",
};

/** The kinds of listed target a target set may take, as the host policy names them. */
const TARGET_KINDS: readonly { value: TargetKind; label: string }[] = [
  { value: "directory", label: "directories (the agent's own file in each)" },
  { value: "file", label: "files (read-only unless the host allows writes)" },
  { value: "device", label: "devices (read only: a set never writes a raw device)" },
];
type TargetKind = NonNullable<NonNullable<CampaignCreate["target_set"]>["kinds"]>[number];

export function CampaignForm({ onClose }: { onClose?: () => void } = {}) {
  const navigate = useNavigate();
  const qc = useQueryClient();
  const { team } = useCurrentTeam();
  /** "list": the targets named here; "set": every agent's targets, chosen when it is queued. */
  const [pick, setPick] = useState<"list" | "set">("list");
  const [setKinds, setSetKinds] = useState<TargetKind[]>(["directory"]);
  const [setAgents, setSetAgents] = useState<string[]>([]);
  const [setEnv, setSetEnv] = useState("");
  const agents = useQuery(agentsQuery());
  const workloads = useQuery(workloadsQuery());
  const envs = useQuery(environmentsQuery());
  const [name, setName] = useState("");
  const [workloadId, setWorkloadId] = useState("");
  const [targets, setTargets] = useState<CampaignTarget[]>([
    { agent_id: "", target_path: "", environment_id: null },
  ]);
  const [repeats, setRepeats] = useState("3");
  const [meter, setMeter] = useState<MeterChoice>(null);
  const [idle, setIdle] = useState("");
  const [when, setWhen] = useState<When>(initialWhen);
  /** More saved workloads, each run like the first on every target (a matrix). */
  const [extra, setExtra] = useState<string[]>([]);
  const [sweepText, setSweepText] = useState<SweepText>(EMPTY_SWEEP);
  const [errors, setErrors] = useState<Errors>({});
  const [formError, setFormError] = useState<string | null>(null);
  /** The devices waiting for the typed confirmation of a destructive write. */
  const [confirming, setConfirming] = useState<PolicyTarget[] | null>(null);
  // external hosts (results uploaded from CI) run nothing from the server: never a target
  const runnable = agents.data?.items.filter((a) => a.kind !== "external") ?? [];
  // a target set is one team's: the current team's agents
  const teamAgents = runnable.filter((a) => a.team_id === team?.id);
  const firstAgent = runnable.find((a) => a.online)?.id ?? runnable[0]?.id ?? "";
  const effectiveWorkload = workloadId || workloads.data?.items[0]?.id || "";
  const chosen = workloads.data?.items.find((w) => w.id === effectiveWorkload);
  // a file workload (PostMark, vdbench) or a database one (TPC-H, heap/B-tree), as New run:
  // directory targets only, a scale instead of a length
  const db = chosen !== undefined && isDbKind(kindOf(specOf(chosen)));
  const file = db || (chosen !== undefined && isFileKind(kindOf(specOf(chosen))));
  const [scale, setScale] = useState<{ workload: string; text: string } | null>(null);
  const scaleText =
    chosen && scale?.workload === chosen.id ? scale.text : chosen ? defaultScaleText(chosen) : "1";
  const scaleFactor = chosen && file ? runScaleFactor(chosen, scaleText) : undefined;
  const writes = chosen
    ? db
      ? true
      : file
        ? fileWrites(specOf(chosen))
        : workloadWrites(chosen.spec.jobs)
    : false;
  // Each row: its agent's policy and the allowed target it names (the first one by default).
  const rows = targets.map((t) => {
    const policy = policyOf(agents.data?.items.find((a) => a.id === (t.agent_id || firstAgent)));
    const allowed = (policy?.targets ?? []).filter((x) => !file || x.kind === "directory");
    const target = allowed.find((x) => x.path === t.target_path) ?? allowed[0];
    const refusal = target && writes ? writeRefusal(target) : null;
    return { policy, target, refusal };
  });
  // One meter name goes to every host: offer the names all chosen hosts configured.
  const firstPolicy = rows[0]?.policy;
  const meterNames = commonMeters(rows.map((r) => r.policy));
  const meters = (firstPolicy?.meters ?? []).filter((m) => meterNames.includes(m.name));
  const sharedDefault = rows.every((r) => r.policy?.default_meter === firstPolicy?.default_meter)
    ? (firstPolicy?.default_meter ?? null)
    : null;
  const effectiveMeter: MeterChoice =
    meter === "" || meters.some((m) => m.name === meter) ? meter : null;
  const onError = (err: unknown) => {
    setConfirming(null);
    const r = formErrorsFrom(err, ALIASES);
    setErrors(r.errors);
    setFormError(r.formError);
  };
  const create = useMutation({
    mutationFn: createCampaign,
    onSuccess: (c) => {
      qc.invalidateQueries({ queryKey: keys.campaigns.all() });
      qc.invalidateQueries({ queryKey: keys.runs.lists() });
      navigate(`/campaigns/${c.id}`);
    },
    onError,
  });
  // on a schedule: the same campaign body, queued by the server at each slot
  const schedule = useMutation({
    mutationFn: createSchedule,
    onSuccess: () => {
      qc.invalidateQueries({ queryKey: keys.schedules.all() });
      onClose?.();
    },
    onError,
  });
  const pending = create.isPending || schedule.isPending;
  const setTarget = (i: number, patch: Partial<CampaignTarget>) =>
    setTargets((ts) => ts.map((t, j) => (j === i ? { ...t, ...patch } : t)));
  const swept = sweepOf(sweepText);
  const matrix = extra.length > 0 || hasSweep(swept.sweep);
  const isSet = pick === "set";
  const bodyFor = (destructive: boolean): CampaignCreate => ({
    name: name.trim(),
    workload_id: effectiveWorkload || null,
    workload: null,
    ...(isSet
      ? {
          targets: [],
          target_set: {
            team_id: team?.id ?? "",
            agent_ids: setAgents.filter((id) => teamAgents.some((a) => a.id === id)),
            kinds: setKinds,
            environment_id: setEnv || null,
          },
        }
      : {
          targets: targets.map((t, i) => ({
            ...t,
            agent_id: t.agent_id || firstAgent,
            target_path: rows[i]?.target?.path ?? "",
          })),
        }),
    repeats: Number(repeats),
    meter: effectiveMeter,
    idle_s: idle.trim() === "" ? null : Number(idle),
    destructive,
    ...(file && scaleFactor ? { scale: scaleFactor } : {}),
    workload_ids: extra.filter(Boolean),
    ...(hasSweep(swept.sweep) ? { sweep: swept.sweep } : {}),
  });
  // the server's expansion of a matrix, shown before it is queued
  const planBody =
    (matrix || isSet) &&
    effectiveWorkload &&
    Object.keys(swept.errors).length === 0 &&
    (isSet ? team !== null && setKinds.length > 0 : rows.every((r) => r.target))
      ? { ...bodyFor(false), name: name.trim() || "plan" } // the plan needs no name yet
      : null;
  const send = (destructive: boolean) => {
    const body = bodyFor(destructive);
    if (when.mode === "schedule")
      schedule.mutate({ name: body.name, ...ruleBody(when), campaign: body, enabled: true });
    else create.mutate(body);
  };
  const submit = (e: FormEvent) => {
    e.preventDefault();
    setErrors({});
    setFormError(null);
    if (file && scaleFactor === null) {
      setErrors({ scale: { message: "enter a number above 0, at most 1000", source: "client" } });
      return;
    }
    const sweepErrors = Object.entries(swept.errors);
    if (sweepErrors.length > 0) {
      const field = {
        bs: "sweep_bs",
        qd: "sweep_qd",
        threads: "sweep_threads",
        read: "sweep_read",
      };
      setErrors(
        Object.fromEntries(
          sweepErrors.map(([k, message]) => [
            field[k as keyof typeof field],
            { message: message ?? "", source: "client" as const },
          ]),
        ),
      );
      return;
    }
    if (isSet) {
      // the server chooses the targets (now, or at each slot) and leaves out what a host refuses
      if (setKinds.length === 0)
        setErrors({ target_set: { message: "choose at least one kind", source: "client" } });
      else send(false);
      return;
    }
    const missing = rows.findIndex((r) => !r.target);
    const refusedAt = rows.findIndex((r) => r.refusal);
    if (missing >= 0 || refusedAt >= 0) {
      const message =
        missing >= 0
          ? `target ${missing + 1}: its host allows no target yet`
          : `target ${refusedAt + 1}: ${rows[refusedAt]?.refusal}`;
      setErrors({ targets: { message, source: "client" } });
      return;
    }
    const devices = rows
      .map((r) => r.target)
      .filter((t): t is PolicyTarget => needsDestructiveConfirm(t, writes))
      .filter((t, i, all) => all.findIndex((x) => x.path === t.path) === i);
    // The second key: only the typed confirmation sets destructive (see DestructiveConfirm).
    if (devices.length > 0) setConfirming(devices);
    else send(false);
  };
  return (
    <form className="card form" onSubmit={submit} data-testid="campaign-form" noValidate>
      <h3>New campaign</h3>
      <div className="form-grid">
        <Field label="Name" name="name" errors={errors}>
          <input
            id="f-name"
            value={name}
            onChange={(e) => setName(e.target.value)}
            placeholder="HDD vs NVMe, 4k random"
          />
        </Field>
        <Field label="Workload" name="workload" errors={errors}>
          <select
            id="f-workload"
            value={effectiveWorkload}
            onChange={(e) => setWorkloadId(e.target.value)}
          >
            {workloads.data?.items.map((w) => (
              <option key={w.id} value={w.id}>
                {w.name}
                {isFileKind(kindOf(specOf(w))) || isDbKind(kindOf(specOf(w)))
                  ? ` (${kindOf(specOf(w))})`
                  : ""}
              </option>
            ))}
          </select>
        </Field>
        <Field
          label="More workloads"
          name="workloads"
          errors={errors}
          hint="each runs on every target too: a matrix"
        >
          <div className="stack-small" data-testid="campaign-more-workloads">
            {extra.map((id, i) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: rows have no identity but their position
              <div key={i} className="inline">
                <select
                  aria-label={`Workload ${i + 2}`}
                  value={id}
                  onChange={(e) =>
                    setExtra((xs) => xs.map((x, j) => (j === i ? e.target.value : x)))
                  }
                >
                  {workloads.data?.items.map((w) => (
                    <option key={w.id} value={w.id}>
                      {w.name}
                    </option>
                  ))}
                </select>{" "}
                <button
                  type="button"
                  className="btn btn-ghost btn-small"
                  onClick={() => setExtra((xs) => xs.filter((_, j) => j !== i))}
                >
                  remove
                </button>
              </div>
            ))}
            <button
              type="button"
              className="btn btn-small"
              data-testid="add-workload"
              onClick={() =>
                setExtra((xs) => [
                  ...xs,
                  workloads.data?.items.find(
                    (w) => w.id !== effectiveWorkload && !xs.includes(w.id),
                  )?.id ?? "",
                ])
              }
            >
              Add a workload
            </button>
          </div>
        </Field>
        {chosen && file && (
          <WorkloadScaleField
            workload={chosen}
            value={scaleText}
            onChange={(text) => setScale({ workload: chosen.id, text })}
            errors={errors}
          />
        )}
        <Field
          label="Repeats"
          name="repeats"
          errors={errors}
          hint="per target, 1–50; runs are interleaved"
        >
          <input
            id="f-repeats"
            inputMode="numeric"
            value={repeats}
            onChange={(e) => setRepeats(e.target.value)}
          />
        </Field>
        <Field
          label="Wattmeter"
          name="meter"
          errors={errors}
          hint="a meter every chosen host configured, or each host's default"
        >
          <MeterSelect
            id="f-meter"
            meters={meters}
            defaultMeter={sharedDefault}
            value={effectiveMeter}
            onChange={setMeter}
            perHostDefault
          />
        </Field>
        <Field
          label="Idle baseline (s)"
          name="idle"
          errors={errors}
          hint="empty: the agent's default"
        >
          <input
            id="f-idle"
            inputMode="decimal"
            value={idle}
            onChange={(e) => setIdle(e.target.value)}
          />
        </Field>
      </div>
      <h4>Targets</h4>
      <div className="inline" role="radiogroup" aria-label="Targets" data-testid="campaign-pick">
        <label className="inline">
          <input type="radio" name="pick" checked={!isSet} onChange={() => setPick("list")} /> the
          targets listed here
        </label>{" "}
        <label className="inline">
          <input
            type="radio"
            name="pick"
            checked={isSet}
            onChange={() => setPick("set")}
            data-testid="pick-set"
          />{" "}
          every agent's targets, chosen {when.mode === "schedule" ? "at each slot" : "when queued"}
        </label>
      </div>
      {file && <DirectoryNote />}
      {errors.targets && (
        <p className="field-error" role="alert" data-testid="field-error-targets">
          {errors.targets.message}
        </p>
      )}
      {isSet && (
        <TargetSetFields
          agents={teamAgents}
          kinds={setKinds}
          onKinds={setSetKinds}
          chosen={setAgents}
          onChosen={setSetAgents}
          env={setEnv}
          onEnv={setSetEnv}
          envs={envs.data?.items ?? []}
          errors={errors}
          perSlot={when.mode === "schedule"}
        />
      )}
      {!isSet && (
        <>
          <table className="table compact" data-testid="campaign-targets">
            <thead>
              <tr>
                <th>Agent</th>
                <th>Target (as the host allows)</th>
                <th>Environment</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {targets.map((t, i) => (
                // biome-ignore lint/suspicious/noArrayIndexKey: rows have no identity but their position
                <tr key={i}>
                  <td>
                    <select
                      aria-label={`Agent of target ${i + 1}`}
                      value={t.agent_id || firstAgent}
                      onChange={(e) => setTarget(i, { agent_id: e.target.value, target_path: "" })}
                    >
                      {runnable.map((a) => (
                        <option key={a.id} value={a.id}>
                          {a.name} ({a.online ? "online" : "offline"})
                        </option>
                      ))}
                    </select>
                  </td>
                  <td>
                    {agents.isPending ? (
                      <select aria-label={`Path of target ${i + 1}`} disabled>
                        <option>loading…</option>
                      </select>
                    ) : (rows[i]?.policy?.targets.length ?? 0) > 0 ? (
                      <TargetSelect
                        id={`f-target-${i}`}
                        label={`Path of target ${i + 1}`}
                        policy={rows[i]?.policy ?? null}
                        value={rows[i]?.target?.path ?? ""}
                        onChange={(path) => setTarget(i, { target_path: path })}
                        directoriesOnly={file}
                      />
                    ) : (
                      <NoTargets policy={rows[i]?.policy ?? null} />
                    )}
                    {rows[i]?.refusal && (
                      <small className="field-error" data-testid="row-refusal">
                        {rows[i]?.refusal}
                      </small>
                    )}
                  </td>
                  <td>
                    <select
                      aria-label={`Environment of target ${i + 1}`}
                      value={t.environment_id ?? ""}
                      onChange={(e) => setTarget(i, { environment_id: e.target.value || null })}
                    >
                      <option value="">— none —</option>
                      {envs.data?.items.map((e) => (
                        <option key={e.id} value={e.id}>
                          {e.name}
                        </option>
                      ))}
                    </select>
                  </td>
                  <td>
                    {targets.length > 1 && (
                      <button
                        type="button"
                        className="btn btn-ghost btn-small"
                        onClick={() => setTargets((ts) => ts.filter((_, j) => j !== i))}
                      >
                        remove
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          <button
            type="button"
            className="btn btn-small"
            data-testid="add-target"
            onClick={() =>
              setTargets((ts) => [...ts, { agent_id: "", target_path: "", environment_id: null }])
            }
          >
            Add target
          </button>
        </>
      )}
      <SweepFields value={sweepText} onChange={setSweepText} errors={errors} />
      {matrix || isSet ? (
        <PlanSummary body={planBody} perSlot={when.mode === "schedule"} />
      ) : (
        <p className="muted small">
          {targets.length} target{targets.length === 1 ? "" : "s"} × {repeats || "?"} repeats ={" "}
          {targets.length * (Number(repeats) || 0)} runs
          {when.mode === "schedule" ? " per slot" : ""}
        </p>
      )}
      <WhenFields value={when} onChange={setWhen} errors={errors} />
      <FormFooter
        error={formError}
        pending={pending}
        label={when.mode === "schedule" ? "Create schedule" : "Queue campaign"}
        pendingLabel={when.mode === "schedule" ? "Creating…" : "Queueing…"}
        testId="submit-campaign"
      />
      {confirming && (
        <DestructiveConfirm
          targets={confirming}
          pending={pending}
          onCancel={() => setConfirming(null)}
          onConfirm={() => send(true)}
        />
      )}
    </form>
  );
}

/** A target set's fields: which kinds of listed target, on which agents (none ticked: all). */
function TargetSetFields(props: {
  agents: { id: string; name: string; online: boolean }[];
  kinds: TargetKind[];
  onKinds: (k: TargetKind[]) => void;
  chosen: string[];
  onChosen: (ids: string[]) => void;
  env: string;
  onEnv: (id: string) => void;
  envs: { id: string; name: string }[];
  errors: Errors;
  perSlot: boolean;
}) {
  const flip = <T,>(xs: T[], x: T) => (xs.includes(x) ? xs.filter((y) => y !== x) : [...xs, x]);
  return (
    <fieldset className="target-set" data-testid="target-set">
      <legend>Every target the hosts list</legend>
      <p className="muted small">
        {props.perSlot ? "At each slot" : "When it is queued"}, the campaign takes every target its
        agents' hosts list (<code>iowatt-agent targets</code>) of these kinds; agents offline
        {props.perSlot ? " or busy" : ""} then, and targets a host refuses for this workload, are
        left out with the reason.
      </p>
      {props.errors.target_set && (
        <p className="field-error" role="alert" data-testid="field-error-target_set">
          {props.errors.target_set.message}
        </p>
      )}
      <div className="inline">
        {TARGET_KINDS.map((k) => (
          <label key={k.value} className="inline">
            <input
              type="checkbox"
              checked={props.kinds.includes(k.value)}
              onChange={() => props.onKinds(flip(props.kinds, k.value))}
            />{" "}
            {k.label}
          </label>
        ))}
      </div>
      <div className="inline" data-testid="target-set-agents">
        <span className="small">Agents (none ticked: every agent of the team):</span>
        {props.agents.map((a) => (
          <label key={a.id} className="inline">
            <input
              type="checkbox"
              checked={props.chosen.includes(a.id)}
              onChange={() => props.onChosen(flip(props.chosen, a.id))}
            />{" "}
            {a.name} <span className="muted small">({a.online ? "online" : "offline"})</span>
          </label>
        ))}
      </div>
      <label className="inline small">
        Environment{" "}
        <select
          aria-label="Environment of every target"
          value={props.env}
          onChange={(e) => props.onEnv(e.target.value)}
        >
          <option value="">— none —</option>
          {props.envs.map((e) => (
            <option key={e.id} value={e.id}>
              {e.name}
            </option>
          ))}
        </select>
      </label>
    </fieldset>
  );
}

export function Campaigns() {
  const list = useListTeam();
  const q = useQuery({ ...campaignsQuery(list.teamId), enabled: list.ready });
  const schedules = useQuery({ ...schedulesQuery(list.teamId), enabled: list.ready });
  const [open, setOpen] = useState(false);
  const can = useCan();
  return (
    <section>
      <div className="page-head">
        <h1>Campaigns</h1>
        {can("campaign.create") && (
          <div className="actions">
            <button
              type="button"
              className="btn btn-primary"
              onClick={() => setOpen(!open)}
              data-testid="new-campaign"
            >
              {open ? "Close" : "New campaign"}
            </button>
          </div>
        )}
      </div>
      <p className="muted small">
        A campaign queues one workload on several targets, repeated, and ends in their comparison,
        one column per target (host and path; two directories on one disk stay apart), or grouped by
        device and environment. A schedule queues the same campaign again at each slot (a cron
        expression in a time zone, or every N hours).
      </p>
      {open && can("campaign.create") && <CampaignForm onClose={() => setOpen(false)} />}
      {schedules.data && <ScheduleList items={schedules.data.items} />}
      {schedules.data && schedules.data.items.length > 0 && <h2>Queued campaigns</h2>}
      <QueryState isPending={q.isPending} error={q.error} />
      {q.data && q.data.items.length === 0 && <p className="muted">No campaigns yet.</p>}
      {q.data && q.data.items.length > 0 && (
        <table className="table" data-testid="campaigns-table">
          <thead>
            <tr>
              <th>Campaign</th>
              <th>Created</th>
              <th>Progress</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {q.data.items.map((c) => (
              <tr key={c.id}>
                <td>
                  <Link to={`/campaigns/${c.id}`}>{c.name}</Link>
                  <TeamChip teamId={c.team_id} />
                </td>
                <td title={formatTimestamp(c.created_at)}>{formatRelative(c.created_at)}</td>
                <td>
                  <ProgressBar percent={campaignPercent(c)} label={`${c.name}: runs done`} />{" "}
                  <Counts c={c} />
                </td>
                <td>
                  {c.done && (
                    <>
                      comparison <CompareLinks url={c.compare_url} primary={false} />
                    </>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

/** The campaign's comparison with its columns keyed by target (host and path) instead of the
 * server's device × environment: two directories on one disk are two columns. */
export function byTarget(compareUrl: string): string {
  const [path, query = ""] = compareUrl.split("?");
  const params = new URLSearchParams(query);
  params.set("group_by", "target");
  return `${path}?${params.toString().replaceAll("%2C", ",")}`;
}

function CompareLinks({ url, primary }: { url: string; primary: boolean }) {
  return (
    <>
      <Link
        className={primary ? "btn btn-primary" : undefined}
        to={byTarget(url)}
        data-testid="campaign-compare"
      >
        {primary ? "Compare by target" : "by target"}
      </Link>{" "}
      <Link className={primary ? "btn" : undefined} to={url} data-testid="campaign-compare-device">
        by device × environment
      </Link>
    </>
  );
}

/** Delete a campaign with its runs, or keep the runs (ADR 0021); admins, or the member who queued it. */
function CampaignDelete(props: {
  id: string;
  name: string;
  teamId: string;
  createdBy: string | null;
}) {
  const qc = useQueryClient();
  const navigate = useNavigate();
  const [keepRuns, setKeepRuns] = useState(false);
  if (!useMayDelete(props.teamId, props.createdBy)) return null;
  return (
    <DeleteButton
      label="Delete campaign"
      small={false}
      title={`Delete the campaign ${props.name}?`}
      testId="delete-campaign"
      onDelete={() => deleteCampaign(props.id, keepRuns)}
      onDone={() => {
        qc.invalidateQueries({ queryKey: keys.campaigns.all() });
        qc.invalidateQueries({ queryKey: keys.runs.lists() });
        navigate("/campaigns");
      }}
    >
      <p>Its runs (with their results) go too, unless you keep them:</p>
      <label className="inline">
        <input type="checkbox" checked={keepRuns} onChange={(e) => setKeepRuns(e.target.checked)} />{" "}
        keep the runs (they leave the campaign)
      </label>
    </DeleteButton>
  );
}

export function CampaignDetail() {
  const { id = "" } = useParams();
  const navigate = useNavigate();
  const q = useQuery(campaignQuery(id));
  // the table shows each run's name, status and target: neither its figures nor an active run's live
  // reports (polled every 2 s while one is active: up to 300 reports a running run each time)
  const runs = useQuery(runsQuery({ limit: 500, jobs: false, samples: false }));
  const agents = useQuery(agentsQuery());
  const wasDone = useRef<boolean | null>(null);
  const c = q.data;
  // Watching a campaign finish lands on its comparison; opening a finished one does not.
  useEffect(() => {
    if (!c) return;
    if (wasDone.current === false && c.done && (c.counts.succeeded ?? 0) >= 2)
      navigate(byTarget(c.compare_url));
    wasDone.current = c.done;
  }, [c, navigate]);
  if (!c) return <QueryState isPending={q.isPending} error={q.error} />;
  const agentName = (id: string) =>
    agents.data?.items.find((a) => a.id === id)?.name ?? id.slice(0, 8);
  const byId = new Map((runs.data?.items ?? []).map((r) => [r.id, r]));
  return (
    <section data-testid="campaign-detail">
      <div className="page-head">
        <h1>
          {c.name} <span className="muted small">{c.done ? "done" : "running"}</span>
        </h1>
        <div className="actions">
          {(c.counts.succeeded ?? 0) >= 2 && <CompareLinks url={c.compare_url} primary />}
          <CampaignDelete id={c.id} name={c.name} teamId={c.team_id} createdBy={c.created_by} />
          <ShareButton
            teamId={c.team_id}
            share={{ kind: "campaign", target: c.id }}
            defaultTitle={`Campaign ${c.name}`}
          />
        </div>
      </div>
      <div className="card">
        <ProgressBar percent={campaignPercent(c)} label={`${c.name}: runs done`} />
        <p>
          {campaignDone(c)} of {c.run_ids.length} runs finished ({c.repeats}{" "}
          {c.repeats === 1 ? "repeat" : "repeats"} per target) · <Counts c={c} />
        </p>
        {!c.done && (
          <p className="muted small">
            This page follows the campaign and opens its comparison when it is done.
          </p>
        )}
        {c.targets_left_out.length > 0 && (
          <details data-testid="campaign-left-out">
            <summary className="small">
              {c.targets_left_out.length} target{c.targets_left_out.length === 1 ? "" : "s"} or
              agent
              {c.targets_left_out.length === 1 ? "" : "s"} left out when it was queued
            </summary>
            <ul className="small">
              {c.targets_left_out.map((t) => (
                <li key={`${t.agent_id}:${t.target_path}`}>
                  {agentName(t.agent_id ?? "")}
                  {t.target_path ? <span className="mono">:{t.target_path}</span> : null}:{" "}
                  {t.reason}
                </li>
              ))}
            </ul>
          </details>
        )}
      </div>
      <ScrollBox label="Campaign runs">
        <table className="table compact" data-testid="campaign-runs">
          <thead>
            <tr>
              <th>#</th>
              <th>Run</th>
              <th>Status</th>
              <th>Target</th>
            </tr>
          </thead>
          <tbody>
            {c.run_ids.map((rid, i) => {
              const r = byId.get(rid);
              return (
                <tr key={rid}>
                  <td>{i + 1}</td>
                  <td>
                    <Link to={`/runs/${rid}`}>{r?.name || rid.slice(0, 8)}</Link>
                  </td>
                  <td>{r ? <StatusBadge status={r.status} /> : "—"}</td>
                  <td className="mono small">{r ? `${r.agent_name}:${r.target_path}` : ""}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </ScrollBox>
      <CommentThread kind="campaign" targetKey={c.id} teamIds={[c.team_id]} />
    </section>
  );
}
