import { useQuery } from "@tanstack/react-query";
import type { components } from "../../client/schema";
import { meQuery } from "../../queries/auth";

type Role = components["schemas"]["Role"];

/** The signed-in user's id and role in each of `teamIds` (GET /auth/me), for hiding buttons. */
export function useMe(): {
  userId: string | undefined;
  roleIn: (teamId: string | undefined) => Role | undefined;
} {
  const me = useQuery(meQuery());
  return {
    userId: me.data?.id,
    roleIn: (teamId) => (teamId ? me.data?.teams.find((t) => t.id === teamId)?.role : undefined),
  };
}

/**
 * Whether the server would let the user delete an object of `teamId` made by `createdBy`
 * (ADR 0021): an admin anything in the team, a member what they created, a viewer nothing.
 * `createdBy` undefined: the object records no creator (devices, environments, workloads), so
 * admins only.
 */
export function useMayDelete(teamId: string | undefined, createdBy?: string | null): boolean {
  const { userId, roleIn } = useMe();
  const role = roleIn(teamId);
  if (role === "admin") return true;
  return role === "member" && createdBy != null && createdBy === userId;
}
