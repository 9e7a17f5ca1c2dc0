import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useEffect, useReducer, useState } from "react";
import { useNavigate, useSearchParams } from "react-router-dom";
import type { RunCreate } from "../client/types";
import { WorkloadScaleField } from "../components/DbWorkload/DbScaleField";
import { DbmsConsentNote, DbWorkloadParameters } from "../components/DbWorkload/DbWorkloadSpec";
import { isDbKind } from "../components/DbWorkload/dbWorkload";
import { Field, FormFooter, formErrorsFrom } from "../components/Field";
import { KindBadge } from "../components/FileWorkload/FileWorkloadSpec";
import { JobfileEditor } from "../components/Jobfile/JobfileEditor";
import type { JobfileParse } from "../components/Jobfile/jobfile";
import { DestructiveConfirm } from "../components/Policy/DestructiveConfirm";
import { MeterSelect } from "../components/Policy/MeterSelect";
import { DirectoryNote, LimitsNote, TargetSelect } from "../components/Policy/TargetSelect";
import { PtsRunForm } from "../components/Pts/PtsRunForm";
import { cloneDraft, cloneSource } from "../lib/clone";
import { meterSetCommand } from "../lib/energy";
import { isFileKind, kindOf, specOf } from "../lib/fileWorkload";
import { sig3 } from "../lib/format";
import { needsDestructiveConfirm } from "../lib/policy";
import { useTeams } from "../lib/role";
import { describeJob } from "../lib/workload";
import { agentsQuery } from "../queries/agents";
import { environmentsQuery } from "../queries/environments";
import { keys } from "../queries/keys";
import { createRunGroup, type RunGroupCreate } from "../queries/runGroups";
import { createRun, runQuery } from "../queries/runs";
import { workloadsQuery } from "../queries/workloads";
import { GroupHosts } from "./newRun/GroupHosts";
import { EstimateLine, JobEditor } from "./newRun/JobEditor";
import { MoreTargets } from "./newRun/MoreTargets";
import { deriveRunPlan, groupErrors, idleDefaultText, targetErrors } from "./newRun/plan";
import { initialState, newRunReducer } from "./newRun/state";

/** Presets shortened for a quick look: the server shortens (WorkloadSpec.shortened) and records it. */
const SHORTEN = [
  { value: "", label: "full length" },
  { value: "0.5", label: "×0.5" },
  { value: "0.25", label: "×0.25" },
  { value: "0.1", label: "×0.1 (a quick look)" },
] as const;

/** Server field names (last path segment) → the form input showing their errors. A job's
 * fields keep the job's index ("jobs.1.bs"): see `formErrorsFrom(…, ["jobs"])`. */
const FIELD_ALIASES: Record<string, string> = {
  agent_id: "agent",
  target_path: "target",
  // a multi-target run: its list (the agent cannot), each one's path beside its row (targetErrors)
  targets: "target",
  destructive: "target",
  workload_id: "workload",
  shorten: "shorten",
  scale: "scale",
  name: "name",
  rw: "rw",
  bs_bytes: "bs",
  bssplit: "bssplit",
  size_bytes: "size",
  offset_bytes: "size",
  runtime_s: "runtime",
  time_based: "runtime",
  ramp_time_s: "ramp",
  iodepth: "iodepth",
  numjobs: "numjobs",
  ioengine: "ioengine",
  direct: "direct",
  io_size_bytes: "iosize",
  end_fsync: "endfsync",
  rwmixread: "rwmixread",
  rate_iops: "rateiops",
  random_distribution: "distribution",
  fsync_every: "fsync",
  sync: "sync",
  randseed: "randseed",
  loops: "loops",
  meter: "meter",
  idle_s: "idle",
  environment_id: "environment",
  // a fio job file's text (workload.jobfile.text): the engine's refusal and the host's rules
  text: "jobfile",
  // a SNIA PTS run (workload.pts.…): the host's judgement of its engine jobs at workload.pts
  pts: "pts_test",
  test: "pts_test",
  block_sizes: "pts_test",
  mixes: "pts_test",
  purge: "pts_purge",
  round_s: "scale",
  capacity_fraction: "scale",
  // a group run's (members.N.… go beside their host: groupErrors)
  shared_store: "shared_store",
};

