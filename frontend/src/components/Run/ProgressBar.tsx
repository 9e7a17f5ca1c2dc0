/** The bar's label: one decimal whatever the share (the list's bars read "6.34 %" beside "81.5 %"
 * with three significant digits), rounded down, so a run not done never reads 100.0 %. */
export function progressLabel(percent: number): string {
  return `${(Math.floor(percent * 10) / 10).toFixed(1)} %`;
}

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
      <span className="progress-label">{progressLabel(p)}</span>
    </div>
  );
}
