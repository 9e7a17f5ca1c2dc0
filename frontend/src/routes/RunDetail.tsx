import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { Link, useNavigate, useParams } from "react-router-dom";
import { isActive, type RunRead } from "../client/types";
import { Ago } from "../components/Ago";
import { CommentThread } from "../components/Comments/CommentThread";
import { DbRunPanels, DbRunSpecCard, dbSummaryOf } from "../components/DbWorkload/DbRunPanels";
import { isDbKind } from "../components/DbWorkload/dbWorkload";
import { DeleteButton } from "../components/Deletion/DeleteButton";
import { DownloadButton } from "../components/DownloadButton";
import { EnergyPanel } from "../components/Energy/EnergyPanel";
import { RunEnvironmentPanel } from "../components/Environment/RunEnvironmentPanel";
import { FileWorkloadPanel } from "../components/FileWorkload/FileWorkloadPanel";
import {
  FactsList,
  FileWorkloadParameters,
  KindBadge,
} from "../components/FileWorkload/FileWorkloadSpec";
import { JobfileSpecCard } from "../components/Jobfile/JobfileView";
import { QueryState } from "../components/QueryState";
import { GroupMembers } from "../components/Run/GroupMembers";
import { JobsOverview, OPEN_BY_DEFAULT } from "../components/Run/JobsOverview";
import { LiveProgress } from "../components/Run/LiveProgress";
import { NotStated, unstated } from "../components/Run/NotStated";
import { OriginBadge, SourceButton } from "../components/Run/OriginBadge";
import { PageCachePanel } from "../components/Run/PageCachePanel";
import { PresetSummary } from "../components/Run/PresetSummary";
import { RunSummary } from "../components/Run/RunSummary";
import { RunTags } from "../components/Run/RunTags";
import { StatusBadge } from "../components/Run/StatusBadge";
import { CombinedCaption, RunTargets, TargetResults } from "../components/Run/TargetResults";
import { ScrollBox } from "../components/ScrollBox";
import { RunHistoryButton } from "../components/Series/RunHistoryButton";
import { ShareButton } from "../components/Share/ShareButton";
import { cloneHref } from "../lib/clone";
import { errorMessage } from "../lib/errors";
import { formatScale, isFileKind, kindOf, specOf } from "../lib/fileWorkload";
import { formatBytes, formatSeconds, formatTimestamp } from "../lib/format";
import { useCan, useMayDelete } from "../lib/role";
import { depthCapNote } from "../lib/workload";
import { agentsQuery } from "../queries/agents";
import { deleteRun } from "../queries/deletion";
import { keys } from "../queries/keys";
import {
  cancelRun,
  LIVE_INTERVAL_MS,
  runLiveQuery,
  runQuery,
  runResultQuery,
  runSeriesQuery,
  runSystemQuery,
} from "../queries/runs";

/** A file workload's spec on the run page: its kind, settings or parameter file, and the facts
 * the server got from the engine at the scale the run was queued with. */
function FileWorkloadSpecCard({ run }: { run: RunRead }) {
  const spec = specOf(run);
  const facts = spec.facts ?? null;
  return (
    <div className="card" data-testid="run-file-spec">
      <p style={{ marginTop: 0 }}>
        <KindBadge spec={spec} />
        {spec.scaled_by != null && (
          <span className="small" data-testid="run-scaled-by">
            {" "}
            queued at {formatScale(spec.scaled_by)} of the saved workload
          </span>
        )}
      </p>
      {facts && <FactsList facts={facts} label="File set (engine's facts)" />}
      <FileWorkloadParameters spec={spec} />
    </div>
  );
}

