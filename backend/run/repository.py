import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Float,
    Text,
    case,
    cast,
    delete,
    exists,
    false,
    func,
    literal_column,
    null,
    or_,
    select,
    true,
    union,
    union_all,
    update,
)
from sqlalchemy.dialects.postgresql import JSONB, aggregate_order_by, insert
from sqlalchemy.orm import Session, defer, selectinload
from sqlalchemy.orm.attributes import set_committed_value

from backend.models import (
    ACTIVE_STATUSES,
    Agent,
    Device,
    ResultJob,
    Run,
    RunStatus,
    RunTag,
    RunTarget,
    Workload,
)
from backend.models.run_group import RunGroup


def get_in_teams(
    session: Session, run_id: uuid.UUID, team_ids: list[uuid.UUID], *, lock: bool = False
) -> Run | None:
    q = select(Run).where(Run.id == run_id, Run.team_id.in_(team_ids))
    if lock:
        q = q.with_for_update(of=Run)
    return session.scalar(q)


def live_in_teams(
    session: Session, run_id: uuid.UUID, team_ids: list[uuid.UUID], since_t_s: float | None
) -> tuple[RunStatus, bool, dict[str, Any] | None] | None:
    """An active run's page poll (GET /runs/{id}/progress): the run's status, whether a cancel was
    asked, and its latest progress report with only the samples after `since_t_s` (all without it),
    filtered in PostgreSQL: neither the run's workload nor the samples the page holds are read into
    Python (an 80-job run's spec is ~38 KB, its 300 samples ~33 KB)."""
    samples: ColumnElement[Any] = Run.progress.op("->")(literal_column("'samples'"))
    if since_t_s is not None:
        samples = func.jsonb_path_query_array(
            samples,
            literal_column("'$[*] ? (@.t_s > $since)'::jsonpath"),
            func.jsonb_build_object(literal_column("'since'"), cast(since_t_s, Float)),
        )
    report = Run.progress.op("-")(literal_column("'samples'")).op("||", return_type=JSONB)(
        func.jsonb_build_object(
            literal_column("'samples'"), func.coalesce(samples, literal_column("'[]'::jsonb"))
        )
    )  # null when the run has no report yet
    row = session.execute(
        select(Run.status, Run.cancel_requested, report).where(Run.id == run_id, Run.team_id.in_(team_ids))
    ).one_or_none()
    if row is None:
        return None
    return row[0], row[1], row[2]


def get_for_agent(session: Session, run_id: uuid.UUID, agent_id: uuid.UUID) -> Run | None:
    return session.scalar(select(Run).where(Run.id == run_id, Run.agent_id == agent_id).with_for_update())


def queued_locked(session: Session, run_id: uuid.UUID) -> Run | None:
    """The run while it is queued, locked (skipping one another dispatcher holds). A run past queued
    is neither returned nor locked: the agent's look takes its assigned run with SKIP LOCKED
    (`assigned_to`), so a second dispatch of an assigned run (its own `run.dispatch` after
    `run.dispatch_pending` assigned it, or the reverse) holding the row at that moment made the
    woken look miss it until the long-poll's periodic re-check, ~5 s later (bench/load's trace)."""
    return session.scalar(
        select(Run).where(Run.id == run_id, Run.status == RunStatus.queued).with_for_update(skip_locked=True)
    )


@dataclass(frozen=True)
class RunFilter:
    """What GET /runs narrows to; None or empty: any. Text words must each match the run's name, its
    device's name or model, its workload's name, its agent's name or one of its tags (ILIKE)."""

    statuses: tuple[RunStatus, ...] = ()
    agent_id: uuid.UUID | None = None
    device_id: uuid.UUID | None = None
    environment_id: uuid.UUID | None = None
    workload_id: uuid.UUID | None = None
    campaign_id: uuid.UUID | None = None
    source: str | None = None
    tags: tuple[str, ...] = ()  # every one of them
    created_from: datetime | None = None  # inclusive
    created_to: datetime | None = None  # exclusive
    text: str | None = None
    # FIELD:VALUE filters on the recorded environment (ADR 0035), judged by the service against the
    # teams' snapshots: `env_snapshots` the matching ones (without their recording time), and
    # `env_none` whether runs without an environment match
    env: tuple[tuple[str, str], ...] = ()
    env_snapshots: tuple[dict[str, Any], ...] = ()
    env_none: bool = False


