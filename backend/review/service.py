"""Procurement reviews: create, edit, rank, decide, version, export.

Roles (docs/adr/0024-procurement-reviews.md): any role of the team reads a review; members and
admins create, edit, comment and start a new version; only admins decide. A decision freezes the
review: every computed figure is kept in `decided_snapshot` (a linked run deleted or recomputed
later does not change what was decided on), and edits answer 409 naming the new-version route.
Performance and power of a linked run are read from the run domain (its job summary, energy and
validity flags), never recomputed here."""

import dataclasses
import io
import uuid
from dataclasses import dataclass, replace
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

import iowatt_energy as ie
from sqlalchemy.orm import Session

from backend.audit import service as audit
from backend.auth.principal import UserPrincipal
from backend.carbon import service as carbon
from backend.environment import repository as environment_repo
from backend.errors import Conflict, Invalid, NotFound
from backend.kit import numbers
from backend.kit.csv import writer
from backend.kit.time import utcnow
from backend.models import Device, Role, User
from backend.models.review import Review, ReviewCandidate, ReviewComment
from backend.pts import service as pts_service
from backend.result import service as result_service
from backend.review import compute, formulas, repository
from backend.review.currency import minor_units
from backend.review.schemas import (
    CandidateCreate,
    CandidateRead,
    CandidateUpdate,
    Decision,
    DecisionCreate,
    Discrepancy,
    FormulaRead,
    JobCrossover,
    JobEnergy,
    RankRow,
    ReviewCommentCreate,
    ReviewCommentRead,
    ReviewCreate,
    ReviewRead,
    ReviewSummary,
    ReviewUpdate,
    ReviewValidityFlagName,
    SensitivityRow,
    TcoParts,
    ValidityNote,
)
from backend.run import service as run_service
from backend.views.builders import qos

CSV_COLUMNS = (
    "candidate", "drives", "protection", "raw_bytes", "usable_bytes", "price_total",
    "cost_per_iops_single", "cost_per_iops_set", "cost_per_gb_raw", "cost_per_gb_usable",
    "protection_overhead", "energy_kwh_per_year", "tco", "co2e_kg_lifetime",
    "currency", "gb_bytes", "performance_metric", "performance_value", "performance_source",
    "power_source", "iops_per_w", "mb_s_per_w", "energy_cost_per_year", "replacements", "embodied_kg",
    "rank", "score", "cost_per_gb_usable_per_iops",
)  # fmt: skip
# the figures a report's own numbers can be checked against (CandidateCreate.reported)
REPORTABLE = (
    "price_total", "cost_per_iops_single", "cost_per_iops_set", "cost_per_gb_raw", "cost_per_gb_usable",
    "protection_overhead", "energy_kwh_per_year", "tco", "co2e_kg_lifetime", "raw_bytes", "usable_bytes",
    "cost_per_gb_usable_per_iops",
)  # fmt: skip


# the ranking and its sensitivity scans re-rank every candidate a few hundred times per read
MAX_CANDIDATES = 50
# a linked run's energy status other than ok, as the candidate's validity flag
ENERGY_FLAGS: dict[str, ReviewValidityFlagName] = {
    "pending": "energy_pending",
    "failed": "energy_failed",
    "no_meter_data": "energy_no_meter_data",
    "none": "energy_none",
}
# said after a measured power reference when the run had no idle baseline
NO_IDLE_NOTE = " (no idle baseline: idle taken as load)"


def _plain(value: Decimal) -> Decimal:
    """`value` without trailing zeros and never in exponent form: 250.00 -> 250 (normalize() alone
    gives 2.5E+2, which the wire would carry as the string "2.5E+2")."""
    return Decimal(format(value.normalize(), "f")) if value else Decimal(0)


def _conflict_decided(review: Review) -> Conflict:
    return Conflict(
        "this review is decided and frozen: start a new version to change it",
        code="review_decided",
        detail={"new_version": f"/api/v1/reviews/{review.id}/versions", "method": "POST"},
    )


def get(session: Session, *, principal: UserPrincipal, review_id: uuid.UUID, lock: bool = False) -> Review:
    review = repository.get(session, review_id, principal.team_ids, lock=lock)
    if review is None:
        raise NotFound("review not found")
    return review


def _editable(session: Session, principal: UserPrincipal, review_id: uuid.UUID) -> Review:
    review = get(session, principal=principal, review_id=review_id, lock=True)
    principal.require(review.team_id, Role.member)
    if review.decided_at is not None:
        raise _conflict_decided(review)
    return review


# --- reviews ---------------------------------------------------------------------------------------


