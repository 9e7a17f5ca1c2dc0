import { queryOptions } from "@tanstack/react-query";
import { api, unwrap } from "../client";
import type { ScheduleCreate, ScheduleUpdate } from "../client/types";
import { keys } from "./keys";

/** The schedules (recurring campaigns) of one team (the switcher's) or, without one, of all. */
export const schedulesQuery = (teamId?: string) =>
  queryOptions({
    queryKey: keys.schedules.list(teamId),
    queryFn: async () =>
      unwrap(
        await api.GET("/api/v1/schedules", {
          params: { query: teamId ? { limit: 100, team_id: teamId } : { limit: 100 } },
        }),
      ),
    refetchInterval: 30_000,
  });

/** A schedule's recent slots, newest first: queued (with the campaign) or skipped (with why). */
export const scheduleSlotsQuery = (id: string) =>
  queryOptions({
    queryKey: keys.schedules.slots(id),
    queryFn: async () =>
      unwrap(
        await api.GET("/api/v1/schedules/{schedule_id}/slots", {
          params: { path: { schedule_id: id }, query: { limit: 20 } },
        }),
      ),
  });

export async function createSchedule(body: ScheduleCreate) {
  return unwrap(await api.POST("/api/v1/schedules", { body }));
}

export async function updateSchedule(id: string, body: ScheduleUpdate) {
  return unwrap(
    await api.PATCH("/api/v1/schedules/{schedule_id}", {
      params: { path: { schedule_id: id } },
      body,
    }),
  );
}

export async function deleteSchedule(id: string) {
  const r = await api.DELETE("/api/v1/schedules/{schedule_id}", {
    params: { path: { schedule_id: id } },
  });
  if (!r.response.ok) unwrap({ ...r, data: undefined });
}
