import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useMemo, useState } from "react";
import { Link, useParams, useSearchParams } from "react-router-dom";
import type {
  DetectionRead,
  MetricName,
  SeriesRead,
  SeriesUpdate,
  ThresholdsIn,
  ThresholdsRead,
} from "../client/types";
import { HistoryChart } from "../components/charts/HistoryChart";
import { type Errors, Field, FormFooter, formErrorsFrom } from "../components/Field";
import { QueryState } from "../components/QueryState";
import { ScrollBox } from "../components/ScrollBox";
import { formatRelative, formatTimestamp, sig3 } from "../lib/format";
import {
  annotations,
  formatMetric,
  type HistoryRow,
  historyRows,
  linkedRow,
  METRICS,
  previousGood,
} from "../lib/history";
import { useCan, useListTeam } from "../lib/role";
import { keys } from "../queries/keys";
import {
  reviewDetection,
  type SeriesFilters,
  seriesHistoryQuery,
  seriesListQuery,
  seriesQuery,
  setTeamThresholds,
  teamThresholdsQuery,
  updateSeries,
} from "../queries/series";

const FILTERS = ["device_id", "agent_id", "workload_id", "run_id"] as const;

function target(s: SeriesRead): string {
  if (s.target_kind === "group") return "several targets";
  return s.target_path ?? "its device";
}

/** The series of the team: what is tracked over time, pinned first; filtered by device, agent,
 * workload or run from the links on those pages. */