def _like(word: str) -> str:
    return "%" + word.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


# q=: a word's matches among the caller's devices, workloads and agents (small tables) and among
# the tags are read first as id lists of at most TEXT_IDS, so the word's condition on runs is an OR
# of indexable parts: the names' trigram index (migration 0024), runs by device, workload and agent,
# by id for the tags. PostgreSQL then ORs those index scans when few runs match (a rare word read
# every run of the teams in the list's order: docs/benchmarks.md § A million runs) and still walks
# the list's order when many do (a literal list is a hashed lookup per row). A longer list stays a
# subquery, as before.
TEXT_IDS = 1_000


def _text_arms(session: Session, team_ids: list[uuid.UUID], word: str) -> list[ColumnElement[bool]]:
    """The ways a run matches `word`, any one of them: each id list (an index read of runs), each
    subquery of a list past TEXT_IDS (a join from its own index), then the name (a walk of the teams'
    runs). The bounded count reads them in this order and stops at its bound (`page`): the walk last,
    where it stops soonest, or where every other match is already counted."""
    pattern = _like(word)

    def like(column: Any) -> ColumnElement[bool]:
        return column.ilike(pattern, escape="\\")  # type: ignore[no-any-return]

    def few(q: Any) -> list[uuid.UUID] | None:
        found = list(session.scalars(q.limit(TEXT_IDS + 1)))
        return None if len(found) > TEXT_IDS else found

    device_match = or_(like(Device.name), like(Device.facts["model"].astext))
    parts: list[tuple[ColumnElement[bool], list[uuid.UUID] | None, Any]] = [
        (
            exists().where(Device.id == Run.device_id, device_match),
            few(select(Device.id).where(Device.team_id.in_(team_ids), device_match)),
            Run.device_id,
        ),
        (
            exists().where(Workload.id == Run.workload_id, like(Workload.name)),
            few(
                select(Workload.id).where(
                    or_(Workload.team_id.is_(None), Workload.team_id.in_(team_ids)), like(Workload.name)
                )
            ),
            Run.workload_id,
        ),
        (
            exists().where(Agent.id == Run.agent_id, like(Agent.name)),
            few(select(Agent.id).where(Agent.team_id.in_(team_ids), like(Agent.name))),
            Run.agent_id,
        ),
        (
            exists().where(RunTag.run_id == Run.id, like(RunTag.tag)),
            few(select(RunTag.run_id).where(like(RunTag.tag))),
            Run.id,
        ),
    ]
    listed = [column.in_(ids) for _, ids, column in parts if ids]
    return [*listed, *(subquery for subquery, ids, _ in parts if ids is None), like(Run.name)]


def _conditions(
    session: Session, team_ids: list[uuid.UUID], f: RunFilter
) -> tuple[list[ColumnElement[bool]], list[ColumnElement[bool]]]:
    """The filter's conditions on runs but for the first word of `text`, and that word's arms (any
    one of them matches; none without a word)."""
    conds: list[ColumnElement[bool]] = [Run.team_id.in_(team_ids)]
    if f.statuses:
        conds.append(Run.status.in_(f.statuses))
    for column in ("agent_id", "environment_id", "workload_id", "campaign_id", "source"):
        value = getattr(f, column)
        if value is not None:
            conds.append(getattr(Run, column) == value)
    if f.device_id is not None:  # a multi-target run's any target, not only its first
        # the ids of both, as one set (an OR with an EXISTS read every run of the teams: 1 s at a
        # million runs; docs/benchmarks.md § A million runs)
        conds.append(
            Run.id.in_(
                union(
                    select(Run.id).where(Run.device_id == f.device_id),
                    select(RunTarget.run_id).where(RunTarget.device_id == f.device_id),
                )
            )
        )
    conds += [exists().where(RunTag.run_id == Run.id, RunTag.tag == tag) for tag in f.tags]
    if f.created_from is not None:
        conds.append(Run.created_at >= f.created_from)
    if f.created_to is not None:
        conds.append(Run.created_at < f.created_to)
    if f.env:
        conds.append(_snapshot_in(f.env_snapshots, f.env_none))
    words = [_text_arms(session, team_ids, word) for word in (f.text or "").split()]
    conds += [or_(*arms) for arms in words[1:]]
    return conds, words[0] if words else []


