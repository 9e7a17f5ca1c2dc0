import { queryOptions } from "@tanstack/react-query";
import { api, unwrap } from "../client";
import type { EnvironmentCreate, EnvironmentUpdate } from "../client/types";
import { keys } from "./keys";

/** The environments of one team (the switcher's, lib/role useListTeam) or, without one, of all. */
export const environmentsQuery = (teamId?: string) =>
  queryOptions({
    queryKey: keys.environments.list(teamId),
    queryFn: async () =>
      unwrap(
        await api.GET("/api/v1/environments", {
          params: { query: teamId ? { team_id: teamId } : {} },
        }),
      ),
    staleTime: 30_000,
  });

export async function createEnvironment(body: EnvironmentCreate) {
  return unwrap(await api.POST("/api/v1/environments", { body }));
}

export async function updateEnvironment(id: string, body: EnvironmentUpdate) {
  return unwrap(
    await api.PATCH("/api/v1/environments/{environment_id}", {
      params: { path: { environment_id: id } },
      body,
    }),
  );
}

/** Uploads an hourly series (`hour_utc,g_per_kwh` lines) as text/csv, unchanged. */
export async function importGridSeries(id: string, csvText: string) {
  return unwrap(
    await api.PUT("/api/v1/environments/{environment_id}/grid-intensity", {
      params: { path: { environment_id: id } },
      body: csvText,
      bodySerializer: (b: string) => b,
      headers: { "Content-Type": "text/csv" },
    }),
  );
}

/** A run's environment as it was when the run was queued or uploaded, and what changed since. */
export const runEnvironmentQuery = (runId: string) =>
  queryOptions({
    queryKey: keys.environments.run(runId),
    queryFn: async () =>
      unwrap(
        await api.GET("/api/v1/runs/{run_id}/environment", {
          params: { path: { run_id: runId } },
        }),
      ),
    staleTime: 60_000,
  });

/** The topology an agent's inventory shows for the environment (its newest run's agent and path). */
export async function suggestTopology(id: string) {
  return unwrap(
    await api.GET("/api/v1/environments/{environment_id}/topology-suggestion", {
      params: { path: { environment_id: id } },
    }),
  );
}
