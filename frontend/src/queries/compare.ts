import { queryOptions } from "@tanstack/react-query";
import { api, unwrap } from "../client";

export const compareQuery = (runIds: string[]) =>
  queryOptions({
    queryKey: ["compare", runIds],
    queryFn: async () =>
      unwrap(await api.GET("/api/v1/compare", { params: { query: { runs: runIds.join(",") } } })),
    enabled: runIds.length >= 2,
  });
