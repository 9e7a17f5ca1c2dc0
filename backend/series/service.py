"""Series: found from runs as their results are stored, named, pinned and archived by people;
each new run of a series is tested against the runs before it and its history searched for
change points (stats.py), and every change found is stored once."""

import hashlib
import json
import math
import time
import uuid
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from dataclasses import dataclass, fields
from datetime import datetime
from typing import Any

from sqlalchemy.orm import Session

from backend.auth.principal import UserPrincipal
from backend.compare.fingerprint import fingerprint
from backend.errors import Invalid, NotFound
from backend.jobs import enqueue
from backend.kit.time import utcnow
from backend.logs import log
from backend.models import Role, Run, Series, SeriesDetection
from backend.run import service as run_service
from backend.run.schemas import RunValidityFlag
from backend.series import repository
from backend.series.schemas import (
    DetectionRead,
    DetectionUpdate,
    HistoryPoint,
    HostChange,
    MetricVerdict,
    SeriesCreate,
    SeriesExclusion,
    SeriesHistory,
    SeriesRead,
    SeriesUpdate,
    SeriesVerdict,
    TeamThresholdsRead,
    ThresholdsIn,
    ThresholdsRead,
)
from backend.series.stats import METRICS, Direction, Point, Thresholds, change_points, verdict

# validity flags that leave a run out of change detection (the run is not what the series measures)
EXCLUDING_FLAGS = frozenset(
    {
        "short_run",
        "shortened",
        "cache_resident",
        "working_set_below_ram",
        "above_line_rate",
        "buffered_device",
        "imported",
        "published",
        "unsynchronized",
    }
)
# flags that describe the conditions of a whole stretch of runs (a virtual host, an SSD never
# preconditioned): runs with different ones are in different segments, never compared
CONDITION_FLAGS = frozenset({"virtualized", "unconditioned_ssd"})
HOST_FACTS = ("kernel", "firmware", "fstype", "mount_options", "engine_version")
CHANGE_POINT_HISTORY = 500  # runs searched for change points after each new run
MAX_HISTORY_POINTS = 2000
BACKFILL_HISTORY = 5000  # runs searched for change points when the thresholds change
GATHER_BATCH = 50  # earlier runs examined per step when a series comes into being (~30 ms each)
# runs read for a new run's tests and change points (the window, its suffix and CHANGE_POINT_HISTORY)
DETECTION_HISTORY = CHANGE_POINT_HISTORY + 100
# what a person may make of a detection (the same status again: a new comment)
REVIEW: dict[str, frozenset[str]] = {
    "open": frozenset({"open", "acknowledged", "dismissed"}),
    "acknowledged": frozenset({"acknowledged", "open", "dismissed"}),
    "dismissed": frozenset({"dismissed", "open", "acknowledged"}),
}


