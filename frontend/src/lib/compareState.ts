// The compare page's whole state lives in its URL, so a copied link reproduces the view:
// which runs, the baseline run, grouping, fingerprint, "compare anyway", the job the
// per-job charts show and which charts are open. Defaults are left out of the URL.
import { ENV_FACET_LABEL, ENV_GROUP_BY, type EnvFacet, parseEnvFilters } from "./envFacets";
import type { Rate } from "./series";

export const GROUP_BY = [
  "none",
  "device",
  "environment",
  "device_environment",
  "workload",
  "target",
  // a campaign matrix's cells: workload × swept values × target, named by what varies
  "sweep",
  // a field of the runs' recorded environments (lib/envFacets.ts)
  ...ENV_GROUP_BY,
] as const;
export type GroupBy = (typeof GROUP_BY)[number];
export const FINGERPRINTS = ["workload", "workload_host"] as const;
type Fingerprint = (typeof FINGERPRINTS)[number];
export const CHARTS = ["bars", "sweep", "latency", "series", "energy"] as const;
export type ChartKind = (typeof CHARTS)[number];
/** Metric tables: metrics as rows, runs as rows, or by the number of columns (auto). */
export const TABLE_LAYOUTS = ["auto", "metrics", "runs"] as const;
export type TableLayoutChoice = (typeof TABLE_LAYOUTS)[number];

export interface CompareState {
  runs: string[];
  /** A run id: the column holding it is the baseline. null: the server's default (first run). */
  baseline: string | null;
  groupBy: GroupBy;
  /** Only runs whose recorded environment matches: `FIELD:VALUE` (lib/envFacets.ts). */
  env: string[];
  fingerprint: Fingerprint;
  force: boolean;
  /** Job shown by the latency and per-second charts; null: the first job. */
  job: string | null;
  charts: ChartKind[];
  /** Per-second series quantity. */
  seriesMetric: Rate;
  table: TableLayoutChoice;
  /** `RUN_ID:N`: that multi-target run compared by its target N's own figures, not combined. */
  targets?: string[];
}

export const DEFAULT_STATE: CompareState = {
  runs: [],
  baseline: null,
  groupBy: "none",
  env: [],
  fingerprint: "workload",
  force: false,
  job: null,
  charts: [...CHARTS],
  seriesMetric: "mbps",
  table: "auto",
};

function pick<T extends string>(value: string | null, allowed: readonly T[], fallback: T): T {
  return allowed.find((a) => a === value) ?? fallback;
}

/** Comma-separated ids, trimmed, deduplicated, order kept. */
function parseList(value: string | null): string[] {
  const items = (value ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  return [...new Set(items)];
}

export function parseCompareState(params: URLSearchParams): CompareState {
  const runs = parseList(params.get("runs"));
  const baseline = params.get("baseline");
  const charts = params.has("charts")
    ? parseList(params.get("charts")).filter((c): c is ChartKind =>
        (CHARTS as readonly string[]).includes(c),
      )
    : [...CHARTS];
  return {
    runs,
    baseline: baseline && runs.includes(baseline) ? baseline : null,
    groupBy: pick(params.get("group_by"), GROUP_BY, "none"),
    env: parseEnvFilters(params.getAll("env")),
    fingerprint: pick(params.get("fingerprint"), FINGERPRINTS, "workload"),
    force: params.get("force") === "1" || params.get("force") === "true",
    job: params.get("job") || null,
    charts,
    seriesMetric: params.get("series") === "iops" ? "iops" : "mbps",
    table: pick(params.get("table"), TABLE_LAYOUTS, "auto"),
    ...targetsOf(params, runs),
  };
}

/** `targets=RUN_ID:N` of compared runs only; absent when none (the state reads as before). */
function targetsOf(params: URLSearchParams, runs: string[]): { targets?: string[] } {
  const targets = params
    .getAll("targets")
    .filter((t) => runs.includes(t.slice(0, t.lastIndexOf(":"))));
  return targets.length > 0 ? { targets } : {};
}

/** The URL query for a state; parseCompareState(toSearchParams(s)) gives s back. */
export function toSearchParams(s: CompareState): URLSearchParams {
  const p = new URLSearchParams();
  p.set("runs", s.runs.join(","));
  if (s.baseline && s.runs.includes(s.baseline)) p.set("baseline", s.baseline);
  if (s.groupBy !== "none") p.set("group_by", s.groupBy);
  for (const f of s.env) p.append("env", f);
  if (s.fingerprint !== "workload") p.set("fingerprint", s.fingerprint);
  if (s.force) p.set("force", "1");
  if (s.job) p.set("job", s.job);
  const all = CHARTS.every((c) => s.charts.includes(c)) && s.charts.length === CHARTS.length;
  if (!all) p.set("charts", CHARTS.filter((c) => s.charts.includes(c)).join(","));
  if (s.seriesMetric !== "mbps") p.set("series", s.seriesMetric);
  if (s.table !== "auto") p.set("table", s.table);
  for (const t of s.targets ?? []) p.append("targets", t);
  return p;
}

/** The /compare link for a state. Commas are kept readable. */
export function compareHref(s: Partial<CompareState> & { runs: string[] }): string {
  return `/compare?${toSearchParams({ ...DEFAULT_STATE, ...s })
    .toString()
    .replace(/%2C/g, ",")}`;
}

export const GROUP_LABEL: Record<GroupBy, string> = {
  none: "each run",
  device: "device",
  environment: "environment",
  device_environment: "device × environment",
  workload: "workload",
  target: "target (host and path)",
  sweep: "matrix cell (swept values × target)",
  ...(Object.fromEntries(
    ENV_GROUP_BY.map((g) => [g, `env: ${ENV_FACET_LABEL[g.slice(4) as EnvFacet]}`]),
  ) as Record<(typeof ENV_GROUP_BY)[number], string>),
};
