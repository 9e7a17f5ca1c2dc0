import type { RunCreate, WorkloadSpec } from "../../client/types";
import type { Errors } from "../../components/Field";
import type { MeterChoice } from "../../components/Policy/MeterSelect";
import type { CloneDraft } from "../../lib/clone";
import type { PtsDraft } from "../../lib/pts";
import type { RunGroupCreate } from "../../queries/runGroups";
import { type CustomJob, jobFromSpec, newJob } from "./jobs";

/** What the New run form holds: the user's choices as typed, nothing derived from them (that is
 * deriveRunPlan's, plan.ts). Choices that name something the server lists (agent, target,
 * workload) are kept as chosen even when not offered; the plan falls back to what is. */
export interface NewRunState {
  /** empty: the first online agent */
  agentId: string;
  /** empty: the first target the host allows */
  target: string;
  /** a multi-target run's other targets, in order, as chosen (the run's first is `target`) */
  more: string[];
  /** a group run's other hosts, in order: each an agent and one of its targets, started at the
   * same instant as this one (empty: an ordinary run) */
  hosts: GroupHost[];
  /** a group run's shared store, as typed ("" = none) */
  sharedStore: string;
  name: string;
  /** built-in or saved workload, jobs built here, a fio job file pasted or uploaded, or a SNIA
   * PTS test on a raw device */
  mode: "builtin" | "custom" | "jobfile" | "pts";
  /** empty or refused: the first workload the target allows */
  workloadId: string;
  /** a preset's shortening factor as the select holds it ("" = full length) */
  shorten: string;
  /** a file workload's scale as typed (ScaleField), for the workload it was typed for */
  scale: { workload: string; text: string } | null;
  jobs: CustomJob[];
  /** a fio job file's text, exactly as pasted, uploaded or edited (mode "jobfile") */
  jobfileText: string;
  /** a SNIA PTS run's choices (mode "pts") */
  pts: PtsDraft;
  /** a cloned workload's passes and recorded shortening, sent back as they were */
  kept: Partial<WorkloadSpec>;
  /** the run the form was prefilled from (once: the form copies it, it does not follow it) */
  clonedFrom: string | null;
  environmentId: string;
  /** undefined: the host's default meter (or none when it has none) */
  meter: MeterChoice | undefined;
  idle: string;
  errors: Errors;
  formError: string | null;
  /** the run (or group run) waiting for the typed confirmation of a destructive write */
  confirming: RunCreate | RunGroupCreate | null;
}

/** Another host of a group run: its agent and the target there (empty: the first it allows). */
export interface GroupHost {
  agentId: string;
  target: string;
}

export type NewRunAction =
  | { type: "agent"; id: string }
  | { type: "target"; path: string }
  /** another target of the same host, run at the same time */
  | { type: "more.add"; path: string }
  | { type: "more.set"; index: number; path: string }
  | { type: "more.remove"; index: number }
  /** another host, started at the same instant (a group run) */
  | { type: "host.add"; agentId: string }
  | { type: "host.agent"; index: number; agentId: string }
  | { type: "host.target"; index: number; path: string }
  | { type: "host.remove"; index: number }
  | { type: "sharedStore"; text: string }
  | { type: "name"; name: string }
  | { type: "mode"; mode: NewRunState["mode"] }
  | { type: "workload"; id: string }
  | { type: "shorten"; value: string }
  | { type: "scale"; workload: string; text: string }
  | { type: "environment"; id: string }
  | { type: "meter"; meter: MeterChoice }
  | { type: "idle"; text: string }
  | { type: "jobfile"; text: string }
  | { type: "pts"; pts: Partial<PtsDraft> }
  | { type: "job.add" }
  | { type: "job.update"; index: number; job: CustomJob }
  | { type: "job.move"; index: number; delta: -1 | 1 }
  | { type: "job.remove"; index: number }
  | { type: "cloned"; draft: CloneDraft }
  /** the form's own checks failed: their errors, nothing sent */
  | { type: "invalid"; errors: Errors }
  /** the form passed its checks: errors cleared; `confirming` when the write needs the typed key */
  | { type: "submitted"; confirming: RunCreate | RunGroupCreate | null }
  | { type: "confirm.cancel" }
  /** the server refused the run */
  | { type: "rejected"; errors: Errors; formError: string | null };

/** The empty form; `?workload=` preselects a workload (the workloads page's "Run this"). */
export function initialState(search: URLSearchParams): NewRunState {
  return {
    agentId: "",
    target: "",
    more: [],
    hosts: [],
    sharedStore: "",
    name: "",
    mode: "builtin",
    workloadId: search.get("workload") ?? "",
    shorten: "",
    scale: null,
    jobs: [newJob()],
    jobfileText: "",
    pts: {
      test: "iops",
      profile: "enterprise",
      throughputBs: 1048576,
      purge: "auto",
      scale: "",
      kept: null,
    },
    kept: {},
    clonedFrom: null,
    environmentId: "",
    meter: undefined,
    idle: "",
    errors: {},
    formError: null,
    confirming: null,
  };
}

