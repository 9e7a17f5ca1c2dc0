import type { AgentRead, JobSpecIn, RunCreate, WorkloadRead } from "../../client/types";
import { isDbKind } from "../../components/DbWorkload/dbWorkload";
import type { Errors } from "../../components/Field";
import { defaultScaleText, runScaleFactor } from "../../components/FileWorkload/ScaleField";
import { type JobfileParse, jobfileWrites } from "../../components/Jobfile/jobfile";
import type { MeterChoice } from "../../components/Policy/MeterSelect";
import { fileWrites, isFileKind, kindOf, specOf } from "../../lib/fileWorkload";
import {
  type HostPolicy,
  MAX_TARGETS,
  meterIdleS,
  needsDestructiveConfirm,
  type PolicyTarget,
  policyOf,
  runsMultiTarget,
  rwWrites,
  workloadWrites,
  writeRefusal,
} from "../../lib/policy";
import { type TeamRole, teamsWhere } from "../../lib/role";
import { DEFAULT_IDLE_S, type DurationEstimate, estimateDuration } from "../../lib/workload";
import { buildJobs } from "./jobs";
import type { NewRunState } from "./state";

/** What the plan is derived from besides the form: what the server lists. */
export interface RunPlanContext {
  /** every agent of the team, online or not */
  agents: readonly AgentRead[];
  workloads: readonly WorkloadRead[];
  /** the user's teams and roles (empty while loading: nobody is called a viewer yet) */
  teams: readonly TeamRole[];
  /** the engine's parse of the job file being edited (mode "jobfile"; null: none yet) */
  jobfileParse?: JobfileParse | null;
}

/** The run the form will queue, or the first reason it will not. */
export type RunSubmission =
  | { errors: Errors }
  /** `confirm`: a write to a device the host marked destructive waits for the typed key */
  | { body: RunCreate; confirm: boolean };

export interface RunPlan {
  /** the agents offered: online ones only */
  online: AgentRead[];
  /** the agent the run goes to ("" with none online) */
  agentId: string;
  policy: HostPolicy | null;
  /** every target the host allows (the select filters by kind itself) */
  targets: PolicyTarget[];
  /** a file or database workload lays out a file set: directory targets only */
  directoriesOnly: boolean;
  /** the target the run writes to or reads: the chosen one if allowed, else the first allowed */
  target: PolicyTarget | undefined;
  /** the run may name several targets of the host at once (the agent runs them, a block workload) */
  multiTarget: boolean;
  /** the targets the run goes to, in order: `target`, then the other chosen ones (several only
   * when `multiTarget`; a path the host no longer allows is left out) */
  chosen: PolicyTarget[];
  /** the next target "Add a target" offers (one not chosen yet); undefined: none, or at the limit */
  nextTarget: PolicyTarget | undefined;
  /** why several targets cannot be chosen now (null: they can, or only one is chosen) */
  multiNote: string | null;
  /** why the host refuses writes on a chosen target (null: it does not) */
  refusal: string | null;
  /** workloads that write, so the target refuses them (ids) */
  refused: ReadonlySet<string>;
  /** the built-in workload the run uses: the chosen one unless refused, else the first allowed */
  workloadId: string;
  workload: WorkloadRead | undefined;
  /** the chosen workload is a file set (file or database kind): scaled, not shortened */
  scaled: boolean;
  scaleText: string;
  /** the run's scale factor on the saved workload: null = not a scale, undefined = as saved */
  scaleFactor: number | null | undefined;
  meter: MeterChoice;
  /** the run writes (the builder's jobs or the chosen workload) */
  writes: boolean;
  shortenFactor: number | undefined;
  /** undefined: a file set (its own runtime note) or jobs with errors */
  estimate: DurationEstimate | undefined;
  /** the user may queue runs in none of their teams */
  viewerOnly: boolean;
  submission: RunSubmission;
}

/** The form's error key of the run's target number `i` (0: the first, the Target field). */
export function targetErrorKey(i: number): string {
  return i === 0 ? "target" : `targets.${i}.target`;
}

/** The server's errors of a multi-target run as the form shows them: `targets.0.…` (its first
 * target) beside the Target field; the others beside their own row. */
export function targetErrors(errors: Errors): Errors {
  const first = errors["targets.0.target"];
  if (!first) return errors;
  const { "targets.0.target": _, ...rest } = errors;
  const own = rest.target;
  return {
    ...rest,
    target: own ? { ...own, message: `${own.message}; ${first.message}` } : first,
  };
}

