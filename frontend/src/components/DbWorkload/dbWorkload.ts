// The database workloads in the UI: TPC-H-derived runs on a private PostgreSQL/MariaDB
// (docs/tpch.md) and the engine's heap/B-tree cache sweep (docs/heap-btree.md). The shapes below
// mirror the documents the agent uploads (the `tpch` object, the `heap_btree` list) as the server
// summarises them in RunRead.tpch / RunRead.heap_btree (common15 §3); every field the UI reads is
// optional or nullable so an older server or a partial document renders as "—", never a crash.
import { formatEnergy, sig3 } from "../../lib/format";

// libs/workload's TPCH_LABEL (the agent's output, the server's schemas and views say the same);
// both pass libs/workload/testdata/constants.json (lib/workload.constants.test.ts)
export const TPCH_LABEL = "TPC-H-derived, not audited";
export type DbKind = "tpch" | "heap_btree" | "innodb_flush";
export const DB_KIND_LABEL: Record<DbKind, string> = {
  tpch: "TPC-H-derived",
  heap_btree: "heap / B-tree",
  innodb_flush: "InnoDB flushing policy",
};
export const DBMS_LABEL: Record<string, string> = { postgresql: "PostgreSQL", mariadb: "MariaDB" };

export interface TpchSpec {
  dbms: string;
  scale_factor: number;
  streams?: number | null;
  query_timeout_s?: number | null;
  buffer_pool_bytes?: number | null;
}
export interface HeapBtreeSpec {
  records: number;
  queries?: number | null;
  cache_fractions?: number[] | null;
  randseed?: number | null;
  structure?: "both" | "heap" | "btree" | string | null;
}
/** The InnoDB flushing-policy matrix (docs/innodb-flush.md): sysbench on a private MariaDB. */
export interface InnodbFlushSpec {
  settings?: { innodb_flush_log_at_trx_commit: number; sync_binlog: number }[] | null;
  tables?: number | null;
  table_size?: number | null;
  threads?: number | null;
  seconds?: number | null;
  warmup_s?: number | null;
  buffer_pool_bytes?: number | null;
}
/** A spec of any kind, read for the database kinds only. */
export interface DbSpecLike {
  kind?: string | null;
  tpch?: TpchSpec | null;
  heap_btree?: HeapBtreeSpec | null;
  innodb_flush?: InnodbFlushSpec | null;
  scaled_by?: number | null;
}

export interface TpchQuery {
  test: string;
  stream: number;
  query: number;
  seconds: number | null;
  answer_ok?: boolean | null;
  timed_out?: boolean | null;
  error?: string | null;
}
export interface TpchSummary {
  label?: string | null;
  dbms: string;
  dbms_version?: string | null;
  scale_factor: number;
  streams: number;
  streams_minimum?: number | null;
  generate_s?: number | null;
  load_s?: number | null;
  power_at_size?: number | null;
  throughput_at_size?: number | null;
  qphh_at_size?: number | null;
  metrics_note?: string | null;
  throughput_s?: number | null;
  query_timeout_s?: number | null;
  timeouts?: number | null;
  queries: TpchQuery[];
  refresh?: { timings?: { test: string; function: string; set: number; seconds: number }[] } | null;
  settings?: Record<string, string | number | boolean | null> | null;
  buffer_pool?: { bytes?: number | null; note?: string | null } | null;
  buffer_pool_bytes?: number | null;
  answers_ok?: number | null;
  answers_checked?: number | null;
  power_s?: number | null;
  /** the database's estimated size on disk (libs/workload's TPC-H bound), B */
  database_bytes?: number | null;
}
export interface HeapBtreeRow {
  structure: string;
  operation: string;
  cache_fraction: number;
  ops_per_s: number | null;
  hit_ratio?: number | null;
  device_reads?: number | null;
  device_writes?: number | null;
  ops?: number | null;
  elapsed_ns?: number | null;
}
/** RunRead.heap_btree: the sweep's rows (a bare list is read the same). */
export type HeapBtreeSummary = { rows: HeapBtreeRow[]; records?: number | null } | HeapBtreeRow[];

export function isDbKind(kind: string | null | undefined): kind is DbKind {
  return kind === "tpch" || kind === "heap_btree" || kind === "innodb_flush";
}

export function sweepRows(s: HeapBtreeSummary | null | undefined): HeapBtreeRow[] {
  if (!s) return [];
  return Array.isArray(s) ? s : (s.rows ?? []);
}

/** "PostgreSQL" for "postgresql"; unknown names as given. */
export function dbmsLabel(dbms: string | null | undefined): string {
  return dbms ? (DBMS_LABEL[dbms] ?? dbms) : "—";
}

