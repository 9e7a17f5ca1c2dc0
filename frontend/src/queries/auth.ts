import { queryOptions } from "@tanstack/react-query";
import { api, unwrap } from "../client";
import type { EmailChange, PasswordChange, TokenCreate } from "../client/types";
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

// --- who owns an e-mail (docs/adr/0026) ---

/** Mails the signed-in account a link proving its address (503 when the server sends no mail). */
export async function sendEmailVerification() {
  return unwrap(await api.POST("/api/v1/auth/email-verification"));
}

/** The mailed token, confirmed by the account it was sent to (signed in). */
export async function confirmEmailVerification(token: string) {
  const r = await api.POST("/api/v1/auth/email-verification/confirm", { body: { token } });
  if (!r.response.ok) unwrap(r);
}

/** No login: the same answer whether or not an account uses the address. */
export async function requestPasswordReset(email: string) {
  return unwrap(await api.POST("/api/v1/auth/password-reset", { body: { email } }));
}

/** A mailed or an administrator's reset token and the new password: a browser session. */
export async function confirmPasswordReset(token: string, password: string) {
  return unwrap(
    await api.POST("/api/v1/auth/password-reset/confirm", { body: { token, password } }),
  );
}

/** The server's accounts (instance administrators only). */
export const adminUsersQuery = (q: string) =>
  queryOptions({
    queryKey: keys.auth.adminUsers(q),
    queryFn: async () =>
      unwrap(
        await api.GET("/api/v1/admin/users", {
          params: { query: { q: q || undefined, limit: 100 } },
        }),
      ),
  });

/** A one-use reset link for an account, shown once: the administrator hands it to its owner. */
export async function issueResetLink(userId: string) {
  return unwrap(
    await api.POST("/api/v1/admin/users/{user_id}/reset-link", {
      params: { path: { user_id: userId } },
    }),
  );
}

// --- one's own account (issue 30) ---

/** The current password and a new one: the account's other browser sessions end. */
export async function changePassword(body: PasswordChange) {
  return unwrap(await api.POST("/api/v1/auth/password", { body }));
}

/** The current password and a new address (unproven until a verification mail is confirmed). */
export async function changeEmail(body: EmailChange) {
  return unwrap(await api.POST("/api/v1/auth/email", { body }));
}