export function NewRun() {
  const navigate = useNavigate();
  const qc = useQueryClient();
  const [search] = useSearchParams();
  const fromRun = cloneSource(search);
  // read once: the form copies the run, it does not follow it live
  const source = useQuery({
    ...runQuery(fromRun ?? ""),
    enabled: fromRun !== null,
    refetchInterval: false,
  });
  const agents = useQuery(agentsQuery());
  const workloads = useQuery(workloadsQuery());
  const environments = useQuery(environmentsQuery());
  const { teams } = useTeams();
  const [state, dispatch] = useReducer(newRunReducer, search, initialState);
  const { mode, jobs, errors, confirming } = state;
  const [jobfileParse, setJobfileParse] = useState<JobfileParse | null>(null);

  // Clone and re-run: prefill once from the run named in ?from= (lib/clone.ts).
  const sourceRun = source.data;
  useEffect(() => {
    if (sourceRun) dispatch({ type: "cloned", draft: cloneDraft(sourceRun) });
  }, [sourceRun]);

  const items = workloads.data?.items ?? [];
  const plan = deriveRunPlan(state, {
    agents: agents.data?.items ?? [],
    workloads: items,
    teams,
    jobfileParse,
  });
  const { online, policy, refusal, workload: chosenWorkload, estimate } = plan;

  const create = useMutation({
    mutationFn: (body: RunCreate) => createRun(body),
    onSuccess: (run) => {
      qc.invalidateQueries({ queryKey: keys.runs.lists() });
      navigate(`/runs/${run.id}`);
    },
    onError: (err) => {
      const r = formErrorsFrom(err, FIELD_ALIASES, ["jobs", "targets"]);
      dispatch({ type: "rejected", errors: targetErrors(r.errors), formError: r.formError });
    },
  });

  const createGroup = useMutation({
    mutationFn: (body: RunGroupCreate) => createRunGroup(body),
    onSuccess: (group) => {
      qc.invalidateQueries({ queryKey: keys.runs.lists() });
      // the first member's run page shows every member, the combined figure and the start skews
      navigate(`/runs/${group.members[0]?.run_id ?? ""}`);
    },
    onError: (err) => {
      const r = formErrorsFrom(err, FIELD_ALIASES, ["jobs", "targets", "members"]);
      dispatch({
        type: "rejected",
        errors: targetErrors(groupErrors(r.errors)),
        formError: r.formError,
      });
    },
  });
  const pending = create.isPending || createGroup.isPending;
  function send(body: RunCreate | RunGroupCreate) {
    if ("members" in body) createGroup.mutate(body);
    else create.mutate(body);
  }

  function onSubmit(e: FormEvent) {
    e.preventDefault();
    const s = plan.submission;
    if ("errors" in s) {
      dispatch({ type: "invalid", errors: s.errors });
      return;
    }
    const body = "group" in s ? s.group : s.body;
    dispatch({ type: "submitted", confirming: s.confirm ? body : null });
    if (!s.confirm) send(body);
  }

  const viewerOnly = plan.viewerOnly;
  return (
    <section>
      <h1>New run</h1>
      {viewerOnly && (
        <p className="alert alert-warn" data-testid="role-cannot-run">
          You are a viewer in {teams.length === 1 ? "your team" : "each of your teams"}: queuing a
          run needs the member role. Ask a team admin to change it.
        </p>
      )}
      {fromRun && (
        <p className="alert alert-info" data-testid="clone-note">
          {source.isError
            ? "The run to clone could not be loaded: fill the form in yourself."
            : sourceRun
              ? `A re-run of “${sourceRun.name}”: the same workload, host and target. Change anything before queueing.`
              : "Loading the run to clone…"}
        </p>
      )}
      <form className="card form" onSubmit={onSubmit} data-testid="new-run-form" noValidate>
        <div className="form-grid">
          <Field
            label="Agent"
            name="agent"
            errors={errors}
            hint={online.length === 0 ? "no agent is online" : undefined}
          >
            <select
              id="f-agent"
              name="agent"
              value={plan.agentId}
              onChange={(e) => dispatch({ type: "agent", id: e.target.value })}
            >
              {online.length === 0 && <option value="">—</option>}
              {online.map((a) => (
                <option key={a.id} value={a.id}>
                  {a.name} ({a.hostname})
                </option>
              ))}
            </select>
          </Field>
          <Field
            label="Target"
            name="target"
            className="span-2"
            errors={errors}
            hint={
              plan.targets.length > 0
                ? "what the host allows (iowatt-agent targets list on the host)"
                : undefined
            }
          >
            {online.length === 0 ? (
              <select id="f-target" name="target" disabled>
                <option>— choose an online agent first —</option>
              </select>
            ) : (
              <TargetSelect
                id="f-target"
                policy={policy}
                value={plan.target?.path ?? ""}
                onChange={(path) => dispatch({ type: "target", path })}
                directoriesOnly={plan.directoriesOnly}
                devicesOnly={plan.devicesOnly}
              />
            )}
            {plan.directoriesOnly && <DirectoryNote />}
            {mode === "builtin" && chosenWorkload && (
              <DbmsConsentNote policy={policy} spec={specOf(chosenWorkload)} />
            )}
            <LimitsNote policy={policy} />
          </Field>
          <MoreTargets
            policy={policy}
            more={state.more}
            chosen={plan.chosen}
            nextTarget={plan.nextTarget}
            multiTarget={plan.multiTarget}
            multiNote={plan.multiNote}
            errors={errors}
            onAdd={(path) => dispatch({ type: "more.add", path })}
            onSet={(index, path) => dispatch({ type: "more.set", index, path })}
            onRemove={(index) => dispatch({ type: "more.remove", index })}
          />
          <GroupHosts
            hosts={plan.hosts}
            nextHost={plan.nextHost}
            groupable={plan.groupable}
            groupNote={plan.groupNote}
            sharedStore={state.sharedStore}
            errors={errors}
            onAdd={(agentId) => dispatch({ type: "host.add", agentId })}
            onAgent={(index, agentId) => dispatch({ type: "host.agent", index, agentId })}
            onTarget={(index, path) => dispatch({ type: "host.target", index, path })}
            onRemove={(index) => dispatch({ type: "host.remove", index })}
            onSharedStore={(text) => dispatch({ type: "sharedStore", text })}
          />
          <Field label="Name (optional)" name="name" errors={errors}>
            <input
              id="f-name"
              name="name"
              value={state.name}
              onChange={(e) => dispatch({ type: "name", name: e.target.value })}
              placeholder="nvme0 random read"
            />
          </Field>
          <Field
            label="Environment"
            name="environment"
            errors={errors}
            hint="grid intensity and PUE for the run's CO2"
          >
            <select
              id="f-environment"
              name="environment"
              value={state.environmentId}
              onChange={(e) => dispatch({ type: "environment", id: e.target.value })}
              data-testid="environment-select"
            >
              <option value="">— none —</option>
              {environments.data?.items.map((env) => (
                <option key={env.id} value={env.id}>
                  {env.name} ({env.kind}, {sig3(env.effective_g_per_kwh)} gCO2e/kWh)
                </option>
              ))}
            </select>
          </Field>
          <Field
            label="Wattmeter"
            name="meter"
            errors={errors}
            hint={
              (policy?.meters.length ?? 0) > 0
                ? "a meter the host configured"
                : `the host configured no meter: on the host, ${meterSetCommand(online.find((a) => a.id === plan.agentId)?.name)}`
            }
          >
            <MeterSelect
              id="f-meter"
              meters={policy?.meters ?? []}
              defaultMeter={policy?.default_meter ?? null}
              value={plan.meter}
              onChange={(meter) => dispatch({ type: "meter", meter })}
            />
          </Field>
          <Field
            label="Idle baseline (s)"
            name="idle"
            errors={errors}
            hint={`measured before and after the load; empty: ${idleDefaultText(policy, plan.meter)}`}
          >
            <input
              id="f-idle"
              name="idle"
              inputMode="decimal"
              value={state.idle}
              onChange={(e) => dispatch({ type: "idle", text: e.target.value })}
            />
          </Field>
        </div>
        <fieldset className="mode">
          <legend>Workload</legend>
          <label className="inline">
            <input
              type="radio"
              name="mode"
              value="builtin"
              checked={mode === "builtin"}
              onChange={() => dispatch({ type: "mode", mode: "builtin" })}
            />{" "}
            Built-in
          </label>
          <label className="inline">
            <input
              type="radio"
              name="mode"
              value="custom"
              checked={mode === "custom"}
              onChange={() => dispatch({ type: "mode", mode: "custom" })}
              data-testid="mode-custom"
            />{" "}
            Custom jobs
          </label>
          <label className="inline">
            <input
              type="radio"
              name="mode"
              value="jobfile"
              checked={mode === "jobfile"}
              onChange={() => dispatch({ type: "mode", mode: "jobfile" })}
              data-testid="mode-jobfile"
            />{" "}
            fio job file
          </label>
          <label className="inline">
            <input
              type="radio"
              name="mode"
              value="pts"
              checked={mode === "pts"}
              onChange={() => dispatch({ type: "mode", mode: "pts" })}
              data-testid="mode-pts"
            />{" "}
            SNIA PTS (raw device)
          </label>
        </fieldset>
        {mode === "pts" ? (
          <PtsRunForm
            draft={state.pts}
            plan={plan.pts}
            errors={errors}
            hasDevice={plan.targets.some((t) => t.kind === "device")}
            refusal={refusal}
            limit={plan.ptsLimit}
            onChange={(pts) => dispatch({ type: "pts", pts })}
          />
        ) : mode === "jobfile" ? (
          <div data-testid="jobfile-builder">
            {refusal && plan.writes && (
              <p className="policy-refusal small" data-testid="write-refusal">
                This job file writes, which the target refuses: {refusal}
              </p>
            )}
            <JobfileEditor
              text={state.jobfileText}
              onChange={(text) => dispatch({ type: "jobfile", text })}
              onParsed={setJobfileParse}
              errors={errors}
            />
          </div>
        ) : mode === "builtin" ? (
          <div className="form-grid">
            <Field label="Built-in workload" name="workload" errors={errors}>
              <select
                id="f-workload"
                name="workload"
                value={plan.workloadId}
                onChange={(e) => dispatch({ type: "workload", id: e.target.value })}
              >
                {items.map((w) => (
                  <option key={w.id} value={w.id} disabled={plan.refused.has(w.id)}>
                    {w.name}
                    {isFileKind(kindOf(specOf(w))) ? ` (${kindOf(specOf(w))})` : ""}
                    {plan.refused.has(w.id) ? " (writes: refused on this target)" : ""}
                  </option>
                ))}
              </select>
            </Field>
            {chosenWorkload && plan.scaled ? (
              <WorkloadScaleField
                workload={chosenWorkload}
                value={plan.scaleText}
                onChange={(text) => dispatch({ type: "scale", workload: chosenWorkload.id, text })}
                errors={errors}
              />
            ) : (
              <Field
                label="Length"
                name="shorten"
                errors={errors}
                hint="shortened runs are flagged “shortened ×f” wherever their results show"
              >
                <select
                  id="f-shorten"
                  name="shorten"
                  value={state.shorten}
                  onChange={(e) => dispatch({ type: "shorten", value: e.target.value })}
                  data-testid="shorten-select"
                >
                  {SHORTEN.map((s) => (
                    <option key={s.value} value={s.value}>
                      {s.label}
                    </option>
                  ))}
                </select>
              </Field>
            )}
            {refusal && items.some((w) => plan.refused.has(w.id)) && (
              <p className="policy-refusal small span-all" data-testid="write-refusal">
                Write workloads are disabled: {refusal}
              </p>
            )}
            {chosenWorkload && (
              <div className="small span-all" data-testid="workload-description">
                <p>
                  <KindBadge spec={specOf(chosenWorkload)} /> {chosenWorkload.description}
                </p>
                {isDbKind(kindOf(specOf(chosenWorkload))) && (
                  <DbWorkloadParameters spec={specOf(chosenWorkload)} />
                )}
                <ul>
                  {(chosenWorkload.spec.jobs ?? []).map((j) => (
                    <li key={j.name}>
                      <strong>{j.name}</strong>: {describeJob(j)}
                      {j.runtime_s != null && `, ${j.runtime_s} s`}
                    </li>
                  ))}
                </ul>
              </div>
            )}
            {estimate && <EstimateLine e={estimate} shortened={plan.shortenFactor} />}
          </div>
        ) : (
          <div data-testid="job-builder">
            {refusal && (
              <p className="policy-refusal small" data-testid="write-refusal">
                Write workloads are disabled: {refusal}
              </p>
            )}
            {state.kept.shortened_by ? (
              <p className="small" data-testid="kept-shortened">
                This workload was shortened ×{state.kept.shortened_by}: the re-run keeps that flag.
              </p>
            ) : null}
            {jobs.map((j, i) => (
              <JobEditor
                // biome-ignore lint/suspicious/noArrayIndexKey: jobs have no identity but their place
                key={i}
                job={j}
                index={i}
                count={jobs.length}
                errors={errors}
                refusal={refusal}
                onChange={(job) => dispatch({ type: "job.update", index: i, job })}
                onMove={(delta) => dispatch({ type: "job.move", index: i, delta })}
                onRemove={() => dispatch({ type: "job.remove", index: i })}
              />
            ))}
            <div className="actions" style={{ justifyContent: "flex-start" }}>
              <button
                type="button"
                className="btn"
                data-testid="add-job"
                onClick={() => dispatch({ type: "job.add" })}
              >
                Add a job
              </button>
            </div>
            {estimate ? (
              <EstimateLine e={estimate} />
            ) : (
              <p className="small muted" data-testid="duration-estimate">
                Duration: fix the fields marked above to see an estimate.
              </p>
            )}
          </div>
        )}
        <FormFooter
          error={state.formError}
          pending={pending}
          label={plan.hosts.length > 0 ? "Queue group run" : "Queue run"}
          pendingLabel="Queueing…"
          testId="submit-run"
          disabled={viewerOnly}
        />
      </form>
      {confirming && plan.target && (
        <DestructiveConfirm
          targets={[
            ...plan.chosen,
            ...plan.hosts.flatMap((h) => (h.target ? [h.target] : [])),
          ].filter((t) => needsDestructiveConfirm(t, plan.writes))}
          pending={pending}
          onCancel={() => dispatch({ type: "confirm.cancel" })}
          onConfirm={() => send({ ...confirming, destructive: true })}
        />
      )}
    </section>
  );
}
