import { queryOptions } from "@tanstack/react-query";
import { api, unwrap } from "../client";
import type { TokenCreate } from "../client/types";
import { keys } from "./keys";

export async function login(email: string, password: string) {
  return unwrap(await api.POST("/api/v1/auth/login", { body: { email, password } }));
}

/** Ends the browser session on the server (its token is refused from now on). */
export async function logout() {
  const r = await api.POST("/api/v1/auth/logout");
  if (!r.response.ok) unwrap(r);
}

export const meQuery = () =>
  queryOptions({
    queryKey: keys.auth.me(),
    queryFn: async () => unwrap(await api.GET("/api/v1/auth/me")),
    staleTime: 60_000,
  });

/** The user's browser sessions and API tokens; revoked and expired ones only when asked. */
export const apiTokensQuery = (includeInactive = false) =>
  queryOptions({
    queryKey: keys.auth.tokenList(includeInactive),
    queryFn: async () =>
      unwrap(
        await api.GET("/api/v1/auth/tokens", {
          params: { query: { include_inactive: includeInactive, limit: 500 } },
        }),
      ),
  });

/** The secret is in the answer once; the list never shows it again. */
export async function createApiToken(body: TokenCreate) {
  return unwrap(await api.POST("/api/v1/auth/tokens", { body }));
}

export async function revokeApiToken(id: string) {
  const r = await api.DELETE("/api/v1/auth/tokens/{token_id}", {
    params: { path: { token_id: id } },
  });
  if (!r.response.ok) unwrap(r);
}
