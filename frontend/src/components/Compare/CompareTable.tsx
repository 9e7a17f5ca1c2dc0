import type { CompareMetric, CompareRead } from "../../client/types";
import { columnValidity } from "../../lib/compare";
import { formatPercent, formatRatio, formatWithUnit } from "../../lib/format";

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

/** One table of metrics (a job's, or the energy figures): values, stats, ratio columns. */
export function MetricTable({
  data,
  labels,
  metrics,
  testId,
}: {
  data: CompareRead;
  labels: string[];
  metrics: CompareMetric[];
  testId: string;
}) {
  const base = data.columns.findIndex((c) => c.is_baseline);
  const flags = data.columns.map((c) => columnValidity(data, c.run_ids));
  const others = data.columns.map((_, i) => i).filter((i) => i !== base);
  return (
    <div className="scroll-x">
      <table className="table compact" data-testid={testId}>
        <thead>
          <tr>
            <th>Metric</th>
            <th>Unit</th>
            {data.columns.map((c, i) => (
              <th className="num" key={c.key} data-baseline={c.is_baseline || undefined}>
                {labels[i]}
                {c.is_baseline && <span className="muted small"> (baseline)</span>}
                <ValidityMark flags={flags[i] ?? []} />
              </th>
            ))}
            {others.map((i) => (
              <th className="num ratio" key={`ratio-${data.columns[i]?.key}`}>
                {labels[i]} ÷ {labels[base]}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {metrics.map((m) => (
            <tr key={m.key} data-metric={m.key}>
              <th scope="row">{m.label}</th>
              <td className="muted small">{m.unit}</td>
              {m.values.map((v, i) => {
                const line =
                  data.group_by === "none" ? null : statsLine(m.stats[i] ?? null, m.unit);
                return (
                  <td className="num" key={data.columns[i]?.key ?? i}>
                    {formatWithUnit(v, m.unit)}
                    {v !== null && <ValidityMark flags={flags[i] ?? []} />}
                    {line && (
                      <div className="stats-line" data-testid="stats-line">
                        {line}
                      </div>
                    )}
                  </td>
                );
              })}
              {others.map((i) => {
                const r = m.ratios[i] ?? null;
                const noise = m.within_noise[i];
                return (
                  <td
                    className={`num ratio ${ratioTone(r, m.better)}`}
                    key={data.columns[i]?.key ?? i}
                    data-testid="ratio-cell"
                  >
                    {formatRatio(r)}
                    {noise === true && (
                      <span
                        className="noise"
                        title="The 95 % confidence intervals overlap the baseline's"
                      >
                        {" "}
                        ≈ within noise
                      </span>
                    )}
                  </td>
                );
              })}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
