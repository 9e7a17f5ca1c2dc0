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
import { type PtsPlan, ptsPlan, ptsSpec } from "../../lib/pts";
import { type TeamRole, teamsWhere } from "../../lib/role";
import { DEFAULT_IDLE_S, type DurationEstimate, estimateDuration } from "../../lib/workload";
import type { RunGroupCreate } from "../../queries/runGroups";
import { buildJobs } from "./jobs";
import type { NewRunState } from "./state";

/** A group run's members: this host and at most 15 others (RunGroupCreate.members). */
export const MAX_GROUP_MEMBERS = 16;
/** A member whose engine starts further than this from the group's instant marks it unsynchronized. */
export const START_TOLERANCE_NS = 5_000_000;
/** Every member must report ready (laid out, idle baseline taken) within the group's prepare
 * timeout of the first: the form leaves it to the server, which sizes it from what the members lay
 * out (backend/run/prepare.py) and shows the value taken on the run page. */
export const PREPARE_TIMEOUT_S = null;

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
  | { body: RunCreate; confirm: boolean }
  /** a group run: the same workload on every host, started at one instant */
  | { group: RunGroupCreate; confirm: boolean };

/** Another host of a group run, as the form offers it. */
export interface GroupHostPlan {
  agentId: string;
  /** what its select offers: online agents that are not another member */
  agents: AgentRead[];
  policy: HostPolicy | null;
  /** its target: the chosen one if the host allows it, else the first it allows */
  target: PolicyTarget | undefined;
}

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
  /** a SNIA PTS run purges and writes a whole raw device: device targets only */
  devicesOnly: boolean;
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
  /** the workload can run on several hosts at one instant (block jobs or a fio job file) */
  groupable: boolean;
  /** a group run's other hosts (empty: an ordinary run, or not groupable) */
  hosts: GroupHostPlan[];
  /** the agent "Add a host" adds; undefined: no other online agent, or the group is full */
  nextHost: AgentRead | undefined;
  /** why other hosts cannot be chosen now (null: they can, or none is chosen) */
  groupNote: string | null;
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
  /** a SNIA PTS run's plan: its matrix, rounds, tested region, length and compliance */
  pts: PtsPlan | undefined;
  /** why the host will refuse the PTS run's rounds: one round is longer than its runtime limit
   * (libs/policy judges the round's engine job against max_runtime_s); null: it will not */
  ptsLimit: string | null;
  /** the user may queue runs in none of their teams */
  viewerOnly: boolean;
  submission: RunSubmission;
}

/** The form's error key of the run's target number `i` (0: the first, the Target field). */
export function targetErrorKey(i: number): string {
  return i === 0 ? "target" : `targets.${i}.target`;
}

/** The server's errors of a group run (`members.N.…`, formErrorsFrom with "members" indexed) as
 * the form shows them: the first member's beside the form's own fields, the others' beside their
 * host's row (its agent, else its target). */