export function Series() {
  const [params, setParams] = useSearchParams();
  const { teamId } = useListTeam();
  const archived = params.get("archived") === "1";
  const filters: SeriesFilters = { archived };
  if (teamId) filters.team_id = teamId;
  for (const f of FILTERS) {
    const v = params.get(f);
    if (v) filters[f] = v;
  }
  const q = useQuery(seriesListQuery(filters));
  const narrowed = FILTERS.some((f) => params.get(f));
  const can = useCan();
  return (
    <section>
      <h1>Series</h1>
      <p className="muted">
        A series is one workload on one target in one environment, over time: each finished run
        joins its series, is tested against the runs before it, and changes are marked on its
        history.
      </p>
      <p>
        <label>
          <input
            type="checkbox"
            checked={archived}
            onChange={(e) => {
              const next = new URLSearchParams(params);
              if (e.target.checked) next.set("archived", "1");
              else next.delete("archived");
              setParams(next);
            }}
          />{" "}
          archived
        </label>
        {narrowed && (
          <>
            {" · "}
            <Link to="/series">all series</Link>
          </>
        )}
      </p>
      {teamId && can("team.manage", teamId) && <TeamThresholds teamId={teamId} />}
      <QueryState isPending={q.isPending} error={q.error} />
      {q.data && q.data.items.length === 0 && (
        <p className="muted">No series yet: they appear as runs finish.</p>
      )}
      {q.data && q.data.items.length > 0 && (
        <ScrollBox label="Series">
          <table className="table compact" data-testid="series-table">
            <thead>
              <tr>
                <th>Series</th>
                <th>Target</th>
                <th>Runs</th>
                <th>Last run</th>
                <th>Open regressions</th>
              </tr>
            </thead>
            <tbody>
              {q.data.items.map((s) => (
                <tr key={s.id}>
                  <td>
                    {s.pinned ? "📌 " : ""}
                    <Link to={`/series/${s.id}`}>{s.name}</Link>
                  </td>
                  <td>{target(s)}</td>
                  <td>{s.run_count}</td>
                  <td title={formatTimestamp(s.last_run_at)}>{formatRelative(s.last_run_at)}</td>
                  <td className={s.open_regressions ? "bad" : undefined}>{s.open_regressions}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </ScrollBox>
      )}
    </section>
  );
}

/** The team's default thresholds (team admins): every series without its own takes them. */
function TeamThresholds({ teamId }: { teamId: string }) {
  const t = useQuery(teamThresholdsQuery(teamId));
  if (!t.data) return null;
  return (
    <ThresholdsForm
      key={teamId}
      own={t.data.thresholds}
      effective={t.data.effective}
      save={(thresholds) => setTeamThresholds(teamId, thresholds)}
      title="The team's default thresholds"
      inherited="the default"
      testId="team-thresholds"
    />
  );
}

function Picked({
  rows,
  row,
  metric,
}: {
  rows: HistoryRow[];
  row: HistoryRow;
  metric: MetricName;
}) {
  const prev = previousGood(rows, row.i);
  return (
    <div className="card" data-testid="history-picked">
      <strong>{formatTimestamp(row.at)}</strong>: {formatMetric(metric, row.y ?? row.left_out)}
      {row.runs > 1 && ` (mean of ${row.runs} runs from here)`}
      {row.flags.length > 0 && <span className="bad"> · left out: {row.flags.join(", ")}</span>}
      {" · "}
      <Link to={`/runs/${row.run_id}`}>open the run</Link>
      {prev && (
        <>
          {" · "}
          <Link to={`/compare?runs=${prev.run_id},${row.run_id}`}>
            compare with the previous good run
          </Link>
        </>
      )}
    </div>
  );
}

function Detection({
  seriesId,
  d,
  metric,
}: {
  seriesId: string;
  d: DetectionRead;
  metric: MetricName;
}) {
  const qc = useQueryClient();
  const can = useCan();
  const [comment, setComment] = useState(d.comment);
  const m = useMutation({
    mutationFn: (status: DetectionRead["status"]) =>
      reviewDetection(seriesId, d.id, { status, comment }),
    onSuccess: () => qc.invalidateQueries({ queryKey: keys.series.all() }),
  });
  const ci =
    d.change_pct_low != null && d.change_pct_high != null
      ? ` (95 %: ${sig3(d.change_pct_low)} … ${sig3(d.change_pct_high)} %)`
      : "";
  return (
    <tr>
      <td title={formatTimestamp(d.at)}>{formatTimestamp(d.at)}</td>
      <td>{d.kind === "new_run" ? "new run" : "change point"}</td>
      <td className={d.direction === "regression" ? "bad" : "good"}>
        {d.change_pct > 0 ? "+" : ""}
        {sig3(d.change_pct)} %{ci}
      </td>
      <td>
        {formatMetric(metric, d.mean_before)} → {formatMetric(metric, d.mean_after)} (
        {d.runs_before} / {d.runs_after} runs)
      </td>
      <td>
        {d.method}
        {d.p_value != null ? `, p ${d.p_value.toExponential(1)}` : ""}
      </td>
      <td>
        {d.run_id && <Link to={`/runs/${d.run_id}`}>run</Link>}
        {d.previous_run_id && d.run_id && (
          <>
            {" · "}
            <Link to={`/compare?runs=${d.previous_run_id},${d.run_id}`}>compare</Link>
          </>
        )}
      </td>
      <td>
        {d.status}
        {can("series.edit") && (
          <span className="row-actions">
            <input
              aria-label="comment"
              value={comment}
              maxLength={4000}
              onChange={(e) => setComment(e.target.value)}
            />
            <button type="button" disabled={m.isPending} onClick={() => m.mutate("acknowledged")}>
              Acknowledge
            </button>
            <button type="button" disabled={m.isPending} onClick={() => m.mutate("dismissed")}>
              Dismiss
            </button>
          </span>
        )}
      </td>
    </tr>
  );
}

const NUMBERS = [
  ["min_change_pct", "Minimum change, %", "a change smaller than this is never flagged"],
  ["alpha", "p-value below", "the test's one-sided p-value"],
  ["z_min", "z-score at least", "change / the window's standard deviation"],
  ["lookback", "Window, runs", "the valid runs a new run is tested against"],
  ["min_window", "Fewest runs to judge", "fewer valid runs before: no verdict"],
] as const;
type NumberKey = (typeof NUMBERS)[number][0];

/** Detection thresholds: a series' own (an empty field: the team's, else the default) or a
 * team's defaults (an empty field: the default); what is in effect is shown greyed. */
function ThresholdsForm({
  own,
  effective,
  save,
  title,
  inherited,
  testId,
}: {
  own: ThresholdsIn;
  effective: ThresholdsRead;
  save: (thresholds: ThresholdsIn) => Promise<unknown>;
  title: string;
  /** what an empty field takes ("the team's", "the default") */
  inherited: string;
  testId: string;
}) {
  const qc = useQueryClient();
  const [values, setValues] = useState<Record<NumberKey, string>>(() => {
    const out = {} as Record<NumberKey, string>;
    for (const [k] of NUMBERS) out[k] = own[k] == null ? "" : String(own[k]);
    return out;
  });
  const [test, setTest] = useState(own.test ?? "");
  const [errors, setErrors] = useState<Errors>({});
  const [formError, setFormError] = useState<string | null>(null);
  const m = useMutation({
    mutationFn: () => {
      const thresholds: ThresholdsIn = {};
      for (const [k] of NUMBERS) if (values[k].trim()) thresholds[k] = Number(values[k]);
      if (test) thresholds.test = test as ThresholdsIn["test"];
      return save(thresholds);
    },
    onSuccess: () => {
      setErrors({});
      setFormError(null);
      void qc.invalidateQueries({ queryKey: keys.series.all() });
    },
    onError: (e) => {
      const aliases = Object.fromEntries([...NUMBERS.map(([k]) => [k, k]), ["test", "test"]]);
      const { errors: errs, formError: fe } = formErrorsFrom(e, aliases);
      setErrors(errs);
      setFormError(fe);
    },
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    m.mutate();
  };
  return (
    <details className="card" data-testid={testId}>
      <summary>{title}</summary>
      <p className="muted small">
        Changing them searches the runs already there for changes at the new values (the history
        shows what is found; a change in runs older than a day raises no alert).
      </p>
      <form onSubmit={submit} className="form-grid">
        <Field label="Test" name="test" errors={errors} hint={`in effect: ${effective.test}`}>
          <select id="f-test" value={test} onChange={(e) => setTest(e.target.value)}>
            <option value="">{inherited}</option>
            <option value="t_test">Student's t-test</option>
            <option value="welch">Welch's t-test</option>
            <option value="mann_whitney">Mann–Whitney U</option>
          </select>
        </Field>
        {NUMBERS.map(([k, label, hint]) => (
          <Field key={k} label={label} name={k} errors={errors} hint={hint}>
            <input
              id={`f-${k}`}
              inputMode="decimal"
              value={values[k]}
              placeholder={String(effective[k])}
              onChange={(e) => setValues({ ...values, [k]: e.target.value })}
            />
          </Field>
        ))}
        <FormFooter
          error={formError}
          pending={m.isPending}
          label="Save thresholds"
          pendingLabel="Saving…"
          testId="save-thresholds"
        />
      </form>
    </details>
  );
}

/** One series' history: a metric of a job over its runs with each run's validity, the host-fact
 * changes and the changes found; a point links to its run and to a comparison with the previous
 * good run. */
export function SeriesPage() {
  const { id = "" } = useParams();
  const [params, setParams] = useSearchParams();
  const metric = (METRICS.find((m) => m.key === params.get("metric"))?.key ??
    "read_iops") as MetricName;
  const job = Number(params.get("job") ?? 0) || 0;
  const qc = useQueryClient();
  const can = useCan();
  const s = useQuery(seriesQuery(id));
  const h = useQuery(seriesHistoryQuery(id, metric, job));
  const rows = useMemo(() => historyRows(h.data?.points ?? []), [h.data]);
  const notes = useMemo(
    () => (h.data ? annotations(rows, h.data.host_changes, h.data.detections) : []),
    [rows, h.data],
  );
  const [clicked, setPicked] = useState<HistoryRow | null>(null);
  // a link to a point (`?run=`, an alert's): that run picked until another is clicked
  const picked = clicked ?? linkedRow(rows, params.get("run"), h.data?.detections ?? []);
  const edit = useMutation({
    mutationFn: (body: SeriesUpdate) => updateSeries(id, body),
    onSuccess: () => qc.invalidateQueries({ queryKey: keys.series.all() }),
  });
  const set = (k: string, v: string) => {
    const next = new URLSearchParams(params);
    next.set(k, v);
    next.delete("run");
    setParams(next);
    setPicked(null);
  };
  const left = rows.filter((r) => r.left_out != null).length;
  return (
    <section>
      <QueryState isPending={s.isPending} error={s.error} />
      {s.data && (
        <>
          <h1>{s.data.name}</h1>
          <p className="muted">
            {s.data.run_count} runs · {target(s.data)} · {s.data.open_regressions} open regression
            {s.data.open_regressions === 1 ? "" : "s"}
            {can("series.edit", s.data.team_id) && (
              <>
                {" · "}
                <button type="button" onClick={() => edit.mutate({ pinned: !s.data.pinned })}>
                  {s.data.pinned ? "Unpin" : "Pin"}
                </button>{" "}
                <button
                  type="button"
                  onClick={() => edit.mutate({ archived: !s.data.archived_at })}
                >
                  {s.data.archived_at ? "Unarchive" : "Archive"}
                </button>
              </>
            )}
          </p>
        </>
      )}
      {s.data && can("series.edit", s.data.team_id) && (
        <p data-testid="series-narrow">
          <label>
            Tracks{" "}
            <select
              value={s.data.metric ?? ""}
              onChange={(e) =>
                edit.mutate({ metric: (e.target.value || null) as MetricName | null })
              }
            >
              <option value="">every metric</option>
              {METRICS.map((m) => (
                <option key={m.key} value={m.key}>
                  {m.label}
                </option>
              ))}
            </select>
          </label>{" "}
          <label>
            of{" "}
            <select
              value={s.data.job_index ?? ""}
              onChange={(e) =>
                edit.mutate({ job_index: e.target.value === "" ? null : Number(e.target.value) })
              }
            >
              <option value="">every job</option>
              {(h.data?.jobs ?? []).map((name, i) => (
                <option key={name + String(i)} value={i}>
                  {name}
                </option>
              ))}
            </select>
          </label>{" "}
          <span className="muted small">
            change detection, alerts and <code>iowatt ci</code> judge what the series tracks; the
            history keeps every metric
          </span>
        </p>
      )}
      {s.data && can("series.edit", s.data.team_id) && (
        <ThresholdsForm
          key={s.data.id}
          own={s.data.thresholds}
          effective={s.data.effective_thresholds}
          save={(thresholds) => updateSeries(id, { thresholds })}
          title="Thresholds"
          inherited="the team's"
          testId="series-thresholds"
        />
      )}
      <p>
        <label>
          Metric{" "}
          <select value={metric} onChange={(e) => set("metric", e.target.value)}>
            {METRICS.map((m) => (
              <option key={m.key} value={m.key}>
                {m.label}
              </option>
            ))}
          </select>
        </label>{" "}
        {h.data && h.data.jobs.length > 1 && (
          <label>
            Job{" "}
            <select value={job} onChange={(e) => set("job", e.target.value)}>
              {h.data.jobs.map((name, i) => (
                <option key={name + String(i)} value={i}>
                  {name}
                </option>
              ))}
            </select>
          </label>
        )}
      </p>
      <QueryState isPending={h.isPending} error={h.error} />
      {h.data && (
        <>
          <p className="muted" data-testid="history-summary">
            {h.data.total_runs} runs
            {h.data.downsampled ? `, drawn as ${rows.length} points (means with their range)` : ""}
            {!h.data.downsampled && rows.some((r) => r.runs > 1)
              ? ", a campaign's repeats drawn as their mean with their range"
              : ""}
            {left ? ` · ${left} left out by their validity flags (orange)` : ""}
            {h.data.host_changes.length
              ? ` · ${h.data.host_changes.length} host change${h.data.host_changes.length === 1 ? "" : "s"} (grey, dashed)`
              : ""}
            {` · ${h.data.direction === "lower_is_better" ? "lower" : "higher"} is better`}
          </p>
          <HistoryChart rows={rows} metric={metric} annotations={notes} onPick={setPicked} />
          {picked && <Picked rows={rows} row={picked} metric={metric} />}
          <h2>Changes found</h2>
          {h.data.detections.length === 0 ? (
            <p className="muted">None in this metric.</p>
          ) : (
            <ScrollBox label="Changes found">
              <table className="table compact" data-testid="detections-table">
                <thead>
                  <tr>
                    <th>When</th>
                    <th>Found by</th>
                    <th>Change</th>
                    <th>Before → after</th>
                    <th>Method</th>
                    <th>Runs</th>
                    <th>Status</th>
                  </tr>
                </thead>
                <tbody>
                  {h.data.detections.map((d) => (
                    <Detection key={d.id} seriesId={id} d={d} metric={metric} />
                  ))}
                </tbody>
              </table>
            </ScrollBox>
          )}
        </>
      )}
    </section>
  );
}