def create(session: Session, *, principal: UserPrincipal, body: ReviewCreate) -> Review:
    principal.require(body.team_id, Role.member)
    tariff, tariff_source = body.tariff_per_kwh, body.tariff_source
    grid, grid_source, pue = body.grid_g_per_kwh, body.grid_source, body.pue
    env = None
    if body.environment_id is not None:
        env = environment_repo.get(session, body.environment_id)
        if env is None or env.team_id != body.team_id:
            raise Invalid("environment_id", "no such environment in this team")
        ctx = carbon.context_for(session, env.id, (utcnow(), utcnow()))
        if grid is None:
            grid, grid_source = Decimal(str(ctx.g_per_kwh)), f"environment {env.name}: {ctx.source}"
        if pue is None:
            pue = Decimal(str(env.pue))
        if tariff is None and env.electricity_price_per_kwh is not None:
            if env.currency != body.currency:
                raise Invalid(
                    "tariff_per_kwh",
                    f"environment {env.name}'s price is in {env.currency}, the review in {body.currency}: "
                    "give the tariff in the review's currency",
                )
            tariff = Decimal(str(env.electricity_price_per_kwh))
            tariff_source = f"environment {env.name}"
    if tariff is None:
        raise Invalid("tariff_per_kwh", "required: give the price per kWh or an environment that has one")
    if grid is None:
        d = ie.grid_intensity(ie.DEFAULT_REGION)
        grid, grid_source = Decimal(str(d.g_per_kwh)), f"{d.name} {d.year}: {d.source} (no environment set)"
    review = Review(
        team_id=body.team_id,
        name=body.name,
        question=body.question,
        currency=body.currency,
        horizon_years=body.horizon_years,
        duty_cycle=body.duty_cycle,
        tariff_per_kwh=tariff,
        tariff_source=tariff_source or "set by the team",
        grid_g_per_kwh=grid,
        grid_source=grid_source or "set by the team",
        pue=pue if pue is not None else Decimal(1),
        environment_id=env.id if env else None,
        weights={k: str(v) for k, v in (body.weights or compute.DEFAULT_WEIGHTS).items()},
        version=1,
        created_by=principal.user_id,
    )
    _check_weights(review.weights)
    repository.add(session, review)
    audit.record(
        session,
        team_id=review.team_id,
        action="review.created",
        target_kind="review",
        target_id=review.id,
        user_id=principal.user_id,
        details={"name": review.name},
    )
    return review


def _check_weights(weights: dict[str, Any]) -> None:
    if not any(Decimal(v) > 0 for v in weights.values()):
        raise Invalid("weights", "at least one criterion needs a weight above 0")


def page(
    session: Session, *, principal: UserPrincipal, team_id: uuid.UUID | None, limit: int, offset: int
) -> tuple[list[ReviewSummary], int]:
    rows, total = repository.page(session, principal.teams_for(team_id), limit=limit, offset=offset)
    return [
        ReviewSummary(
            id=r.id,
            team_id=r.team_id,
            name=r.name,
            currency=r.currency,
            version=r.version,
            parent_id=r.parent_id,
            candidates=n,
            decided_at=r.decided_at,
            created_at=r.created_at,
        )
        for r, n in rows
    ], total


def update(session: Session, *, principal: UserPrincipal, review_id: uuid.UUID, body: ReviewUpdate) -> Review:
    review = _editable(session, principal, review_id)
    values = body.model_dump(exclude_unset=True)
    for field, value in values.items():
        if value is None:
            raise Invalid(field, "cannot be null")
        if field == "weights":
            value = {k: str(v) for k, v in value.items()}
            _check_weights(value)
        setattr(review, field, value)
    review.updated_at = utcnow()
    session.flush()
    return review


# --- candidates ------------------------------------------------------------------------------------


def _protection(protection: str, count: int, hot_spares: int) -> formulas.Protection:
    try:
        p = formulas.parse_protection(protection)
        formulas.check_protection(p, count, hot_spares)
    except formulas.ProtectionError as e:
        raise Invalid(e.field, str(e)) from None
    return p


def _check_run(session: Session, principal: UserPrincipal, team_id: uuid.UUID, perf: dict[str, Any]) -> None:
    if perf["source"] == "published":
        return
    ids = [perf["run_id"], *perf.get("run_ids", [])]
    for rid in ids:
        try:
            run = run_service.get(session, principal=principal, run_id=uuid.UUID(str(rid)))
        except NotFound:
            run = None
        if run is None or run.team_id != team_id:
            raise Invalid("performance.run_id", f"no run {rid} in the review's team")
    if perf["source"] == "comparison" and perf["run_id"] not in perf["run_ids"]:
        raise Invalid("performance.run_id", "the candidate's run must be one of the comparison's run_ids")


def _check_reported(reported: dict[str, Any]) -> None:
    for key in reported:
        if key not in REPORTABLE:
            raise Invalid(
                f"reported.{key}", f"not a figure that can be checked; one of {', '.join(REPORTABLE)}"
            )


