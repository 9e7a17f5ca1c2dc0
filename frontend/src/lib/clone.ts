// Clone and re-run: the run page links to the New run form with the source run's id
// in the URL (`/runs/new?from=<run id>`), so the link survives a reload and can be shared. The
// form reads the id with `cloneSource`, loads that run (runQuery) and prefills itself from
// `cloneDraft(run)`: the exact workload the run ran (its stored spec, every job as run), the same
// host, target, meter, environment and idle baseline, and a name marking it as a re-run.
// The form still checks everything as for a new run (host policy, limits): nothing is re-used blindly.
import type { RunCreate, RunRead, WorkloadSpecIn } from "../client/types";

/** The query parameter of the New run form that names the run to clone. */
export const CLONE_PARAM = "from";

/** What the New run form is prefilled with: a complete RunCreate body (custom workload). */
export interface CloneDraft {
  agent_id: string;
  target_path: string;
  /** A multi-target run's other targets (its first is target_path); empty for one target. */
  more_targets?: string[];
  /** The workload exactly as the source run ran it (`spec_version` dropped: the server stamps it). */
  workload: WorkloadSpecIn;
  /** The saved workload the source came from (null for a custom one): for display only. */
  source_workload_id: string | null;
  name: string;
  environment_id: string | null;
  /** As RunCreate.meter: null = the host's default, "" = none, else a meter name. */
  meter: string | null;
  idle_s: number | null;
  /** The run it was cloned from. */
  source_run_id: string;
}

/** The New run form's URL that clones `runId`. */
export function cloneHref(runId: string): string {
  return `/runs/new?${CLONE_PARAM}=${encodeURIComponent(runId)}`;
}

/** The run id the New run form was asked to clone, if any. */
export function cloneSource(search: URLSearchParams | string): string | null {
  const params = typeof search === "string" ? new URLSearchParams(search) : search;
  const id = params.get(CLONE_PARAM)?.trim();
  return id ? id : null;
}

/** "re-run of <name>", without stacking "re-run of re-run of …". */
export function cloneName(name: string): string {
  const base = name.replace(/^(re-run of )+/, "");
  return `re-run of ${base}`.slice(0, 200);
}

export function cloneDraft(run: RunRead): CloneDraft {
  // a measured run's spec states every setting (only an imported run's leave some unstated)
  const { spec_version: _version, ...spec } = run.workload as WorkloadSpecIn & {
    spec_version?: number;
  };
  return {
    agent_id: run.agent_id,
    target_path: run.target_path,
    more_targets: (run.targets ?? []).slice(1).map((t) => t.target_path),
    workload: structuredClone(spec) as WorkloadSpecIn,
    source_workload_id: run.workload_id,
    name: cloneName(run.name),
    environment_id: run.environment_id,
    meter: run.meter,
    idle_s: run.idle_s,
    source_run_id: run.id,
  };
}

/** The body the form would send unchanged: a clone is a complete, valid RunCreate. */
export function cloneBody(d: CloneDraft): RunCreate {
  const more = d.more_targets ?? [];
  return {
    agent_id: d.agent_id,
    ...(more.length > 0
      ? { targets: [d.target_path, ...more].map((target_path) => ({ target_path })) }
      : { target_path: d.target_path }),
    workload: d.workload,
    workload_id: null,
    // a destructive write is confirmed again in the form (the device's model typed), never copied
    destructive: false,
    name: d.name,
    environment_id: d.environment_id,
    meter: d.meter,
    idle_s: d.idle_s,
  };
}
