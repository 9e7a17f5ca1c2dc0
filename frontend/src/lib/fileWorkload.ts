// File workloads: PostMark and vdbench file sets beside fio-like block jobs. What a
// workload is (its kind), how its settings read in humane units, which seed a preset comes from,
// and what a scale does to the file set — from the engine's facts (`--parse-only`'s `bounds`,
// stored by the server), never from parsing a parameter file here.
import type { components } from "../client/schema";
import type { WorkloadRead, WorkloadSpec } from "../client/types";
import { formatBytes, formatCount, formatSeconds, sig3 } from "./format";

export type WorkloadKind =
  | "block"
  | "postmark"
  | "vdbench"
  | "tpch"
  | "heap_btree"
  | "jobfile"
  | "pts"
  | "innodb_flush";

/** PostMark's `set` commands, structured (the server's PostmarkSpec). */
export type PostmarkSpec = components["schemas"]["PostmarkSpec"];
/** A vdbench parameter file and its scale (the server's VdbenchSpec). */
export type VdbenchSpec = components["schemas"]["VdbenchSpec"];
/** A workload spec of any kind: block jobs, or one of the file workloads. */
export type AnySpec = WorkloadSpec;

/** Whether a file workload writes: PostMark always; vdbench unless its facts say 0 bytes. */
export function fileWrites(spec: AnySpec): boolean {
  const kind = kindOf(spec);
  if (kind === "postmark") return true;
  if (kind === "vdbench") return spec.facts?.bytes_written_max !== 0;
  return false;
}

/** The spec of a workload or run, read as any kind. */
export function specOf(x: { spec: WorkloadSpec } | { workload: WorkloadSpec }): AnySpec {
  return ("spec" in x ? x.spec : x.workload) as AnySpec;
}

/** The engine's `bounds` for a file workload (`--parse-only`; common14 §1), at the spec's scale. */
export type FileFacts = components["schemas"]["FileFacts"];

/** A spec's kind: specs stored before file workloads have none and are block jobs. */
export function kindOf(spec: Pick<AnySpec, "kind"> | null | undefined): WorkloadKind {
  return (spec?.kind ?? "block") as WorkloadKind;
}

export function isFileKind(kind: WorkloadKind): kind is "postmark" | "vdbench" {
  return kind === "postmark" || kind === "vdbench";
}

export const KIND_LABEL: Record<WorkloadKind, string> = {
  block: "block jobs (fio)",
  postmark: "PostMark",
  vdbench: "vdbench file set",
  tpch: "TPC-H-derived",
  heap_btree: "heap / B-tree",
  jobfile: "fio job file",
  pts: "SNIA PTS",
  innodb_flush: "InnoDB flushing policy",
};

/** The engine's facts stored with a spec (the server's `--parse-only`), when there are any. */
export function factsOf(spec: unknown): FileFacts | null {
  const f = (spec as { facts?: unknown } | null | undefined)?.facts;
  if (!f || typeof f !== "object") return null;
  const o = f as Partial<FileFacts>;
  return typeof o.dataset_bytes === "number" && typeof o.files === "number"
    ? (o as FileFacts)
    : null;
}

/** The published report a built-in file preset reproduces (docs/sources.md names each report). */
export function presetSource(name: string): string | null {
  if (name.startsWith("postmark-")) return "Song & Lee's PostMark levels (their Table 1)";
  if (name.startsWith("vdbench-")) return "Schulz's vdbench scripts (the StorageIO report)";
  return null;
}

/** PostMark 1.5's defaults, as the engine has them (agent/engine/README.md § PostMark). */
export const POSTMARK_DEFAULTS: PostmarkSpec = {
  number: 500,
  size_low_bytes: 500,
  size_high_bytes: 10000,
  subdirectories: 0,
  read_block_bytes: 512,
  write_block_bytes: 512,
  transactions: 500,
  bias_read: 5,
  bias_create: 5,
  buffering: true,
  seed: 42,
  fsync: false,
};

