import { queryOptions } from "@tanstack/react-query";
import { api, unwrap } from "../client";
import type { EnrollmentTokenCreate } from "../client/types";
import { keys } from "./keys";

/** The agents of one team (the switcher's, lib/role useListTeam) or, without one, of all. */
export const agentsQuery = (teamId?: string) =>
  queryOptions({
    queryKey: keys.agents.list(teamId),
    queryFn: async () =>
      unwrap(
        await api.GET("/api/v1/agents", { params: { query: teamId ? { team_id: teamId } : {} } }),
      ),
    refetchInterval: 10_000,
  });

/** Revoked at once: the agent's token is refused on its next call (admin). */
export async function revokeAgent(id: string) {
  return unwrap(
    await api.POST("/api/v1/agents/{agent_id}/revoke", { params: { path: { agent_id: id } } }),
  );
}

export async function deleteAgent(id: string) {
  const r = await api.DELETE("/api/v1/agents/{agent_id}", { params: { path: { agent_id: id } } });
  if (!r.response.ok) unwrap(r);
}

export const enrollmentTokensQuery = () =>
  queryOptions({
    queryKey: keys.agents.enrollmentTokens(),
    queryFn: async () => unwrap(await api.GET("/api/v1/agents/enrollment-tokens")),
  });

/** The token is in the answer once; the list never shows it again. */
export async function createEnrollmentToken(body: EnrollmentTokenCreate) {
  return unwrap(await api.POST("/api/v1/agents/enrollment-tokens", { body }));
}

export async function revokeEnrollmentToken(id: string) {
  const r = await api.DELETE("/api/v1/agents/enrollment-tokens/{token_id}", {
    params: { path: { token_id: id } },
  });
  if (!r.response.ok) unwrap(r);
}
