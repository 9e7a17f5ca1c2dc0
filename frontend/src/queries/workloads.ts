import { queryOptions } from "@tanstack/react-query";
import { api, unwrap } from "../client";
import type { WorkloadCreate, WorkloadSpec, WorkloadSpecIn } from "../client/types";
import { keys } from "./keys";

/** The workloads of one team (and the built-in ones), or of all the user's teams without one. */
export const workloadsQuery = (teamId?: string) =>
  queryOptions({
    queryKey: keys.workloads.list(teamId),
    queryFn: async () =>
      unwrap(
        await api.GET("/api/v1/workloads", {
          params: { query: teamId ? { team_id: teamId } : {} },
        }),
      ),
    staleTime: 5 * 60_000,
  });

/** One workload (a team's or a built-in preset). */
export const workloadQuery = (id: string) =>
  queryOptions({
    queryKey: keys.workloads.detail(id),
    queryFn: async () =>
      unwrap(
        await api.GET("/api/v1/workloads/{workload_id}", {
          params: { path: { workload_id: id } },
        }),
      ),
    staleTime: 5 * 60_000,
  });

export async function createWorkload(body: WorkloadCreate) {
  return unwrap(await api.POST("/api/v1/workloads", { body }));
}

/**
 * What the engine's `--parse-only` says a file workload does at `factor` × its saved scale (the
 * run's `scale`): file-set bytes, files, directories, duration. Read by the server from the engine
 * (POST /workloads/facts); nothing is saved or queued.
 */
export const workloadFactsQuery = (spec: WorkloadSpec | WorkloadSpecIn, factor: number) =>
  queryOptions({
    queryKey: keys.workloads.facts(spec, factor),
    queryFn: async () =>
      unwrap(
        await api.POST("/api/v1/workloads/facts", {
          // a saved workload states every setting (only an imported run's jobs leave some unstated)
          body: { spec: spec as WorkloadSpecIn, scale: factor === 1 ? null : factor },
        }),
      ),
    staleTime: Number.POSITIVE_INFINITY,
  });

/**
 * The jobs the engine makes of a fio job file (POST /workloads/jobfile: `--untrusted
 * --parse-only` on the server; nothing saved). A refusal is an ApiError whose field error reads
 * "line N: OPTION: reason".
 */
export const jobfileParseQuery = (text: string) =>
  queryOptions({
    queryKey: keys.workloads.jobfile(text),
    queryFn: async () => unwrap(await api.POST("/api/v1/workloads/jobfile", { body: { text } })),
    staleTime: Number.POSITIVE_INFINITY,
    retry: false,
  });
