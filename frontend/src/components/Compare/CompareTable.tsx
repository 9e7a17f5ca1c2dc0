import type { CompareMetric, CompareRead } from "../../client/types";
import {
  type Change,
  changeAt,
  changeScore,
  columnValidity,
  metricDisplays,
} from "../../lib/compare";
import { formatPercent, formatRatio, formatWithUnit } from "../../lib/format";
import { ScrollBox } from "../ScrollBox";
import { ariaSort, SortButton, type SortKey, useSorting } from "../Table/SortableTable";

/** "better" / "worse" for a ratio by the server's `better` of the metric; "" when equal or none. */
export function ratioTone(ratio: number | null, better: CompareMetric["better"]): string {
  if (ratio === null || ratio === 1) return "";
  return ratio > 1 === (better === "higher") ? "better" : "worse";
}

/** The repeat statistics line under a grouped value: n, CV and the 95 % CI. */
function statsLine(stats: CompareMetric["stats"][number], unit: string): string | null {
  if (!stats) return null;
  if (stats.n < 2) return `n=${stats.n}`;
  const cv = stats.cv == null ? "—" : formatPercent(stats.cv * 100);
  const ci =
    stats.ci95_low == null || stats.ci95_high == null
      ? "—"
      : `${formatWithUnit(stats.ci95_low, unit)} – ${formatWithUnit(stats.ci95_high, unit)}`;
  return `n=${stats.n} · CV ${cv} · 95 % CI ${ci}`;
}

function ValidityMark({ flags }: { flags: { flag: string; messages: string[] }[] }) {
  if (flags.length === 0) return null;
  const text = flags
    .map((f) => `${f.flag.replace(/_/g, " ")}: ${f.messages.join("; ")}`)
    .join("\n");
  return (
    <span
      className="validity-mark"
      title={text}
      data-testid="validity-mark"
      role="img"
      aria-label={text}
    >
      ⚠
    </span>
  );
}

/** The change line under a value: the server's phrase, coloured by its verdict; ratio on hover. */
function ChangeLine({
  change,
  noise,
}: {
  change: Change | null;
  noise: boolean | null | undefined;
}) {
  if (!change) return null;
  return (
    <div
      className={`change ratio ${change.verdict === "same" ? "" : change.verdict}`}
      data-testid="ratio-cell"
      data-ratio={change.ratio}
      data-verdict={change.verdict}
      title={`ratio to the baseline ${formatRatio(change.ratio)} (${change.pct_change >= 0 ? "+" : ""}${formatPercent(change.pct_change)})`}
    >
      {change.phrase}
      {noise === true && (
        <span className="noise" title="The 95 % confidence intervals overlap the baseline's">
          {" "}
          ≈ within noise
        </span>
      )}
    </div>
  );
}

export type TableLayout = "metrics" | "runs";

/** Runs as rows from this many columns on (metrics as rows would need a page of width). */
export const RUNS_AS_ROWS_FROM = 5;

export function autoLayout(columns: number): TableLayout {
  return columns >= RUNS_AS_ROWS_FROM ? "runs" : "metrics";
}

/**
 * One table of metrics (a job's, or the energy figures): each value in the unit its row (or
 * column) names, the direction-aware change against the baseline under it. `layout` "metrics"
 * puts metrics in rows and compared columns across; "runs" transposes, for many runs. The
 * first column is sticky and the table scrolls inside its box, never the page.
 */