function bias(v: number, yes: string, no: string): string {
  if (v < 0) return `neither (−1: no ${yes} or ${no})`;
  return `${v * 10} % ${yes}, ${100 - v * 10} % ${no}`;
}

/** PostMark's settings as rows of a table: the `set` command, its value in humane units. */
export function postmarkRows(
  p: PostmarkSpec,
): { setting: string; command: string; value: string }[] {
  const size =
    p.size_low_bytes === p.size_high_bytes
      ? formatBytes(p.size_low_bytes)
      : `${formatBytes(p.size_low_bytes)} to ${formatBytes(p.size_high_bytes)}`;
  return [
    { setting: "Files created first", command: "set number", value: formatCount(p.number) },
    { setting: "File size", command: "set size", value: size },
    {
      setting: "Subdirectories",
      command: "set subdirectories",
      value: p.subdirectories > 1 ? String(p.subdirectories) : "none (files in the directory)",
    },
    { setting: "Transactions", command: "set transactions", value: formatCount(p.transactions) },
    { setting: "Read block", command: "set read", value: formatBytes(p.read_block_bytes) },
    { setting: "Write block", command: "set write", value: formatBytes(p.write_block_bytes) },
    {
      setting: "Read or append",
      command: "set bias read",
      value:
        bias(p.bias_read, "reads", "appends") +
        (p.size_low_bytes === p.size_high_bytes && p.bias_read >= 0 && p.bias_read < 10
          ? " (appends add nothing here: files have a fixed size and PostMark appends only up to the upper bound)"
          : ""),
    },
    {
      setting: "Create or delete",
      command: "set bias create",
      value: bias(p.bias_create, "creates", "deletes"),
    },
    {
      setting: "Buffering",
      command: "set buffering",
      value: p.buffering ? "stdio buffered (PostMark's default)" : "one call per block",
    },
    { setting: "Random seed", command: "set seed", value: String(p.seed) },
    {
      setting: "fsync after each write",
      command: "set fsync",
      value: p.fsync ? "yes — not in PostMark (iowatt's option)" : "no (as PostMark)",
    },
  ];
}

/** The scale a file workload is written at: vdbench's own `scale`, PostMark's 1. */
export function baseScale(spec: Pick<AnySpec, "kind" | "vdbench">): number {
  return kindOf(spec) === "vdbench" ? (spec.vdbench?.scale ?? 1) : 1;
}

/**
 * A PostMark workload's facts at `factor` × its files and transactions, as the engine states them
 * (dataset = files × mean size; common14 §1), computed from the structured settings; exact, as
 * the server's scale rounds (each at least 1).
 */
export function postmarkFactsAt(
  p: PostmarkSpec,
  factor: number,
): FileFacts & { transactions: number } {
  const number = Math.max(1, Math.round(p.number * factor));
  return {
    mode: "postmark",
    threads: 1,
    max_block_bytes: Math.max(p.read_block_bytes, p.write_block_bytes),
    bytes_written_max: null,
    runtime_s_max: null,
    dataset_bytes: Math.round(number * ((p.size_low_bytes + p.size_high_bytes) / 2)),
    files: number,
    directories: p.subdirectories > 1 ? p.subdirectories : 0,
    o_direct: false,
    transactions: Math.max(1, Math.round(p.transactions * factor)),
  };
}

/** The facts of a workload: stored by the server, or (PostMark) derived from its settings. */
export function workloadFacts(w: Pick<WorkloadRead, "spec">): FileFacts | null {
  const stored = factsOf(w.spec) ?? factsOf(w);
  if (stored) return stored;
  const spec = w.spec as AnySpec;
  const p = spec.postmark;
  return kindOf(spec) === "postmark" && p ? postmarkFactsAt(p, 1) : null;
}