def _device_embodied(session: Session, c: ReviewCandidate, media: str | None) -> None:
    """Embodied carbon from the body, else the linked device's, else the media's default."""
    if c.embodied_kg_per_drive is not None:
        return
    if c.device_id is not None:
        got = carbon.device_embodied(session.get(Device, c.device_id))
        if got is not None:
            c.embodied_kg_per_drive = Decimal(str(round(got[0], 3)))
            c.embodied_source = f"device: {got[1]}"
            return
    if media is not None:
        try:
            kg, d = ie.embodied_kg(media=media, capacity_bytes=c.capacity_bytes)
        except ValueError:
            return
        c.embodied_kg_per_drive = Decimal(str(round(kg, 3)))
        c.embodied_source = f"default for {media}: {d.source}"


def _apply(
    session: Session, principal: UserPrincipal, review: Review, c: ReviewCandidate, data: dict[str, Any]
) -> None:
    if "device" in data:
        d = data["device"]
        if d.get("device_id") is not None:
            dev = session.get(Device, d["device_id"])
            if dev is None or dev.team_id != review.team_id:
                raise Invalid("device.device_id", "no such device in the review's team")
        c.model = d["model"]
        c.capacity_bytes = d["capacity_bytes"]
        c.unit_price = d["unit_price"]
        c.afr = d.get("afr", Decimal(0))
        c.device_id = d.get("device_id")
        c.embodied_kg_per_drive = d.get("embodied_kg")
        c.embodied_source = d.get("embodied_source") or (
            "set by the team" if d.get("embodied_kg") is not None else None
        )
        _device_embodied(session, c, d.get("media"))
    for field in ("name", "count", "protection", "hot_spares", "over_provisioning"):
        if field in data:
            setattr(c, field, data[field])
    if "performance" in data:
        _check_run(session, principal, review.team_id, data["performance"])
        c.performance = data["performance"]
    if "power" in data:
        c.power = data["power"]
    if "job_points" in data:
        c.job_points = data["job_points"]
    if "reported" in data:
        _check_reported(data["reported"])
        c.reported = data["reported"]
    p = _protection(c.protection, c.count, c.hot_spares)
    c.protection = p.label


def add_candidate(
    session: Session, *, principal: UserPrincipal, review_id: uuid.UUID, body: CandidateCreate
) -> ReviewCandidate:
    review = _editable(session, principal, review_id)
    if len(repository.candidates(session, review.id)) >= MAX_CANDIDATES:
        raise Conflict(
            f"a review holds at most {MAX_CANDIDATES} candidates: remove one or start another review",
            code="too_many_candidates",
        )
    c = ReviewCandidate(review_id=review.id, position=repository.next_position(session, review.id))
    c.hot_spares, c.over_provisioning = 0, Decimal(0)
    _apply(session, principal, review, c, body.model_dump(mode="json", exclude_unset=False) | _decimals(body))
    repository.add(session, c)
    review.updated_at = utcnow()
    return c


def _decimals(body: CandidateCreate | CandidateUpdate) -> dict[str, Any]:
    """The fields that are stored as NUMERIC columns, as Decimals (model_dump(mode="json") made them
    strings for the JSONB ones)."""
    out: dict[str, Any] = {}
    if body.device is not None:
        out["device"] = body.device.model_dump()
    if body.over_provisioning is not None:
        out["over_provisioning"] = body.over_provisioning
    return out


def update_candidate(
    session: Session,
    *,
    principal: UserPrincipal,
    review_id: uuid.UUID,
    candidate_id: uuid.UUID,
    body: CandidateUpdate,
) -> ReviewCandidate:
    review = _editable(session, principal, review_id)
    c = repository.candidate(session, review.id, candidate_id)
    if c is None:
        raise NotFound("candidate not found")
    data = body.model_dump(mode="json", exclude_unset=True)
    for field, value in data.items():
        if value is None and field not in ("power",):
            raise Invalid(field, "cannot be null")
    data |= {k: v for k, v in _decimals(body).items() if k in data}
    _apply(session, principal, review, c, data)
    review.updated_at = utcnow()
    session.flush()
    return c


def delete_candidate(
    session: Session, *, principal: UserPrincipal, review_id: uuid.UUID, candidate_id: uuid.UUID
) -> None:
    review = _editable(session, principal, review_id)
    c = repository.candidate(session, review.id, candidate_id)
    if c is None:
        raise NotFound("candidate not found")
    session.delete(c)
    review.updated_at = utcnow()
    session.flush()


# --- decision, versions, comments ---------------------------------------------------------------


