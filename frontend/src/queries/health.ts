import { queryOptions } from "@tanstack/react-query";
import { api, unwrap } from "../client";

export const healthQuery = () =>
  queryOptions({
    queryKey: ["health"],
    queryFn: async () => unwrap(await api.GET("/api/v1/health")),
    refetchInterval: 30_000,
  });