def _snapshot_without_time() -> ColumnElement[Any]:
    """A run's environment snapshot without `recorded_at`: the same document for every run recorded
    from one version of an environment."""
    snap = Run.environment_snapshot
    return case((_recorded(), snap.op("-", return_type=JSONB)(cast("recorded_at", Text))), else_=null())


def _recorded() -> ColumnElement[bool]:
    """The run recorded an environment (an object; a run without one holds SQL or JSON null)."""
    return func.jsonb_typeof(Run.environment_snapshot) == "object"


def _snapshot_in(snapshots: tuple[dict[str, Any], ...], none: bool) -> ColumnElement[bool]:
    conds: list[ColumnElement[bool]] = []
    if snapshots:
        conds.append(_snapshot_without_time().in_(list(snapshots)))
    if none:
        conds.append(or_(Run.environment_snapshot.is_(None), ~_recorded()))
    return or_(*conds) if conds else false()


def environment_snapshots(session: Session, team_ids: list[uuid.UUID]) -> list[dict[str, Any]]:
    """The teams' runs' distinct environment snapshots, without their recording time (one per
    environment as it was when runs were recorded): what an environment filter is judged on."""
    q = select(_snapshot_without_time()).where(Run.team_id.in_(team_ids), _recorded()).distinct()
    return [d for d in session.scalars(q) if isinstance(d, dict)]


_SORTS = {"created": Run.created_at, "name": Run.name, "status": Run.status}


# GET /runs counts the matches only up to offset + TOTAL_CAP: an exact count of a broad filter reads
# a large part of a million runs (0.1-2.5 s); the bound keeps it to a few thousand index entries
# (docs/benchmarks.md § A million runs)
TOTAL_CAP = 1_000


def page(
    session: Session,
    team_ids: list[uuid.UUID],
    *,
    filters: RunFilter,
    sort: str = "-created",
    limit: int,
    offset: int,
) -> tuple[list[Run], int, bool]:
    """A page of the runs matching `filters` in `sort` order ("-" first: descending; ties newest
    first), how many match counted up to offset + TOTAL_CAP, and whether that count is exact (false:
    more match)."""
    conds, arms = _conditions(session, team_ids, filters)
    matching = [*conds, or_(*arms)] if arms else conds
    column = _SORTS[sort.lstrip("-")]
    order: list[ColumnElement[Any]] = [column.desc() if sort.startswith("-") else column.asc()]
    if column is not Run.created_at:
        order.append(Run.created_at.desc())
    rows = _with_shared_specs(
        session,
        list(
            session.scalars(
                select(Run)
                .options(defer(Run.workload_spec))
                .where(*matching)
                .order_by(*order, Run.id)
                .limit(limit)
                .offset(offset)
            )
        ),
    )
    if len(rows) < limit and (rows or offset == 0):  # the last page: the count is known
        return rows, offset + len(rows), True
    cap = offset + TOTAL_CAP
    if len(arms) > 1:
        # a word's matches counted arm by arm, each run in the first arm it matches (IS NOT TRUE: an
        # arm that is NULL for a run, a device id of none, did not match it), read one after another
        # until the bound: a host's name is in its runs' names, and its runs by agent are an index
        # read, where the names' ILIKE walked ~52,000 runs for 1,001 matches (docs/benchmarks.md §
        # The runs list at a million runs (session 25))
        # (each arm limited too: PostgreSQL plans a UNION ALL's parts for all their rows, a bitmap
        # of 190,000 runs for a common device name, and plans a limited part to start fast)
        parts = [
            select(Run.id)
            .where(*conds, arm, *([or_(*arms[:i]).is_not(true())] if i else []))
            .limit(cap + 1)
            .subquery()
            for i, arm in enumerate(arms)
        ]
        matches = union_all(*(select(p.c.id) for p in parts)).limit(cap + 1).subquery()
    else:
        matches = select(Run.id).where(*matching).limit(cap + 1).subquery()
    n = session.scalar(select(func.count()).select_from(matches)) or 0
    return rows, min(n, cap), n <= cap


