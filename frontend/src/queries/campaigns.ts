import { queryOptions } from "@tanstack/react-query";
import { api, unwrap } from "../client";
import type { CampaignCreate } from "../client/types";
import { keys } from "./keys";
import { LIVE_INTERVAL_MS } from "./runs";

/** The campaigns of one team (the switcher's, lib/role useListTeam) or, without one, of all. */
export const campaignsQuery = (teamId?: string) =>
  queryOptions({
    queryKey: keys.campaigns.list(teamId),
    queryFn: async () =>
      unwrap(
        await api.GET("/api/v1/campaigns", {
          params: { query: teamId ? { limit: 100, team_id: teamId } : { limit: 100 } },
        }),
      ),
    refetchInterval: (q) => (q.state.data?.items.some((c) => !c.done) ? LIVE_INTERVAL_MS : 15_000),
  });

export const campaignQuery = (id: string) =>
  queryOptions({
    queryKey: keys.campaigns.detail(id),
    queryFn: async () =>
      unwrap(
        await api.GET("/api/v1/campaigns/{campaign_id}", { params: { path: { campaign_id: id } } }),
      ),
    refetchInterval: (q) => (q.state.data?.done ? false : LIVE_INTERVAL_MS),
  });

export async function createCampaign(body: CampaignCreate) {
  return unwrap(await api.POST("/api/v1/campaigns", { body }));
}

/** What a campaign body would queue: cells, runs and measuring time (nothing is queued). */
export const campaignPlanQuery = (body: CampaignCreate | null) =>
  queryOptions({
    queryKey: keys.campaigns.plan(JSON.stringify(body)),
    queryFn: async () => {
      if (body === null) throw new Error("no campaign to plan");
      return unwrap(await api.POST("/api/v1/campaigns/plan", { body }));
    },
    enabled: body !== null,
    retry: false,
    staleTime: 60_000,
  });
