import type { RunRead } from "../../client/types";
import { formatScale, specOf } from "../../lib/fileWorkload";
import { formatCount, formatSeconds, sig3 } from "../../lib/format";
import { DbWorkloadParameters } from "./DbWorkloadSpec";
import {
  type DbSpecLike,
  dbmsLabel,
  formatSf,
  type HeapBtreeSummary,
  isDbKind,
  sweepRows,
  type TpchSummary,
} from "./dbWorkload";
import { HeapBtreePanel } from "./HeapBtreePanel";
import { TpchPanel } from "./TpchPanel";

/** RunRead with the TPC-H and heap/B-tree summaries, read where the server sends them. */
type DbRun = RunRead & { tpch?: TpchSummary | null; heap_btree?: HeapBtreeSummary | null };

/** The run's TPC-H or heap/B-tree summary, when it has one (its own panel replaces job cards). */
export function dbSummaryOf(run: RunRead): TpchSummary | HeapBtreeSummary | null {
  const r = run as DbRun;
  return r.tpch ?? r.heap_btree ?? null;
}

/** The run's database spec: the queued one, or (an uploaded result has none) read from its summary. */
export function dbSpecOf(run: RunRead): DbSpecLike | null {
  const spec = specOf(run) as DbSpecLike;
  if (isDbKind(spec.kind)) return spec;
  const r = run as DbRun;
  if (r.tpch)
    return {
      kind: "tpch",
      tpch: {
        dbms: r.tpch.dbms,
        scale_factor: r.tpch.scale_factor,
        streams: r.tpch.streams,
        query_timeout_s: r.tpch.query_timeout_s,
        buffer_pool_bytes: r.tpch.buffer_pool_bytes ?? r.tpch.buffer_pool?.bytes ?? null,
      },
    };
  const rows = sweepRows(r.heap_btree);
  if (rows.length > 0 && r.heap_btree && !Array.isArray(r.heap_btree))
    return {
      kind: "heap_btree",
      heap_btree: {
        records: (r.heap_btree as { records?: number | null }).records ?? 0,
        queries: (r.heap_btree as { queries?: number | null }).queries ?? null,
        cache_fractions: [...new Set(rows.map((x) => x.cache_fraction))].sort((a, b) => a - b),
        randseed: (r.heap_btree as { randseed?: number | null }).randseed ?? null,
        structure: "both",
      },
    };
  return null;
}

/** The run page's workload card for the two database kinds: settings and the run's scale. */
export function DbRunSpecCard({ run }: { run: RunRead }) {
  const spec = dbSpecOf(run);
  if (!spec) return null;
  return (
    <div className="card" data-testid="run-db-spec">
      {spec.scaled_by != null && (
        <p className="small" style={{ marginTop: 0 }} data-testid="run-scaled-by">
          Queued at scale {formatScale(spec.scaled_by)} of the saved workload
        </p>
      )}
      <DbWorkloadParameters spec={spec} />
    </div>
  );
}

/** The run page's results for the two database kinds. */
export function DbRunPanels({ run }: { run: RunRead }) {
  const r = run as DbRun;
  return (
    <>
      {r.tpch && <TpchPanel t={r.tpch} energy={run.energy} />}
      {r.heap_btree && <HeapBtreePanel summary={r.heap_btree} />}
    </>
  );
}

/** A TPC-H or heap/B-tree run's one-line headline (RunSummary's summaryLine), else null. */
export function dbHeadline(run: RunRead): { what: string; figures: string } | null {
  const r = run as DbRun;
  if (r.tpch) {
    const t = r.tpch;
    const q = t.qphh_at_size;
    return {
      what: `TPC-H-derived (not audited) at SF ${formatSf(t.scale_factor)} on ${dbmsLabel(t.dbms)}`,
      figures:
        q != null
          ? `QphH@Size ${sig3(q)}, load ${formatSeconds(t.load_s)}`
          : `metrics withheld (${t.metrics_note ?? "a query did not finish"})`,
    };
  }
  const rows = sweepRows(r.heap_btree);
  if (rows.length > 0) {
    const fractions = new Set(rows.map((x) => x.cache_fraction)).size;
    const best = (s: string, o: string) =>
      Math.max(
        0,
        ...rows.filter((x) => x.structure === s && x.operation === o).map((x) => x.ops_per_s ?? 0),
      );
    return {
      what: `heap / B-tree sweep over ${fractions} cache fractions`,
      figures: `point queries up to ${formatCount(best("heap", "point_query"))}/s (heap), ${formatCount(best("btree", "point_query"))}/s (B-tree)`,
    };
  }
  return null;
}
