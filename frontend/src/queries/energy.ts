import { queryOptions } from "@tanstack/react-query";
import { api, unwrap } from "../client";
import type { EnergyRead } from "../client/types";
import { keys } from "./keys";

/** Power over time (server-bucketed mean/min/max); fetched again when the energy status changes. */
export const runPowerQuery = (id: string, status: EnergyRead["status"]) =>
  queryOptions({
    queryKey: keys.runs.power(id, status),
    queryFn: async () =>
      unwrap(await api.GET("/api/v1/runs/{run_id}/power", { params: { path: { run_id: id } } })),
    staleTime: 60_000,
  });

export const gridIntensitiesQuery = () =>
  queryOptions({
    queryKey: keys.carbon.gridIntensities(),
    queryFn: async () => unwrap(await api.GET("/api/v1/carbon/grid-intensities")),
    staleTime: Number.POSITIVE_INFINITY,
  });

export const embodiedDefaultsQuery = () =>
  queryOptions({
    queryKey: keys.carbon.embodiedDefaults(),
    queryFn: async () => unwrap(await api.GET("/api/v1/carbon/embodied-defaults")),
    staleTime: Number.POSITIVE_INFINITY,
  });
