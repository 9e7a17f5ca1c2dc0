import { queryOptions } from "@tanstack/react-query";
import { api, unwrap } from "../client";
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
