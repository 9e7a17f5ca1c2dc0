import { Fragment } from "react";
import { formatFigure, fromBaseUnit, MISSING } from "../../lib/format";
import type { ViewColumn, ViewTable } from "../../queries/views";
import { ScrollBox } from "../ScrollBox";

type Cell = ViewTable["rows"][number]["cells"][number];
type Pass = NonNullable<Cell["passes"]>[number];
export type DisplayUnits = ViewTable["display_units"];

// Decimals as the published reports print each quantity; a ratio keeps two above 1 and three
// below ("1.41×", "0.943×"). The server's CSV rounds by the same rule: both sides pass the vectors in
// backend/views/testdata/display_units.json (lib/format.views.test.ts).
const DECIMALS: Record<string, number> = {
  "IO/s": 1,
  "op/s": 1,
  W: 1,
  "%": 1,
  threads: 0,
  "IO/s/W": 1,
  "/tx": 3,
};

/** A cell note said beside the figure, not only on hover: ratios' notes and estimated energy. */
export function noteShown(note: string | null | undefined, kind: ViewColumn["kind"]): boolean {
  return !!note && (kind === "ratio" || /estimat|cache-resident/i.test(note));
}

/** The note as shown under the figure: a cache-resident row's mark is short (the whole
 * message is the cell's title), others as written. */
export function noteText(note: string): string {
  return /^cache-resident/i.test(note) ? "⚠ cache-resident" : note;
}

// One rule for a figure's decimals, given the value as shown (the server's CSV mirrors it:
// backend/views/display.py _digits; the shared vectors hold both to it). A ratio or scale below 1 keeps three significant digits (a
// file set's scale 0.0001 is not "0"); so does a time below one of its shown unit (a scaled
// PostMark's 0.0714 s, vdbench's 0.0213 ms: two decimals would print 0.07 and 0.02); an operation
// rate of 100 or more has no decimals (2,259,263 op/s, not 2,259,263.3).
const sig3Decimals = (v: number) =>
  Math.min(8, Math.max(3, 2 - Math.floor(Math.log10(Math.abs(v)))));
export const decimals = (unit: string | null, v: number): number => {
  if (unit === "×") return Math.abs(v) >= 1 || v === 0 ? 2 : sig3Decimals(v);
  if (unit === "op/s" && Math.abs(v) >= 100) return 0;
  if ((unit === "ns" || unit === "J") && v !== 0 && Math.abs(v) < 1) return sig3Decimals(v);
  return DECIMALS[unit ?? ""] ?? 2;
};

/**
 * A figure in the report's unit: the wire's base unit (cell.unit: B/s, ns, B) converted to the unit
 * the view prints it in (display_units: MB/s, µs, KiB), grouped digits; ratios with ×.
 */
export function formatCell(c: Cell, col: ViewColumn, shown: DisplayUnits = {}): string {
  if (c.value === null || c.value === undefined) return MISSING;
  if (typeof c.value === "string") return c.value;
  const unit = c.unit ?? col.unit;
  const to = unit ? (shown[unit] ?? unit) : null;
  const v = unit && to ? fromBaseUnit(c.value, unit, to) : c.value;
  const text = formatFigure(c.value, unit, to, decimals(unit, v));
  return col.kind === "ratio" ? `${text}×` : text;
}

/** The header under a group header: "Read best (MB/s)" under "Read" reads "Best (MB/s)". */
export function shortLabel(col: ViewColumn): string {
  const g = col.group;
  if (!g || !col.label.toLowerCase().startsWith(g.toLowerCase())) return col.label;
  const rest = col.label.slice(g.length).replace(/^[,:]?\s+/, "");
  return rest ? rest.charAt(0).toUpperCase() + rest.slice(1) : col.label;
}

/** Consecutive columns under the same group header: [group, count] spans in column order. */
export function headerSpans(cols: ViewColumn[]): [string | null, number][] {
  const out: [string | null, number][] = [];
  for (const c of cols) {
    const last = out.at(-1);
    if (last && last[0] !== null && last[0] === c.group) last[1] += 1;
    else out.push([c.group ?? null, 1]);
  }
  return out;
}

/** A test's passes in the report's unit ("p0 512.30 discarded · p1 530.10 best · ..."): discarded
 * struck, best bold. */
function Passes({ passes, unit, shown }: { passes: Pass[]; unit: string; shown: string }) {
  return (
    <span style={{ whiteSpace: "nowrap", fontSize: "0.8rem" }}>
      {passes.map((x) => {
        const discarded = x.status === "discarded";
        const best = x.status === "best";
        const figure = fromBaseUnit(x.bw_bytes, unit, shown).toFixed(2);
        return (
          <span
            key={x.index}
            data-pass={discarded ? "discarded" : best ? "best" : "measured"}
            title={
              discarded ? "discarded: run but not counted" : best ? "the pass reported" : undefined
            }
            style={{
              marginRight: "0.6rem",
              color: discarded ? "#94a3b8" : undefined,
              textDecoration: discarded ? "line-through" : undefined,
              fontWeight: best ? 700 : undefined,
            }}
          >
            p{x.index} {figure}
            {discarded ? " discarded" : best ? " best" : ""}
          </span>
        );
      })}
    </span>
  );
}

