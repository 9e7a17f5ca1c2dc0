// Fields of a run's recorded environment that compare and views group and filter by
// (backend/environment/topology.py FACETS; the server's `group_by=env.<field>` and `env=FIELD:VALUE`).

export const ENV_FACETS = [
  "kind",
  "raid_level",
  "raid_implementation",
  "member_count",
  "member_model",
  "media",
  "controller_cache_policy",
  "transport",
  "link_speed_bps",
  "nas_protocol",
  "nas_version",
  "fstype",
  "mount_options",
  "region",
  "pue",
] as const;
export type EnvFacet = (typeof ENV_FACETS)[number];

export const ENV_FACET_LABEL: Record<EnvFacet, string> = {
  kind: "kind",
  raid_level: "RAID level",
  raid_implementation: "RAID by",
  member_count: "member count",
  member_model: "member model",
  media: "media",
  controller_cache_policy: "controller cache",
  transport: "fabric",
  link_speed_bps: "link speed",
  nas_protocol: "NAS protocol",
  nas_version: "NAS version",
  fstype: "file system",
  mount_options: "mount options",
  region: "grid region",
  pue: "PUE",
};

export const ENV_GROUP_BY = ENV_FACETS.map((f) => `env.${f}` as const);
export type EnvGroupBy = (typeof ENV_GROUP_BY)[number];

/** `FIELD:VALUE` filters as the URL and the server write them; unknown fields are dropped. */
export function parseEnvFilters(values: string[]): string[] {
  const out: string[] = [];
  for (const v of values) {
    const i = v.indexOf(":");
    if (i <= 0) continue;
    const field = v.slice(0, i).trim();
    const value = v.slice(i + 1).trim();
    if (!value || !(ENV_FACETS as readonly string[]).includes(field)) continue;
    const f = `${field}:${value}`;
    if (!out.includes(f)) out.push(f);
  }
  return out;
}

export function envFilterLabel(f: string): string {
  const i = f.indexOf(":");
  const field = f.slice(0, i) as EnvFacet;
  return `${ENV_FACET_LABEL[field] ?? field} = ${f.slice(i + 1)}`;
}
