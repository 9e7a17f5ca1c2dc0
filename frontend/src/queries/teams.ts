// Teams, members, invitations and the audit log (docs/teams.md).
import { queryOptions } from "@tanstack/react-query";
import { api, unwrap } from "../client";
import type { components } from "../client/schema";
import { keys } from "./keys";

type S = components["schemas"];
export type Role = S["Role"];
export type InvitationPreview = S["InvitationPreview"];
export type InvitationAccept = S["InvitationAccept"];

export const teamQuery = (teamId: string) =>
  queryOptions({
    queryKey: keys.teams.detail(teamId),
    queryFn: async () =>
      unwrap(await api.GET("/api/v1/teams/{team_id}", { params: { path: { team_id: teamId } } })),
  });

export async function createTeam(name: string) {
  return unwrap(await api.POST("/api/v1/teams", { body: { name } }));
}

export async function renameTeam(teamId: string, name: string) {
  return unwrap(
    await api.PATCH("/api/v1/teams/{team_id}", {
      params: { path: { team_id: teamId } },
      body: { name },
    }),
  );
}

export const membersQuery = (teamId: string) =>
  queryOptions({
    queryKey: keys.teams.members(teamId),
    queryFn: async () =>
      unwrap(
        await api.GET("/api/v1/teams/{team_id}/members", {
          params: { path: { team_id: teamId } },
        }),
      ),
  });

export async function changeRole(teamId: string, userId: string, role: Role) {
  return unwrap(
    await api.PATCH("/api/v1/teams/{team_id}/members/{user_id}", {
      params: { path: { team_id: teamId, user_id: userId } },
      body: { role },
    }),
  );
}

/** An admin removes a member; a user removing themselves leaves the team. 409 last_admin. */
export async function removeMember(teamId: string, userId: string) {
  const r = await api.DELETE("/api/v1/teams/{team_id}/members/{user_id}", {
    params: { path: { team_id: teamId, user_id: userId } },
  });
  if (!r.response.ok) unwrap(r);
}

export const invitationsQuery = (teamId: string) =>
  queryOptions({
    queryKey: keys.teams.invitations(teamId),
    queryFn: async () =>
      unwrap(
        await api.GET("/api/v1/teams/{team_id}/invitations", {
          params: { path: { team_id: teamId } },
        }),
      ),
  });

/** The answer carries the invitation's URL: the only time it is shown. */
export async function createInvitation(teamId: string, email: string, role: Role) {
  return unwrap(
    await api.POST("/api/v1/teams/{team_id}/invitations", {
      params: { path: { team_id: teamId } },
      body: { email, role },
    }),
  );
}

export async function revokeInvitation(teamId: string, invitationId: string) {
  const r = await api.DELETE("/api/v1/teams/{team_id}/invitations/{invitation_id}", {
    params: { path: { team_id: teamId, invitation_id: invitationId } },
  });
  if (!r.response.ok) unwrap(r);
}

export interface AuditParams {
  action?: string;
  limit: number;
  offset: number;
}

export const auditQuery = (teamId: string, params: AuditParams) =>
  queryOptions({
    queryKey: keys.teams.audit(teamId, params),
    queryFn: async () =>
      unwrap(
        await api.GET("/api/v1/teams/{team_id}/audit", {
          params: {
            path: { team_id: teamId },
            query: { ...params, action: params.action || undefined },
          },
        }),
      ),
  });

/** What the accept page shows before sign-in (no login needed); 410 used/expired/revoked. */
export const invitationQuery = (token: string) =>
  queryOptions({
    queryKey: keys.invitation(token),
    queryFn: async () =>
      unwrap(await api.GET("/api/v1/invitations/{token}", { params: { path: { token } } })),
    retry: false,
  });

/** Creates the account and joins; answers a session like /auth/login. */
export async function acceptInvitation(token: string, body: InvitationAccept) {
  return unwrap(
    await api.POST("/api/v1/invitations/{token}/accept", { params: { path: { token } }, body }),
  );
}
