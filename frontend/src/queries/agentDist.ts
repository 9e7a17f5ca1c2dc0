import { queryOptions } from "@tanstack/react-query";
import { api, unwrap } from "../client";
import { keys } from "./keys";

/** The agent bundles this server serves and its certificate's pins (anonymous route). */
export const agentDistQuery = () =>
  queryOptions({
    queryKey: keys.agents.dist(),
    queryFn: async () => unwrap(await api.GET("/api/v1/agent-dist")),
    staleTime: 60_000,
  });
