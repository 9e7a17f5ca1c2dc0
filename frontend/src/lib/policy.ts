// The host's policy as its agent reported it (AgentRead.policy, docs/adr/0009-host-policy.md):
// the only targets and meters a run may name. The host decides; the UI offers what it allows,
// explains what it refuses and shows the host command that would allow it. The agent re-checks
// every lease, so nothing here is a security boundary: it saves the user a failed run.
import type { AgentRead, JobSpec, PolicyRead } from "../client/types";
import { formatBytes } from "./format";

export type HostPolicy = PolicyRead;
/**
 * A target the host allows. Devices also carry model, serial_sha256 and size_bytes (libs/policy
 * reports them); they are optional here because a server may not pass them on.
 */
export type PolicyTarget = PolicyRead["targets"][number] & {
  model?: string | null;
  serial_sha256?: string | null;
  size_bytes?: number | null;
};
/** A meter the host configured. `idle_s`: each idle baseline a run with it takes when the run
 * sets none (its own setting, else the agent's), as the agent reports it; null or absent from an
 * agent that does not report it. */
export type PolicyMeter = PolicyRead["meters"][number];

/** The reported idle baseline of the meter a run picks ("" none, null the host's default). */
export function meterIdleS(
  policy: Pick<HostPolicy, "meters" | "default_meter"> | null | undefined,
  meter: string | null,
): number | null {
  const name = meter === null ? policy?.default_meter : meter;
  if (!name) return null;
  const m = policy?.meters.find((x) => x.name === name);
  return typeof m?.idle_s === "number" ? m.idle_s : null;
}

/** The policy an agent reported, or null (an agent from before ADR 0009 reports none). */
export function policyOf(agent: Pick<AgentRead, "policy"> | undefined): HostPolicy | null {
  return agent?.policy ?? null;
}

const WRITES: ReadonlySet<JobSpec["rw"]> = new Set(["write", "randwrite", "rw", "randrw"]);

/** Whether an fio `rw` writes (mixed rw/randrw write too). */
export function rwWrites(rw: JobSpec["rw"]): boolean {
  return WRITES.has(rw);
}

/** Whether any job of a workload writes. */
export function workloadWrites(jobs: readonly Pick<JobSpec, "rw">[] | undefined): boolean {
  return (jobs ?? []).some((j) => WRITES.has(j.rw));
}

/** How many targets one run may name at once: libs/policy's MAX_TARGETS, which bounds the
 * server's RunCreate.targets (maxItems in the OpenAPI; policy.test.ts holds the two together). */
export const MAX_TARGETS = 8;

/** Whether the agent runs a workload on several of its targets at once (an older one does not). */
export function runsMultiTarget(agent: Pick<AgentRead, "inventory"> | undefined): boolean {
  return agent?.inventory?.capabilities?.multi_target === true;
}

/** "read-write" / "read-only" as the host set it for this target. */
export function accessLabel(t: PolicyTarget): string {
  return t.writable ? "read-write" : "read-only";
}

/** One line per target in a select: path, kind, access, and the destructive mark. */
export function targetLabel(t: PolicyTarget): string {
  const parts: string[] = [t.kind, accessLabel(t)];
  if (t.kind === "device") {
    if (t.model) parts.push(t.model);
    if (t.destructive) parts.push("destructive writes allowed");
  }
  return `${t.path} (${parts.join(", ")})`;
}

/** The host command that lists a path as a target, for the empty-list explanation. */
export const ADD_TARGET_COMMAND = "iowatt-agent targets add PATH";

/**
 * Why the host refuses a writing workload on this target, with the command that would allow
 * it; null when writes are allowed. Mirrors libs/policy's `file.read_only` and
 * `device.not_destructive` rules.
 */
export function writeRefusal(t: PolicyTarget): string | null {
  if (t.writable && (t.kind !== "device" || t.destructive)) return null;
  if (t.kind === "file")
    return `the host lists ${t.path} as a read-only file: write workloads are refused. On the host: iowatt-agent targets add --file ${t.path} --allow-write`;
  if (t.kind === "device")
    return `the host has not allowed destructive writes to ${t.path}: write workloads are refused. On the host: iowatt-agent targets add --device ${t.path} --destructive`;
  return `the host lists ${t.path} as read-only: write workloads are refused.`;
}

/** A write on a device the host marked destructive needs the typed confirmation. */
export function needsDestructiveConfirm(t: PolicyTarget | undefined, writes: boolean): boolean {
  return !!t && t.kind === "device" && t.destructive && writes;
}

/** What the user is asked to type: the device's model, else (with no model) its path. */
export function confirmationPhrase(t: PolicyTarget): string {
  return t.model?.trim() || t.path;
}

async function sha256Hex(text: string): Promise<string | null> {
  // crypto.subtle exists only in a secure context (HTTPS or loopback).
  const subtle = globalThis.crypto?.subtle;
  if (!subtle) return null;
  const digest = await subtle.digest("SHA-256", new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * Whether `typed` confirms destruction of `t`: exactly its model (or its path when the host
 * reported no model), or its serial number, which the host reports only as a SHA-256.
 * No trimming or case folding: as GitHub's delete confirmation, it must be typed exactly.
 */
export async function confirmsDevice(t: PolicyTarget, typed: string): Promise<boolean> {
  if (typed === "") return false;
  if (typed === confirmationPhrase(t)) return true;
  if (!t.serial_sha256) return false;
  return (await sha256Hex(typed)) === t.serial_sha256.toLowerCase();
}

/** The meter names every one of these policies knows (a campaign sends one name to all). */
export function commonMeters(policies: readonly (HostPolicy | null)[]): string[] {
  if (policies.length === 0 || policies.some((p) => p === null)) return [];
  const [first, ...rest] = policies as HostPolicy[];
  return (first?.meters ?? [])
    .map((m) => m.name)
    .filter((n) => rest.every((p) => p.meters.some((m) => m.name === n)));
}

/** "hwmon-nvme (hwmon, direct) — default" for a meter select. */
export function meterLabel(m: PolicyMeter, defaultMeter: string | null | undefined): string {
  return `${m.name} (${m.driver}, ${m.tier})${m.name === defaultMeter ? " — host default" : ""}`;
}

const LIMIT_LABELS: Record<string, string> = {
  max_threads: "threads",
  max_iodepth: "iodepth",
  max_bs_bytes: "block size",
  max_bytes_written: "written per run",
  max_runtime_s: "runtime",
  max_memory_bytes: "memory",
  max_files: "files",
};

/** The host's limits as "threads ≤ 64 · block size ≤ 64 MiB · runtime ≤ 6 h"; "" when none. */
export function limitsText(limits: HostPolicy["limits"] | null | undefined): string {
  if (!limits) return "";
  return Object.entries(limits)
    .filter((e): e is [string, number] => typeof e[1] === "number")
    .map(([k, v]) => {
      const value =
        k.endsWith("_bytes") || k === "max_bytes_written"
          ? formatBytes(v)
          : k.endsWith("_s")
            ? formatSeconds(v)
            : String(v);
      return `${LIMIT_LABELS[k] ?? k.replace(/_/g, " ")} ≤ ${value}`;
    })
    .join(" · ");
}

function formatSeconds(s: number): string {
  if (s >= 3600 && s % 3600 === 0) return `${s / 3600} h`;
  if (s >= 60 && s % 60 === 0) return `${s / 60} min`;
  return `${s} s`;
}