const stickyCell = { position: "sticky", left: 0, background: "#fff", zIndex: 1 } as const;
// Headers keep their case: the table style's upper case turns "µs" into "ΜS", which reads as ms.
const asWritten = { textTransform: "none", letterSpacing: 0 } as const;
// Long headers (a target path per run, "Ratio (a ÷ b)") wrap instead of widening the table.
const wrapped = {
  ...asWritten,
  maxWidth: "11rem",
  whiteSpace: "normal",
  // whole words: "anywhere" let the column shrink below a word and broke "Spread" as "Spre ad"
  overflowWrap: "break-word",
  verticalAlign: "bottom",
} as const;

/**
 * The view's table: grouped headers (Read / Write, an operation) over headers with their units,
 * each header's description on hover and listed under the table. Runs are row groups headed by
 * their device; the first shown column stays put while the rest scroll inside the card.
 */
export function ViewGrid({ table }: { table: ViewTable }) {
  const all = table.columns;
  const byRun = all[0]?.key === "run";
  const shown = all.map((c, i) => ({ c, i })).filter(({ i }) => !(byRun && i === 0));
  const cols = shown.map((s) => s.c);
  const grouped = cols.some((c) => c.group);
  const numeric = (c: ViewColumn) => c.kind !== "text";
  return (
    <div className="card" data-testid="view-grid">
      <ScrollBox label="the view's table" className="scroll-x" testId="view-grid-scroll">
        <table className="table compact">
          <thead>
            {grouped ? (
              <tr>
                {headerSpans(cols).map(([g, n], k) => (
                  <th
                    // biome-ignore lint/suspicious/noArrayIndexKey: spans are positional
                    key={k}
                    colSpan={n}
                    style={{
                      ...asWritten,
                      textAlign: "center",
                      borderLeft: g ? "2px solid #e2e8f0" : undefined,
                      ...(k === 0 ? stickyCell : {}),
                    }}
                  >
                    {g ?? ""}
                  </th>
                ))}
              </tr>
            ) : null}
            <tr>
              {cols.map((c, i) => (
                <th
                  key={c.key}
                  title={c.description}
                  data-label={c.label}
                  className={numeric(c) ? "num" : undefined}
                  style={i === 0 ? { ...asWritten, ...stickyCell } : wrapped}
                >
                  {shortLabel(c)}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {table.rows.map((row, r) => {
              const prev = r > 0 ? table.rows[r - 1] : undefined;
              const head = byRun && row.group !== prev?.group ? row.cells[0]?.value : null;
              return (
                // biome-ignore lint/suspicious/noArrayIndexKey: rows have no identity beyond their place
                <Fragment key={r}>
                  {head !== null && head !== undefined ? (
                    <tr data-testid="view-group">
                      <th colSpan={cols.length} style={{ ...stickyCell, background: "#f1f5f9" }}>
                        {String(head)}
                      </th>
                    </tr>
                  ) : null}
                  <tr data-testid="view-row">
                    {shown.map(({ c: col, i }, k) => {
                      const cell = row.cells[i];
                      if (!cell) return null;
                      const text = formatCell(cell, col, table.display_units);
                      const cls = numeric(col)
                        ? `num${col.kind === "ratio" ? " ratio" : ""}`
                        : undefined;
                      return (
                        <td
                          key={col.key}
                          className={cls}
                          title={cell.note ?? undefined}
                          style={
                            k === 0
                              ? { ...stickyCell, fontWeight: 500, whiteSpace: "nowrap" }
                              : undefined
                          }
                          data-col={col.key}
                        >
                          {col.kind === "passes" && cell.passes ? (
                            <Passes
                              passes={cell.passes}
                              unit={cell.unit ?? "B/s"}
                              shown={table.display_units[cell.unit ?? "B/s"] ?? cell.unit ?? "B/s"}
                            />
                          ) : (
                            text
                          )}
                          {noteShown(cell.note, col.kind) ? (
                            <div
                              className="muted"
                              style={{ fontSize: "0.75rem" }}
                              data-testid="cell-note"
                            >
                              {noteText(cell.note ?? "")}
                            </div>
                          ) : null}
                        </td>
                      );
                    })}
                  </tr>
                </Fragment>
              );
            })}
          </tbody>
        </table>
      </ScrollBox>
      <details style={{ marginTop: "0.75rem" }} data-testid="view-columns">
        <summary>What each column is</summary>
        <dl style={{ margin: "0.5rem 0 0" }}>
          {all.map((c) => (
            <Fragment key={c.key}>
              <dt style={{ fontWeight: 600 }}>{c.label}</dt>
              <dd style={{ margin: "0 0 0.4rem 1rem" }}>
                {c.description}
                {c.unit ? ` [${table.display_units[c.unit] ?? c.unit}]` : ""}
              </dd>
            </Fragment>
          ))}
        </dl>
      </details>
    </div>
  );
}
