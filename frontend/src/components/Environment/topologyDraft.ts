// The environment form's topology: strings as typed, shown by kind, turned into the server's
// EnvironmentTopology (base units: bytes, bits per second) and back. Pure, tested.
import type { EnvironmentRead, EnvironmentUpdate } from "../../client/types";

export type Topology = EnvironmentRead["topology"];
export type TopologyIn = NonNullable<EnvironmentUpdate["topology"]>;

// biome-ignore format: a list
export const RAID_LEVELS = [
  "jbod", "single", "raid0", "raid1", "raid1c3", "raid1c4", "raid5", "raid6", "raid10",
  "raid50", "raid60", "dup", "raidz1", "raidz2", "raidz3",
] as const;
export const RAID_IMPLEMENTATIONS = ["hardware", "md", "btrfs", "zfs", "lvm", "array"] as const;
export const TRANSPORTS = ["sas", "sata", "nvme", "fc", "iscsi", "nvme_of", "ethernet"] as const;
export const CACHE_POLICIES = ["write_back", "write_through", "none"] as const;
export const NAS_PROTOCOLS = ["nfs", "smb", "sshfs", "other"] as const;
export const MEDIA = ["hdd", "ssd", "nvme", "other"] as const;

export interface TopologyDraft {
  raidLevel: string;
  raidImpl: string;
  memberCount: string;
  memberModel: string;
  memberCapacityGb: string;
  memberMedia: string;
  stripeKib: string;
  controllerModel: string;
  cachePolicy: string;
  cacheProtected: string; // "" | "yes" | "no"
  transport: string;
  linkGbps: string;
  links: string;
  nasProtocol: string;
  nasVersion: string;
  fstype: string;
  mountOptions: string;
}

/** Which parts of the topology the form shows for a kind. */
export function partsFor(kind: string): { raid: boolean; fabric: boolean; nas: boolean } {
  return {
    raid: kind !== "cloud" && kind !== "nas",
    fabric: kind !== "cloud",
    nas: kind === "nas" || kind === "other",
  };
}

const str = (v: number | string | null | undefined) => (v == null ? "" : String(v));

export function topologyDraftOf(t?: Topology | TopologyIn | null): TopologyDraft {
  const m = t?.raid?.members?.[0];
  return {
    raidLevel: t?.raid?.level ?? "",
    raidImpl: t?.raid?.implementation ?? "",
    memberCount:
      str(t?.raid?.member_count ?? (t?.raid?.members ?? []).reduce((n, x) => n + x.count, 0)) || "",
    memberModel: m?.model ?? "",
    memberCapacityGb: m?.capacity_bytes == null ? "" : String(m.capacity_bytes / 1e9),
    memberMedia: m?.media ?? "",
    stripeKib: t?.raid?.stripe_bytes == null ? "" : String(t.raid.stripe_bytes / 1024),
    controllerModel: t?.controller?.model ?? "",
    cachePolicy: t?.controller?.cache_policy ?? "",
    cacheProtected:
      t?.controller?.cache_protected == null ? "" : t.controller.cache_protected ? "yes" : "no",
    transport: t?.fabric?.transport ?? "",
    linkGbps: t?.fabric?.link_speed_bps == null ? "" : String(t.fabric.link_speed_bps / 1e9),
    links: str(t?.fabric?.links),
    nasProtocol: t?.nas?.protocol ?? "",
    nasVersion: t?.nas?.version ?? "",
    fstype: t?.filesystem?.fstype ?? "",
    mountOptions: t?.filesystem?.mount_options ?? "",
  };
}

/** "" → null; anything unparsable → NaN (the server's 422 names the field). */
function num(s: string, scale = 1): number | null {
  if (s.trim() === "") return null;
  const n = Number(s.replace(",", ".")) * scale;
  return Number.isFinite(n) ? Math.round(n) : Number.NaN;
}

/** The topology to send: parts the kind shows and the form filled in; the rest unknown. */
export function topologyOf(d: TopologyDraft, kind: string): TopologyIn {
  const show = partsFor(kind);
  const out: TopologyIn = {};
  if (show.raid && d.raidLevel) {
    const count = num(d.memberCount);
    out.raid = {
      level: d.raidLevel as NonNullable<TopologyIn["raid"]>["level"],
      implementation: (d.raidImpl || null) as NonNullable<TopologyIn["raid"]>["implementation"],
      member_count: count,
      hot_spares: 0,
      stripe_bytes: num(d.stripeKib, 1024),
      members:
        d.memberModel.trim() && count
          ? [
              {
                model: d.memberModel.trim(),
                count,
                capacity_bytes: num(d.memberCapacityGb, 1e9),
                media: (d.memberMedia || null) as "hdd" | "ssd" | "nvme" | "other" | null,
              },
            ]
          : [],
    };
  }
  if (show.raid && (d.controllerModel.trim() || d.cachePolicy || d.cacheProtected)) {
    out.controller = {
      model: d.controllerModel.trim() || null,
      cache_policy: (d.cachePolicy || null) as NonNullable<
        TopologyIn["controller"]
      >["cache_policy"],
      cache_protected: d.cacheProtected === "" ? null : d.cacheProtected === "yes",
    };
  }
  if (show.fabric && d.transport) {
    out.fabric = {
      transport: d.transport as NonNullable<TopologyIn["fabric"]>["transport"],
      link_speed_bps: num(d.linkGbps, 1e9),
      links: num(d.links),
    };
  }
  if (show.nas && d.nasProtocol) {
    out.nas = {
      protocol: d.nasProtocol as NonNullable<TopologyIn["nas"]>["protocol"],
      version: d.nasVersion.trim() || null,
    };
  }
  if (d.fstype.trim()) {
    out.filesystem = { fstype: d.fstype.trim(), mount_options: d.mountOptions.trim() };
  }
  return out;
}

/** One line per known part, for the environment's card and the run page. */
export function describeTopology(t: Topology | null | undefined): [string, string][] {
  if (!t) return [];
  const rows: [string, string][] = [];
  if (t.raid) {
    const members = t.raid.members
      .map((m) => `${m.count} × ${m.model}${m.media ? ` (${m.media})` : ""}`)
      .join(" + ");
    const count = t.raid.member_count ?? t.raid.members.reduce((n, m) => n + m.count, 0);
    rows.push([
      "RAID",
      [t.raid.level, t.raid.implementation, count ? `${count} devices` : "", members]
        .filter(Boolean)
        .join(" · "),
    ]);
  }
  if (t.controller) {
    rows.push([
      "Controller",
      [
        t.controller.model,
        t.controller.cache_policy?.replace("_", " "),
        t.controller.cache_protected == null
          ? ""
          : t.controller.cache_protected
            ? "protected cache"
            : "unprotected cache",
      ]
        .filter(Boolean)
        .join(" · "),
    ]);
  }
  if (t.fabric) {
    const speed = t.fabric.link_speed_bps == null ? "" : `${t.fabric.link_speed_bps / 1e9} Gb/s`;
    const links = t.fabric.links ? `× ${t.fabric.links} links` : "";
    rows.push(["Fabric", [t.fabric.transport, speed, links].filter(Boolean).join(" ")]);
  }
  if (t.nas) rows.push(["NAS", [t.nas.protocol, t.nas.version].filter(Boolean).join(" ")]);
  if (t.filesystem) {
    rows.push([
      "File system",
      `${t.filesystem.fstype}${t.filesystem.mount_options ? ` (${t.filesystem.mount_options})` : ""}`,
    ]);
  }
  return rows;
}
