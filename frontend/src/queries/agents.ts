import { queryOptions } from "@tanstack/react-query";
import { api, unwrap } from "../client";

export const agentsQuery = () =>
  queryOptions({
    queryKey: ["agents"],
    queryFn: async () => unwrap(await api.GET("/api/v1/agents")),
    refetchInterval: 10_000,
  });