function WorkloadTable({ run }: { run: RunRead }) {
  if (isDbKind(kindOf(specOf(run))) || dbSummaryOf(run)) return <DbRunSpecCard run={run} />;
  if (isFileKind(kindOf(specOf(run)))) return <FileWorkloadSpecCard run={run} />;
  const jobfile = specOf(run).jobfile;
  if (kindOf(specOf(run)) === "jobfile" && jobfile)
    return <JobfileSpecCard text={jobfile.text} parse={jobfile.parsed} />;
  const jobs = run.workload.jobs ?? [];
  const table = (
    <ScrollBox label="the workload's jobs">
      <table className="table compact" data-testid="workload-table">
        <thead>
          <tr>
            <th>Job</th>
            <th>rw</th>
            <th className="num">bs</th>
            <th className="num">size</th>
            <th className="num">offset</th>
            <th className="num">runtime</th>
            <th className="num">ramp</th>
            <th className="num">iodepth</th>
            <th className="num">numjobs</th>
            <th>ioengine</th>
            <th>direct</th>
          </tr>
        </thead>
        <tbody>
          {(run.workload.jobs ?? []).map((j) => (
            <tr key={j.name}>
              <td>{j.name}</td>
              <td>
                {unstated(j, "rw") ? <NotStated /> : j.rw}
                {(j.rw === "rw" || j.rw === "randrw") && ` (${j.rwmixread} % read)`}
              </td>
              <td className="num">
                {unstated(j, "bs_bytes") ? <NotStated /> : formatBytes(j.bs_bytes)}
              </td>
              <td
                className="num"
                title={
                  j.io_size_bytes == null
                    ? "the job works on this region"
                    : "bytes of I/O per pass, inside a region of this size"
                }
              >
                {unstated(j, "size_bytes") ? (
                  <NotStated />
                ) : j.io_size_bytes == null ? (
                  formatBytes(j.size_bytes)
                ) : (
                  `${formatBytes(j.io_size_bytes)} in ${formatBytes(j.size_bytes)}`
                )}
              </td>
              <td className="num">{formatBytes(j.offset_bytes)}</td>
              <td className="num">
                {j.runtime_s == null ? "until size" : formatSeconds(j.runtime_s)}
                {j.time_based && " (time based)"}
              </td>
              <td className="num">{formatSeconds(j.ramp_time_s)}</td>
              <td className="num">
                {unstated(j, "iodepth") ? <NotStated /> : j.iodepth}
                {depthCapNote(j) && (
                  <span
                    className="badge validity"
                    data-testid="workload-depth-capped"
                    title={depthCapNote(j) ?? ""}
                    style={{ marginLeft: "0.3rem" }}
                  >
                    ⚠ runs at 1 ({j.ioengine})
                  </span>
                )}
              </td>
              <td className="num">{unstated(j, "numjobs") ? <NotStated /> : j.numjobs}</td>
              <td>{unstated(j, "ioengine") ? <NotStated /> : j.ioengine}</td>
              <td>
                {unstated(j, "direct") ? (
                  <NotStated />
                ) : j.direct ? (
                  "yes (O_DIRECT)"
                ) : (
                  `no (page cache${j.readahead === "default" ? "" : `, readahead ${j.readahead}`})`
                )}
                {j.end_fsync && ", fsync at end"}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </ScrollBox>
  );
  const capped = jobs.filter((j) => depthCapNote(j));
  const note = capped[0] && (
    <p className="alert alert-warn small" data-testid="run-depth-capped">
      ⚠ {capped.length === 1 ? "" : `${capped.length} jobs: `}
      {depthCapNote(capped[0])}
    </p>
  );
  if (jobs.length <= OPEN_BY_DEFAULT)
    return (
      <>
        {note}
        {table}
      </>
    );
  return (
    <>
      {note}
      <details className="card" data-testid="workload-details">
        <summary>
          The {jobs.length} jobs as queued (rw, sizes, runtime, queue depth, engine, cache)
        </summary>
        {table}
      </details>
    </>
  );
}

/** One click downloads the engine's JSON (GET /runs/{id}/result) as a file. */
function RawResultButton({ runId }: { runId: string }) {
  const qc = useQueryClient();
  const fetchFile = async () => {
    const res = await qc.fetchQuery(runResultQuery(runId));
    const blob = new Blob([JSON.stringify(res.engine_result, null, 2)], {
      type: "application/json",
    });
    return { blob, name: `iowatt-run-${runId}.json` };
  };
  return (
    <DownloadButton
      fetchFile={fetchFile}
      label="Download engine JSON"
      title="the engine's whole JSON document (fio's format), as uploaded"
      testId="raw-json"
    />
  );
}

/** The run without its live progress: the page's parts other than LiveProgress read this, so a poll
 * of an active run that moved only its progress leaves them as drawn (the query shares every part
 * that did not change, this object included: the page is not drawn again at all). */
function withoutProgress(run: RunRead): RunRead {
  return run.progress === null ? run : { ...run, progress: null };
}

/** The live part of an active run's page: the only one a poll that moved only the progress draws
 * again. It reads the page's run query, never asking for it itself, and follows the run while it is
 * mounted (the run is active): its status and latest report every 2 s (~0.5 KB a poll), folded into
 * the run's query, which is read again whole when the status moves (runLiveQuery). */
function LiveRunProgress({ id }: { id: string }) {
  const qc = useQueryClient();
  const q = useQuery({
    ...runQuery(id),
    refetchInterval: false,
    refetchOnMount: false,
    refetchOnWindowFocus: false,
  });
  // first asked one interval after the run was read, not again at once
  useQuery({
    ...runLiveQuery(id, qc),
    initialData: q.data?.status,
    initialDataUpdatedAt: q.dataUpdatedAt,
    staleTime: LIVE_INTERVAL_MS,
  });
  return q.data ? <LiveProgress run={q.data} /> : null;
}

export function RunDetail() {
  const { id = "" } = useParams();
  const qc = useQueryClient();
  const q = useQuery({ ...runQuery(id, "progress"), select: withoutProgress });
  const run = q.data;
  const active = run ? isActive(run.status) : false;
  // the per-second series is stored with the result, which ends the run: an active run has none to
  // ask for (asked every 2 s, it answered the same empty series); the status is in its key, so it is
  // asked once the run ends
  const series = useQuery({
    ...runSeriesQuery(id, run?.status ?? "queued"),
    enabled: !!run && !active,
  });
  // the run's host name, and only that: not polled, and the page re-drawn only if it changes (the
  // agents list's 10 s refresh re-drew the whole page, charts included, whenever an agent's
  // last-seen time moved: ~0.5 CPU-s in the browser per refresh of a finished run's page)
  const hostname = useQuery({
    ...agentsQuery(),
    refetchInterval: false,
    select: (d) => d.items.find((a) => a.id === run?.agent_id)?.hostname ?? null,
  }).data;
  const can = useCan();
  const system = useQuery({ ...runSystemQuery(id, run?.status ?? "queued"), enabled: !!run });
  const navigate = useNavigate();
  const mayDelete = useMayDelete(run?.team_id, run?.created_by);
  const cancel = useMutation({
    mutationFn: () => cancelRun(id),
    onSuccess: (r) => {
      qc.setQueryData(runQuery(id).queryKey, r);
      qc.invalidateQueries({ queryKey: keys.runs.lists() });
    },
  });

  if (!run) return <QueryState isPending={q.isPending} error={q.error} />;
  const shortFlag = system.data?.validity.find((f) => f.flag === "short_run");
  // a file workload's result in brief (PostMark, vdbench): its own panel instead of job cards
  const fileSummary = run.file_workload;
  // a TPC-H or heap/B-tree run's summary: its own panel too
  const dbSummary = dbSummaryOf(run);
  const fileIntervals = series.data?.file_intervals;

  return (
    <section data-testid="run-detail">
      <div className="page-head">
        <h1>
          {run.name?.trim() ? run.name : `Run #${run.id.slice(0, 8)}`}{" "}
          <StatusBadge status={run.status} /> <OriginBadge origin={run.origin} />
        </h1>
        <div className="actions">
          {active && can("run.cancel", run.team_id) && (
            <button
              type="button"
              className="btn btn-danger btn-small"
              onClick={() => cancel.mutate()}
              disabled={cancel.isPending}
            >
              Cancel run
            </button>
          )}
          <ShareButton
            teamId={run.team_id}
            share={{ kind: "run", target: run.id }}
            defaultTitle={run.name}
            small
          />
          {/* an uploaded run's host is external: the server can queue nothing on it (422) */}
          {can("run.create", run.team_id) && run.source !== "import" && (
            <Link className="btn btn-small" to={cloneHref(run.id)} data-testid="clone-run">
              Clone and re-run
            </Link>
          )}
          {run.status === "succeeded" && <RawResultButton runId={run.id} />}
          <RunHistoryButton run={run} />
          {run.origin && <SourceButton runId={run.id} origin={run.origin} />}
          {run.pts && (
            <Link
              className="btn btn-small"
              to={`/runs/${run.id}/pts`}
              data-testid="pts-report-link"
            >
              SNIA PTS report
            </Link>
          )}
          {run.status === "succeeded" && (
            <Link className="btn btn-small" to={`/views?runs=${run.id}`} data-testid="named-views">
              Named views
            </Link>
          )}
          {mayDelete && !active && (
            <DeleteButton
              label="Delete"
              title="Delete this run?"
              testId="delete-run"
              onDelete={() => deleteRun(run.id)}
              onDone={() => {
                qc.removeQueries({ queryKey: keys.runs.detail(run.id) });
                qc.invalidateQueries({ queryKey: keys.runs.lists() });
                navigate("/runs");
              }}
            >
              <p>
                <strong>{run.name || run.id}</strong> goes with its result, series, power samples,
                energy, tags and comments, from every list, comparison, export and share link.
              </p>
            </DeleteButton>
          )}
        </div>
      </div>
      <RunTags run={run} />
      <RunSummary run={run} sys={system.data} />
      <RunEnvironmentPanel runId={run.id} />
      {cancel.error && <div className="alert alert-error">{errorMessage(cancel.error)}</div>}
      {active && <LiveRunProgress id={run.id} />}
      {run.status === "failed" && run.error && (
        <div className="alert alert-error" data-testid="run-error">
          <strong>Failed:</strong> <span className="mono">{run.error}</span>
        </div>
      )}
      <div className="card">
        <dl className="facts">
          <dt>Agent</dt>
          <dd>
            {run.agent_name ?? "not assigned yet"}
            {hostname && <span className="muted"> · host {hostname}</span>}
          </dd>
          <dt>Target</dt>
          <dd>
            <RunTargets run={run} />
            {run.destructive && (
              <>
                {" "}
                <span className="badge badge-destructive" data-testid="run-destructive">
                  destructive write, confirmed
                </span>
              </>
            )}
          </dd>
          <dt>Meter</dt>
          <dd data-testid="run-meter">
            {run.meter === null ? (
              "the host's default"
            ) : run.meter === "" ? (
              "none"
            ) : (
              <span className="mono">{run.meter}</span>
            )}
          </dd>
          <dt>Created</dt>
          <dd>
            {formatTimestamp(run.created_at)} (<Ago iso={run.created_at} />)
          </dd>
          <dt>Assigned</dt>
          <dd>{formatTimestamp(run.assigned_at)}</dd>
          <dt>Started</dt>
          <dd>{formatTimestamp(run.started_at)}</dd>
          <dt>Finished</dt>
          <dd>{formatTimestamp(run.finished_at)}</dd>
          <dt>Attempt</dt>
          <dd>{run.attempt}</dd>
          <dt>Run id</dt>
          <dd className="mono small">{run.id}</dd>
        </dl>
      </div>
      {fileSummary || dbSummary ? null : <PresetSummary run={run} />}
      <h2>Results</h2>
      {fileSummary && (
        <FileWorkloadPanel
          summary={fileSummary}
          intervals={fileIntervals}
          validity={system.data?.validity}
        />
      )}
      <DbRunPanels run={run} />
      {run.jobs.length === 0 && !fileSummary && !dbSummary && (
        <p className="muted">
          {active ? "Waiting for the run to finish…" : "No result stored for this run."}
        </p>
      )}
      {!fileSummary && !dbSummary && <TargetResults run={run} />}
      <GroupMembers run={run} />
      <CombinedCaption run={run} />
      {!fileSummary && !dbSummary && run.jobs.length > 0 && (
        <JobsOverview
          run={run}
          series={series.data}
          shortByDesign={!!shortFlag?.message.startsWith("short by design")}
        />
      )}
      <PageCachePanel pageCache={system.data?.page_cache} series={series.data} />
      <h2>Workload</h2>
      <WorkloadTable run={run} />
      {!active && run.status !== "cancelled" && (
        <EnergyPanel
          runId={run.id}
          energy={run.energy}
          series={series.data}
          source={run.source}
          canAct={can("run.create", run.team_id)}
          kind={kindOf(specOf(run))}
          agentName={run.agent_name}
          origin={run.origin}
        />
      )}
      <CommentThread kind="run" targetKey={run.id} teamIds={[run.team_id]} />
    </section>
  );
}
