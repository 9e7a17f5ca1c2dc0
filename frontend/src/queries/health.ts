import { queryOptions } from "@tanstack/react-query";
import { api, unwrap } from "../client";
import { keys } from "./keys";

/** The server's version (the footer): /health answers it to a signed-in caller. */
export const serverVersionQuery = () =>
  queryOptions({
    queryKey: keys.health.version(),
    queryFn: async () => {
      const h = unwrap(await api.GET("/api/v1/health"));
      return "version" in h ? h.version : null;
    },
    staleTime: 10 * 60_000,
  });
