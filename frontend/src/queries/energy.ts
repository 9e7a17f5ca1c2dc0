import { queryOptions } from "@tanstack/react-query";
import { api, unwrap } from "../client";
import type { EnergyRead } from "../client/types";

/** Power over time (server-bucketed mean/min/max); fetched again when the energy status changes. */
export const runPowerQuery = (id: string, status: EnergyRead["status"]) =>
  queryOptions({
    queryKey: ["runs", "power", id, status],
    queryFn: async () =>
      unwrap(await api.GET("/api/v1/runs/{run_id}/power", { params: { path: { run_id: id } } })),
    staleTime: 60_000,
  });

export const gridIntensitiesQuery = () =>
  queryOptions({
    queryKey: ["carbon", "grid-intensities"],
    queryFn: async () => unwrap(await api.GET("/api/v1/carbon/grid-intensities")),
    staleTime: Number.POSITIVE_INFINITY,
  });

export const embodiedDefaultsQuery = () =>
  queryOptions({
    queryKey: ["carbon", "embodied-defaults"],
    queryFn: async () => unwrap(await api.GET("/api/v1/carbon/embodied-defaults")),
    staleTime: Number.POSITIVE_INFINITY,
  });
