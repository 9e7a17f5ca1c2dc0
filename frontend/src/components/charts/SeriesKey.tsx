import { colorAt, lineDash } from "./palette";

export interface KeyItem {
  key: string;
  label: string;
  /** Palette index (a column keeps its colour across charts). */
  color: number;
  dashed?: boolean;
  /** draw the line's dash (line charts), not a filled box (bars) */
  line?: boolean;
}

/**
 * The legend as HTML outside the plot: the chart's height is the plot's, whatever the number
 * of series; a long key scrolls inside its own box and a long label wraps (never cut off). One key can serve several charts (the
 * compare page's run key).
 */
export function SeriesKey({ items, title }: { items: KeyItem[]; title?: string }) {
  if (items.length === 0) return null;
  return (
    <div className="series-key" data-testid="series-key">
      {title && <span className="series-key-title">{title}</span>}
      {items.map((s, i) => (
        <span className="series-key-item" key={s.key} title={s.label}>
          {s.line || s.dashed ? (
            <svg width="22" height="10" aria-hidden="true" style={{ flex: "none" }}>
              <line
                x1="1"
                y1="5"
                x2="21"
                y2="5"
                stroke={colorAt(s.color)}
                strokeWidth="2.5"
                strokeDasharray={lineDash(s.dashed, s.color)}
              />
            </svg>
          ) : (
            <span
              className="swatch"
              style={{ borderColor: colorAt(s.color), background: colorAt(s.color) }}
            />
          )}
          <span className="series-key-label">{s.label}</span>
          {/* A separator for copied and read-aloud text ("help off; vda on e2e"); the flex
              gap does the visual spacing. */}
          {i < items.length - 1 && <span className="visually-hidden">; </span>}
        </span>
      ))}
    </div>
  );
}