export function groupErrors(errors: Errors): Errors {
  const out: Errors = {};
  for (const [key, err] of Object.entries(errors)) {
    const m = /^members\.(\d+)\.(.+)$/.exec(key);
    let k = key;
    if (m) {
      const n = Number(m[1]);
      const field = m[2] ?? "";
      k = n === 0 ? field : `hosts.${n - 1}.${field === "agent" ? "agent" : "target"}`;
    }
    const had = out[k];
    out[k] = had ? { ...had, message: `${had.message}; ${err.message}` } : err;
  }
  return out;
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
  const devicesOnly = s.mode === "pts";
  const allowed = directoriesOnly
    ? targets.filter((t) => t.kind === "directory")
    : devicesOnly
      ? targets.filter((t) => t.kind === "device")
      : targets;
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
  // a group run: block workloads and fio job files (file sets, databases and PTS run on one host)
  const groupable =
    s.mode === "custom" || s.mode === "jobfile" || (s.mode === "builtin" && pickedBlock);
  const hosts: GroupHostPlan[] = groupable
    ? s.hosts.map((h) => {
        const hostPolicy = policyOf(online.find((a) => a.id === h.agentId));
        const hostTargets = hostPolicy?.targets ?? [];
        return {
          agentId: h.agentId,
          agents: online.filter(
            (a) =>
              a.id === h.agentId || (a.id !== agentId && !s.hosts.some((o) => o.agentId === a.id)),
          ),
          policy: hostPolicy,
          target: hostTargets.find((t) => t.path === h.target) ?? hostTargets[0],
        };
      })
    : [];
  const nextHost =
    groupable && s.hosts.length + 1 < MAX_GROUP_MEMBERS
      ? online.find((a) => a.id !== agentId && !s.hosts.some((h) => h.agentId === a.id))
      : undefined;
  const groupNote =
    s.hosts.length > 0 && !groupable
      ? "several hosts at one instant run block workloads or a fio job file (not file sets, databases or SNIA PTS): this run goes to the first host only"
      : null;
  const refusal = chosen.map(writeRefusal).find((r) => r !== null) ?? null;
  const hostRefusal =
    hosts.map((h) => (h.target ? writeRefusal(h.target) : null)).find((r) => r !== null) ?? null;
  const refused = new Set(
    (refusal ?? hostRefusal) === null ? [] : items.filter(workloadWritesAny).map((w) => w.id),
  );
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
  const ptsMode = s.mode === "pts";
  // a cloned PTS run's parameters as it ran them (already scaled), else the specification's
  const ptsSent = s.pts.kept ?? ptsSpec(s.pts.test, s.pts.purge, s.pts.throughputBs, s.pts.profile);
  const ptsFactor = s.pts.kept || s.pts.scale === "" ? null : Number(s.pts.scale);
  const pts = ptsMode ? ptsPlan(ptsSent, ptsFactor, target?.size_bytes ?? null) : undefined;
  const maxRuntime = policy?.limits.max_runtime_s ?? null;
  const longest = pts?.longestRun;
  const ptsLimit =
    longest && maxRuntime !== null && longest.seconds > maxRuntime
      ? `one ${longest.what} takes ${longest.seconds} s, over this host's runtime limit of ${maxRuntime} s per engine run: the host refuses it. Choose a smaller scale, or on the host: iowatt-agent targets limits --max-runtime ${longest.seconds}`
      : null;
  const writes = ptsMode
    ? true
    : custom
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
  } else if (workload && !scaled && !jobfile && !ptsMode) {
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

  const single = ((): RunSubmission => {
    const one = (key: string, message: string): RunSubmission => ({
      errors: { [key]: { message, source: "client" } },
    });
    if (!target)
      return one(
        "target",
        ptsMode
          ? "a SNIA PTS run needs a raw device the host marked destructive; this host lists none (see above)"
          : "the host allows no target yet (see above)",
      );
    if (ptsMode && pts) {
      const why = writeRefusal(target);
      if (why) return one("target", why);
      if (target.size_bytes != null && pts.regionBytes === null)
        return one(
          "scale",
          `${pts.spec.capacity_fraction} of this device is under 1 MiB: nothing to test; choose a larger share`,
        );
      if (!idleValid) return one("idle", "enter seconds (0 or more)");
      const body: RunCreate = {
        agent_id: agentId,
        target_path: target.path,
        name: s.name.trim() || null,
        workload: {
          kind: "pts",
          jobs: [],
          passes: 1,
          discard_passes: 0,
          shortened_by: null,
          // the specification's parameters (the run's scale makes a short trial, server-side), or
          // a cloned run's as it ran them
          pts: ptsSent,
        },
        workload_id: null,
        environment_id: s.environmentId || null,
        meter,
        idle_s: idleNumber,
        // the second key: only the typed confirmation sets destructive (see DestructiveConfirm)
        destructive: false,
        shorten: null,
        scale: ptsFactor,
      };
      return { body, confirm: needsDestructiveConfirm(target, true) };
    }
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

  /** With other hosts: the same run as a group, every host's member started at one instant. */
  const submission = ((): RunSubmission => {
    if (hosts.length === 0 || !("body" in single)) return single;
    const one = (key: string, message: string): RunSubmission => ({
      errors: { [key]: { message, source: "client" } },
    });
    const seen = new Set([agentId]);
    for (const [i, h] of hosts.entries()) {
      if (!h.agentId || !online.some((a) => a.id === h.agentId))
        return one(`hosts.${i}.agent`, "choose an online agent");
      if (seen.has(h.agentId)) return one(`hosts.${i}.agent`, "already in this group run");
      seen.add(h.agentId);
      if (!h.target) return one(`hosts.${i}.target`, "this host allows no target yet");
      const why = writeRefusal(h.target);
      if (why && writes) return one(`hosts.${i}.target`, why);
    }
    const { body } = single;
    const group: RunGroupCreate = {
      members: [
        {
          agent_id: body.agent_id,
          target_path: body.target_path ?? null,
          targets: body.targets ?? null,
        },
        ...hosts.map((h) => ({
          agent_id: h.agentId,
          target_path: h.target?.path ?? null,
          targets: null,
        })),
      ],
      workload: body.workload ?? null,
      workload_id: body.workload_id ?? null,
      name: body.name ?? null,
      environment_id: body.environment_id ?? null,
      meter: body.meter,
      destructive: false,
      idle_s: body.idle_s ?? null,
      shorten: body.shorten ?? null,
      start_tolerance_ns: START_TOLERANCE_NS,
      prepare_timeout_s: PREPARE_TIMEOUT_S,
      shared_store: s.sharedStore.trim() || null,
    };
    const all = [...chosen, ...hosts.flatMap((h) => (h.target ? [h.target] : []))];
    return { group, confirm: all.some((t) => needsDestructiveConfirm(t, writes)) };
  })();

  return {
    online,
    agentId,
    policy,
    targets,
    directoriesOnly,
    devicesOnly,
    target,
    multiTarget,
    chosen,
    nextTarget,
    multiNote,
    groupable,
    hosts,
    nextHost,
    groupNote,
    refusal: refusal ?? hostRefusal,
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
    pts,
    ptsLimit,
    viewerOnly: ctx.teams.length > 0 && teamsWhere(ctx.teams, "run.create").length === 0,
    submission,
  };
}