def decide(
    session: Session, *, principal: UserPrincipal, review_id: uuid.UUID, body: DecisionCreate
) -> ReviewRead:
    review = get(session, principal=principal, review_id=review_id, lock=True)
    principal.require(review.team_id, Role.admin)
    if review.decided_at is not None:
        raise _conflict_decided(review)
    chosen = repository.candidate(session, review.id, body.candidate_id)
    if chosen is None:
        raise Invalid("candidate_id", "not a candidate of this review")
    user = session.get(User, principal.user_id)
    review.decided_at = utcnow()
    review.decided_by = principal.user_id
    review.decided_by_name = user.display_name if user else str(principal.user_id)
    review.decision_candidate_id = chosen.id
    review.decision_reason = body.reason
    read = _compute_read(session, principal, review)
    review.decided_snapshot = read.model_dump(mode="json")
    session.flush()
    audit.record(
        session,
        team_id=review.team_id,
        action="review.decided",
        target_kind="review",
        target_id=review.id,
        user_id=principal.user_id,
        details={"candidate": chosen.name, "candidate_id": str(chosen.id)},
    )
    return read


def new_version(session: Session, *, principal: UserPrincipal, review_id: uuid.UUID) -> Review:
    """A copy of the review (decided or not) with its candidates, undecided, version + 1."""
    old = get(session, principal=principal, review_id=review_id)
    principal.require(old.team_id, Role.member)
    copy = Review(
        **{
            k: getattr(old, k)
            for k in (
                "team_id",
                "name",
                "question",
                "currency",
                "horizon_years",
                "duty_cycle",
                "tariff_per_kwh",
                "tariff_source",
                "grid_g_per_kwh",
                "grid_source",
                "pue",
                "environment_id",
                "weights",
            )
        },  # fmt: skip
        version=old.version + 1,
        parent_id=old.id,
        created_by=principal.user_id,
    )
    repository.add(session, copy)
    for c in repository.candidates(session, old.id):
        session.add(
            ReviewCandidate(
                review_id=copy.id,
                **{
                    k: getattr(c, k)
                    for k in (
                        "position",
                        "name",
                        "model",
                        "capacity_bytes",
                        "unit_price",
                        "count",
                        "protection",
                        "hot_spares",
                        "over_provisioning",
                        "afr",
                        "embodied_kg_per_drive",
                        "embodied_source",
                        "device_id",
                        "performance",
                        "power",
                        "job_points",
                        "reported",
                    )
                },  # fmt: skip
            )
        )
    session.flush()
    audit.record(
        session,
        team_id=copy.team_id,
        action="review.versioned",
        target_kind="review",
        target_id=copy.id,
        user_id=principal.user_id,
        details={"from": str(old.id), "version": copy.version},
    )
    return copy


def comments(
    session: Session, *, principal: UserPrincipal, review_id: uuid.UUID, limit: int, offset: int
) -> tuple[list[ReviewCommentRead], int]:
    """One page of the discussion, oldest first, and the review's count of comments (any role)."""
    review = get(session, principal=principal, review_id=review_id)
    rows, total = repository.comments(session, review.id, limit=limit, offset=offset)
    return _comment_reads(session, rows), total


def latest_comments(
    session: Session, *, principal: UserPrincipal, review_id: uuid.UUID, limit: int
) -> tuple[list[ReviewCommentRead], int]:
    """The newest `limit` comments (oldest first) and the review's count of comments: what a PDF
    prints of the discussion (backend/review/report.py MAX_COMMENTS)."""
    review = get(session, principal=principal, review_id=review_id)
    rows, total = repository.latest_comments(session, review.id, limit)
    return _comment_reads(session, rows), total


def _comment_reads(session: Session, rows: list[ReviewComment]) -> list[ReviewCommentRead]:
    names = repository.names(session, {c.author_id for c in rows if c.author_id})
    return [
        ReviewCommentRead(
            id=c.id,
            review_id=c.review_id,
            author_id=c.author_id,
            author_name=names.get(c.author_id, "deleted user") if c.author_id else "deleted user",
            body=c.body,
            created_at=c.created_at,
        )
        for c in rows
    ]


def add_comment(
    session: Session, *, principal: UserPrincipal, review_id: uuid.UUID, body: ReviewCommentCreate
) -> ReviewCommentRead:
    """Members comment, on a decided review too (discussing a decision is not editing it)."""
    review = get(session, principal=principal, review_id=review_id)
    principal.require(review.team_id, Role.member)
    c = ReviewComment(review_id=review.id, author_id=principal.user_id, body=body.body)
    repository.add(session, c)
    session.refresh(c)  # created_at is the database's
    return _comment_reads(session, [c])[0]


# --- computing -------------------------------------------------------------------------------------


def read(session: Session, *, principal: UserPrincipal, review_id: uuid.UUID) -> ReviewRead:
    review = get(session, principal=principal, review_id=review_id)
    if review.decided_snapshot is not None:
        return ReviewRead.model_validate(review.decided_snapshot)
    return _compute_read(session, principal, review)


