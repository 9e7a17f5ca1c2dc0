import { formatPercent } from "../../lib/format";

export function ProgressBar({ percent }: { percent: number }) {
  const p = Math.max(0, Math.min(100, percent));
  return (
    <div
      className="progress"
      role="progressbar"
      aria-valuemin={0}
      aria-valuemax={100}
      aria-valuenow={Math.round(p)}
      data-testid="run-progress"
    >
      <div className="progress-fill" style={{ width: `${p}%` }} />
      <span className="progress-label">{formatPercent(p)}</span>
    </div>
  );
}
