// A review's tables: the candidates with where each figure comes from (published figures
// labelled so, linked runs with their validity flags), every computed figure, the weighted
// ranking, the sensitivity of the ranking, the energy per job and the report differences.
import { Link } from "react-router-dom";
import { formatDecimal, formatEnergy } from "../../lib/format";
import type { CandidateRead, ReviewRead } from "../../queries/reviews";
import { CRITERIA } from "../../queries/reviews";
import { ScrollBox } from "../ScrollBox";
import {
  decimalBytes,
  deviceText,
  fractionPct,
  money,
  num,
  PARAMETERS,
  perfText,
  perfUnit,
  plain,
  protectionText,
} from "./units";

const GB_NOTE = "GB = 10^9 bytes";

/** "published" / "measured" / "estimated" as a badge; estimates stand out as elsewhere. */
export function SourceBadge({ source }: { source: string | null | undefined }) {
  if (!source) return <span className="muted">—</span>;
  const cls =
    source === "published"
      ? "tier-badge tier-component"
      : source === "estimated"
        ? "tier-badge tier-estimate"
        : "tier-badge tier-lab";
  const label = source === "run" || source === "comparison" ? "measured" : source;
  return (
    <span className={cls} data-testid={`source-${label}`}>
      {label}
    </span>
  );
}

/** A linked run's validity flags beside its figures (as the run page lists them). */
export function ValidityFlags({ c }: { c: CandidateRead }) {
  if (c.validity.length === 0) return null;
  return (
    <ul className="energy-flags" data-testid="candidate-validity">
      {c.validity.map((v) => (
        <li key={v.flag} title={v.flag}>
          ⚠ {v.message}
        </li>
      ))}
    </ul>
  );
}

/** The candidates as entered: configuration, price and the sources of every input. `readOnly`
 * (a share link): no actions and no links into the team's runs or comparisons, each
 * measured figure named by its reference instead. */
export function CandidatesTable({
  review,
  actions,
  readOnly = false,
  testId = "candidates-table",
}: {
  review: ReviewRead;
  actions?: (c: CandidateRead) => React.ReactNode;
  readOnly?: boolean;
  testId?: string;
}) {
  const cur = review.currency;
  const act = readOnly ? undefined : actions;
  return (
    <ScrollBox label="Candidates">
      <table className="table compact" data-testid={testId}>
        <thead>
          <tr>
            <th>Candidate</th>
            <th>Device × count</th>
            <th>Protection</th>
            <th>Unit price</th>
            <th>AFR</th>
            <th>Embodied CO2e (set + replacements)</th>
            <th>Performance</th>
            <th>Power (set)</th>
            {act && (
              <th>
                <span className="visually-hidden">Actions</span>
              </th>
            )}
          </tr>
        </thead>
        <tbody>
          {review.candidates.map((c) => (
            <tr key={c.id} data-testid="candidate-row">
              <td>
                <strong>{c.name}</strong>
              </td>
              <td>{deviceText(c)}</td>
              <td>{protectionText(c)}</td>
              <td className="nowrap">{money(c.unit_price, cur)}</td>
              <td className="nowrap">{fractionPct(c.afr)}</td>
              <td>
                {plain(c.embodied_kg, "kg CO2e")}
                <br />
                <small
                  className="muted"
                  title={c.embodied_source ?? ""}
                  style={{
                    display: "inline-block",
                    maxWidth: "16rem",
                    overflow: "hidden",
                    textOverflow: "ellipsis",
                    whiteSpace: "nowrap",
                  }}
                >
                  {c.embodied_source ?? ""}
                </small>
              </td>
              <td>
                {perfText(c.performance_value, c.performance_metric)}{" "}
                <SourceBadge source={c.performance_source} />
                <br />
                <small className="muted">
                  {readOnly || c.performance_source === "published" ? (
                    c.performance_reference
                  ) : c.run_id ? (
                    <Link to={`/runs/${c.run_id}`}>run {c.run_id.slice(0, 8)}</Link>
                  ) : (
                    c.performance_reference
                  )}
                  {!readOnly && c.performance_source === "comparison" && c.run_ids.length > 0 && (
                    <>
                      {" "}
                      of{" "}
                      <Link to={`/compare?runs=${c.run_ids.join(",")}`}>
                        a comparison of {c.run_ids.length}
                      </Link>
                    </>
                  )}
                </small>
                <ValidityFlags c={c} />
              </td>
              <td>
                {plain(c.idle_w, "W")} idle / {plain(c.load_w, "W")} load{" "}
                <SourceBadge source={c.power_source} />
                <br />
                <small className="muted">{c.power_reference ?? ""}</small>
              </td>
              {act && <td className="nowrap">{act(c)}</td>}
            </tr>
          ))}
        </tbody>
      </table>
    </ScrollBox>
  );
}

