import { QueryClient } from "@tanstack/react-query";
import { ApiError } from "./lib/errors";

/** react-query's own back-off (1 s, 2 s, ... up to 30 s), unless the server named the wait: a read
 * shed by a busy server (503 `overloaded`, ADR 0056) comes back when it said, not sooner, which
 * would only add to the queue it was shed from. */
export function retryDelayMs(failures: number, err: unknown): number {
  if (err instanceof ApiError && err.retryAfterS !== null)
    return Math.min(err.retryAfterS, 60) * 1000;
  return Math.min(1000 * 2 ** failures, 30_000);
}

export function makeQueryClient(): QueryClient {
  return new QueryClient({
    defaultOptions: {
      queries: {
        staleTime: 5_000,
        // Client errors (401, 403, 404, 422) do not get better by retrying.
        retry: (count, err) => !(err instanceof ApiError && err.status < 500) && count < 2,
        retryDelay: retryDelayMs,
        refetchOnWindowFocus: true,
      },
    },
  });
}
