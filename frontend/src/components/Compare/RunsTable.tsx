// The compared runs, one row each: the compare page's table, and with `readOnly` a share link's
// (no link to a run page, no remove, nothing a link does not carry).
import type { ReactNode } from "react";
import { Link } from "react-router-dom";
import type { CompareRead } from "../../client/types";
import { columnLabels, runLabels } from "../../lib/compare";
import { describeWorkload } from "../../lib/workload";
import { StatusBadge } from "../Run/StatusBadge";

type CompareRun = CompareRead["runs"][number];

export function CompareRunsTable({
  data,
  testId,
  where,
  readOnly = false,
  onRemove,
}: {
  data: CompareRead;
  testId: string;
  /** the column after the device: the agent on the compare page, the environment on a link
   * (agents are never shared) */
  where: { label: string; cell: (r: CompareRun, i: number) => ReactNode };
  readOnly?: boolean;
  /** a remove button on each row (the compare page passes it while more than two runs are left) */
  onRemove?: (runId: string) => void;
}) {
  const labels = columnLabels(data);
  const runNames = runLabels(data.runs);
  const remove = readOnly ? undefined : onRemove;
  return (
    <div className="card table-scroll runs-scroll">
      <table className="table compact sticky-first" data-testid={testId}>
        <thead>
          <tr>
            <th>Run</th>
            <th>Column</th>
            <th>Status</th>
            <th>Device</th>
            <th>{where.label}</th>
            <th>Workload</th>
            {!readOnly && <th>Validity</th>}
            {!readOnly && <th />}
          </tr>
        </thead>
        <tbody>
          {data.runs.map((r, i) => {
            const col = data.columns.findIndex((c) => c.run_ids.includes(r.id));
            const flags = data.validity[r.id] ?? [];
            return (
              <tr key={r.id}>
                <td>{readOnly ? runNames[i] : <Link to={`/runs/${r.id}`}>{runNames[i]}</Link>}</td>
                <td>
                  {labels[col]}
                  {data.columns[col]?.is_baseline && (
                    <span className="muted small"> (baseline)</span>
                  )}
                </td>
                <td>
                  <StatusBadge status={r.status} />
                </td>
                <td>
                  {r.device_name ??
                    (readOnly ? "—" : <span className="mono small">{r.target_path}</span>)}
                </td>
                <td>{where.cell(r, i)}</td>
                <td className="small">{describeWorkload(r.workload)}</td>
                {!readOnly && (
                  <td className="small" data-testid="run-validity">
                    {flags.length === 0 ? (
                      <span className="muted">—</span>
                    ) : (
                      flags.map((f) => (
                        <div key={f.flag} className="validity" title={f.flag}>
                          ⚠ {f.message}
                        </div>
                      ))
                    )}
                  </td>
                )}
                {!readOnly && (
                  <td>
                    {remove && (
                      <button
                        type="button"
                        className="btn btn-ghost btn-small"
                        onClick={() => remove(r.id)}
                      >
                        remove
                      </button>
                    )}
                  </td>
                )}
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
