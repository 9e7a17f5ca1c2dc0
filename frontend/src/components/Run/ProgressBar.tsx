/** The bar's label: one decimal whatever the share (the list's bars read "6.34 %" beside "81.5 %"
 * with three significant digits), rounded down, so a run not done never reads 100.0 %. */
export function progressLabel(percent: number): string {
  return `${(Math.floor(percent * 10) / 10).toFixed(1)} %`;
}

/** A run's or a campaign's progress; `label` names it for a screen reader (axe-core:
 * aria-progressbar-name). */
export function ProgressBar({ percent, label = "progress" }: { percent: number; label?: string }) {
  const p = Math.max(0, Math.min(100, percent));
  const text = progressLabel(p);
  return (
    <div
      className="progress"
      role="progressbar"
      aria-label={label}
      aria-valuemin={0}
      aria-valuemax={100}
      aria-valuenow={Math.round(p)}
      aria-valuetext={text}
      data-testid="run-progress"
    >
      <div className="progress-fill" style={{ transform: `scaleX(${p / 100})` }} />
      {/* the label twice, each in its part of the bar (overflow hidden): white over the fill, dark
          over the track, so a digit the fill's edge crosses is half white, half dark. Parts, not a
          clip-path: axe-core (the browser tests' audit) judges a text's contrast by what is behind
          its visible box, and a clip-path leaves it the whole bar's (styles.css). */}
      {p > 0 && (
        <span className="progress-part" aria-hidden="true" style={{ left: 0, width: `${p}%` }}>
          <span className="progress-label progress-label-on-fill">{text}</span>
        </span>
      )}
      {p < 100 && (
        <span className="progress-part" aria-hidden="true" style={{ left: `${p}%`, right: 0 }}>
          <span className="progress-label" style={{ left: `-${p}cqw` }}>
            {text}
          </span>
        </span>
      )}
    </div>
  );
}
