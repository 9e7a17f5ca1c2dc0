// A table whose column headers sort it (TanStack Table, ADR 0035), with an optional page size:
// the run page's jobs (110 for kernel-help) and the compare page's runs. Markup and classes are the
// app's own (`table`, `num`); the library keeps the sort state and order.
import {
  type ColumnDef,
  createSortedRowModel,
  type RowData,
  rowSortingFeature,
  tableFeatures,
  useTable,
} from "@tanstack/react-table";
import { type ReactNode, useMemo, useState } from "react";
import "./table.css";
import { ScrollBox } from "../ScrollBox";

const features = tableFeatures({ rowSortingFeature, sortedRowModel: createSortedRowModel() });

export interface SortColumn<T> {
  id: string;
  header: string;
  /** the unit its figures are in, shown after the header as written ("µs", never "ΜS") */
  unit?: string;
  /** the value it sorts by (null sorts last either way) */
  value: (row: T) => number | string | null | undefined;
  /** what the cell shows; the value as text by default */
  cell?: (row: T) => ReactNode;
  num?: boolean;
  /** a header's explanation (title) */
  title?: string;
  /** false: a column of controls, not sorted by (a plain header) */
  sortable?: boolean;
}

/** Order two cell values: numbers as numbers, text naturally ("4k" before "16k"), empty last. */
export function compareValues(
  a: number | string | null | undefined,
  b: number | string | null | undefined,
): number {
  const ea = a == null || a === "";
  const eb = b == null || b === "";
  if (ea || eb) return ea === eb ? 0 : ea ? 1 : -1;
  if (typeof a === "number" && typeof b === "number") return a - b;
  return String(a).localeCompare(String(b), "en", { numeric: true, sensitivity: "base" });
}

/** A header's unit in parentheses, outside the headers' capitals (class unit-head). */
function Unit({ unit }: { unit?: string }) {
  if (!unit) return null;
  return (
    <>
      {" "}
      <span className="unit-head">({unit})</span>
    </>
  );
}

/** What a sorted table's column sorts by: its id, the value of a row, numbers descending first. */
export interface SortKey<T> {
  id: string;
  /** the value it sorts by (null sorts last either way) */
  value: (row: T) => number | string | null | undefined;
  num?: boolean;
  /** false: not sorted by (a plain header) */
  sortable?: boolean;
}

export interface Sorting<T> {
  /** the rows in the order the user sorted them (as given until a header is clicked) */
  rows: T[];
  /** a column's direction ("" unsorted) and the handler its header's button calls */
  sortOf: (id: string) => { dir: "asc" | "desc" | ""; toggle: (e: unknown) => void };
}

/** The rows sorted by the header the user clicked (TanStack Table keeps the state and the order:
 * ADR 0035), for tables whose markup is their own (the compare page's metric tables). */
export function useSorting<T extends RowData>(rows: T[], keys: SortKey<T>[]): Sorting<T> {
  const defs = useMemo<ColumnDef<typeof features, T>[]>(
    () =>
      keys.map((c) => ({
        id: c.id,
        // empty is undefined: sortUndefined puts it last in either direction
        accessorFn: (r: T) => c.value(r) ?? undefined,
        header: c.id,
        sortDescFirst: !!c.num,
        sortFn: (ra, rb, id) => compareValues(ra.getValue(id), rb.getValue(id)),
        sortUndefined: "last",
        enableSorting: c.sortable !== false,
      })),
    [keys],
  );
  const table = useTable({ features, columns: defs, data: rows });
  return {
    rows: table.getRowModel().rows.map((r) => r.original),
    sortOf: (id) => {
      const col = table.getColumn(id);
      const dir = col?.getIsSorted();
      return {
        dir: dir === "asc" || dir === "desc" ? dir : "",
        toggle: col?.getToggleSortingHandler() ?? (() => {}),
      };
    },
  };
}

/** A sortable header's button: its label, the sort mark (drawn by CSS), the click that sorts. */
export function SortButton({
  id,
  sorting,
  children,
}: {
  id: string;
  sorting: Pick<Sorting<unknown>, "sortOf">;
  children: ReactNode;
}) {
  const { dir, toggle } = sorting.sortOf(id);
  return (
    <button type="button" className="sort-button" onClick={toggle} data-testid={`sort-${id}`}>
      {children}
      {/* drawn by CSS (table.css): the header's text stays its name */}
      <span aria-hidden="true" className="sort-mark" data-dir={dir || "none"} />
    </button>
  );
}

/** aria-sort of a header sorted `dir`. */
export function ariaSort(dir: "asc" | "desc" | ""): "ascending" | "descending" | "none" {
  return dir === "asc" ? "ascending" : dir === "desc" ? "descending" : "none";
}

export function SortableTable<T extends RowData>({
  rows,
  columns,
  rowKey,
  pageSize,
  testId,
  className = "table compact",
  wrapClass = "",
  label = "the table",
  rowProps,
}: {
  rows: T[];
  columns: SortColumn<T>[];
  rowKey: (row: T) => string;
  /** rows per page (a pager under the table when there are more); all rows without it */
  pageSize?: number;
  testId?: string;
  className?: string;
  /** more classes for the box the table scrolls in (a ScrollBox: focusable, labelled) */
  wrapClass?: string;
  /** what the scrolling box holds, for a screen reader ("the run's jobs") */
  label?: string;
  rowProps?: (row: T) => Record<string, string | undefined>;
}) {
  const sorting = useSorting(rows, columns);
  const [page, setPage] = useState(0);
  const sorted = sorting.rows;
  const pages = pageSize ? Math.max(1, Math.ceil(sorted.length / pageSize)) : 1;
  const at = Math.min(page, pages - 1);
  const shown = pageSize ? sorted.slice(at * pageSize, (at + 1) * pageSize) : sorted;
  return (
    <>
      <ScrollBox label={label} className={wrapClass}>
        <table className={className} data-testid={testId}>
          <thead>
            <tr>
              {columns.map((col) => {
                if (col.sortable === false)
                  return (
                    <th key={col.id} className={col.num ? "num" : undefined} title={col.title}>
                      {col.header}
                      <Unit unit={col.unit} />
                    </th>
                  );
                return (
                  <th
                    key={col.id}
                    className={col.num ? "num" : undefined}
                    aria-sort={ariaSort(sorting.sortOf(col.id).dir)}
                    title={col.title}
                  >
                    <SortButton id={col.id} sorting={sorting}>
                      {col.header}
                      <Unit unit={col.unit} />
                    </SortButton>
                  </th>
                );
              })}
            </tr>
          </thead>
          <tbody>
            {shown.map((row) => (
              <tr key={rowKey(row)} {...rowProps?.(row)}>
                {columns.map((c) => (
                  <td key={c.id} className={c.num ? "num" : undefined}>
                    {c.cell ? c.cell(row) : String(c.value(row) ?? "—")}
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </ScrollBox>
      {pages > 1 && (
        <div className="pager" data-testid={testId ? `${testId}-pager` : undefined}>
          <span className="muted small">
            {at * (pageSize ?? 0) + 1}–{Math.min((at + 1) * (pageSize ?? 0), sorted.length)} of{" "}
            {sorted.length}
          </span>
          <button
            type="button"
            className="btn btn-small"
            disabled={at === 0}
            onClick={() => setPage(at - 1)}
          >
            Previous
          </button>
          <button
            type="button"
            className="btn btn-small"
            disabled={at >= pages - 1}
            onClick={() => setPage(at + 1)}
            data-testid={testId ? `${testId}-next` : undefined}
          >
            Next
          </button>
        </div>
      )}
    </>
  );
}
