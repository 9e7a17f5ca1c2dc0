import type { RunStatus } from "../../client/types";

export function StatusBadge({ status }: { status: RunStatus }) {
  return (
    <span className={`badge badge-${status}`} data-testid="run-status">
      {status}
    </span>
  );
}
