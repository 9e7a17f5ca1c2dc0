import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { Link, useParams, useSearchParams } from "react-router-dom";
import { GoneRuns } from "../components/GoneRuns";
import { QueryState } from "../components/QueryState";
import { OriginBadge } from "../components/Run/OriginBadge";
import { ScrollBox } from "../components/ScrollBox";
import { ViewCharts } from "../components/Views/ViewCharts";
import { ViewGrid } from "../components/Views/ViewGrid";
import { saveText } from "../lib/download";
import { errorMessage } from "../lib/errors";
import { formatTimestamp } from "../lib/format";
import { runsQuery } from "../queries/runs";
import {
  type ViewName,
  type ViewRun,
  viewCatalogQuery,
  viewCsv,
  viewTableQuery,
} from "../queries/views";

function runIds(params: URLSearchParams): string[] {
  return (params.get("runs") ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
}

/**
 * /views?runs=a,b: which named views can show these runs (chosen by their preset); without runs,
 * a picker of finished runs and the list of views.
 */
export function Views() {
  const [params] = useSearchParams();
  const runs = runIds(params);
  const catalog = useQuery(viewCatalogQuery(runs));
  const recent = useQuery({
    ...runsQuery({ status: "succeeded", limit: 200 }),
    enabled: runs.length === 0,
  });
  const [picked, setPicked] = useState<string[]>([]);
  const applicable = new Set(catalog.data?.applicable ?? []);
  return (
    <div>
      <div className="page-head">
        <h1>Views</h1>
      </div>
      <p className="muted">
        Named views show runs of one preset as the published report it reproduces shows them
        (docs/sources.md names the reports): the CrystalDiskMark grid, the P3608 report's tables,
        Oh's kernel-help grid, latency against threads and disk against flash against memory from
        the storage-methods article, Schulz's vdbench file sets, Song &amp; Lee's PostMark levels
        and TPC-H.
      </p>
      <QueryState isPending={catalog.isPending} error={catalog.error} />
      {runs.length > 0 && catalog.data ? (
        <div className="card" data-testid="views-for-runs">
          <h2 style={{ marginTop: 0 }}>
            {runs.length} run{runs.length > 1 ? "s" : ""}:{" "}
            {[...new Set(catalog.data.runs.map((r) => r.preset ?? "no preset"))].join(", ")}
          </h2>
          <ul>
            {catalog.data.runs.map((r) => (
              <li key={r.id}>
                <Link to={`/runs/${r.id}`}>{r.name}</Link> <OriginBadge origin={r.origin} /> —{" "}
                {withoutOrigin(r)}
                {r.preset ? ` (${r.preset})` : " (no built-in preset)"}
              </li>
            ))}
          </ul>
          {applicable.size === 0 ? (
            <p className="muted">
              No view shows these runs together: views show runs of one preset (see the list below).
            </p>
          ) : null}
        </div>
      ) : null}
      {catalog.data ? (
        <div className="card">
          <ScrollBox label="the named views">
            <table className="table compact" data-testid="views-catalog">
              <thead>
                <tr>
                  <th>View</th>
                  <th>Reproduces</th>
                  <th>Presets</th>
                  <th>Shows</th>
                </tr>
              </thead>
              <tbody>
                {catalog.data.views.map((v) => (
                  <tr key={v.name}>
                    <td>
                      {runs.length > 0 && applicable.has(v.name) ? (
                        <Link
                          to={`/views/${v.name}?runs=${runs.join(",")}`}
                          data-testid={`open-${v.name}`}
                        >
                          {v.title}
                        </Link>
                      ) : (
                        v.title
                      )}
                    </td>
                    <td>{v.seed}</td>
                    <td>{v.presets.join(", ")}</td>
                    <td>{v.description}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </ScrollBox>
        </div>
      ) : null}
      {runs.length === 0 ? (
        <div className="card" data-testid="views-picker">
          <h2 style={{ marginTop: 0 }}>Pick runs</h2>
          <QueryState isPending={recent.isPending} error={recent.error} />
          <div style={{ maxHeight: 360, overflowY: "auto" }}>
            {(recent.data?.items ?? []).map((r) => (
              <label key={r.id} style={{ display: "block" }}>
                <input
                  type="checkbox"
                  checked={picked.includes(r.id)}
                  onChange={(e) =>
                    setPicked(
                      e.target.checked ? [...picked, r.id] : picked.filter((x) => x !== r.id),
                    )
                  }
                />{" "}
                {r.name} — {r.device_name ?? r.target_path} on {r.agent_name},{" "}
                {formatTimestamp(r.finished_at)}
              </label>
            ))}
          </div>
          <Link
            className="btn"
            to={`/views?runs=${picked.join(",")}`}
            aria-disabled={picked.length === 0}
            style={picked.length === 0 ? { pointerEvents: "none", opacity: 0.5 } : undefined}
          >
            Views for {picked.length} run{picked.length === 1 ? "" : "s"}
          </Link>
        </div>
      ) : null}
    </div>
  );
}

/** A view's run label without its origin's suffix (the server adds "(imported from fio)" to the
 * label every header and legend shows; a list beside the badge says it once). */
export function withoutOrigin(r: Pick<ViewRun, "label" | "origin">): string {
  // the server may add the tool's version: "(imported from CrystalDiskMark 8)"
  return r.origin ? r.label.replace(/ \((imported from|published by) [^()]*\)$/, "") : r.label;
}

/** The view's imported and published runs, each with its origin badge: not measured here. */
function ViewOrigins({ runs }: { runs: ViewRun[] }) {
  const foreign = runs.filter((r) => r.origin);
  if (foreign.length === 0) return null;
  return (
    <p className="small" data-testid="view-origins">
      Not measured by iowatt:{" "}
      {foreign.map((r, i) => (
        <span key={r.id}>
          {i > 0 ? "; " : ""}
          <Link to={`/runs/${r.id}`}>{r.name || withoutOrigin(r)}</Link>{" "}
          <OriginBadge origin={r.origin} />
        </span>
      ))}
    </p>
  );
}

/** /views/:view?runs=a,b[&baseline=b]: one named view, its CSV, its charts. */
export function ViewPage() {
  const { view = "" } = useParams();
  const [params, setParams] = useSearchParams();
  const runs = runIds(params);
  const baseline = params.get("baseline") ?? undefined;
  const p = { view: view as ViewName, runs, baseline };
  const q = useQuery(viewTableQuery(p));
  const [note, setNote] = useState<string | null>(null);
  const t = q.data;
  const csv = async () => {
    try {
      saveText(`iowatt-${view}.csv`, "text/csv", await viewCsv(p));
    } catch (e) {
      setNote(`CSV: ${errorMessage(e)}`);
    }
  };
  return (
    <div>
      <div className="page-head">
        <h1>{t?.view.title ?? view}</h1>
        <div className="actions">
          <Link className="btn" to={`/views?runs=${runs.join(",")}`}>
            Other views
          </Link>
          <Link className="btn" to={`/compare?runs=${runs.join(",")}`}>
            Compare
          </Link>
          <button type="button" className="btn" onClick={csv} disabled={!t} data-testid="view-csv">
            Download CSV
          </button>
        </div>
      </div>
      {note ? <p className="alert alert-error">{note}</p> : null}
      <QueryState isPending={q.isPending} error={q.error} />
      <GoneRuns
        error={q.error}
        runs={runs}
        href={(rest) => `/views/${view}?runs=${rest.join(",")}`}
        min={1}
      />
      {t ? (
        <>
          <p className="muted" data-testid="view-seed">
            {t.view.description} Reproduces: {t.view.seed}.
          </p>
          <ViewOrigins runs={t.runs} />
          {t.baseline_run_id && t.runs.length > 2 ? (
            <label className="actions" style={{ marginBottom: "0.75rem" }}>
              Ratio baseline
              <select
                value={t.baseline_run_id}
                onChange={(e) => {
                  const next = new URLSearchParams(params);
                  next.set("baseline", e.target.value);
                  setParams(next);
                }}
                data-testid="view-baseline"
              >
                {t.runs.map((r) => (
                  <option key={r.id} value={r.id}>
                    {r.label}
                  </option>
                ))}
              </select>
            </label>
          ) : null}
          <ViewGrid table={t} />
          <ViewCharts charts={t.charts} shown={t.display_units} />
          <div className="card" data-testid="view-notes">
            <h3 style={{ marginTop: 0 }}>How to read it</h3>
            <ul>
              {t.notes.map((n) => (
                <li key={n}>{n}</li>
              ))}
            </ul>
          </div>
        </>
      ) : null}
    </div>
  );
}