def candidate_read(
    session: Session, *, principal: UserPrincipal, review_id: uuid.UUID, candidate_id: uuid.UUID
) -> CandidateRead:
    """One candidate as the review shows it, without computing the rest of the review (its ranking
    and sensitivity scans grow with the number of candidates; adding or changing one needs neither)."""
    review = get(session, principal=principal, review_id=review_id)
    row = next((r for r in repository.candidates(session, review.id) if r.id == candidate_id), None)
    if row is None:
        raise NotFound("candidate not found")
    ((cand, prov),) = _inputs(session, principal, [row])
    ctx = _context(review)
    return _candidate_read(row, cand, prov, compute.figures(ctx, cand), ctx.minor_units)


def _dec(v: Any) -> Decimal | None:
    return None if v is None else Decimal(str(v))


@dataclass(frozen=True)
class MeasuredPower:
    """A linked run's power at idle and under load, and where it came from."""

    idle_w: Decimal | None
    load_w: Decimal | None
    source: str  # measured | estimated
    reference: str


@dataclass(frozen=True)
class RunInputs:
    """What a linked run gives a candidate (read from the run domain, never recomputed)."""

    performance: Decimal | None
    mb_s: Decimal | None
    validity: list[ValidityNote]
    power: MeasuredPower | None
    reference: str


@dataclass(frozen=True)
class Provenance:
    """Where a candidate's performance and power came from, as its read shows them."""

    source: str  # published | run
    metric: str
    reference: str
    run_id: uuid.UUID | None = None
    run_ids: list[uuid.UUID] = dataclasses.field(default_factory=list)
    validity: list[ValidityNote] = dataclasses.field(default_factory=list)
    power_source: str | None = None
    power_reference: str | None = None


def _run_inputs(session: Session, principal: UserPrincipal, perf: dict[str, Any]) -> RunInputs:
    """A linked run's performance, MB/s, validity, measured power and reference, read from the run
    domain (its job summary, energy and validity flags)."""
    rid = uuid.UUID(str(perf["run_id"]))
    try:
        run = run_service.get(session, principal=principal, run_id=rid)
    except NotFound:
        missing = ValidityNote(flag="run_missing", message=f"run {rid} no longer exists")
        return RunInputs(None, None, [missing], None, f"run {rid}")
    r = run_service.to_read(session, [run])[0]
    system = run_service.system(session, run=run)
    notes = [ValidityNote(flag=v.flag, message=v.message) for v in system.validity]
    ref = f"run {r.name} ({r.id})"
    mb_s: Decimal | None
    if perf.get("metric") == "iops_at_target":  # a QoS run's figure (docs/qos.md), not a job's
        stored = result_service.get_result(session, run=run)
        points, target = qos.points_from_document(stored.engine_result if stored is not None else {})
        fig = qos.figure(points, target) if target is not None else None
        if fig is None or target is None:
            why = "no latency-target search" if target is None else "no point under its target"
            notes.append(ValidityNote(flag="no_result", message=f"the run has {why} (a qos-* preset's run)"))
            return RunInputs(None, None, notes, None, ref)
        depth = f", QD {fig.depth}" if fig.depth is not None else ""
        ref = f"{ref}: IOPS at {target.label()} ({fig.name}{depth})"
        value, mb_s = Decimal(str(round(fig.iops, 6))), None
    else:
        idx = int(perf.get("job_index", 0))
        if idx >= len(r.jobs):
            no_job = f"the run has no job {idx} result ({r.status})"
            notes.append(ValidityNote(flag="no_result", message=no_job))
            return RunInputs(None, None, notes, None, ref)
        j = r.jobs[idx]
        iops = Decimal(str((j.read.iops if j.read else 0) + (j.write.iops if j.write else 0)))
        mb_s = Decimal((j.read.bw_bytes if j.read else 0) + (j.write.bw_bytes if j.write else 0)) / 10**6
        # procurement prefers steady-state figures (SNIA PTS): a steady run's element is its window's
        # average, not its last round's; a run on anything but a hard disk without one says so
        steady = pts_service.steady_element(session, r.pts, run.id, j.name)
        if steady is not None:
            iops = Decimal(str(steady.read_iops + steady.write_iops))
            mb_s = Decimal(str(steady.read_bw_bytes + steady.write_bw_bytes)) / 10**6
            assert r.pts is not None
            ref += (
                f": SNIA PTS steady-state average of rounds {r.pts.window_first_round}–"
                f"{r.pts.window_last_round} ({j.name})"
            )
        elif r.pts is None and system.media != "hdd":
            notes.append(
                ValidityNote(
                    flag="no_steady_state",
                    message="no steady-state figure: not a SNIA PTS run, so a fresh measurement (an "
                    "SSD's fresh-out-of-box speed) rather than the steady state procurement compares",
                )
            )
        value = mb_s if perf.get("metric") == "mb_s" else iops
    power = None
    e = r.energy
    if e.status == "ok" and e.load_w_mean is not None:
        power = MeasuredPower(
            idle_w=_dec(e.idle_w) if e.idle_w is not None else _dec(e.load_w_mean),
            load_w=_dec(e.load_w_mean),
            source="estimated" if e.estimated else "measured",
            reference=f"{ref}: {e.source or 'meter'}" + ("" if e.idle_w is not None else NO_IDLE_NOTE),
        )
    elif e.status != "ok":
        notes.append(ValidityNote(flag=ENERGY_FLAGS[e.status], message=e.reason or f"energy {e.status}"))
    return RunInputs(value if value > 0 else None, mb_s if mb_s and mb_s > 0 else None, notes, power, ref)


