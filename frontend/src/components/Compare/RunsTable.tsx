// The compared runs, one row each: the compare page's table, and with `readOnly` a share link's
// (no link to a run page, no remove, nothing a link does not carry).
import type { ReactNode } from "react";
import { Link } from "react-router-dom";
import type { CompareRead } from "../../client/types";
import { columnLabels, runLabels } from "../../lib/compare";
import { workloadLabel } from "../../lib/workload";
import { OriginBadge } from "../Run/OriginBadge";
import { StatusBadge } from "../Run/StatusBadge";
import { WorkloadCell } from "../Run/WorkloadCell";
import { SortableTable, type SortColumn } from "../Table/SortableTable";

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
  const rows = data.runs.map((r, i) => ({
    r,
    i,
    col: data.columns.findIndex((c) => c.run_ids.includes(r.id)),
    flags: data.validity[r.id] ?? [],
  }));
  type Row = (typeof rows)[number];
  const columns: SortColumn<Row>[] = [
    {
      id: "run",
      header: "Run",
      value: ({ i }) => runNames[i],
      cell: ({ r, i }) => (
        <>
          {readOnly ? runNames[i] : <Link to={`/runs/${r.id}`}>{runNames[i]}</Link>}{" "}
          <OriginBadge origin={r.origin} />
        </>
      ),
    },
    {
      id: "column",
      header: "Column",
      value: ({ col }) => col,
      cell: ({ col }) => (
        <>
          {labels[col]}
          {data.columns[col]?.is_baseline && <span className="muted small"> (baseline)</span>}
        </>
      ),
    },
    {
      id: "status",
      header: "Status",
      value: ({ r }) => r.status,
      cell: ({ r }) => <StatusBadge status={r.status} />,
    },
    {
      id: "device",
      header: "Device",
      value: ({ r }) => r.device_name ?? (readOnly ? null : r.target_path),
      cell: ({ r }) =>
        r.device_name ?? (readOnly ? "—" : <span className="mono small">{r.target_path}</span>),
    },
    {
      id: "where",
      header: where.label,
      value: ({ r, i }) => {
        const v = where.cell(r, i);
        return typeof v === "string" || typeof v === "number" ? v : null;
      },
      cell: ({ r, i }) => where.cell(r, i),
    },
    {
      id: "workload",
      header: "Workload",
      value: ({ r }) => workloadLabel(r).label,
      cell: ({ r }) => (
        <span className="small">
          <WorkloadCell run={r} />
        </span>
      ),
    },
  ];
  if (!readOnly) {
    columns.push(
      {
        id: "validity",
        header: "Validity",
        value: ({ flags }) => flags.length || null,
        cell: ({ flags }) => (
          <span className="small" data-testid="run-validity">
            {flags.length === 0 ? (
              <span className="muted">—</span>
            ) : (
              flags.map((f) => (
                <div key={f.flag} className="validity" title={f.flag}>
                  ⚠ {f.message}
                </div>
              ))
            )}
          </span>
        ),
      },
      {
        id: "remove",
        header: "",
        sortable: false,
        value: () => null,
        cell: ({ r }) =>
          remove ? (
            <button type="button" className="btn btn-ghost btn-small" onClick={() => remove(r.id)}>
              remove
            </button>
          ) : null,
      },
    );
  }
  return (
    <div className="card">
      <SortableTable
        rows={rows}
        columns={columns}
        rowKey={({ r }) => r.id}
        testId={testId}
        className="table compact sticky-first"
        wrapClass="runs-scroll"
        label="the runs compared"
      />
    </div>
  );
}
