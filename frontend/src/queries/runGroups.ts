import { queryOptions } from "@tanstack/react-query";
import { api, unwrap } from "../client";
import type { components } from "../client/schema";
import { keys } from "./keys";
import { LIVE_INTERVAL_MS } from "./runs";

export type RunGroupRead = components["schemas"]["RunGroupRead"];
export type RunGroupCreate = components["schemas"]["RunGroupCreate"];

const FINAL: RunGroupRead["status"][] = ["succeeded", "failed", "cancelled"];

/** A group run (GET /run-groups/{id}): its members, their clocks and start skew, the combined
 * figure. Live until every member has finished and the combined energy is in. */
export const runGroupQuery = (id: string) =>
  queryOptions({
    queryKey: keys.runGroups.detail(id),
    queryFn: async () =>
      unwrap(
        await api.GET("/api/v1/run-groups/{group_id}", { params: { path: { group_id: id } } }),
      ),
    refetchInterval: (query) => {
      const g = query.state.data;
      if (!g) return false;
      const energyDue =
        g.combined != null && !g.combined.energy_complete && g.combined.energy_j == null;
      return FINAL.includes(g.status) && !energyDue ? false : LIVE_INTERVAL_MS;
    },
  });

/** Queue a group run (POST /run-groups): one member run per host, started at one instant. */
export async function createRunGroup(body: RunGroupCreate) {
  return unwrap(await api.POST("/api/v1/run-groups", { body }));
}