def _with_shared_specs(session: Session, runs: list[Run]) -> list[Run]:
    """The runs, each given its workload spec read as text (by id: in the page's statement the cast
    was made for every row PostgreSQL sorted, 1,900 for one device's page) and parsed once per
    distinct text: a page's runs mostly share a preset's spec (a CrystalDiskMark run's is 19 KB of
    JSON), which psycopg parsed per row and to_read then keyed by its repr per run, ~0.4 ms a run.
    Runs with one text share one dict: read-only, as a list's runs are (docs/benchmarks.md § The runs
    list at a million runs (session 25))."""
    if not runs:
        return runs
    texts = session.execute(
        select(Run.id, cast(Run.workload_spec, Text)).where(Run.id.in_([r.id for r in runs]))
    ).tuples()
    text_of = {run_id: text for run_id, text in texts}
    docs: dict[str, Any] = {}
    for run in runs:
        text = text_of[run.id]
        doc = docs.get(text)
        if doc is None:
            doc = docs[text] = json.loads(text)
        set_committed_value(run, "workload_spec", doc)
    return runs


def by_ids(session: Session, run_ids: list[uuid.UUID], team_ids: list[uuid.UUID]) -> list[Run]:
    return list(
        session.scalars(
            select(Run).where(Run.id.in_(run_ids), Run.team_id.in_(team_ids)).options(selectinload(Run.agent))
        )
    )


def jobs_of(session: Session, run_ids: list[uuid.UUID]) -> dict[uuid.UUID, list[ResultJob]]:
    out: dict[uuid.UUID, list[ResultJob]] = {rid: [] for rid in run_ids}
    if not run_ids:
        return out
    for job in session.scalars(
        select(ResultJob).where(ResultJob.run_id.in_(run_ids)).order_by(ResultJob.job_index)
    ):
        out[job.run_id].append(job)
    return out


def job_rows(
    session: Session, run_ids: list[uuid.UUID], columns: tuple[str, ...]
) -> dict[uuid.UUID, list[Sequence[Any]]]:
    """The runs' result_jobs `columns` as plain rows, each run's in job order, each row holding the
    run's id after `columns`: a Core statement on the table's columns, so no ORM object per job (a
    list's 1,720 jobs: ~6 ms of CPU against ~25 as ResultJob objects, ~12 as rows of ResultJob's ORM
    attributes)."""
    out: dict[uuid.UUID, list[Sequence[Any]]] = {rid: [] for rid in run_ids}
    if not run_ids:
        return out
    t = ResultJob.__table__.c
    rows = session.execute(
        select(*(t[c] for c in columns), t.run_id)
        .where(t.run_id.in_(run_ids))
        .order_by(t.run_id, t.job_index)
    )
    for row in rows:
        out[row[-1]].append(row)
    return out


def device_names(session: Session, device_ids: list[uuid.UUID]) -> dict[uuid.UUID, str]:
    if not device_ids:
        return {}
    rows = session.execute(select(Device.id, Device.name).where(Device.id.in_(device_ids)))
    return {device_id: name for device_id, name in rows}


def queued_ids(session: Session, limit: int = 200) -> list[uuid.UUID]:
    return list(
        session.scalars(
            select(Run.id).where(Run.status == RunStatus.queued).order_by(Run.created_at).limit(limit)
        )
    )


def _any_active(session: Session, cond: ColumnElement[bool]) -> bool:
    q = select(Run.id).where(cond, Run.status.in_(ACTIVE_STATUSES)).limit(1)
    return session.scalar(q) is not None


def agent_busy(session: Session, agent_id: uuid.UUID) -> bool:
    return _any_active(session, Run.agent_id == agent_id)


def device_busy(session: Session, device_ids: list[uuid.UUID]) -> bool:
    """One of the devices is held by an active run: as its own device, or as a device one of a
    multi-target run's targets holds (run_targets.held)."""
    if _any_active(session, Run.device_id.in_(device_ids)):
        return True
    q = select(RunTarget.run_id).where(RunTarget.device_id.in_(device_ids), RunTarget.held).limit(1)
    return session.scalar(q) is not None