def _inputs(
    session: Session, principal: UserPrincipal, rows: list[ReviewCandidate]
) -> list[tuple[compute.Candidate, Provenance]]:
    out = []
    for c in rows:
        perf = c.performance
        idle = load = None
        if perf["source"] == "published":
            value, mb_s = _dec(perf["value"]), _dec(perf.get("mb_s"))
            prov = Provenance(source=perf["source"], metric=perf["metric"], reference=perf["reference"])
        else:
            linked = _run_inputs(session, principal, perf)
            value, mb_s = linked.performance, linked.mb_s
            prov = Provenance(
                source=perf["source"],
                metric=perf.get("metric", "iops"),
                reference=linked.reference,
                run_id=uuid.UUID(str(perf["run_id"])),
                run_ids=[uuid.UUID(str(x)) for x in perf.get("run_ids", [])],
                validity=linked.validity,
            )
            if linked.power is not None:
                idle, load = linked.power.idle_w, linked.power.load_w
                prov = replace(prov, power_source=linked.power.source, power_reference=linked.power.reference)
        if load is None and c.power:
            k = c.count if c.power["per"] == "drive" else 1
            idle, load = Decimal(str(c.power["idle_w"])) * k, Decimal(str(c.power["load_w"])) * k
            prov = replace(
                prov,
                power_source="estimated" if c.power.get("estimated") else "published",
                power_reference=c.power["reference"],
            )
        cand = compute.Candidate(
            id=c.id,
            name=c.name,
            unit_price=Decimal(c.unit_price),
            capacity_bytes=c.capacity_bytes,
            count=c.count,
            hot_spares=c.hot_spares,
            over_provisioning=Decimal(c.over_provisioning),
            protection=formulas.parse_protection(c.protection),
            afr=Decimal(c.afr),
            embodied_kg_per_drive=_dec(c.embodied_kg_per_drive),
            performance=value,
            metric=prov.metric,
            mb_s=mb_s,
            idle_w=idle,
            load_w=load,
            job_points=tuple(
                (p["label"], Decimal(str(p["runtime_s"])), Decimal(str(p["power_w"]))) for p in c.job_points
            ),
        )
        out.append((cand, prov))
    return out


def _printed_as(value: Decimal, rep: Decimal) -> bool:
    """Whether a report printing `rep` printed `value`: rounded to its digits, directly or after a
    first rounding to cents (Schulz's StorageIO lab report prints $2.0492 as $2.05 in one column and
    $2.1 in another; docs/sources.md)."""
    exp = rep.as_tuple().exponent
    if not isinstance(exp, int):
        return False
    places = Decimal(1).scaleb(exp)
    return rep in (
        value.quantize(places, ROUND_HALF_UP),
        value.quantize(Decimal("0.01"), ROUND_HALF_UP).quantize(places, ROUND_HALF_UP),
    )


def _discrepancies(reported: dict[str, Any], fig: compute.Figures) -> list[Discrepancy]:
    out = []
    for key, raw in reported.items():
        rep = Decimal(str(raw))
        computed = fig.get(key)
        if computed is None:
            out.append(
                Discrepancy(field=key, reported=rep, computed=None, message="not computable from the inputs")
            )
            continue
        exp = rep.as_tuple().exponent
        tol = Decimal(5).scaleb(int(exp) - 1) if isinstance(exp, int) else Decimal(0)
        if abs(computed - rep) <= tol:
            continue
        fine = key == "cost_per_gb_usable_per_iops"
        shown = formulas.fine_rate(computed) if fine else formulas.rate(computed)
        msg = f"the report gives {rep}, the formula {shown}"
        raw_gb = fig.cost_per_gb_raw
        if key == "cost_per_gb_usable" and raw_gb is not None and abs(raw_gb - rep) <= tol:
            msg += (
                ": the report's figure is the cost per raw GB — it ignores the protection "
                f"(usable is {fig.usable_bytes / 1e9:,.0f} GB of {fig.raw_bytes / 1e9:,.0f} GB raw)"
            )
        set_cost = fig.cost_per_iops_set
        if key == "cost_per_gb_usable_per_iops" and set_cost is not None and _printed_as(set_cost, rep):
            msg += (
                ": the report's figure is the set cost per IOPS/RPS (set price / performance), not divided "
                "by the usable GB"
            )
        out.append(Discrepancy(field=key, reported=rep, computed=shown, message=msg))
    return out


