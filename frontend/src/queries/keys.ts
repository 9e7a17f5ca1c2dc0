import type { EnergyRead, RunStatus } from "../client/types";

/**
 * Every TanStack Query key, from one place: a query and the mutations that invalidate it
 * build the key with the same function, so a prefix such as `keys.runs.lists()` always
 * covers the queries it is meant to cover.
 */
export const keys = {
  agents: {
    all: () => ["agents"] as const,
    /** a list of one team's (the switcher's), or of all the user's teams ("all") */
    list: (teamId?: string) => ["agents", "list", teamId ?? "all"] as const,
    enrollmentTokens: () => ["agents", "enrollment-tokens"] as const,
    /** the agent bundles the server serves (anonymous) */
    dist: () => ["agents", "dist"] as const,
  },
  auth: {
    me: () => ["auth", "me"] as const,
    tokens: () => ["auth", "tokens"] as const,
    tokenList: (includeInactive: boolean) => ["auth", "tokens", { includeInactive }] as const,
    oidc: () => ["auth", "oidc"] as const,
    adminUsers: (q: string) => ["auth", "admin-users", { q }] as const,
  },
  /** the server's version (the footer) */
  health: {
    version: () => ["health", "version"] as const,
  },
  campaigns: {
    all: () => ["campaigns"] as const,
    list: (teamId?: string) => ["campaigns", "list", teamId ?? "all"] as const,
    detail: (id: string) => ["campaigns", "detail", id] as const,
    /** what a campaign body would queue (its matrix expanded), by the body's JSON */
    plan: (body: string) => ["campaigns", "plan", body] as const,
  },
  alerts: {
    all: () => ["alerts"] as const,
    channels: (teamId?: string) => ["alerts", "channels", teamId ?? "all"] as const,
    list: (teamId?: string, offset = 0, kind = "") =>
      ["alerts", "list", teamId ?? "all", offset, kind] as const,
  },
  schedules: {
    all: () => ["schedules"] as const,
    list: (teamId?: string) => ["schedules", "list", teamId ?? "all"] as const,
    slots: (id: string) => ["schedules", "slots", id] as const,
  },
  carbon: {
    gridIntensities: () => ["carbon", "grid-intensities"] as const,
    embodiedDefaults: () => ["carbon", "embodied-defaults"] as const,
  },
  compare: {
    table: (params: Record<string, unknown>) => ["compare", params] as const,
    latency: (runs: string[], job: string, groupBy: string, env: string[] = []) =>
      ["compare", "latency", runs, job, groupBy, env] as const,
  },
  devices: {
    all: () => ["devices"] as const,
    list: (teamId?: string) => ["devices", "list", teamId ?? "all"] as const,
  },
  comments: {
    all: () => ["comments"] as const,
    thread: (kind: string, key: string) => ["comments", kind, key] as const,
  },
  teams: {
    all: () => ["teams"] as const,
    detail: (teamId: string) => ["teams", teamId] as const,
    members: (teamId: string) => ["teams", teamId, "members"] as const,
    invitations: (teamId: string) => ["teams", teamId, "invitations"] as const,
    audit: (teamId: string, params: object) => ["teams", teamId, "audit", params] as const,
  },
  invitation: (token: string) => ["invitation", token] as const,
  imports: {
    /** the importers' formats (GET /imports/formats) */
    formats: () => ["imports", "formats"] as const,
  },
  views: {
    catalog: (runs: string[]) => ["views", "catalog", runs] as const,
    table: (params: Record<string, unknown>) => ["views", "table", params] as const,
  },
  environments: {
    all: () => ["environments"] as const,
    list: (teamId?: string) => ["environments", "list", teamId ?? "all"] as const,
    /** a run's recorded environment (GET /runs/{id}/environment) */
    run: (runId: string) => ["environments", "run", runId] as const,
  },
  runs: {
    lists: () => ["runs", "list"] as const,
    list: (params: object) => ["runs", "list", params] as const,
    detail: (id: string) => ["runs", "detail", id] as const,
    /** an active run's poll of its status and latest report (GET /runs/{id}/progress) */
    live: (id: string) => ["runs", "live", id] as const,
    series: (id: string, status: RunStatus) => ["runs", "series", id, status] as const,
    result: (id: string) => ["runs", "result", id] as const,
    /** a SNIA PTS run's report (GET /runs/{id}/pts) */
    pts: (id: string) => ["runs", "pts", id] as const,
    system: (id: string, status: RunStatus) => ["runs", "detail", id, "system", status] as const,
    power: (id: string, status: EnergyRead["status"]) => ["runs", "power", id, status] as const,
    allTags: () => ["runs", "tags"] as const,
    tags: (teamId: string) => ["runs", "tags", teamId] as const,
  },
  runGroups: {
    /** a group run: several agents started at one instant (GET /run-groups/{id}) */
    detail: (id: string) => ["run-groups", "detail", id] as const,
  },
  workloads: {
    all: () => ["workloads"] as const,
    list: (teamId?: string) => ["workloads", "list", teamId ?? "all"] as const,
    detail: (id: string) => ["workloads", "detail", id] as const,
    /** the engine's facts of a file workload's spec at a scale factor (the spec itself is the key) */
    facts: (spec: unknown, factor: number) => ["workloads", "facts", spec, factor] as const,
    /** the engine's parse of a fio job file's text (the text itself is the key) */
    jobfile: (text: string) => ["workloads", "jobfile", text] as const,
  },
  series: {
    all: () => ["series"] as const,
    /** a list of series by its filters (team, device, agent, workload, run, archived) */
    list: (params: object) => ["series", "list", params] as const,
    detail: (id: string) => ["series", "detail", id] as const,
    /** a team's default thresholds */
    teamThresholds: (teamId: string) => ["series", "thresholds", teamId] as const,
    /** one metric of one job over the series' runs (downsampled on the server) */
    history: (id: string, metric: string, job: number) =>
      ["series", "history", id, metric, job] as const,
  },
  sharing: {
    links: (teamId: string) => ["share-links", teamId] as const,
    shared: (token: string) => ["shared", token] as const,
  },
};
