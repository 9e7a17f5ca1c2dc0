import { queryOptions } from "@tanstack/react-query";
import { api, unwrap } from "../client";
import { keys } from "./keys";

export const healthQuery = () =>
  queryOptions({
    queryKey: keys.health(),
    queryFn: async () => unwrap(await api.GET("/api/v1/health")),
    refetchInterval: 30_000,
  });