/** A scale factor with its digits: 0.01 → "0.01", 10 → "10". */
export function formatSf(sf: number | null | undefined): string {
  if (sf == null || !Number.isFinite(sf)) return "—";
  return String(Number(sf.toPrecision(6)));
}

/** The spec's minimum streams for an SF (clause 5.3.4): libs/workload's tpch_min_streams, which owns the
 * table; this copy passes its vectors (testdata/tpch_streams.json, dbWorkload.vectors.test.ts). */
export function minimumStreams(sf: number): number {
  const steps: [number, number][] = [
    [100000, 11],
    [30000, 10],
    [10000, 9],
    [3000, 8],
    [1000, 7],
    [300, 6],
    [100, 5],
    [30, 4],
    [10, 3],
  ];
  for (const [at, s] of steps) if (sf >= at) return s;
  return 2;
}

/** The query timeline the agent reported as rows for a grouped bar chart: Q1…Q22, one key per
 * stream (s0 = the power test), seconds; a query with any timed-out stream gets "*" after its label (a glyph every font has). */
export function queryChartRows(t: TpchSummary): {
  rows: Record<string, string | number | null>[];
  series: { key: string; label: string }[];
  timedOut: { query: number; stream: number }[];
  failed: { query: number; stream: number; error: string }[];
} {
  const streams = [...new Set(t.queries.map((q) => q.stream))].sort((a, b) => a - b);
  const numbers = [...new Set(t.queries.map((q) => q.query))].sort((a, b) => a - b);
  const timedOut: { query: number; stream: number }[] = [];
  const failed: { query: number; stream: number; error: string }[] = [];
  for (const q of t.queries) {
    if (q.timed_out) timedOut.push({ query: q.query, stream: q.stream });
    else if (q.error) failed.push({ query: q.query, stream: q.stream, error: q.error });
  }
  const rows = numbers.map((n) => {
    const marked = t.queries.some((q) => q.query === n && (q.timed_out || q.error));
    const row: Record<string, string | number | null> = { query: `Q${n}${marked ? "*" : ""}` };
    for (const s of streams) {
      const q = t.queries.find((x) => x.query === n && x.stream === s);
      row[`s${s}`] = q?.seconds ?? null;
    }
    return row;
  });
  const series = streams.map((s) => ({
    key: `s${s}`,
    label: s === 0 ? "power test (stream 0)" : `throughput stream ${s}`,
  }));
  return { rows, series, timedOut, failed };
}

/** The three metrics' formulas as docs/tpch.md § Metrics states them (clause 5.4). */
export function metricFormulas(t: TpchSummary): {
  power: string;
  throughput: string;
  qphh: string;
} {
  const sf = formatSf(t.scale_factor);
  const s = t.streams;
  const ts = t.throughput_s != null ? `${sig3(t.throughput_s)} s` : "Ts";
  return {
    power: `Power@Size = 3600 × SF / (Π QI(i,0) × Π RI(j,0))^(1/24): the power test's 22 query and 2 refresh intervals in seconds (SF ${sf}; intervals below 1/1000 of the longest count as that)`,
    throughput: `Throughput@Size = S × 22 × 3600 / Ts × SF = ${s} × 22 × 3600 / ${ts} × ${sf}`,
    qphh: "QphH@Size = √(Power@Size × Throughput@Size)",
  };
}

/** Geometric-mean Power@Size recomputed from the power test's intervals, to check the summary. */
export function powerFromIntervals(t: TpchSummary): number | null {
  const qs = t.queries.filter((q) => q.stream === 0 && q.test === "power").map((q) => q.seconds);
  const rf = (t.refresh?.timings ?? []).filter((r) => r.test === "power").map((r) => r.seconds);
  const all = [...qs, ...rf];
  if (all.length === 0 || all.some((v) => v == null || !(v > 0))) return null;
  const secs = all as number[];
  const floor = Math.max(...qs.map((v) => v ?? 0)) / 1000;
  const logSum = secs.reduce(
    (acc, v, i) => acc + Math.log(i < qs.length ? Math.max(v, floor) : v),
    0,
  );
  return (3600 * t.scale_factor) / Math.exp(logSum / secs.length);
}

/** Energy in J and Wh side by side: 7200 → "7.2 kJ (2 Wh)". Never kW. */
export function formatJoulesWh(j: number | null | undefined): string {
  if (j == null || !Number.isFinite(j)) return "—";
  return `${formatEnergy(j)} (${sig3(j / 3600)} Wh)`;
}

/** A run's energy per database size (Song & Lee's Tables 6–7): the run's energy at its SF, and per
 * SF unit. */
