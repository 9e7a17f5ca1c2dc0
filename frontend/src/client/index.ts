// The runtime API client: openapi-fetch over the generated `paths` types. Only
// src/queries/* may import it. Its middleware adds the bearer token and sends the user
// back to the login page on any 401.
import createClient, { type Middleware } from "openapi-fetch";
import { clearToken, getToken } from "../lib/auth";
import { ApiError } from "../lib/errors";
import type { paths } from "./schema";

const auth: Middleware = {
  onRequest({ request }) {
    const token = getToken();
    if (token) request.headers.set("Authorization", `Bearer ${token}`);
    return request;
  },
  onResponse({ response }) {
    if (response.status === 401) clearToken();
    return response;
  },
};

export const api = createClient<paths>({
  baseUrl: typeof window === "undefined" ? "http://localhost" : window.location.origin,
  // Looked up per call, so tests can stub globalThis.fetch.
  fetch: (request) => globalThis.fetch(request),
});
api.use(auth);

/** Returns `data` or throws an ApiError carrying the server's error body. */
export function unwrap<T>(result: { data?: T; error?: unknown; response: Response }): T {
  if (result.error !== undefined || result.data === undefined) {
    throw new ApiError(result.response.status, result.error);
  }
  return result.data;
}