def targets_of(session: Session, run_ids: list[uuid.UUID]) -> dict[uuid.UUID, list[RunTarget]]:
    """The targets of multi-target runs by run (in order); a single-target run has none."""
    out: dict[uuid.UUID, list[RunTarget]] = {rid: [] for rid in run_ids}
    if not run_ids:
        return out
    q = (
        select(RunTarget)
        .where(RunTarget.run_id.in_(run_ids))
        .order_by(RunTarget.target_index)
        .options(defer(RunTarget.engine_result))  # read whole only by GET /runs/{id}/result?target=
    )
    for t in session.scalars(q):
        out[t.run_id].append(t)
    return out


def stale_leases(session: Session, now: datetime, limit: int = 200) -> list[Run]:
    return list(
        session.scalars(
            select(Run)
            .where(Run.status.in_(ACTIVE_STATUSES), Run.lease_expires_at < now)
            .order_by(Run.lease_expires_at)
            .limit(limit)
            .with_for_update(skip_locked=True)
        )
    )


def unfinished_of_agent(session: Session, agent_id: uuid.UUID) -> list[Run]:
    return list(
        session.scalars(
            select(Run)
            .where(Run.agent_id == agent_id, Run.status.in_((RunStatus.queued, *ACTIVE_STATUSES)))
            .with_for_update()
        )
    )


def running_of_agent(session: Session, agent_id: uuid.UUID, *, started_before: datetime) -> list[Run]:
    """The agent's running runs started before `started_before`, locked (skipping a row another
    transaction holds: a run being reported right now is not lost)."""
    return list(
        session.scalars(
            select(Run)
            .where(
                Run.agent_id == agent_id,
                Run.status == RunStatus.running,
                Run.started_at < started_before,
            )
            .with_for_update(skip_locked=True)
        )
    )


def held_by_agent(
    session: Session, agent_id: uuid.UUID, *, started_before: datetime
) -> list[tuple[Run, list[str] | None]]:
    """`running_of_agent` and the agent's assigned runs (`assigned_to`'s, oldest first), locked in
    one statement skipping rows another transaction holds, each with its targets' paths in order
    (None: one target): what the look of an agent that holds runs reads, in one statement instead
    of three (docs/benchmarks.md § Session 28)."""
    paths = (
        select(func.array_agg(aggregate_order_by(RunTarget.target_path, RunTarget.target_index)))
        .where(RunTarget.run_id == Run.id)
        .scalar_subquery()
    )
    rows = session.execute(
        select(Run, paths)
        .where(
            Run.agent_id == agent_id,
            or_(
                Run.status == RunStatus.assigned,
                (Run.status == RunStatus.running) & (Run.started_at < started_before),
            ),
        )
        .order_by(Run.assigned_at)
        .with_for_update(of=Run, skip_locked=True)
    )
    return [(run, list(p) if p else None) for run, p in rows.tuples()]


def assigned_to(session: Session, agent_id: uuid.UUID) -> Run | None:
    """The run waiting for this agent to pick it up (locked so two polls cannot both take it)."""
    return session.scalar(
        select(Run)
        .where(Run.agent_id == agent_id, Run.status == RunStatus.assigned)
        .order_by(Run.assigned_at)
        .limit(1)
        .with_for_update(skip_locked=True)
    )


def agent_names(session: Session, agent_ids: set[uuid.UUID]) -> dict[uuid.UUID, str]:
    """The agents' names, not their rows: a row carries the host's inventory (a real host's is ~9 KB
    of JSON, parsed for each agent of a runs page that only names it)."""
    if not agent_ids:
        return {}
    return dict(session.execute(select(Agent.id, Agent.name).where(Agent.id.in_(agent_ids))).tuples().all())


def agents_by_id(session: Session, agent_ids: set[uuid.UUID]) -> dict[uuid.UUID, Agent]:
    if not agent_ids:
        return {}
    return {a.id: a for a in session.scalars(select(Agent).where(Agent.id.in_(agent_ids)))}


def lock_agent(session: Session, agent_id: uuid.UUID) -> Agent | None:
    """The run's agent, locked: the dispatcher checks it is online, idle and not revoked."""
    return session.get(Agent, agent_id, with_for_update=True)


def device(session: Session, device_id: uuid.UUID | None) -> Device | None:
    return session.get(Device, device_id) if device_id else None


# --- tags ---------------------------------------------------------------------------------------


