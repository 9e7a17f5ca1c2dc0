import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { Link } from "react-router-dom";
import type { RunRead } from "../../client/types";
import { errorMessage } from "../../lib/errors";
import { type ViewName, viewCatalogQuery, viewTableQuery } from "../../queries/views";
import { ViewCharts } from "../Views/ViewCharts";
import { ViewGrid } from "../Views/ViewGrid";

/**
 * The run's summary in its preset's own layout: the named view that shows this one
 * run as its published report does (the CrystalDiskMark grid, the block-size sweep's chart, the
 * kernel-help matrix), above the per-job detail. Nothing when no view shows a single run of it.
 */
export function PresetSummary({ run }: { run: RunRead }) {
  const catalog = useQuery({
    ...viewCatalogQuery([run.id]),
    enabled: run.status === "succeeded",
  });
  const applicable = (catalog.data?.applicable ?? []) as ViewName[];
  const [picked, setPicked] = useState<ViewName | null>(null);
  const view = picked && applicable.includes(picked) ? picked : applicable[0];
  const table = useQuery({
    ...viewTableQuery({ view: view ?? ("crystaldiskmark" as ViewName), runs: [run.id] }),
    enabled: !!view,
  });
  if (!view) return null;
  const titles = new Map(catalog.data?.views.map((v) => [v.name, v.title]));
  return (
    <section data-testid="preset-summary" data-view={view}>
      <div className="page-head" style={{ marginBottom: "0.4rem" }}>
        <h2 style={{ margin: 0 }}>
          Summary{" "}
          <span className="muted small">
            {run.preset ? `${run.preset}, ` : ""}as {titles.get(view) ?? view}
          </span>
        </h2>
        <div className="actions">
          {applicable.length > 1 && (
            <label className="small">
              Layout{" "}
              <select
                value={view}
                onChange={(e) => setPicked(e.target.value as ViewName)}
                data-testid="preset-summary-view"
              >
                {applicable.map((v) => (
                  <option key={v} value={v}>
                    {titles.get(v) ?? v}
                  </option>
                ))}
              </select>
            </label>
          )}
          <Link className="btn btn-small" to={`/views/${view}?runs=${run.id}`}>
            Open the view
          </Link>
        </div>
      </div>
      {table.error && <p className="muted">Summary: {errorMessage(table.error)}</p>}
      {!table.data && !table.error && <p className="muted">Loading the summary…</p>}
      {table.data && (
        <>
          <ViewGrid table={table.data} />
          <ViewCharts charts={table.data.charts} shown={table.data.display_units} />
        </>
      )}
    </section>
  );
}