const fileSetKind = (w: WorkloadRead) =>
  isFileKind(kindOf(specOf(w))) || isDbKind(kindOf(specOf(w)));

/** Whether a saved workload writes: database and writing file kinds always, block ones by rw. */
export function workloadWritesAny(w: WorkloadRead): boolean {
  return (
    isDbKind(kindOf(specOf(w))) ||
    (isFileKind(kindOf(specOf(w))) ? fileWrites(specOf(w)) : workloadWrites(w.spec.jobs))
  );
}

/** What an empty idle field means: the chosen meter's idle baseline as its agent reports it, else
 * the agent's default (an agent that does not report it). */
export function idleDefaultText(policy: HostPolicy | null, meter: MeterChoice): string {
  const reported = meterIdleS(policy, meter);
  return reported === null
    ? `the agent's default (${DEFAULT_IDLE_S} s)`
    : `the meter's idle setting on its host (${reported} s)`;
}

/** Everything the New run form shows and sends, from its state and what the server lists. Pure:
 * the component renders this and dispatches; each branch is tested in plan.test.ts. */
export function deriveRunPlan(s: NewRunState, ctx: RunPlanContext): RunPlan {
  const online = ctx.agents.filter((a) => a.online);
  const agentId = s.agentId || online[0]?.id || "";
  const policy = policyOf(online.find((a) => a.id === agentId));
  const targets = policy?.targets ?? [];
  const items = ctx.workloads;
  // the workload as picked (refused or not) decides the target list, so picking it keeps its kind
  const pickedFirst = items.find((w) => w.id === s.workloadId) ?? items[0];
  const directoriesOnly =
    s.mode === "builtin" && pickedFirst !== undefined && fileSetKind(pickedFirst);
  const allowed = directoriesOnly ? targets.filter((t) => t.kind === "directory") : targets;
  const target = allowed.find((t) => t.path === s.target) ?? allowed[0];
  const agent = online.find((a) => a.id === agentId);
  const pickedBlock = pickedFirst === undefined || kindOf(specOf(pickedFirst)) === "block";
  const blockRun = s.mode === "custom" || (s.mode === "builtin" && pickedBlock);
  const multiTarget = runsMultiTarget(agent) && blockRun;
  const more = s.more.map((p) => allowed.find((t) => t.path === p));
  const chosen = [
    ...(target ? [target] : []),
    ...(multiTarget ? more.filter((t): t is PolicyTarget => t !== undefined) : []),
  ];
  const nextTarget =
    multiTarget && target && chosen.length < MAX_TARGETS
      ? allowed.find((t) => !chosen.some((c) => c.path === t.path))
      : undefined;
  const multiNote =
    s.more.length === 0 || multiTarget
      ? null
      : !runsMultiTarget(agent)
        ? "this agent runs one target at a time (an older iowatt-agent): upgrade it on the host to run several at once"
        : "several targets at once run block workloads only (not a fio job file, file sets or databases): this run goes to the first target";
  const refusal = chosen.map(writeRefusal).find((r) => r !== null) ?? null;
  const refused = new Set(refusal === null ? [] : items.filter(workloadWritesAny).map((w) => w.id));
  const picked = items.find((w) => w.id === s.workloadId);
  const workloadId =
    (picked && !refused.has(picked.id) ? picked.id : items.find((w) => !refused.has(w.id))?.id) ??
    "";
  const workload = items.find((w) => w.id === workloadId);
  const scaled = workload !== undefined && fileSetKind(workload);
  const scaleText =
    workload && s.scale?.workload === workload.id
      ? s.scale.text
      : workload
        ? defaultScaleText(workload)
        : "1";
  const scaleFactor = workload && scaled ? runScaleFactor(workload, scaleText) : undefined;
  const meter: MeterChoice = s.meter === undefined ? (policy?.default_meter ?? "") : s.meter;
  const custom = s.mode === "custom";
  const jobfile = s.mode === "jobfile";
  const writes = custom
    ? s.jobs.some((j) => rwWrites(j.rw))
    : jobfile
      ? jobfileWrites(ctx.jobfileParse)
      : workload
        ? workloadWritesAny(workload)
        : false;
  const idleNumber = s.idle.trim() === "" ? null : Number(s.idle);
  const idleValid = idleNumber === null || (Number.isFinite(idleNumber) && idleNumber >= 0);
  const shortenFactor = s.shorten === "" ? undefined : Number(s.shorten);
  const built = custom ? buildJobs(s.jobs) : undefined;

  let estimate: DurationEstimate | undefined;
  const idleForEstimate = idleValid ? idleNumber : null;
  // the agent idles before and after only to measure power: no meter, no idle baseline
  const metered = meter !== "";
  // the meter's idle baseline as its agent reports it (the run's own idle setting comes first)
  const meterIdle = meterIdleS(policy, meter);
  if (custom) {
    if (built?.jobs) estimate = estimateDuration(built.jobs, idleForEstimate, metered, meterIdle);
  } else if (workload && !scaled && !jobfile) {
    estimate = estimateDuration(
      // the display's approximation; the server shortens the run (WorkloadSpec.shortened)
      // a saved workload states every setting (only an imported run's jobs leave some unstated)
      ((workload.spec.jobs ?? []) as JobSpecIn[]).map((j) =>
        shortenFactor && j.runtime_s != null
          ? { ...j, runtime_s: Math.max(1, j.runtime_s * shortenFactor) }
          : shortenFactor
            ? { ...j, io_size_bytes: (j.io_size_bytes ?? j.size_bytes) * shortenFactor }
            : j,
      ),
      idleForEstimate,
      metered,
      meterIdle,
    );
  }

  const submission = ((): RunSubmission => {
    const one = (key: string, message: string): RunSubmission => ({
      errors: { [key]: { message, source: "client" } },
    });
    if (!target) return one("target", "the host allows no target yet (see above)");
    if (multiTarget) {
      const seen = new Set([target.path]);
      for (const [i, p] of s.more.entries()) {
        if (!p || seen.has(p))
          return one(targetErrorKey(i + 1), p ? "already chosen above" : "choose a target");
        seen.add(p);
      }
    }
    if (jobfile && s.jobfileText.trim() === "")
      return one("jobfile", "paste a fio job file or upload one");
    const refusedAt = chosen.findIndex((t) => writeRefusal(t) !== null);
    if (refusal && writes && refusedAt > 0) return one(targetErrorKey(refusedAt), refusal);
    if (refusal && writes)
      return one(
        custom
          ? `jobs.${s.jobs.findIndex((j) => rwWrites(j.rw))}.rw`
          : jobfile
            ? "jobfile"
            : "workload",
        refusal,
      );
    if (jobfile) {
      const body: RunCreate = {
        agent_id: agentId,
        target_path: target.path,
        name: s.name.trim() || null,
        workload: {
          kind: "jobfile",
          jobs: [],
          passes: 1,
          discard_passes: 0,
          shortened_by: null,
          jobfile: { text: s.jobfileText },
        },
        workload_id: null,
        environment_id: s.environmentId || null,
        meter,
        idle_s: idleValid ? idleNumber : null,
        destructive: false,
        shorten: null,
      };
      if (!idleValid) return one("idle", "enter seconds (0 or more)");
      return { body, confirm: needsDestructiveConfirm(target, writes) };
    }
    if (!custom && scaled && scaleFactor === null)
      return one("scale", "enter a number above 0, at most 1000");
    if (!idleValid) return one("idle", "enter seconds (0 or more)");
    if (built && !built.jobs) return { errors: built.errors };
    const body: RunCreate = {
      agent_id: agentId,
      ...(chosen.length > 1
        ? { targets: chosen.map((t) => ({ target_path: t.path })) }
        : { target_path: target.path }),
      name: s.name.trim() || null,
      workload: built?.jobs
        ? {
            passes: 1,
            discard_passes: 0,
            shortened_by: null,
            ...s.kept,
            kind: "block",
            jobs: built.jobs,
          }
        : null,
      workload_id: custom ? null : workloadId || null,
      environment_id: s.environmentId || null,
      meter,
      idle_s: idleNumber,
      // the second key: only the typed confirmation sets destructive (see DestructiveConfirm)
      destructive: false,
      shorten: !custom && !scaled && shortenFactor ? shortenFactor : null,
      ...(!custom && scaled && scaleFactor ? { scale: scaleFactor } : {}),
    };
    return { body, confirm: chosen.some((t) => needsDestructiveConfirm(t, writes)) };
  })();

  return {
    online,
    agentId,
    policy,
    targets,
    directoriesOnly,
    target,
    multiTarget,
    chosen,
    nextTarget,
    multiNote,
    refusal,
    refused,
    workloadId,
    workload,
    scaled,
    scaleText,
    scaleFactor,
    meter,
    writes,
    shortenFactor,
    estimate,
    viewerOnly: ctx.teams.length > 0 && teamsWhere(ctx.teams, "run.create").length === 0,
    submission,
  };
}
