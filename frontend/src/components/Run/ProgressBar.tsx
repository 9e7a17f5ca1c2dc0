import { formatPercent } from "../../lib/format";

/** A run's or a campaign's progress; `label` names it for a screen reader (axe-core:
 * aria-progressbar-name). */
export function ProgressBar({ percent, label = "progress" }: { percent: number; label?: string }) {
  const p = Math.max(0, Math.min(100, percent));
  return (
    <div
      className="progress"
      role="progressbar"
      aria-label={label}
      aria-valuemin={0}
      aria-valuemax={100}
      aria-valuenow={Math.round(p)}
      data-testid="run-progress"
    >
      <div className="progress-fill" style={{ transform: `scaleX(${p / 100})` }} />
      <span className="progress-label">{formatPercent(p)}</span>
    </div>
  );
}