export function newRunReducer(s: NewRunState, a: NewRunAction): NewRunState {
  switch (a.type) {
    case "agent":
      // another host: its targets and meters are its own
      return { ...s, agentId: a.id, target: "", more: [], meter: undefined };
    case "target":
      return { ...s, target: a.path };
    case "more.add":
      return { ...s, more: [...s.more, a.path] };
    case "more.set":
      return { ...s, more: s.more.map((x, k) => (k === a.index ? a.path : x)) };
    case "more.remove":
      return { ...s, more: s.more.filter((_, k) => k !== a.index) };
    case "host.add":
      return { ...s, hosts: [...s.hosts, { agentId: a.agentId, target: "" }] };
    case "host.agent":
      // another host: its targets are its own
      return {
        ...s,
        hosts: s.hosts.map((h, k) => (k === a.index ? { agentId: a.agentId, target: "" } : h)),
      };
    case "host.target":
      return {
        ...s,
        hosts: s.hosts.map((h, k) => (k === a.index ? { ...h, target: a.path } : h)),
      };
    case "host.remove":
      return { ...s, hosts: s.hosts.filter((_, k) => k !== a.index) };
    case "sharedStore":
      return { ...s, sharedStore: a.text };
    case "name":
      return { ...s, name: a.name };
    case "mode":
      return { ...s, mode: a.mode };
    case "workload":
      return { ...s, workloadId: a.id };
    case "shorten":
      return { ...s, shorten: a.value };
    case "scale":
      return { ...s, scale: { workload: a.workload, text: a.text } };
    case "environment":
      return { ...s, environmentId: a.id };
    case "meter":
      return { ...s, meter: a.meter };
    case "idle":
      return { ...s, idle: a.text };
    case "jobfile":
      return { ...s, jobfileText: a.text };
    case "pts":
      // a choice made here: the specification's run at the chosen scale, not the cloned one's
      return { ...s, pts: { ...s.pts, ...a.pts, kept: null } };
    case "job.add": {
      // a copy of the last job, unnamed: the usual next step is one field changed
      const last = s.jobs[s.jobs.length - 1] ?? newJob();
      return { ...s, jobs: [...s.jobs, { ...last, name: "" }] };
    }
    case "job.update":
      return { ...s, jobs: s.jobs.map((x, k) => (k === a.index ? a.job : x)) };
    case "job.move": {
      const jobs = [...s.jobs];
      const [j] = jobs.splice(a.index, 1);
      if (j) jobs.splice(a.index + a.delta, 0, j);
      return { ...s, jobs };
    }
    case "job.remove":
      return { ...s, jobs: s.jobs.filter((_, k) => k !== a.index) };
    case "cloned": {
      const d = a.draft;
      if (s.clonedFrom === d.source_run_id) return s;
      return {
        ...s,
        clonedFrom: d.source_run_id,
        agentId: d.agent_id,
        target: d.target_path,
        more: d.more_targets ?? [],
        name: d.name,
        environmentId: d.environment_id ?? "",
        meter: d.meter ?? undefined,
        idle: d.idle_s == null ? "" : String(d.idle_s),
        ...clonedWorkload(s, d),
        kept: {
          passes: d.workload.passes,
          discard_passes: d.workload.discard_passes,
          shortened_by: d.workload.shortened_by ?? null,
        },
      };
    }
    case "invalid":
      return { ...s, errors: a.errors, formError: null };
    case "submitted":
      return { ...s, errors: {}, formError: null, confirming: a.confirming };
    case "confirm.cancel":
      return { ...s, confirming: null };
    case "rejected":
      return { ...s, confirming: null, errors: a.errors, formError: a.formError };
  }
}

/** A cloned run's workload in the form: a SNIA PTS run in the PTS mode with its parameters kept
 * as it ran them (its test and purge shown), any other as custom jobs. */
function clonedWorkload(s: NewRunState, d: CloneDraft): Partial<NewRunState> {
  const p = d.workload.kind === "pts" ? d.workload.pts : null;
  if (p)
    return {
      mode: "pts",
      pts: {
        test: p.test,
        profile: p.profile,
        throughputBs: p.block_sizes?.[0] ?? s.pts.throughputBs,
        purge: p.purge,
        scale: "",
        kept: p,
      },
    };
  return { mode: "custom", jobs: (d.workload.jobs ?? []).map(jobFromSpec) };
}