type Row = { label: string; note?: string; value: (c: CandidateRead) => string; testId: string };

/** Every figure the API computes per candidate, one row per figure, one column per candidate. */
export function figureRows(review: ReviewRead): Row[] {
  const cur = review.currency;
  const metric = review.candidates[0]?.performance_metric ?? "iops";
  const mixed = review.candidates.some((c) => c.performance_metric !== metric);
  const perf = mixed ? "unit of performance" : perfUnit(metric);
  return [
    {
      testId: "drives",
      label: "Drives (data drives)",
      value: (c) => `${c.drives} (${c.data_drives})`,
    },
    {
      testId: "raw_bytes",
      label: "Raw capacity",
      note: GB_NOTE,
      value: (c) => decimalBytes(c.raw_bytes),
    },
    {
      testId: "usable_bytes",
      label: "Usable capacity",
      note: GB_NOTE,
      value: (c) => decimalBytes(c.usable_bytes),
    },
    {
      testId: "protection_overhead",
      label: "Protection overhead",
      value: (c) => fractionPct(c.protection_overhead),
    },
    { testId: "price_total", label: "Set price", value: (c) => money(c.price_total, cur) },
    {
      testId: "performance",
      label: "Performance",
      value: (c) => perfText(c.performance_value, c.performance_metric),
    },
    { testId: "mb_s", label: "Throughput", value: (c) => plain(c.mb_s, "MB/s") },
    {
      testId: "cost_per_iops_single",
      label: `Cost per ${perf}, single drive`,
      value: (c) => money(c.cost_per_iops_single, cur),
    },
    {
      testId: "cost_per_iops_set",
      label: `Cost per ${perf}, set`,
      value: (c) => money(c.cost_per_iops_set, cur),
    },
    {
      testId: "cost_per_gb_raw",
      label: "Cost per GB raw",
      note: GB_NOTE,
      value: (c) => money(c.cost_per_gb_raw, cur),
    },
    {
      testId: "cost_per_gb_usable",
      label: "Cost per GB usable",
      note: GB_NOTE,
      value: (c) => money(c.cost_per_gb_usable, cur),
    },
    {
      testId: "cost_per_gb_usable_per_iops",
      label: `Cost per usable GB per ${perf}`,
      note: GB_NOTE,
      value: (c) => money(c.cost_per_gb_usable_per_iops, cur),
    },
    {
      testId: "iops_per_w",
      label: `${mixed ? "Performance" : perf} per watt`,
      value: (c) => plain(c.iops_per_w),
    },
    { testId: "mb_s_per_w", label: "MB/s per watt", value: (c) => plain(c.mb_s_per_w) },
    {
      testId: "idle_load_w",
      label: "Power idle / load (set)",
      value: (c) => `${plain(c.idle_w, "W")} / ${plain(c.load_w, "W")}`,
    },
    {
      testId: "energy_kwh_per_year",
      label: "Energy per year (device)",
      value: (c) => plain(c.energy_kwh_per_year, "kWh"),
    },
    {
      testId: "facility_kwh_per_year",
      label: `Energy per year (× PUE ${plain(review.pue)})`,
      value: (c) => plain(c.facility_kwh_per_year, "kWh"),
    },
    {
      testId: "energy_cost_per_year",
      label: "Energy cost per year",
      value: (c) => money(c.energy_cost_per_year, cur),
    },
    {
      testId: "operational_kg_per_year",
      label: "Operational CO2e per year",
      value: (c) => plain(c.operational_kg_per_year, "kg"),
    },
    {
      testId: "replacements",
      label: "Replacements (expected)",
      value: (c) => plain(c.replacements, "drives"),
    },
    {
      testId: "embodied_kg",
      label: "Embodied CO2e (incl. replacements)",
      value: (c) => plain(c.embodied_kg, "kg"),
    },
    {
      testId: "tco_purchase",
      label: "TCO: purchase",
      value: (c) => money(c.tco_parts.purchase, cur),
    },
    { testId: "tco_energy", label: "TCO: energy", value: (c) => money(c.tco_parts.energy, cur) },
    {
      testId: "tco_replacements",
      label: "TCO: replacements",
      value: (c) => money(c.tco_parts.replacements, cur),
    },
    {
      testId: "tco",
      label: `TCO over ${plain(review.horizon_years)} years`,
      value: (c) => money(c.tco, cur),
    },
    {
      testId: "co2e_kg_lifetime",
      label: "Lifetime CO2e",
      value: (c) => plain(c.co2e_kg_lifetime, "kg"),
    },
  ];
}

