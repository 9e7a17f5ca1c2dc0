import { queryOptions } from "@tanstack/react-query";
import { api, unwrap } from "../client";
import { keys } from "./keys";

export const workloadsQuery = () =>
  queryOptions({
    queryKey: keys.workloads.all(),
    queryFn: async () => unwrap(await api.GET("/api/v1/workloads")),
    staleTime: 5 * 60_000,
  });
