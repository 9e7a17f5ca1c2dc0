// The runs list's filters, kept in the URL's query string (a filtered list is a link to share)
// and turned into GET /api/v1/runs's query. Pure functions: lib/runFilters.test.ts covers them.
import type { operations } from "../client/schema";
import { RUN_STATUSES, type RunStatus } from "../client/types";
import { parseEnvFilters } from "./envFacets";

type ListQuery = NonNullable<operations["list_runs"]["parameters"]["query"]>;
export type RunSort = NonNullable<ListQuery["sort"]>;
export type RunSource = NonNullable<ListQuery["source"]>;

export const RUN_SORTS: readonly { value: RunSort; label: string }[] = [
  { value: "-created", label: "Newest first" },
  { value: "created", label: "Oldest first" },
  { value: "name", label: "Name A–Z" },
  { value: "-name", label: "Name Z–A" },
  { value: "status", label: "Status" },
];
export const RUN_SOURCES: readonly RunSource[] = ["agent", "import"];
const IDS = ["agent_id", "device_id", "environment_id", "workload_id", "campaign_id"] as const;
export type IdFilter = (typeof IDS)[number];

export interface RunFilters {
  status: RunStatus[];
  agent_id?: string;
  device_id?: string;
  environment_id?: string;
  workload_id?: string;
  campaign_id?: string;
  source?: RunSource;
  tag: string[];
  /** the recorded environment's fields, `FIELD:VALUE` as compare's (lib/envFacets.ts) */
  env: string[];
  /** created on or after this local day (YYYY-MM-DD) */
  from?: string;
  /** created on or before this local day (YYYY-MM-DD), the whole day */
  to?: string;
  q?: string;
  sort: RunSort;
  offset: number;
}

const DAY = /^\d{4}-\d{2}-\d{2}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The filters a URL states; anything it states wrongly (an unknown status, a bad day) is dropped. */
export function filtersFromParams(params: URLSearchParams): RunFilters {
  const statuses = params
    .getAll("status")
    .flatMap((s) => s.split(","))
    .filter((s): s is RunStatus => (RUN_STATUSES as readonly string[]).includes(s));
  const sort = RUN_SORTS.find((s) => s.value === params.get("sort"))?.value ?? "-created";
  const source = RUN_SOURCES.find((s) => s === params.get("source"));
  const out: RunFilters = {
    status: [...new Set(statuses)],
    tag: [
      ...new Set(
        params
          .getAll("tag")
          .map((t) => t.trim())
          .filter(Boolean),
      ),
    ],
    env: parseEnvFilters(params.getAll("env")),
    sort,
    offset: Math.max(0, Math.floor(Number(params.get("offset") ?? 0)) || 0),
  };
  for (const key of IDS) {
    const v = params.get(key);
    if (v && UUID.test(v)) out[key] = v;
  }
  if (source) out.source = source;
  for (const key of ["from", "to"] as const) {
    const v = params.get(key);
    if (v && DAY.test(v)) out[key] = v;
  }
  const q = params.get("q")?.trim();
  if (q) out.q = q;
  return out;
}

/** The URL query string of `f` (defaults left out, so the plain list is plain /runs). */
export function filtersToParams(f: RunFilters): URLSearchParams {
  const p = new URLSearchParams();
  if (f.q) p.set("q", f.q);
  for (const s of f.status) p.append("status", s);
  for (const key of IDS) {
    const v = f[key];
    if (v) p.set(key, v);
  }
  if (f.source) p.set("source", f.source);
  for (const t of f.tag) p.append("tag", t);
  for (const e of f.env) p.append("env", e);
  if (f.from) p.set("from", f.from);
  if (f.to) p.set("to", f.to);
  if (f.sort !== "-created") p.set("sort", f.sort);
  if (f.offset > 0) p.set("offset", String(f.offset));
  return p;
}

/** The start of a local day as an instant (UTC ISO), `days` later. */
export function localDayStart(day: string, days = 0): string {
  const [y = 1970, m = 1, d = 1] = day.split("-").map(Number);
  return new Date(y, m - 1, d + days).toISOString();
}

/** GET /api/v1/runs's query for one page of `f`. */
export function toQuery(f: RunFilters, limit: number): ListQuery {
  const q: ListQuery = { limit, offset: f.offset, sort: f.sort };
  if (f.status.length) q.status = f.status;
  for (const key of IDS) {
    const v = f[key];
    if (v) q[key] = v;
  }
  if (f.source) q.source = f.source;
  if (f.tag.length) q.tag = f.tag;
  if (f.env.length) q.env = f.env;
  if (f.from) q.created_from = localDayStart(f.from);
  if (f.to) q.created_to = localDayStart(f.to, 1); // the whole last day
  if (f.q) q.q = f.q;
  return q;
}

/** `f` with one filter changed; any change but paging starts again at the first page. */
export function withFilter<K extends keyof RunFilters>(
  f: RunFilters,
  key: K,
  value: RunFilters[K],
): RunFilters {
  const next = { ...f, [key]: value };
  if (key !== "offset") next.offset = 0;
  return next;
}

/** True when anything narrows the list (sort and page do not). */
export function isFiltered(f: RunFilters): boolean {
  return (
    f.status.length > 0 ||
    f.tag.length > 0 ||
    f.env.length > 0 ||
    IDS.some((k) => Boolean(f[k])) ||
    Boolean(f.source || f.from || f.to || f.q)
  );
}

export const NO_FILTERS: RunFilters = { status: [], tag: [], env: [], sort: "-created", offset: 0 };

/** Letters, digits, . _ : / + - and single spaces between words; 1–64 characters (the server's rule). */
export const TAG_RULE = /^[A-Za-z0-9._:/+-]+(?: [A-Za-z0-9._:/+-]+)*$/;

/** Why `tag` is not a valid tag, or null. */
export function tagProblem(tag: string): string | null {
  const t = tag.trim();
  if (t.length < 1 || t.length > 64) return "a tag has 1 to 64 characters";
  if (!TAG_RULE.test(t)) return "letters, digits, . _ : / + - and single spaces only";
  return null;
}
