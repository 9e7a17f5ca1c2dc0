import { keepPreviousData, queryOptions } from "@tanstack/react-query";
import { api, unwrap } from "../client";
import type { ChannelCreate, ChannelUpdate } from "../client/types";

/** What an alert is about (GET /alerts `kind`). */
export type AlertKind = ChannelCreate["events"][number];

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

/** Alerts a page of the Alerts page shows. */
export const ALERTS_PAGE = 50;

/** A page of alerts with their delivery log, newest first: from `offset`, of one `kind` or all. */
export const alertsQuery = (teamId?: string, offset = 0, kind: AlertKind | "" = "") =>
  queryOptions({
    queryKey: keys.alerts.list(teamId, offset, kind),
    // the page says where it starts and its kind: while the next loads, the previous keeps its own
    queryFn: async () => ({
      ...unwrap(
        await api.GET("/api/v1/alerts", {
          params: {
            query: {
              limit: ALERTS_PAGE,
              ...(offset > 0 ? { offset } : {}),
              ...(teamId ? { team_id: teamId } : {}),
              ...(kind ? { kind } : {}),
            },
          },
        }),
      ),
      offset,
      kind,
    }),
    placeholderData: keepPreviousData, // the page stays while the next one loads
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