/** "1.2 GiB in 65 files, 6 directories" */
export function describeFileSet(f: Pick<FileFacts, "dataset_bytes" | "files" | "directories">) {
  const dirs =
    f.directories > 0
      ? `, ${formatCount(f.directories)} director${f.directories === 1 ? "y" : "ies"}`
      : "";
  return `${formatBytes(f.dataset_bytes)} in ${formatCount(f.files)} file${f.files === 1 ? "" : "s"}${dirs}`;
}

/** "36 s" / "until 50k transactions are done (size-bound)" */
export function describeRuntime(
  f: Pick<FileFacts, "runtime_s_max">,
  transactions?: number,
): string {
  if (f.runtime_s_max != null) return formatSeconds(f.runtime_s_max);
  return transactions != null
    ? `until ${formatCount(transactions)} transactions are done (size-bound)`
    : "size-bound";
}

/** A scale as typed: a number above 0, at most 1000 (the server's and the engine's rule). */
export function parseScale(text: string): number | null {
  const t = text.trim();
  if (!/^(\d+\.?\d*|\.\d+)(e-?\d+)?$/i.test(t)) return null;
  const v = Number(t);
  return Number.isFinite(v) && v > 0 && v <= 1000 ? v : null;
}

/** "×0.0001" */
export function formatScale(v: number): string {
  return `×${sig3(v)}`;
}

// --- results (R's RunRead.file_workload and RunSeries.file_intervals; base units on the wire) ---

export type FileOpSummary = components["schemas"]["FileOpSummary"];
export type PostmarkReport = components["schemas"]["PostmarkReport"];
export type VdbenchReport = components["schemas"]["VdbenchReport"];
export type FileWorkloadSummary = components["schemas"]["FileWorkloadSummary"];
export type FileIntervals = components["schemas"]["FileIntervals"];

/** The time unit a chart of these durations reads best in: the largest one's (s, ms, µs or ns), so
 * a 5 µs response is not plotted as 0.005 ms nor a 43 ms phase as 0.043 s. */
export function timeUnitFor(ns: readonly number[]): {
  unit: "s" | "ms" | "µs" | "ns";
  perNs: number;
} {
  const max = Math.max(0, ...ns.filter((v) => Number.isFinite(v)).map(Math.abs));
  if (max >= 1e9) return { unit: "s", perNs: 1e9 };
  if (max >= 1e6) return { unit: "ms", perNs: 1e6 };
  if (max >= 1e3) return { unit: "µs", perNs: 1e3 };
  return { unit: "ns", perNs: 1 };
}

/** Per-interval chart series of a vdbench run: one line per operation, rates (1/s) and mean
 * response times (in `respUnit`, picked by timeUnitFor), warm-up intervals left out of neither
 * (they are marked by the caller). */
export function intervalSeries(fi: FileIntervals): {
  rates: { key: string; label: string; points: { x: number; y: number }[] }[];
  resp: { key: string; label: string; points: { x: number; y: number }[] }[];
  respUnit: string;
} {
  const names: string[] = [];
  for (const p of fi.points) for (const o of p.ops) if (!names.includes(o.name)) names.push(o.name);
  const rates = names.map((n) => ({
    key: n,
    label: n,
    points: fi.points.flatMap((p) => {
      const o = p.ops.find((x) => x.name === n);
      return o ? [{ x: p.t_s, y: o.rate_per_s }] : [];
    }),
  }));
  const { unit: respUnit, perNs } = timeUnitFor(
    fi.points.flatMap((p) => p.ops.map((o) => o.resp_mean_ns ?? 0)),
  );
  const resp = names
    .map((n) => ({
      key: n,
      label: `${n} mean`,
      points: fi.points.flatMap((p) => {
        const o = p.ops.find((x) => x.name === n);
        return o?.resp_mean_ns != null && o.resp_mean_ns > 0
          ? [{ x: p.t_s, y: o.resp_mean_ns / perNs }]
          : [];
      }),
    }))
    .filter((s) => s.points.length > 0);
  return { rates, resp, respUnit };
}
