// Who may do what in the UI, from the roles GET /auth/me gives per team. The server enforces
// every rule (403 naming the role); this only hides the buttons a role cannot use, so the two
// must agree: NEEDS below mirrors the services' `principal.require(team, Role.x)` calls.
//
// The current team (the header's switcher) persists in localStorage: pages that create things
// in a team use it, role checks without an explicit team read it, and the lists show only its
// rows (useListTeam) unless "All my teams" is picked (a user in 2+ teams), which keeps the
// current team for creating and adds a Team column/chip to the lists.
import { useQuery } from "@tanstack/react-query";
import { useSyncExternalStore } from "react";
import type { components } from "../client/schema";
import { meQuery } from "../queries/auth";
import { useToken } from "./auth";

export type Role = components["schemas"]["Role"];
export type TeamRole = components["schemas"]["TeamRole"];

const RANK: Record<Role, number> = { viewer: 0, member: 1, admin: 2 };

/** What a button does, and the least role that may do it in the object's team. */
export const NEEDS = {
  "run.create": "member",
  "run.cancel": "member",
  "run.tag": "member",
  "campaign.create": "member",
  "workload.create": "member",
  "environment.edit": "member",
  "device.edit": "member",
  "share.create": "member",
  "comment.create": "member",
  "series.edit": "member",
  "agent.manage": "admin",
  "enrollment.manage": "admin",
  "team.manage": "admin",
  "audit.read": "admin",
  "alert.manage": "admin",
} as const satisfies Record<string, Role>;

export type Action = keyof typeof NEEDS;

/** True when `role` is at least `least`. */
export function atLeast(role: Role | null | undefined, least: Role): boolean {
  return role != null && RANK[role] >= RANK[least];
}

/** True when a caller with `role` may do `action`; no role (not a member, or still loading) may not. */
export function can(role: Role | null | undefined, action: Action): boolean {
  return atLeast(role, NEEDS[action]);
}

const KEY = "iowatt.team";
const ALL_KEY = "iowatt.team.all";
const listeners = new Set<() => void>();

export function getCurrentTeamId(): string | null {
  return localStorage.getItem(KEY);
}

/** Picking a team also leaves "All my teams". */
export function setCurrentTeamId(id: string): void {
  localStorage.setItem(KEY, id);
  localStorage.removeItem(ALL_KEY);
  for (const l of listeners) l();
}

function getAllTeams(): boolean {
  return localStorage.getItem(ALL_KEY) === "1";
}

/** "All my teams": the lists show every team's rows; the current team stays for creating. */
export function setAllTeams(): void {
  localStorage.setItem(ALL_KEY, "1");
  for (const l of listeners) l();
}

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  const onStorage = (e: StorageEvent) => {
    if (e.key === KEY || e.key === ALL_KEY) listener();
  };
  window.addEventListener("storage", onStorage);
  return () => {
    listeners.delete(listener);
    window.removeEventListener("storage", onStorage);
  };
}

/**
 * The team the stored id names if the user is still in it, else their first team (a team left
 * or deleted, another user's id from a shared browser): never a team the user is not in.
 */
export function pickTeam(teams: readonly TeamRole[], stored: string | null): TeamRole | null {
  return teams.find((t) => t.id === stored) ?? teams[0] ?? null;
}

/** The signed-in user's teams with their role in each (empty while loading). */
export function useTeams(): { teams: TeamRole[]; isPending: boolean } {
  const token = useToken();
  const me = useQuery({ ...meQuery(), enabled: token !== null });
  return { teams: me.data?.teams ?? [], isPending: me.isPending };
}

/** The current team (switcher) and a setter; null while loading or when the user has no team. */
export function useCurrentTeam(): {
  team: TeamRole | null;
  teams: TeamRole[];
  isPending: boolean;
  select: (id: string) => void;
} {
  const stored = useSyncExternalStore(subscribe, getCurrentTeamId, () => null);
  const { teams, isPending } = useTeams();
  return { team: pickTeam(teams, stored), teams, isPending, select: setCurrentTeamId };
}

/**
 * The team the lists show (`team_id` of GET /runs, /devices, ...): the current team, or undefined
 * under "All my teams" (only offered, and only honoured, when the user is in 2+ teams), when
 * `all` is true and rows should name their team (`teamName`). `ready` is false until GET
 * /auth/me answered (when signed in): lists wait for it rather than show every team's rows for a moment.
 */
export function useListTeam(): {
  teamId: string | undefined;
  all: boolean;
  ready: boolean;
  teamName: (id: string) => string;
} {
  const stored = useSyncExternalStore(subscribe, getAllTeams, () => false);
  const { team, teams, isPending } = useCurrentTeam();
  const all = stored && teams.length > 1;
  const signedIn = useToken() !== null;
  return {
    teamId: all ? undefined : team?.id,
    all,
    ready: !signedIn || !isPending, // signed out: /auth/me is never asked, the list answers 401
    teamName: (id) => teams.find((t) => t.id === id)?.name ?? "another team",
  };
}

/** The user's role in `teamId`, or in the current team when no id is given; null if none. */
export function useRole(teamId?: string | null): Role | null {
  const { team, teams } = useCurrentTeam();
  if (teamId === undefined) return team?.role ?? null;
  return teams.find((t) => t.id === teamId)?.role ?? null;
}

/**
 * `can(action)` for the current team, and `can(action, teamId)` for an object of another team
 * (an agent, a run): the answer the server would give, so hidden buttons and 403s agree.
 */
export function useCan(): (action: Action, teamId?: string | null) => boolean {
  const { team, teams } = useCurrentTeam();
  return (action, teamId) => {
    const role = teamId === undefined ? team?.role : teams.find((t) => t.id === teamId)?.role;
    return can(role, action);
  };
}

/** Whether the user may do `action` in at least one of their teams (e.g. any admin team). */
export function teamsWhere(teams: readonly TeamRole[], action: Action): TeamRole[] {
  return teams.filter((t) => can(t.role, action));
}

/** The signed-in user's id and their role in a given team (GET /auth/me), for hiding buttons. */
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