def _kg(v: Decimal | None) -> Decimal | None:
    """kg, kWh: to the thousandth."""
    return None if v is None else v.quantize(Decimal("0.001"))


def _rate(v: Decimal | None) -> Decimal | None:
    return None if v is None else formulas.rate(v)


def _context(review: Review) -> compute.Context:
    return compute.Context(
        horizon_years=Decimal(review.horizon_years),
        duty_cycle=Decimal(review.duty_cycle),
        tariff_per_kwh=Decimal(review.tariff_per_kwh),
        grid_g_per_kwh=Decimal(review.grid_g_per_kwh),
        pue=Decimal(review.pue),
        minor_units=minor_units(review.currency),
    )


def _candidate_read(
    row: ReviewCandidate, cand: compute.Candidate, prov: Provenance, fig: compute.Figures, minor: int
) -> CandidateRead:
    """One candidate's inputs as entered, where its performance and power came from, and its
    figures rounded for display (money to the currency's minor unit, rates to 4 significant places,
    energy and carbon to the thousandth)."""

    def money(v: Decimal) -> Decimal:
        return formulas.money(v, minor)

    return CandidateRead(
        id=row.id,
        position=row.position,
        name=row.name,
        model=row.model,
        capacity_bytes=row.capacity_bytes,
        unit_price=_plain(Decimal(row.unit_price)),
        count=row.count,
        hot_spares=row.hot_spares,
        over_provisioning=Decimal(row.over_provisioning),
        protection=row.protection,
        afr=Decimal(row.afr),
        device_id=row.device_id,
        performance_source=prov.source,
        performance_metric=prov.metric,
        performance_value=cand.performance,
        performance_reference=prov.reference,
        run_id=prov.run_id,
        run_ids=prov.run_ids,
        validity=prov.validity,
        mb_s=cand.mb_s,
        power_source=prov.power_source,
        power_reference=prov.power_reference,
        idle_w=cand.idle_w,
        load_w=cand.load_w,
        drives=row.count,
        data_drives=fig.data_drives,
        raw_bytes=fig.raw_bytes,
        usable_bytes=fig.usable_bytes,
        protection_overhead=Decimal(fig.protection_overhead or 0),
        price_total=money(Decimal(fig.price_total or 0)),
        cost_per_iops_single=_rate(fig.cost_per_iops_single),
        cost_per_iops_set=_rate(fig.cost_per_iops_set),
        cost_per_gb_raw=formulas.rate(Decimal(fig.cost_per_gb_raw or 0)),
        cost_per_gb_usable=_rate(fig.cost_per_gb_usable),
        cost_per_gb_usable_per_iops=None
        if fig.cost_per_gb_usable_per_iops is None
        else formulas.fine_rate(fig.cost_per_gb_usable_per_iops),
        iops_per_w=_rate(fig.iops_per_w),
        mb_s_per_w=_rate(fig.mb_s_per_w),
        energy_kwh_per_year=_kg(fig.energy_kwh_per_year),
        facility_kwh_per_year=_kg(fig.facility_kwh_per_year),
        energy_cost_per_year=None if fig.energy_cost_per_year is None else money(fig.energy_cost_per_year),
        operational_kg_per_year=_kg(fig.operational_kg_per_year),
        replacements=formulas.rate(Decimal(fig.replacements or 0)),
        embodied_kg=_kg(fig.embodied_kg),
        embodied_source=row.embodied_source,
        tco=money(Decimal(fig.tco or 0)),
        tco_parts=TcoParts(
            purchase=money(Decimal(fig.tco_purchase or 0)),
            energy=money(Decimal(fig.tco_energy or 0)),
            replacements=money(Decimal(fig.tco_replacements or 0)),
        ),
        co2e_kg_lifetime=_kg(fig.co2e_kg_lifetime),
        job_energy=[
            JobEnergy(label=lab, runtime_s=rt, power_w=pw, energy_j=formulas.energy_per_job_j(rt, pw))
            for lab, rt, pw in cand.job_points
        ],
        discrepancies=_discrepancies(row.reported or {}, fig),
    )


def _ranking(
    ctx: compute.Context, cands: list[compute.Candidate], weights: dict[str, Decimal]
) -> list[RankRow]:
    return [
        RankRow(
            rank=n + 1,
            candidate_id=cands[i].id,
            name=cands[i].name,
            score=formulas.rate(score),
            scores={k: formulas.rate(v) for k, v in scores.items()},
        )
        for n, (i, score, scores) in enumerate(compute.rank(ctx, cands, weights))
    ]