def tags_of(session: Session, run_ids: list[uuid.UUID]) -> dict[uuid.UUID, list[str]]:
    out: dict[uuid.UUID, list[str]] = {rid: [] for rid in run_ids}
    if run_ids:
        rows = session.execute(
            select(RunTag.run_id, RunTag.tag).where(RunTag.run_id.in_(run_ids)).order_by(RunTag.tag)
        )
        for run_id, tag in rows:
            out[run_id].append(tag)
    return out


def set_tags(session: Session, run_id: uuid.UUID, tags: list[str]) -> None:
    """The run carries exactly `tags` (kept ones keep their created_at)."""
    session.execute(delete(RunTag).where(RunTag.run_id == run_id, RunTag.tag.not_in(tags)))
    add_tags(session, run_id, tags)


def add_tags(session: Session, run_id: uuid.UUID, tags: list[str]) -> None:
    """The run also carries `tags` (a new run: it has none to drop)."""
    if tags:
        session.execute(
            insert(RunTag).values([{"run_id": run_id, "tag": t} for t in tags]).on_conflict_do_nothing()
        )


def team_tags(session: Session, team_ids: list[uuid.UUID], limit: int = 500) -> list[tuple[str, int]]:
    """The teams' tags with how many runs carry each, most used first."""
    n = func.count().label("n")
    rows = session.execute(
        select(RunTag.tag, n)
        .join(Run, Run.id == RunTag.run_id)
        .where(Run.team_id.in_(team_ids))
        .group_by(RunTag.tag)
        .order_by(n.desc(), RunTag.tag)
        .limit(limit)
    )
    return [(tag, count) for tag, count in rows]


# --- group runs ---------------------------------------------------------------------------------


def group(
    session: Session, group_id: uuid.UUID, *, lock: bool = False, skip_locked: bool = False
) -> RunGroup | None:
    """A group run's row. Locked rows: after the member runs a transaction holds (the dispatcher,
    which never waits, takes it first with skip_locked)."""
    q = select(RunGroup).where(RunGroup.id == group_id)
    if lock or skip_locked:
        q = q.with_for_update(skip_locked=skip_locked)
    return session.scalar(q.execution_options(populate_existing=True))


def groups_by_id(session: Session, group_ids: set[uuid.UUID]) -> dict[uuid.UUID, RunGroup]:
    if not group_ids:
        return {}
    return {g.id: g for g in session.scalars(select(RunGroup).where(RunGroup.id.in_(group_ids)))}


def group_sizes(session: Session, group_ids: set[uuid.UUID]) -> dict[uuid.UUID, int]:
    if not group_ids:
        return {}
    q = select(Run.group_id, func.count()).where(Run.group_id.in_(group_ids)).group_by(Run.group_id)
    return {gid: n for gid, n in session.execute(q).tuples() if gid is not None}


def group_members(session: Session, group_id: uuid.UUID, *, skip_locked: bool = False) -> list[Run]:
    """The members in id order; with skip_locked, those no other transaction holds (locked)."""
    q = select(Run).where(Run.group_id == group_id).order_by(Run.id)
    if skip_locked:
        q = q.with_for_update(skip_locked=True)
    return list(session.scalars(q.execution_options(populate_existing=True)))


def count_group_members(session: Session, group_id: uuid.UUID) -> int:
    return session.scalar(select(func.count()).select_from(Run).where(Run.group_id == group_id)) or 0


def lock_agents_skip(session: Session, agent_ids: list[uuid.UUID]) -> list[Agent]:
    """The agents no other transaction holds, locked, in id order."""
    q = select(Agent).where(Agent.id.in_(agent_ids)).order_by(Agent.id).with_for_update(skip_locked=True)
    return list(session.scalars(q))


def stop_group(session: Session, group_id: uuid.UUID, reason: str) -> None:
    """The group's first stop reason (a later one never replaces it)."""
    session.execute(
        update(RunGroup)
        .where(RunGroup.id == group_id, RunGroup.stop_reason.is_(None))
        .values(stop_reason=reason[:4000])
        .execution_options(synchronize_session=False)
    )


def mark_unsynchronized(session: Session, group_id: uuid.UUID) -> None:
    session.execute(
        update(RunGroup)
        .where(RunGroup.id == group_id, RunGroup.unsynchronized.is_(False))
        .values(unsynchronized=True)
        .execution_options(synchronize_session=False)
    )
