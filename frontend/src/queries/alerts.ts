import { queryOptions } from "@tanstack/react-query";
import { api, unwrap } from "../client";
import type { ChannelCreate, ChannelUpdate } from "../client/types";
import { keys } from "./keys";

/** The alert channels of one team (the switcher's) or, without one, of all the user's teams. */
export const alertChannelsQuery = (teamId?: string) =>
  queryOptions({
    queryKey: keys.alerts.channels(teamId),
    queryFn: async () =>
      unwrap(
        await api.GET("/api/v1/alert-channels", {
          params: { query: teamId ? { limit: 100, team_id: teamId } : { limit: 100 } },
        }),
      ),
  });

/** The latest alerts with their delivery log, newest first. */
export const alertsQuery = (teamId?: string) =>
  queryOptions({
    queryKey: keys.alerts.list(teamId),
    queryFn: async () =>
      unwrap(
        await api.GET("/api/v1/alerts", {
          params: { query: teamId ? { limit: 50, team_id: teamId } : { limit: 50 } },
        }),
      ),
    refetchInterval: 15_000,
  });

export async function createAlertChannel(body: ChannelCreate) {
  return unwrap(await api.POST("/api/v1/alert-channels", { body }));
}

export async function updateAlertChannel(id: string, body: ChannelUpdate) {
  return unwrap(
    await api.PATCH("/api/v1/alert-channels/{channel_id}", {
      params: { path: { channel_id: id } },
      body,
    }),
  );
}

export async function deleteAlertChannel(id: string) {
  const r = await api.DELETE("/api/v1/alert-channels/{channel_id}", {
    params: { path: { channel_id: id } },
  });
  if (!r.response.ok) unwrap({ ...r, data: undefined });
}

export async function testAlertChannel(id: string) {
  return unwrap(
    await api.POST("/api/v1/alert-channels/{channel_id}/test", {
      params: { path: { channel_id: id } },
    }),
  );
}
