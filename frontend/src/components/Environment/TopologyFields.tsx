import type { ReactNode } from "react";
import { type Errors, Field } from "../Field";
import {
  CACHE_POLICIES,
  MEDIA,
  NAS_PROTOCOLS,
  partsFor,
  RAID_IMPLEMENTATIONS,
  RAID_LEVELS,
  type TopologyDraft,
  TRANSPORTS,
} from "./topologyDraft";

/** Server field → form input, for the 422s that name `topology.<part>.<field>`. */
export const TOPOLOGY_ALIASES: Record<string, string> = {
  topology: "raidLevel",
  raid: "raidLevel",
  level: "raidLevel",
  implementation: "raidImpl",
  member_count: "memberCount",
  members: "memberModel",
  capacity_bytes: "memberCapacityGb",
  media: "memberMedia",
  stripe_bytes: "stripeKib",
  controller: "controllerModel",
  cache_policy: "cachePolicy",
  cache_protected: "cacheProtected",
  fabric: "transport",
  transport: "transport",
  link_speed_bps: "linkGbps",
  links: "links",
  nas: "nasProtocol",
  protocol: "nasProtocol",
  version: "nasVersion",
  filesystem: "fstype",
  fstype: "fstype",
  mount_options: "mountOptions",
};

function Choice({
  name,
  value,
  options,
  onChange,
}: {
  name: string;
  value: string;
  options: readonly string[];
  onChange: (v: string) => void;
}) {
  return (
    <select id={`f-${name}`} name={name} value={value} onChange={(e) => onChange(e.target.value)}>
      <option value="">— not known —</option>
      {options.map((o) => (
        <option key={o} value={o}>
          {o.replace("_", " ")}
        </option>
      ))}
    </select>
  );
}

/** The topology part of the environment form: RAID, controller, fabric, NAS, file system, shown by kind. */
export function TopologyFields({
  kind,
  draft,
  errors,
  onChange,
}: {
  kind: string;
  draft: TopologyDraft;
  errors: Errors;
  onChange: (patch: Partial<TopologyDraft>) => void;
}) {
  const show = partsFor(kind);
  const text = (name: keyof TopologyDraft, label: string, hint?: string, extra?: ReactNode) => (
    <Field label={label} name={name} errors={errors} hint={hint}>
      <input
        id={`f-${name}`}
        name={name}
        value={draft[name]}
        onChange={(e) => onChange({ [name]: e.target.value })}
      />
      {extra}
    </Field>
  );
  const choice = (name: keyof TopologyDraft, label: string, options: readonly string[]) => (
    <Field label={label} name={name} errors={errors}>
      <Choice
        name={name}
        value={draft[name]}
        options={options}
        onChange={(v) => onChange({ [name]: v })}
      />
    </Field>
  );
  return (
    <fieldset className="form-grid span-2" data-testid="topology-fields" style={{ minWidth: 0 }}>
      <legend>Topology</legend>
      {show.raid && (
        <>
          {choice("raidLevel", "RAID level", RAID_LEVELS)}
          {choice("raidImpl", "RAID by", RAID_IMPLEMENTATIONS)}
          {text("memberCount", "Member devices", "how many (hot spares apart)")}
          {text("memberModel", "Member model")}
          {text("memberCapacityGb", "Member capacity (GB)", "10⁹ bytes")}
          {choice("memberMedia", "Member media", MEDIA)}
          {text("stripeKib", "Stripe per member (KiB)")}
          {text("controllerModel", "Controller")}
          {choice("cachePolicy", "Controller cache", CACHE_POLICIES)}
          {choice("cacheProtected", "Cache battery/flash-backed", ["yes", "no"])}
        </>
      )}
      {show.fabric && (
        <>
          {choice("transport", "Fabric", TRANSPORTS)}
          {text("linkGbps", "Link speed (Gb/s)", "one link's rate, e.g. 12, 25, 32")}
          {text("links", "Links / paths")}
        </>
      )}
      {show.nas && (
        <>
          {choice("nasProtocol", "NAS protocol", NAS_PROTOCOLS)}
          {text("nasVersion", "Protocol version", "e.g. 4.2, 3.1.1")}
        </>
      )}
      {text("fstype", "File system", "as the kernel names it: ext4, xfs, btrfs")}
      {text("mountOptions", "Mount options", "comma-separated, e.g. rw,noatime")}
    </fieldset>
  );
}
