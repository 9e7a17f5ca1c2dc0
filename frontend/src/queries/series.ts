import { queryOptions } from "@tanstack/react-query";
import { api, unwrap } from "../client";
import type {
  DetectionUpdate,
  MetricName,
  SeriesCreate,
  SeriesUpdate,
  ThresholdsIn,
} from "../client/types";
import { keys } from "./keys";

export interface SeriesFilters {
  team_id?: string;
  device_id?: string;
  agent_id?: string;
  workload_id?: string;
  run_id?: string;
  archived?: boolean;
}

/** Series of the user's teams (pinned first, then by their last run), by the filters given. */
export const seriesListQuery = (filters: SeriesFilters) =>
  queryOptions({
    queryKey: keys.series.list(filters),
    queryFn: async () =>
      unwrap(await api.GET("/api/v1/series", { params: { query: { limit: 200, ...filters } } })),
  });

export const seriesQuery = (id: string) =>
  queryOptions({
    queryKey: keys.series.detail(id),
    queryFn: async () =>
      unwrap(await api.GET("/api/v1/series/{series_id}", { params: { path: { series_id: id } } })),
  });

/** One metric of one job over the series' runs; the server downsamples beyond 2,000 runs. */
export const seriesHistoryQuery = (id: string, metric: MetricName, job: number) =>
  queryOptions({
    queryKey: keys.series.history(id, metric, job),
    queryFn: async () =>
      unwrap(
        await api.GET("/api/v1/series/{series_id}/history", {
          params: { path: { series_id: id }, query: { metric, job_index: job, max_points: 2000 } },
        }),
      ),
  });

/** A run's series, made when there is none yet (the earlier runs of its workload, target and
 * environment join it). */
export async function createSeries(body: SeriesCreate) {
  return unwrap(await api.POST("/api/v1/series", { body }));
}

export async function updateSeries(id: string, body: SeriesUpdate) {
  return unwrap(
    await api.PATCH("/api/v1/series/{series_id}", { params: { path: { series_id: id } }, body }),
  );
}

export async function reviewDetection(
  seriesId: string,
  detectionId: string,
  body: DetectionUpdate,
) {
  return unwrap(
    await api.PATCH("/api/v1/series/{series_id}/detections/{detection_id}", {
      params: { path: { series_id: seriesId, detection_id: detectionId } },
      body,
    }),
  );
}

/** A team's default detection thresholds and the values in effect. */
export const teamThresholdsQuery = (teamId: string) =>
  queryOptions({
    queryKey: keys.series.teamThresholds(teamId),
    queryFn: async () =>
      unwrap(
        await api.GET("/api/v1/series/thresholds", { params: { query: { team_id: teamId } } }),
      ),
  });

export async function setTeamThresholds(teamId: string, body: ThresholdsIn) {
  return unwrap(
    await api.PUT("/api/v1/series/thresholds", { params: { query: { team_id: teamId } }, body }),
  );
}
