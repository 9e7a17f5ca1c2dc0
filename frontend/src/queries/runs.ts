import { queryOptions } from "@tanstack/react-query";
import { api, unwrap } from "../client";
import { isActive, type RunCreate, type RunStatus } from "../client/types";
import { keys } from "./keys";

/** How often lists and pages poll while a run is queued, assigned or running. */
export const LIVE_INTERVAL_MS = 2000;

interface RunListParams {
  status?: RunStatus;
  agent_id?: string;
  limit?: number;
  offset?: number;
}

export const runsQuery = (params: RunListParams = {}) =>
  queryOptions({
    queryKey: keys.runs.list(params),
    queryFn: async () => unwrap(await api.GET("/api/v1/runs", { params: { query: params } })),
    refetchInterval: (query) =>
      query.state.data?.items.some((r) => isActive(r.status)) ? LIVE_INTERVAL_MS : 10_000,
  });

export const runQuery = (id: string) =>
  queryOptions({
    queryKey: keys.runs.detail(id),
    queryFn: async () =>
      unwrap(await api.GET("/api/v1/runs/{run_id}", { params: { path: { run_id: id } } })),
    // Also polled while the worker computes the run's energy from its power samples.
    refetchInterval: (query) =>
      query.state.data &&
      (isActive(query.state.data.status) || query.state.data.energy.status === "pending")
        ? LIVE_INTERVAL_MS
        : false,
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