export function MetricTable({
  data,
  labels,
  metrics,
  testId,
  layout = "metrics",
}: {
  data: CompareRead;
  labels: string[];
  metrics: CompareMetric[];
  testId: string;
  layout?: TableLayout;
}) {
  const flags = data.columns.map((c) => columnValidity(data, c.run_ids));
  const shown = metricDisplays(metrics);
  type Shown = (typeof shown)[number];
  const base = data.columns.findIndex((c) => c.is_baseline);
  // runs as rows: sorted by their label or any metric's value (one unit per metric column)
  const runKeys: SortKey<{ i: number }>[] = [
    { id: "run", value: ({ i }) => labels[i] },
    ...shown.map(({ m }) => ({
      id: m.key,
      num: true,
      value: ({ i }: { i: number }) => m.values[i],
    })),
  ];
  // metrics as rows: by name, or by a column's change against the baseline (values differ in
  // unit from row to row; the change is one scale: better > same > worse)
  const metricKeys: SortKey<Shown>[] = [
    { id: "metric", value: ({ m }) => m.label },
    ...data.columns.map((c, i) => ({
      id: `col-${c.key}`,
      num: true,
      sortable: i !== base,
      value: ({ m }: Shown) => {
        const ch = changeAt(m, i);
        return ch ? changeScore(ch) : null;
      },
    })),
  ];
  const byRun = useSorting(
    data.columns.map((_, i) => ({ i })),
    runKeys,
  );
  const byMetric = useSorting(shown, metricKeys);
  const cell = (m: CompareMetric, fmt: (v: number | null) => string, unit: string, i: number) => {
    const v = m.values[i] ?? null;
    const line = data.group_by === "none" ? null : statsLine(m.stats[i] ?? null, m.unit);
    return (
      <td className="num" key={`${m.key}-${data.columns[i]?.key ?? i}`} data-metric={m.key}>
        {fmt(v)}
        {v !== null && <ValidityMark flags={flags[i] ?? []} />}
        <ChangeLine change={changeAt(m, i)} noise={m.within_noise[i]} />
        {line && (
          <div className="stats-line" data-testid="stats-line" title={unit}>
            {line}
          </div>
        )}
      </td>
    );
  };
  if (layout === "runs") {
    return (
      <ScrollBox label="the comparison's figures, one row per run">
        <table className="table compact sticky-first" data-testid={testId} data-layout="runs">
          <thead>
            <tr>
              <th aria-sort={ariaSort(byRun.sortOf("run").dir)}>
                <SortButton id="run" sorting={byRun}>
                  {data.group_by === "none" ? "Run" : "Column"}
                </SortButton>
              </th>
              {shown.map(({ m, d }) => (
                <th
                  className="num"
                  key={m.key}
                  data-metric={m.key}
                  aria-sort={ariaSort(byRun.sortOf(m.key).dir)}
                >
                  <SortButton id={m.key} sorting={byRun}>
                    {m.label}
                  </SortButton>
                  <div className="unit-head">{d.unit}</div>
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {byRun.rows.map(({ i }) => {
              const c = data.columns[i];
              if (!c) return null;
              return (
                <tr key={c.key} data-column={c.key}>
                  <th scope="row">
                    {labels[i]}
                    {c.is_baseline && <span className="muted small"> (baseline)</span>}
                    <ValidityMark flags={flags[i] ?? []} />
                  </th>
                  {shown.map(({ m, d }) => cell(m, d.format, d.unit, i))}
                </tr>
              );
            })}
          </tbody>
        </table>
      </ScrollBox>
    );
  }
  return (
    <ScrollBox label="the comparison's figures, one row per metric">
      <table className="table compact sticky-first" data-testid={testId} data-layout="metrics">
        <thead>
          <tr>
            <th aria-sort={ariaSort(byMetric.sortOf("metric").dir)}>
              <SortButton id="metric" sorting={byMetric}>
                Metric
              </SortButton>
            </th>
            <th>Unit</th>
            {data.columns.map((c, i) => (
              <th
                className="num"
                key={c.key}
                data-baseline={c.is_baseline || undefined}
                aria-sort={i === base ? undefined : ariaSort(byMetric.sortOf(`col-${c.key}`).dir)}
                title={i === base ? undefined : "sorts by the change against the baseline"}
              >
                {i === base ? (
                  labels[i]
                ) : (
                  <SortButton id={`col-${c.key}`} sorting={byMetric}>
                    {labels[i]}
                  </SortButton>
                )}
                {c.is_baseline && <span className="muted small"> (baseline)</span>}
                <ValidityMark flags={flags[i] ?? []} />
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {byMetric.rows.map(({ m, d }) => (
            <tr key={m.key} data-metric={m.key}>
              <th scope="row">{m.label}</th>
              <td className="muted small" data-testid="unit-cell">
                {d.unit}
              </td>
              {data.columns.map((_, i) => cell(m, d.format, d.unit, i))}
            </tr>
          ))}
        </tbody>
      </table>
    </ScrollBox>
  );
}
