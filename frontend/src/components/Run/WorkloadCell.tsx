import type { RunRead } from "../../client/types";
import { hasUnstated, namesInBrief, workloadLabel } from "../../lib/workload";
import "../Table/table.css";
import { NOT_STATED } from "./NotStated";

/** The preset's name when the run ran one (its jobs in the tooltip), else the workload in brief. */
export function WorkloadCell({ run }: { run: Pick<RunRead, "preset" | "workload"> }) {
  const { label, preset } = workloadLabel(run);
  if (!preset && hasUnstated(run.workload))
    return (
      <span data-testid="workload-not-stated" title={`—: ${NOT_STATED}`}>
        {label}
      </span>
    );
  if (!preset) return <>{label}</>;
  const jobs = run.workload.jobs ?? [];
  return (
    <span
      className="badge badge-preset"
      data-testid="run-preset"
      title={
        jobs.length
          ? `built-in preset: ${jobs.length} jobs (${namesInBrief(jobs)})`
          : "built-in preset"
      }
    >
      {label}
    </span>
  );
}
