import { type QueryClient, queryOptions } from "@tanstack/react-query";
import { api, unwrap } from "../client";
import type { operations } from "../client/schema";
import {
  isActive,
  type RunCreate,
  type RunLive,
  type RunRead,
  type RunStatus,
} from "../client/types";
import { energyComputing } from "../lib/energy";
import { keys } from "./keys";

/** How often lists and pages poll while a run is queued, assigned or running. */
export const LIVE_INTERVAL_MS = 2000;

type ListQuery = NonNullable<operations["list_runs"]["parameters"]["query"]>;
/** GET /api/v1/runs's filters (lib/runFilters.ts builds them from the URL); one status or several. */
export type RunListParams = Omit<ListQuery, "status"> & {
  status?: RunStatus | RunStatus[] | null;
};

export const runsQuery = (params: RunListParams = {}) =>
  queryOptions({
    queryKey: keys.runs.list(params),
    queryFn: async () => {
      const { status, ...rest } = params;
      const query: ListQuery = status == null ? rest : { ...rest, status: [status].flat() };
      return unwrap(await api.GET("/api/v1/runs", { params: { query } }));
    },
    refetchInterval: (query) =>
      query.state.data?.items.some((r) => isActive(r.status)) ? LIVE_INTERVAL_MS : 10_000,
  });

/** Energy the server is still computing is asked for again after 2 s, doubling up to 30 s. */
export const ENERGY_POLL_MAX_MS = 30_000;

/** The wait before the next poll after `n` answers in a row said the energy is being computed. */
export function energyPollDelay(n: number): number {
  return Math.min(ENERGY_POLL_MAX_MS, LIVE_INTERVAL_MS * 2 ** Math.max(0, n - 1));
}

/** Per run query: how many answers in a row said "computing", and the last one counted. */
const computingAnswers = new WeakMap<object, { at: number; n: number }>();

/** `follow`: "run" asks the whole run every 2 s while it is active; "progress" leaves that to
 * runLiveQuery (the run page: ~0.5 KB a poll instead of the whole run, 53-66 KB for an 80-job run).
 * Either way, once the run ended, it is asked again while the server computes its energy. */
export const runQuery = (id: string, follow: "run" | "progress" = "run") =>
  queryOptions({
    queryKey: keys.runs.detail(id),
    queryFn: async () =>
      unwrap(await api.GET("/api/v1/runs/{run_id}", { params: { path: { run_id: id } } })),
    // Live while the run is active; then, while the server computes its energy, with back-off;
    // not at all once the energy is final (computed, failed, or never measurable).
    refetchInterval: (query) => {
      const run = query.state.data;
      if (!run) return false;
      if (isActive(run.status)) return follow === "run" ? LIVE_INTERVAL_MS : false;
      if (!energyComputing(run.energy)) {
        computingAnswers.delete(query);
        return false;
      }
      const seen = computingAnswers.get(query) ?? { at: -1, n: 0 };
      if (seen.at !== query.state.dataUpdatedAt) {
        seen.at = query.state.dataUpdatedAt;
        seen.n += 1;
        computingAnswers.set(query, seen);
      }
      return energyPollDelay(seen.n);
    },
  });

/** The `t_s` of the last engine report the run holds (none: it holds none). */
export function lastSampleS(run: RunRead | undefined): number | undefined {
  return run?.progress?.samples.at(-1)?.t_s;
}

/** The run with a poll's answer folded in: the latest report, its new samples after those held (at
 * most the `samples_kept` the server keeps); null when the answer's status or cancel request is not
 * the run's (it started, ended or is being cancelled): the whole run is to be read again. Samples the
 * run already holds (the whole run read again while the poll was out) are not added twice. */
export function withLive(run: RunRead, live: RunLive): RunRead | null {
  if (live.status !== run.status || live.cancel_requested !== run.cancel_requested) return null;
  if (!live.progress) return run;
  const held = run.progress?.samples ?? [];
  const last = lastSampleS(run) ?? Number.NEGATIVE_INFINITY;
  const fresh = live.progress.samples.filter((s) => s.t_s > last);
  const samples = fresh.length ? [...held, ...fresh].slice(-live.samples_kept) : held;
  return { ...run, progress: { ...live.progress, samples } };
}

/** An open page of an active run follows it with this (GET /runs/{id}/progress every 2 s): each
 * answer is folded into the run's own query (runQuery's data, which the page draws), or that query is
 * asked again when the run's status moved. Its own data is only the status last seen. */
export const runLiveQuery = (id: string, qc: QueryClient) =>
  queryOptions({
    queryKey: keys.runs.live(id),
    queryFn: async () => {
      const key = keys.runs.detail(id);
      const since = lastSampleS(qc.getQueryData<RunRead>(key));
      const live = unwrap(
        await api.GET("/api/v1/runs/{run_id}/progress", {
          params: { path: { run_id: id }, query: since == null ? {} : { since_t_s: since } },
        }),
      );
      const run = qc.getQueryData<RunRead>(key);
      const next = run && withLive(run, live);
      if (next) qc.setQueryData(key, next);
      else await qc.invalidateQueries({ queryKey: key, exact: true });
      return live.status;
    },
    refetchInterval: LIVE_INTERVAL_MS,
    gcTime: 0,
  });

/**
 * Per-second series. The run's status is part of the key, so the series is fetched again
 * when a run finishes (its samples are stored with the result) and polled while it runs.
 */
export const runSeriesQuery = (id: string, status: RunStatus) =>
  queryOptions({
    queryKey: keys.runs.series(id, status),
    queryFn: async () =>
      unwrap(await api.GET("/api/v1/runs/{run_id}/series", { params: { path: { run_id: id } } })),
    refetchInterval: isActive(status) ? LIVE_INTERVAL_MS : false,
  });

export const runResultQuery = (id: string) =>
  queryOptions({
    queryKey: keys.runs.result(id),
    queryFn: async () =>
      unwrap(await api.GET("/api/v1/runs/{run_id}/result", { params: { path: { run_id: id } } })),
    staleTime: Number.POSITIVE_INFINITY,
  });

export async function createRun(body: RunCreate) {
  return unwrap(await api.POST("/api/v1/runs", { body }));
}

export async function cancelRun(id: string) {
  return unwrap(
    await api.POST("/api/v1/runs/{run_id}/cancel", { params: { path: { run_id: id } } }),
  );
}

/** Host, device, file system, cache mode and validity flags of one run (the run page's header). */
export const runSystemQuery = (id: string, status: RunStatus) =>
  queryOptions({
    // the device is identified from what the engine opened: asked again when the status moves
    queryKey: keys.runs.system(id, status),
    queryFn: async () =>
      unwrap(await api.GET("/api/v1/runs/{run_id}/system", { params: { path: { run_id: id } } })),
    staleTime: 60_000,
  });

/** A team's tags with how many runs carry each (the tag filter's suggestions); all teams without one. */
export const tagsQuery = (teamId?: string) =>
  queryOptions({
    queryKey: keys.runs.tags(teamId ?? "all"),
    queryFn: async () =>
      unwrap(
        await api.GET("/api/v1/tags", { params: { query: teamId ? { team_id: teamId } : {} } }),
      ),
    staleTime: 30_000,
  });

/** Replace a run's tags (members of its team); the answer is the run as it is now. */
export async function setRunTags(id: string, tags: string[]) {
  return unwrap(
    await api.PUT("/api/v1/runs/{run_id}/tags", {
      params: { path: { run_id: id } },
      body: { tags },
    }),
  );
}