def _sensitivity(
    ctx: compute.Context, cands: list[compute.Candidate], weights: dict[str, Decimal]
) -> list[SensitivityRow]:
    return [
        SensitivityRow(
            parameter=s.parameter,
            base=s.base,
            low=s.low,
            high=s.high,
            flip_at=s.flip_at,
            new_leader=s.new_leader,
            message=s.message,
        )
        for s in compute.sensitivity(ctx, cands, weights)
    ]


def _crossover(cands: list[compute.Candidate]) -> JobCrossover | None:
    jc = compute.job_crossover(cands)
    if jc is None:
        return None
    labels, winners, cross = jc
    return JobCrossover(
        labels=labels,
        winners=winners,
        crossover=cross,
        message=(
            f"{winners[0]} uses the least energy per job up to {labels[labels.index(cross) - 1]}; "
            f"from {cross} on {winners[labels.index(cross)]} does"
            if cross
            else f"{winners[0]} uses the least energy per job at every level"
        ),
    )


def _decision(review: Review, rows: list[ReviewCandidate]) -> Decision | None:
    if review.decided_at is None or review.decision_candidate_id is None:
        return None
    return Decision(
        candidate_id=review.decision_candidate_id,
        candidate_name=next((c.name for c in rows if c.id == review.decision_candidate_id), "(removed)"),
        decided_by=review.decided_by,
        decided_by_name=review.decided_by_name or "",
        decided_at=review.decided_at,
        reason=review.decision_reason or "",
    )


def _compute_read(session: Session, principal: UserPrincipal, review: Review) -> ReviewRead:
    rows = repository.candidates(session, review.id)
    pairs = _inputs(session, principal, rows)
    cands = [cand for cand, _ in pairs]
    ctx = _context(review)
    weights = {k: Decimal(str(v)) for k, v in review.weights.items()}
    reads = [
        _candidate_read(row, cand, prov, compute.figures(ctx, cand), ctx.minor_units)
        for row, (cand, prov) in zip(rows, pairs, strict=True)
    ]
    ranking = _ranking(ctx, cands, weights)
    return ReviewRead(
        id=review.id,
        team_id=review.team_id,
        name=review.name,
        question=review.question,
        currency=review.currency,
        horizon_years=_plain(Decimal(review.horizon_years)),
        duty_cycle=_plain(Decimal(review.duty_cycle)),
        tariff_per_kwh=_plain(Decimal(review.tariff_per_kwh)),
        tariff_source=review.tariff_source,
        grid_g_per_kwh=_plain(Decimal(review.grid_g_per_kwh)),
        grid_source=review.grid_source,
        pue=_plain(Decimal(review.pue)),
        environment_id=review.environment_id,
        weights=weights,
        version=review.version,
        parent_id=review.parent_id,
        created_by=review.created_by,
        created_at=review.created_at,
        updated_at=review.updated_at,
        decision=_decision(review, rows),
        hours_per_year=int(formulas.HOURS_PER_YEAR),
        gb_bytes=formulas.GB,
        candidates=reads,
        ranking=ranking,
        normalisation=compute.NORMALISATION,
        leader=ranking[0].name if ranking else None,
        sensitivity=_sensitivity(ctx, cands, weights),
        job_crossover=_crossover(cands),
        methodology=[
            FormulaRead(name=m.name, formula=m.formula, source=m.source) for m in formulas.METHODOLOGY
        ],
    )


# --- exports ---------------------------------------------------------------------------------------


def _csv_cell(v: Any) -> str:
    """A CSV cell: decimals in fixed notation with the digits the page shows (never "2.7E-7",
    which str() writes for a Decimal below 10^-6; backend/kit/numbers.py), no digit grouping."""
    if v is None:
        return ""
    if isinstance(v, Decimal | float):
        return numbers.plain_decimal(v)
    return str(v)


def to_csv(r: ReviewRead) -> str:
    """One row per candidate; money in the review's currency, GB = 10^9 bytes (the gb_bytes column)."""
    ranks = {x.candidate_id: x for x in r.ranking}
    buf = io.StringIO()
    w = writer(buf)
    w.writerow(CSV_COLUMNS)
    for c in r.candidates:
        rk = ranks.get(c.id)
        row: dict[str, Any] = {
            **c.model_dump(),
            "candidate": c.name,
            "currency": r.currency,
            "gb_bytes": r.gb_bytes,
            "performance_value": c.performance_value,
            "rank": rk.rank if rk else None,
            "score": rk.score if rk else None,
        }
        w.writerow([_csv_cell(row.get(k)) for k in CSV_COLUMNS])
    return buf.getvalue()
