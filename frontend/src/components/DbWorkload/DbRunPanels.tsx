import type { RunRead } from "../../client/types";
import { formatScale, specOf } from "../../lib/fileWorkload";
import { DbWorkloadParameters } from "./DbWorkloadSpec";
import { type DbSpecLike, type HeapBtreeSummary, isDbKind, type TpchSummary } from "./dbWorkload";
import { HeapBtreePanel } from "./HeapBtreePanel";
import { TpchPanel } from "./TpchPanel";

/** RunRead with issue 15's summaries (common15 §3), read where the server sends them. */
type DbRun = RunRead & { tpch?: TpchSummary | null; heap_btree?: HeapBtreeSummary | null };

/** The run's TPC-H or heap/B-tree summary, when it has one (its own panel replaces job cards). */
export function dbSummaryOf(run: RunRead): TpchSummary | HeapBtreeSummary | null {
  const r = run as DbRun;
  return r.tpch ?? r.heap_btree ?? null;
}

/** The run page's workload card for the two database kinds: settings and the run's scale. */
export function DbRunSpecCard({ run }: { run: RunRead }) {
  const spec = specOf(run) as DbSpecLike;
  if (!isDbKind(spec.kind)) return null;
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