export function energyPerDbSize(
  totalJ: number | null | undefined,
  sf: number,
  databaseBytes?: number | null,
): { total: string; perSf: string; perGb: string | null } | null {
  if (totalJ == null || !Number.isFinite(totalJ) || !(sf > 0)) return null;
  return {
    total: formatJoulesWh(totalJ),
    perSf: formatJoulesWh(totalJ / sf),
    perGb:
      databaseBytes && databaseBytes > 0 ? formatJoulesWh(totalJ / (databaseBytes / 1e9)) : null,
  };
}

/** The host's consent to start a DBMS: null when allowed, else why the run would be refused and
 * the command that allows it (libs/policy `allowed_dbms`, `iowatt-agent targets allow-dbms`). */
export function dbmsRefusal(
  policy: object | null | undefined,
  dbms: string,
): { reason: string; command: string } | null {
  const reported = (policy as { allowed_dbms?: string[] | null } | null | undefined)?.allowed_dbms;
  const allowed = reported ?? [];
  if (allowed.includes(dbms)) return null;
  return {
    reason:
      reported == null
        ? `this host has not reported which DBMS it lets iowatt start (an older agent): the run on ${dbmsLabel(dbms)} will be refused`
        : `this host does not let iowatt start ${dbmsLabel(dbms)}: the run will be refused`,
    command: `iowatt-agent targets allow-dbms ${dbms}`,
  };
}

/** Sweep lines: one per structure × operation, ops/s over the cache fraction; log when the
 * values span two orders of magnitude. */
export function sweepSeries(
  rows: HeapBtreeRow[],
  metric: "ops_per_s" | "hit_ratio" | "device_reads",
): {
  series: {
    key: string;
    label: string;
    points: { x: number; y: number }[];
    color: number;
    dashed: boolean;
  }[];
  log: boolean;
} {
  const keys = [...new Set(rows.map((r) => `${r.structure}|${r.operation}`))].sort();
  const series = keys.map((k, i) => {
    const [structure = "", operation = ""] = k.split("|");
    const points = rows
      .filter((r) => r.structure === structure && r.operation === operation)
      .map((r) => ({ x: r.cache_fraction, y: r[metric] }))
      .filter((p): p is { x: number; y: number } => p.y != null && Number.isFinite(p.y))
      .map((p) => (metric === "hit_ratio" ? { x: p.x, y: p.y * 100 } : p))
      .sort((a, b) => a.x - b.x);
    return {
      key: k,
      label: `${structure === "btree" ? "B-tree" : structure} ${operation.replace("_", " ")}`,
      points,
      color: i,
      dashed: operation !== "insert",
    };
  });
  const pos = series.flatMap((s) => s.points.map((p) => p.y)).filter((v) => v > 0);
  const log =
    metric !== "hit_ratio" && pos.length > 0 && Math.max(...pos) / Math.min(...pos) >= 100;
  return { series, log };
}

/** Table 3's grid: one row per fraction, ops/s per structure × operation, and the 100 %/10 % ratio. */
export function sweepGrid(rows: HeapBtreeRow[]): {
  columns: string[];
  fractions: number[];
  value: (fraction: number, column: string) => HeapBtreeRow | undefined;
  ratio: (column: string) => number | null;
} {
  const columns = [...new Set(rows.map((r) => `${r.structure}|${r.operation}`))].sort();
  const fractions = [...new Set(rows.map((r) => r.cache_fraction))].sort((a, b) => a - b);
  const value = (f: number, c: string) =>
    rows.find((r) => r.cache_fraction === f && `${r.structure}|${r.operation}` === c);
  const ratio = (c: string) => {
    if (fractions.length < 2) return null;
    const first = fractions[0];
    const last = fractions[fractions.length - 1];
    if (first === undefined || last === undefined) return null;
    const lo = value(first, c)?.ops_per_s;
    const hi = value(last, c)?.ops_per_s;
    return lo && hi ? hi / lo : null;
  };
  return { columns, fractions, value, ratio };
}

export function columnLabel(c: string): string {
  const [structure = "", operation = ""] = c.split("|");
  return `${structure === "btree" ? "B-tree" : structure} ${operation.replace("_", " ")}`;
}

/** What a row of the workloads list says about a database workload's size. */
export function dbSizeText(spec: DbSpecLike): string {
  if (spec.kind === "tpch" && spec.tpch)
    return `SF ${formatSf(spec.tpch.scale_factor)} on ${dbmsLabel(spec.tpch.dbms)}`;
  if (spec.kind === "heap_btree" && spec.heap_btree)
    return `${spec.heap_btree.records.toLocaleString("en-US")} records × ${(spec.heap_btree.cache_fractions ?? []).length} cache fractions`;
  if (spec.kind === "innodb_flush" && spec.innodb_flush)
    return `${(spec.innodb_flush.settings ?? []).length} settings × ${spec.innodb_flush.seconds ?? "—"} s on MariaDB`;
  return "—";
}
