import { queryOptions } from "@tanstack/react-query";
import { api, unwrap } from "../client";

export const workloadsQuery = () =>
  queryOptions({
    queryKey: ["workloads"],
    queryFn: async () => unwrap(await api.GET("/api/v1/workloads")),
    staleTime: 5 * 60_000,
  });
