import { queryOptions } from "@tanstack/react-query";
import { api, unwrap } from "../client";

/** The agent bundles this server serves and its certificate's pins (anonymous route). */
export const agentDistQuery = () =>
  queryOptions({
    queryKey: ["agent-dist"] as const,
    queryFn: async () => unwrap(await api.GET("/api/v1/agent-dist")),
    staleTime: 60_000,
  });