def _sha256(doc: object) -> str:
    return hashlib.sha256(json.dumps(doc, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def run_facts(result: repository.StoredResult, device_facts: dict[str, Any] | None) -> dict[str, Any]:
    """What the run ran on, from the engine's own document (iowatt.host, iowatt.target.fs) and the
    device's facts (firmware): the facts whose change starts a new segment."""

    def part(d: object, key: str) -> dict[str, Any]:
        v = d.get(key) if isinstance(d, dict) else None
        return v if isinstance(v, dict) else {}

    doc = result.engine_result or {}
    it = part(doc, "iowatt")
    host, target = part(it, "host"), part(it, "target")
    fs = part(target, "fs")
    dev = device_facts or {}
    return {
        "kernel": host.get("kernel"),
        "firmware": dev.get("firmware"),
        "fstype": fs.get("type"),
        "mount_options": fs.get("mount_options"),
        "engine_version": it.get("version") or doc.get("fio version"),
    }


def _target(session: Session, run: Run) -> tuple[str, dict[str, Any]]:
    group = repository.targets(session, run.id)
    if len(group) > 1:
        return "group", {
            "agent_id": str(run.agent_id),
            "targets": [str(t.device_id) if t.device_id else t.target_path for t in group],
        }
    if run.device_id is not None:
        return "device", {"device_id": str(run.device_id)}
    return "path", {"agent_id": str(run.agent_id), "target_path": run.target_path}


def _fingerprint(spec: dict[str, Any]) -> str | None:
    """The workload's fingerprint (None: a spec today's schema no longer reads)."""
    try:
        return fingerprint(spec)
    except Exception:
        return None


def _identity(session: Session, run: Run) -> tuple[str, str, dict[str, Any], str] | None:
    """The run's workload fingerprint, target kind, target and series key (None: a spec today's
    schema no longer reads, never tracked)."""
    fp = _fingerprint(run.workload_spec)
    if fp is None:
        return None
    kind, target = _target(session, run)
    key = _sha256(
        {"fingerprint": fp, "target": target, "environment_id": str(run.environment_id or ""), "metric": None}
    )
    return fp, kind, target, key


def _series_of(
    session: Session, run: Run, identity: tuple[str, str, dict[str, Any], str]
) -> tuple[Series, bool]:
    fp, kind, _, key = identity
    found = repository.by_key(session, team_id=run.team_id, key=key)
    if found is not None:  # most runs join a series that exists: no names to read, no insert to try
        return found, False
    workload, device_name, env = repository.names(session, run)
    where = device_name or run.target_path
    name = f"{workload or run.preset or run.name} on {where}" + (f" in {env}" if env else "")
    return repository.get_or_create(
        session,
        team_id=run.team_id,
        key=key,
        values={
            "workload_fingerprint": fp,
            "target_kind": kind,
            "agent_id": run.agent_id,
            "device_id": run.device_id if kind == "device" else None,
            "target_path": run.target_path if kind != "device" else None,
            "environment_id": run.environment_id,
            "workload_id": run.workload_id,
            "name": name[:200],
        },
    )


def _join(
    session: Session,
    series: Series,
    run: Run,
    result: repository.StoredResult,
    validity: list[RunValidityFlag] | None = None,
) -> bool:
    """The run in the series with its validity (`validity`: judged already, a batch's) and host
    facts judged once; True when it was new."""
    judged = validity if validity is not None else run_service.validity(session, run=run)
    flags = [f.model_dump() for f in judged]
    dev = repository.device(session, run.device_id)
    facts = run_facts(result, dev.facts if dev else None)
    conditions = sorted({f["flag"] for f in flags} & CONDITION_FLAGS)
    excluded = [f for f in flags if f["flag"] in EXCLUDING_FLAGS]
    return repository.add_run(
        session,
        series=series,
        run_id=run.id,
        at=result.started_at,
        excluded=excluded,
        segment=_sha256({"facts": facts, "conditions": conditions}),
        facts={**facts, "conditions": conditions},
    )


def track_run(session: Session, *, run_id: uuid.UUID) -> list[uuid.UUID]:
    """Adds a run whose result is stored to its series (made when it is the first: the earlier
    runs of its identity join it, `gather`), judges its validity and host facts once, and looks
    for changes. Idempotent: a run already in its series is left as it is."""
    found = repository.run_with_result(session, run_id)
    if found is None:
        return []
    run, result = found
    identity = _identity(session, run)
    if identity is None:
        return []
    series, made = _series_of(session, run, identity)
    added = _join(session, series, run, result)
    if made:
        _gather_first(session, series)
    if added:
        detect(session, series=series, run_id=run.id)
    return [series.id]


def _gather_first(session: Session, series: Series) -> None:
    """A series came into being: the first batch of its earlier runs joins it now (so the run that
    made it is tested against them), the rest in `series.gather` tasks, then `series.backfill`
    searches the history they make for change points."""
    joined, cursor = gather(session, series_id=series.id, after=None)
    _then(session, series.id, cursor, searched=joined > 0)


def gather_more(session: Session, *, series_id: uuid.UUID, after: tuple[datetime, uuid.UUID]) -> int:
    """The `series.gather` task's body: the next batch, then the next task or the search."""
    joined, cursor = gather(session, series_id=series_id, after=after)
    _then(session, series_id, cursor, searched=True)
    return joined


def _then(
    session: Session, series_id: uuid.UUID, cursor: tuple[datetime, uuid.UUID] | None, *, searched: bool
) -> None:
    if cursor is not None:
        at, last = cursor
        after = {"after_at": at.isoformat(), "after_id": str(last)}
        enqueue(session, "series.gather", series_id=str(series_id), **after)
    elif searched:
        enqueue(session, "series.backfill", series_id=str(series_id))


def gather(
    session: Session,
    *,
    series_id: uuid.UUID,
    after: tuple[datetime, uuid.UUID] | None,
    batch: int | None = None,
) -> tuple[int, tuple[datetime, uuid.UUID] | None]:
    """One batch of the runs stored before the series existed that are its (same fingerprint,
    target and environment), joined to it in their order without a test each (their change
    points are searched over the whole history once all have joined). Returns how many joined and
    where the next batch starts (None: no more). Idempotent: a run already in the series is not
    examined again."""
    series = repository.get(session, series_id)
    if series is None:
        return 0, None
    batch = batch or GATHER_BATCH
    candidates = repository.earlier_runs(session, series, after=after, limit=batch)
    joined = 0
    for run_id, _, spec in candidates:
        # a run of another workload (most of a device's earlier runs) is passed over on its spec's
        # fingerprint alone (the series' key hashes it): its target and result are not read
        if _fingerprint(spec) != series.workload_fingerprint:
            continue
        found = repository.run_with_result(session, run_id)
        if found is None:
            continue
        run, result = found
        identity = _identity(session, run)
        if identity is not None and identity[3] == series.key and _join(session, series, run, result):
            joined += 1
    return joined, (candidates[-1][1], candidates[-1][0]) if len(candidates) == batch else None


def join_stored(session: Session, *, run_ids: list[uuid.UUID]) -> list[uuid.UUID]:
    """The bulk backfill's step for a batch of runs stored before their series existed: each joins
    its series (made if it is the first; the series' other earlier runs are the bulk pass's to
    reach, not a `series.gather`'s), with its validity (judged for the batch at once: to_read's
    fixed number of queries, not a dozen a run) and host facts judged as any run joining, and
    **without a test as a new run**: an old regression must not page anyone. The history it makes
    is searched for change points afterwards (`backfill`), which shows old changes without alerting
    (alert/service.py: a change in runs older than a day raises no alert). Returns the series of
    each run that joined (runs without a result, with a spec today's schema no longer reads, or in a
    series already are passed over)."""
    found = [f for f in (repository.run_with_result(session, i) for i in run_ids) if f is not None]
    identified = [
        (run, result, ident) for run, result in found if (ident := _identity(session, run)) is not None
    ]
    judged = run_service.validities(session, runs=[run for run, _, _ in identified])
    joined: list[uuid.UUID] = []
    for run, result, ident in identified:
        series, _ = _series_of(session, run, ident)
        if _join(session, series, run, result, judged[run.id]):
            joined.append(series.id)
    return joined


@dataclass(frozen=True)
class BulkProgress:
    """Where a bulk backfill stands: runs examined and joined, series touched, the last run's
    creation time (the pass goes in that order) and runs examined per second."""

    examined: int
    joined: int
    series: int
    up_to: datetime | None
    seconds: float

    @property
    def rate(self) -> float:
        return self.examined / max(self.seconds, 1e-9)


def backfill_stored(
    transaction: Callable[[], AbstractContextManager[Session]],
    *,
    team_id: uuid.UUID | None = None,
    since: datetime | None = None,
    batch: int = 500,
    progress: Callable[[BulkProgress], None] | None = None,
) -> BulkProgress:
    """The bulk backfill (`iowatt-server series backfill`): every run with a stored result that
    is in no series joins its series (`join_stored`), `batch` runs per `transaction()` in
    (created_at, id) order, so memory holds one batch's ids and the series touched, never the
    runs. Resumable and idempotent: a run in a series is never examined again, so a pass stopped
    anywhere is finished by running it again. At the end (or when it stops on an error), each
    series touched gets a `series.backfill` task: change points over the history it now has."""
    start = time.monotonic()
    after: tuple[datetime, uuid.UUID] | None = None
    examined = joined = 0
    touched: set[uuid.UUID] = set()

    def now() -> BulkProgress:
        return BulkProgress(
            examined, joined, len(touched), after[0] if after else None, time.monotonic() - start
        )

    try:
        while True:
            with transaction() as session:
                rows = repository.untracked_runs(
                    session, team_id=team_id, since=since, after=after, limit=batch
                )
                mine = join_stored(session, run_ids=[run_id for run_id, _ in rows])
            examined, joined = examined + len(rows), joined + len(mine)  # committed: counted
            touched.update(mine)
            if rows:
                after = (rows[-1][1], rows[-1][0])
                p = now()
                log.info("series.bulk_backfill", examined=p.examined, joined=p.joined, series=p.series)
                if progress is not None:
                    progress(p)
            if len(rows) < batch:
                break
    finally:  # stopped by an error too: what joined is searched (a later pass joins the rest)
        ids = sorted(touched)
        for i in range(0, len(ids), 1000):
            with transaction() as session:
                for sid in ids[i : i + 1000]:
                    enqueue(session, "series.backfill", series_id=str(sid))
    return now()


def _tracks_job(series: Series, job_index: int) -> bool:
    """A series narrowed to one job (`job_index`) tests that job alone."""
    return series.job_index is None or series.job_index == job_index


def _metrics(series: Series) -> dict[str, Direction]:
    """The metrics a series tests: every one, or the one it is narrowed to (`metric`)."""
    return {series.metric: METRICS[series.metric]} if series.metric else dict(METRICS)


def effective(series_own: dict[str, Any], team: dict[str, Any]) -> Thresholds:
    names = {f.name for f in fields(Thresholds)}
    given = {k: v for k, v in {**team, **series_own}.items() if k in names and v is not None}
    return Thresholds(**given)


def _thresholds(session: Session, series: Series) -> Thresholds:
    return effective(series.thresholds or {}, repository.team_thresholds(session, series.team_id))


def _points(rows: list[Any], metric: str) -> list[Point]:
    def num(v: object) -> float | None:
        return float(v) if isinstance(v, int | float) else None

    return [
        Point(
            r.run_id,
            r.at,
            num(getattr(r, metric)),
            tuple(str(e.get("flag")) for e in r.excluded or ()),
            r.segment,
        )
        for r in rows
    ]


def _baseline(points: list[Point], accepted: Iterable[SeriesDetection]) -> list[Point]:
    """An acknowledged change starts a new baseline: the runs before it are not compared with
    what follows (an open change is not accepted: later runs are still tested against before)."""
    starts = [d.run_id for d in accepted if d.status == "acknowledged" and d.run_id is not None]
    index = {p.run_id: i for i, p in enumerate(points)}
    cut = max((index[r] for r in starts if r in index), default=0)
    return points[cut:]


def detect(session: Session, *, series: Series, run_id: uuid.UUID) -> list[uuid.UUID]:
    """Tests the new run on every metric of every job, and searches the recent history for change
    points; stores what it finds once and queues `series.detection_stored` for each (after commit)."""
    th = _thresholds(session, series)
    stored: list[uuid.UUID] = []
    for job_index, _ in repository.job_indexes(session, run_id):
        if not _tracks_job(series, job_index):
            continue
        rows = repository.points(session, series.id, job_index, last=DETECTION_HISTORY)
        known = repository.detections(session, series.id, job_index=job_index)
        for metric, direction in _metrics(series).items():
            points = _points(rows, metric)
            if not any(p.run_id == run_id and p.value is not None for p in points):
                continue
            mine = [d for d in known if d.metric == metric]
            base = _baseline(points, mine)
            at = (
                next(i for i, p in enumerate(base) if p.run_id == run_id)
                if any(p.run_id == run_id for p in base)
                else None
            )
            if at is not None:
                v = verdict(base, at, direction, th)
                # one open change per metric at a time (later runs' verdicts still say so); a change
                # stored after the window's last run is this one, seen from a later run
                end = next((p.at for p in base if p.run_id == v.previous_run_id), None)
                seen = any(
                    d.kind == "new_run"
                    and (d.status == "open" or (d.status != "dismissed" and end is not None and d.at > end))
                    for d in mine
                )
                if v.status in ("regression", "improvement") and v.change and not seen:
                    new = repository.add_detection(
                        session,
                        {
                            **_change_columns(v.change),
                            "series_id": series.id,
                            "metric": metric,
                            "job_index": job_index,
                            "kind": "new_run",
                            "run_id": v.first_run_id,
                            "previous_run_id": v.previous_run_id,
                            "at": next(p.at for p in base if p.run_id == v.first_run_id),
                            "method": v.method,
                            "parameters": th.tested_with(),
                            "excluded": _excluded(base, v.window + v.tested),
                        },
                    )
                    stored += [new] if new else []
            stored += _store_change_points(
                session, series, points, base[-CHANGE_POINT_HISTORY:], mine, metric, job_index, th
            )
    for d in stored:
        enqueue(session, "series.detection_stored", detection_id=str(d))
    return stored


def _store_change_points(
    session: Session,
    series: Series,
    points: list[Point],
    searched: list[Point],
    mine: list[SeriesDetection],
    metric: str,
    job_index: int,
    th: Thresholds,
) -> list[uuid.UUID]:
    """Change points of `searched` (a stretch of `points`) not stored yet, stored; their ids."""
    stored: list[uuid.UUID] = []
    index = {p.run_id: i for i, p in enumerate(points)}
    near = [index[d.run_id] for d in mine if d.kind == "change_point" and d.run_id in index]
    for cp in change_points(searched, METRICS[metric], th):
        i = index[cp.run_id]
        if any(abs(i - j) < th.cp_min_size for j in near):
            continue  # the same change, placed a run or two away as more runs came
        new = repository.add_detection(
            session,
            {
                **_change_columns(cp.change),
                "series_id": series.id,
                "metric": metric,
                "job_index": job_index,
                "kind": "change_point",
                "run_id": cp.run_id,
                "previous_run_id": cp.previous_run_id,
                "at": points[i].at,
                "method": "pelt_l2 + welch",  # ruptures KernelCPD(linear), then Welch's t-test
                "parameters": th.tested_with(),
                "excluded": _excluded(searched, [p.run_id for p in searched]),
            },
        )
        if new:
            stored.append(new)
            near.append(i)
    return stored


def backfill(session: Session, *, series_id: uuid.UUID) -> list[uuid.UUID]:
    """Change points over the series' whole history (its last BACKFILL_HISTORY runs) at the
    thresholds in effect now: run after a person changes the series' or the team's thresholds,
    so the history page shows what they find in the runs already there. Each change is stored
    once (a change already stored stays, whatever thresholds found it); a change in runs older
    than a day raises no alert (alert/service.py)."""
    series = repository.get(session, series_id)
    if series is None:
        return []
    th = _thresholds(session, series)
    stored: list[uuid.UUID] = []
    for job_index in repository.series_jobs(session, series.id):
        if not _tracks_job(series, job_index):
            continue
        rows = repository.points(session, series.id, job_index, last=BACKFILL_HISTORY)
        known = repository.detections(session, series.id, job_index=job_index)
        for metric in _metrics(series):
            points = _points(rows, metric)
            mine = [d for d in known if d.metric == metric]
            base = _baseline(points, mine)
            stored += _store_change_points(session, series, points, base, mine, metric, job_index, th)
    for d in stored:
        enqueue(session, "series.detection_stored", detection_id=str(d))
    return stored


def _change_columns(change: Any) -> dict[str, Any]:
    def num(x: float | None) -> float | None:
        return x if x is not None and math.isfinite(x) else None

    return {
        "direction": change.direction,
        "mean_before": change.mean_before,
        "mean_after": change.mean_after,
        "change_pct": change.change_pct if math.isfinite(change.change_pct) else 0.0,
        "change_pct_low": num(change.change_pct_low),
        "change_pct_high": num(change.change_pct_high),
        "runs_before": change.runs_before,
        "runs_after": change.runs_after,
        "p_value": num(change.p_value),
    }


def _excluded(points: list[Point], around: list[uuid.UUID]) -> list[dict[str, Any]]:
    """The runs among `points` (up to the last of `around`) left out, and why."""
    last = max((i for i, p in enumerate(points) if p.run_id in set(around)), default=-1)
    first = min((i for i, p in enumerate(points) if p.run_id in set(around)), default=0)
    return [
        {"run_id": str(p.run_id), "reasons": list(p.excluded)} for p in points[first : last + 1] if p.excluded
    ]


# --- reads and edits by people -----------------------------------------------------------------


def _series(
    session: Session, principal: UserPrincipal, series_id: uuid.UUID, role: Role = Role.viewer
) -> Series:
    s = repository.get(session, series_id)
    if s is None or s.team_id not in principal.team_ids:
        raise NotFound("series not found")
    principal.require(s.team_id, role)
    return s


def _thresholds_read(th: Thresholds) -> ThresholdsRead:
    return ThresholdsRead(**th.tested_with())


def to_read(session: Session, rows: list[Series]) -> list[SeriesRead]:
    counts = repository.open_regressions(session, [s.id for s in rows])
    teams: dict[uuid.UUID, dict[str, Any]] = {}
    out = []
    for s in rows:
        team = teams.setdefault(s.team_id, repository.team_thresholds(session, s.team_id))
        out.append(
            SeriesRead(
                id=s.id,
                team_id=s.team_id,
                name=s.name,
                workload_fingerprint=s.workload_fingerprint,
                target_kind=s.target_kind,
                agent_id=s.agent_id,
                device_id=s.device_id,
                target_path=s.target_path,
                environment_id=s.environment_id,
                workload_id=s.workload_id,
                metric=s.metric,
                job_index=s.job_index,
                pinned=s.pinned,
                archived_at=s.archived_at,
                thresholds=ThresholdsIn(**(s.thresholds or {})),
                effective_thresholds=_thresholds_read(effective(s.thresholds or {}, team)),
                run_count=s.run_count,
                last_run_at=s.last_run_at,
                open_regressions=counts.get(s.id, 0),
                created_at=s.created_at,
            )
        )
    return out


def list_series(
    session: Session,
    *,
    principal: UserPrincipal,
    team_id: uuid.UUID | None,
    device_id: uuid.UUID | None,
    agent_id: uuid.UUID | None,
    workload_id: uuid.UUID | None,
    run_id: uuid.UUID | None,
    archived: bool | None,
    limit: int,
    offset: int,
) -> tuple[list[SeriesRead], int]:
    rows, total = repository.list_series(
        session,
        principal.teams_for(team_id),
        device_id=device_id,
        agent_id=agent_id,
        workload_id=workload_id,
        run_id=run_id,
        archived=archived,
        limit=limit,
        offset=offset,
    )
    return to_read(session, rows), total


def create(session: Session, *, principal: UserPrincipal, body: SeriesCreate) -> tuple[SeriesRead, bool]:
    """A run's series, made when there is none (a run stored before series existed, say): the
    run joins it and is tested, the earlier runs of its identity join it (`gather`); then named
    and pinned as asked. Whether it was made."""
    run = run_service.get(session, principal=principal, run_id=body.run_id)
    principal.require(run.team_id, Role.member)
    found = repository.run_with_result(session, run.id)
    if found is None:
        raise Invalid("run_id", "the run has no stored result: it joins its series when it has one")
    identity = _identity(session, run)
    if identity is None:
        raise Invalid("run_id", "the run's workload is one this server no longer reads: it has no series")
    series, made = _series_of(session, run, identity)
    added = _join(session, series, run, found[1])
    if made:
        _gather_first(session, series)
    if added:
        detect(session, series=series, run_id=run.id)
    if body.name is not None:
        series.name = body.name
    if body.pinned is not None:
        series.pinned = body.pinned
    session.flush()
    return to_read(session, [series])[0], made


def get(session: Session, *, principal: UserPrincipal, series_id: uuid.UUID) -> SeriesRead:
    return to_read(session, [_series(session, principal, series_id)])[0]


def update(
    session: Session, *, principal: UserPrincipal, series_id: uuid.UUID, body: SeriesUpdate
) -> SeriesRead:
    s = _series(session, principal, series_id, Role.member)
    given = body.model_dump(exclude_unset=True)
    for f in ("name", "pinned", "archived"):
        if f in given and given[f] is None:
            raise Invalid(f, "cannot be null")
    if "name" in given:
        s.name = given["name"]
    if "pinned" in given:
        s.pinned = given["pinned"]
    if "archived" in given:
        s.archived_at = (s.archived_at or utcnow()) if given["archived"] else None
    if {"metric", "job_index"} & given.keys():
        narrowed = (given.get("metric", s.metric), given.get("job_index", s.job_index))
        if narrowed != (s.metric, s.job_index):
            s.metric, s.job_index = narrowed
            enqueue(session, "series.backfill", series_id=str(s.id))
    if body.thresholds is not None:
        own = body.thresholds.model_dump(exclude_none=True)
        _check_thresholds(own, repository.team_thresholds(session, s.team_id), "thresholds")
        if own != (s.thresholds or {}):
            enqueue(session, "series.backfill", series_id=str(s.id))
        s.thresholds = own
    session.flush()
    return to_read(session, [s])[0]


def _check_thresholds(own: dict[str, Any], team: dict[str, Any], field: str) -> None:
    th = effective(own, team)
    if th.min_window > th.lookback:
        raise Invalid(f"{field}.min_window", f"must not exceed lookback ({th.lookback})")


def team_thresholds(session: Session, *, principal: UserPrincipal, team_id: uuid.UUID) -> TeamThresholdsRead:
    principal.require(team_id, Role.viewer)
    own = repository.team_thresholds(session, team_id)
    return TeamThresholdsRead(
        team_id=team_id, thresholds=ThresholdsIn(**own), effective=_thresholds_read(effective({}, own))
    )


def set_team_thresholds(
    session: Session, *, principal: UserPrincipal, team_id: uuid.UUID, body: ThresholdsIn
) -> TeamThresholdsRead:
    principal.require(team_id, Role.admin)
    own = body.model_dump(exclude_none=True)
    _check_thresholds({}, own, "min_window")
    if own != repository.team_thresholds(session, team_id):
        for sid in repository.team_series_ids(session, team_id):
            enqueue(session, "series.backfill", series_id=str(sid))
    repository.set_team_thresholds(session, team_id, own)
    return team_thresholds(session, principal=principal, team_id=team_id)


def detections(session: Session, *, principal: UserPrincipal, series_id: uuid.UUID) -> list[DetectionRead]:
    s = _series(session, principal, series_id)
    return [DetectionRead.model_validate(d) for d in repository.detections(session, s.id)]


def update_detection(
    session: Session,
    *,
    principal: UserPrincipal,
    series_id: uuid.UUID,
    detection_id: uuid.UUID,
    body: DetectionUpdate,
) -> DetectionRead:
    s = _series(session, principal, series_id, Role.member)
    d = repository.detection(session, detection_id)
    if d is None or d.series_id != s.id:
        raise NotFound("detection not found")
    if body.status not in REVIEW[d.status]:
        raise Invalid("status", f"a {d.status} detection can become {', '.join(sorted(REVIEW[d.status]))}")
    repository.review_detection(
        session, d, status=body.status, comment=body.comment, by=principal.user_id, at=utcnow()
    )
    return DetectionRead.model_validate(d)


def _host_changes(rows: list[Any]) -> list[HostChange]:
    out = []
    for r in rows:
        before, after = r.prev_facts or {}, r.facts or {}
        keys = [*HOST_FACTS, "conditions"]
        diff = {k: [_text(before.get(k)), _text(after.get(k))] for k in keys if before.get(k) != after.get(k)}
        out.append(HostChange(run_id=r.run_id, at=r.at, changes=diff))
    return out


def _text(v: object) -> str | None:
    if v is None:
        return None
    return ", ".join(str(x) for x in v) if isinstance(v, list) else str(v)


def history(
    session: Session,
    *,
    principal: UserPrincipal,
    series_id: uuid.UUID,
    metric: str,
    job_index: int,
    max_points: int = MAX_HISTORY_POINTS,
) -> SeriesHistory:
    s = _series(session, principal, series_id)
    rows = repository.points(session, s.id, job_index, metrics=(metric,), campaigns=True)
    names = repository.job_indexes(session, rows[-1].run_id) if rows else []
    groups = _repeats(rows)
    downsampled = len(groups) > max_points
    if downsampled:
        groups = _downsample(groups, max_points)
    points = [_point(g, metric) for g in groups]
    return SeriesHistory(
        series_id=s.id,
        metric=metric,
        direction=METRICS[metric],
        job_index=job_index,
        jobs=[n for _, n in names],
        total_runs=len(rows),
        downsampled=downsampled,
        points=points,
        host_changes=_host_changes(repository.segment_changes(session, s.id)),
        detections=[
            DetectionRead.model_validate(d)
            for d in repository.detections(session, s.id, metric=metric, job_index=job_index)
        ],
    )


def _one(r: Any, metric: str) -> HistoryPoint:
    v = getattr(r, metric)
    return HistoryPoint(
        run_id=r.run_id,
        at=r.at,
        value=float(v) if v is not None else None,
        low=None,
        high=None,
        runs=1,
        excluded=[
            SeriesExclusion(flag=str(e.get("flag")), message=str(e.get("message"))) for e in r.excluded or ()
        ],
        segment=r.segment,
    )


def _point(group: list[Any], metric: str) -> HistoryPoint:
    """One run as itself; several (a campaign's repeats, or a downsampled stretch) as their mean
    with their low and high (the band), at the first of them."""
    if len(group) == 1:
        return _one(group[0], metric)
    vals = [float(v) for r in group if (v := getattr(r, metric)) is not None]
    first = group[0]
    return HistoryPoint(
        run_id=first.run_id,
        at=first.at,
        value=sum(vals) / len(vals) if vals else None,
        low=min(vals) if vals else None,
        high=max(vals) if vals else None,
        runs=len(group),
        excluded=[],
        segment=first.segment,
    )


def _repeats(rows: list[Any]) -> list[list[Any]]:
    """The runs in groups: consecutive valid runs of one campaign in one segment are its repeats
    (one point, their band); every other run stands alone."""
    out: list[list[Any]] = []
    for r in rows:
        last = out[-1][-1] if out else None
        if (
            last is not None
            and r.campaign_id is not None
            and not r.excluded
            and not last.excluded
            and last.campaign_id == r.campaign_id
            and last.segment == r.segment
        ):
            out[-1].append(r)
        else:
            out.append([r])
    return out


def _downsample(groups: list[list[Any]], max_points: int) -> list[list[Any]]:
    """Consecutive groups of one segment merged into about `max_points`; runs left out stay
    single points (they are few and matter)."""
    size = math.ceil(len(groups) / max_points)
    out: list[list[Any]] = []
    bucket: list[list[Any]] = []

    def flush() -> None:
        if bucket:
            out.append([r for g in bucket for r in g])
            bucket.clear()

    for g in groups:
        if g[0].excluded:
            flush()
            out.append(g)
            continue
        if bucket and (len(bucket) >= size or bucket[0][0].segment != g[0].segment):
            flush()
        bucket.append(g)
    flush()
    return out


def run_verdict(
    session: Session, *, principal: UserPrincipal, series_id: uuid.UUID, run_id: uuid.UUID
) -> SeriesVerdict:
    """The verdict on one run of the series, per job and metric, at the series' thresholds."""
    s = _series(session, principal, series_id)
    if repository.series_run(session, s.id, run_id) is None:
        raise Invalid("run", "the run is not in this series (its result may not be stored yet)")
    th = _thresholds(session, s)
    out: list[MetricVerdict] = []
    for job_index, _ in repository.job_indexes(session, run_id):
        if not _tracks_job(s, job_index):
            continue
        rows = repository.points(session, s.id, job_index)
        known = repository.detections(session, s.id, job_index=job_index)
        for metric, direction in _metrics(s).items():
            points = _baseline(_points(rows, metric), [d for d in known if d.metric == metric])
            at = next((i for i, p in enumerate(points) if p.run_id == run_id), None)
            if at is None or points[at].value is None:
                continue
            v = verdict(points, at, direction, th)
            c = v.change
            out.append(
                MetricVerdict(
                    metric=metric,
                    job_index=job_index,
                    direction=direction,
                    status=v.status,
                    reasons=v.reasons,
                    value=points[at].value,
                    mean_before=c.mean_before if c else None,
                    change_pct=c.change_pct if c and math.isfinite(c.change_pct) else None,
                    change_pct_low=c.change_pct_low if c else None,
                    change_pct_high=c.change_pct_high if c else None,
                    p_value=c.p_value if c else None,
                    z=c.z if c else None,
                    runs_before=c.runs_before if c else 0,
                    runs_after=c.runs_after if c else 0,
                    first_run_id=v.first_run_id,
                    previous_run_id=v.previous_run_id,
                    method=v.method,
                )
            )
    statuses = {m.status for m in out}
    overall: Any = next(
        (st for st in ("regression", "improvement", "no_change", "insufficient_history") if st in statuses),
        "excluded",
    )
    return SeriesVerdict(
        series_id=s.id, run_id=run_id, status=overall, thresholds=_thresholds_read(th), metrics=out
    )
