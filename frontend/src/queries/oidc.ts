import { queryOptions } from "@tanstack/react-query";
import { api, unwrap } from "../client";
import { keys } from "./keys";

/** Whether the server offers sign-in with OpenID Connect, and the button's name. */
export const oidcConfigQuery = () =>
  queryOptions({
    queryKey: keys.auth.oidc(),
    queryFn: async () => unwrap(await api.GET("/api/v1/auth/oidc")),
    staleTime: 5 * 60_000,
  });

/** Trades the one-time code of the sign-in callback for a session (as a password login answers). */
export async function finishOidcSignIn(code: string) {
  return unwrap(await api.POST("/api/v1/auth/oidc/session", { body: { code } }));
}

/** The link step: the password of the account that claims the provider's address (ADR 0026). */
export async function linkOidcAccount(code: string, password: string) {
  return unwrap(await api.POST("/api/v1/auth/oidc/link", { body: { code, password } }));
}