export function FiguresTable({ review }: { review: ReviewRead }) {
  const rows = figureRows(review);
  return (
    <ScrollBox label="Figures">
      <table className="table compact" data-testid="figures-table">
        <thead>
          <tr>
            <th>Figure</th>
            {review.candidates.map((c) => (
              <th key={c.id}>
                {c.name}
                {c.validity.length > 0 && (
                  <span
                    className="validity-mark"
                    title={c.validity.map((v) => v.message).join("\n")}
                    data-testid="validity-mark"
                    role="img"
                    aria-label={c.validity.map((v) => v.message).join("; ")}
                  >
                    {" "}
                    ⚠
                  </span>
                )}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={r.testId} data-testid={`figure-${r.testId}`}>
              <th scope="row" style={{ minWidth: "14rem" }}>
                {r.label}
                {r.note && (
                  <>
                    {" "}
                    <small className="muted">({r.note})</small>
                  </>
                )}
              </th>
              {review.candidates.map((c) => (
                <td key={c.id} className="nowrap">
                  {r.value(c)}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </ScrollBox>
  );
}

/** Figures a published report gives that differ from the formulas, with the reason. */
export function Discrepancies({ review }: { review: ReviewRead }) {
  const all = review.candidates.flatMap((c) => c.discrepancies.map((d) => ({ c, d })));
  if (all.length === 0) return null;
  return (
    <div className="alert alert-warn" data-testid="discrepancies">
      <strong>Differences from the published figures</strong>
      <ul>
        {all.map(({ c, d }) => (
          <li key={`${c.id}-${d.field}`}>
            {c.name}, {d.field}: reported {formatDecimal(String(d.reported))}, computed{" "}
            {d.computed == null ? "—" : formatDecimal(String(d.computed))} — {d.message}
          </li>
        ))}
      </ul>
    </div>
  );
}

export function RankingTable({ review }: { review: ReviewRead }) {
  const weighted = CRITERIA.filter((c) => num(String(review.weights[c.key] ?? "0")));
  const decided = review.decision?.candidate_id;
  return (
    <ScrollBox label="Ranking">
      <table className="table compact" data-testid="ranking-table">
        <thead>
          <tr>
            <th>Rank</th>
            <th>Candidate</th>
            <th>Score</th>
            {weighted.map((c) => (
              <th key={c.key}>
                {c.label} <small className="muted">× {String(review.weights[c.key])}</small>
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {review.ranking.map((r) => (
            <tr key={r.candidate_id} data-testid="ranking-row">
              <td>{r.rank}</td>
              <td>
                {r.name}
                {r.candidate_id === decided && (
                  <>
                    {" "}
                    <span className="badge badge-succeeded">chosen</span>
                  </>
                )}
              </td>
              <td>
                <strong>{plain(r.score)}</strong>
              </td>
              {weighted.map((c) => (
                <td key={c.key}>{plain(r.scores[c.key])}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </ScrollBox>
  );
}

/** Where a flip sits in its range, as a bar: the review's value (|) and the flip (◆). */
function RangeBar({
  low,
  high,
  base,
  flip,
}: {
  low: number;
  high: number;
  base: number;
  flip: number | null;
}) {
  const at = (v: number) => `${Math.max(0, Math.min(100, ((v - low) / (high - low || 1)) * 100))}%`;
  return (
    <div
      style={{
        position: "relative",
        height: 14,
        background: "#e2e8f0",
        borderRadius: 7,
        minWidth: 160,
      }}
      aria-hidden="true"
    >
      {flip !== null && (
        <div
          style={{
            position: "absolute",
            left: base <= flip ? at(flip) : 0,
            right: base <= flip ? 0 : `calc(100% - ${at(flip)})`,
            top: 0,
            bottom: 0,
            background: "#fed7aa",
            borderRadius: 7,
          }}
        />
      )}
      <div
        style={{
          position: "absolute",
          left: at(base),
          top: -3,
          bottom: -3,
          width: 3,
          background: "#1e3a8a",
        }}
      />
      {flip !== null && (
        <div
          style={{
            position: "absolute",
            left: at(flip),
            top: -4,
            fontSize: 14,
            lineHeight: 1,
            transform: "translateX(-50%)",
            color: "#c2410c",
          }}
        >
          ◆
        </div>
      )}
    </div>
  );
}

export function SensitivityTable({ review }: { review: ReviewRead }) {
  if (review.sensitivity.length === 0)
    return <p className="muted">Sensitivity needs two candidates or more.</p>;
  return (
    <ScrollBox label="Sensitivity">
      <table className="table compact" data-testid="sensitivity-table">
        <thead>
          <tr>
            <th>Change</th>
            <th>Range scanned</th>
            <th>Review's value</th>
            <th style={{ width: "22%" }}>Where the leader changes</th>
            <th>New leader</th>
            <th>What it means</th>
          </tr>
        </thead>
        <tbody>
          {review.sensitivity.map((s) => {
            const p = PARAMETERS[s.parameter] ?? { label: s.parameter, unit: () => "" };
            const flip = num(s.flip_at);
            return (
              <tr
                key={s.parameter}
                data-testid={`sensitivity-${s.parameter}`}
                className={flip !== null ? "flips" : undefined}
              >
                <td>
                  <strong>{p.label}</strong>
                  <br />
                  <small className="muted">{p.unit(review.currency)}</small>
                </td>
                <td className="nowrap">
                  {plain(s.low)} – {plain(s.high)}
                </td>
                <td>{plain(s.base)}</td>
                <td>
                  <RangeBar
                    low={num(s.low) ?? 0}
                    high={num(s.high) ?? 1}
                    base={num(s.base) ?? 0}
                    flip={flip}
                  />
                  <small>
                    {flip === null ? "no flip in range" : `flips at ${plain(s.flip_at)}`}
                  </small>
                </td>
                <td>{s.new_leader ?? "—"}</td>
                <td>{s.message}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </ScrollBox>
  );
}

/** Energy per job (run time × power) per load level, and where the winner changes. */
export function JobEnergy({ review }: { review: ReviewRead }) {
  const x = review.job_crossover;
  const withJobs = review.candidates.filter((c) => c.job_energy.length > 0);
  if (!x && withJobs.length === 0) return null;
  const labels = x?.labels ?? withJobs[0]?.job_energy.map((j) => j.label) ?? [];
  return (
    <section className="card" data-testid="job-energy">
      <h3>Energy per job</h3>
      <ScrollBox label="Energy per job">
        <table className="table compact">
          <thead>
            <tr>
              <th>Candidate</th>
              {labels.map((l) => (
                <th key={l}>
                  {l}
                  {x?.crossover === l && <small className="muted"> (crossover)</small>}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {withJobs.map((c) => (
              <tr key={c.id}>
                <td>{c.name}</td>
                {labels.map((l) => {
                  const j = c.job_energy.find((e) => e.label === l);
                  return (
                    <td
                      key={l}
                      title={j ? `${plain(j.runtime_s, "s")} × ${plain(j.power_w, "W")}` : ""}
                    >
                      {j ? formatEnergy(num(j.energy_j)) : "—"}
                    </td>
                  );
                })}
              </tr>
            ))}
            {x && (
              <tr>
                <th scope="row">uses least</th>
                {x.winners.map((w, i) => (
                  <td key={labels[i] ?? i}>{w}</td>
                ))}
              </tr>
            )}
          </tbody>
        </table>
      </ScrollBox>
      {x && <p data-testid="job-crossover">{x.message}</p>}
    </section>
  );
}

/** Every formula a figure comes from, with its source: the review page and a share link. */
export function MethodologyTable({ review }: { review: ReviewRead }) {
  return (
    <ScrollBox label="Methodology">
      <table className="table compact">
        <thead>
          <tr>
            <th>Figure</th>
            <th>Formula</th>
            <th>Source</th>
          </tr>
        </thead>
        <tbody>
          {review.methodology.map((m) => (
            <tr key={m.name}>
              <td className="mono">{m.name}</td>
              <td>{m.formula}</td>
              <td>{m.source}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </ScrollBox>
  );
}
