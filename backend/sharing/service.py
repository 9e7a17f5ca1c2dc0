"""Share links: a member freezes a run, a comparison, a campaign or a procurement review;
anyone holding the link reads that view, live, and nothing else of the team; the
creator or an admin revokes it.

The view is built by the compare and run services' public functions, called as a read-only viewer
of the link's team, for the frozen ids that still exist (what was deleted is absent). What a shared
view hides and why: docs/adr/0018-share-previews.md."""

import json
import re
import uuid
from dataclasses import dataclass
from typing import Any

from sqlalchemy.orm import Session

from backend.audit import service as audit
from backend.auth.principal import UserPrincipal
from backend.campaign import service as campaign_service
from backend.compare import service as compare_service
from backend.compare.schemas import Comparability, Comparison, Difference, LatencyCurves
from backend.environment import topology as env_topology
from backend.errors import AppError, Conflict, Forbidden, Invalid, NotFound
from backend.kit.security import new_token, token_hash
from backend.kit.time import utcnow
from backend.models import Role, ShareLink
from backend.review import service as review_service
from backend.review.schemas import ReviewRead
from backend.run.schemas import RunOrigin
from backend.sharing import cache, repository
from backend.sharing.schemas import (
    MAX_SHARED_RUNS,
    ComparisonTarget,
    SharedCampaign,
    SharedComparison,
    SharedEnergy,
    SharedOptions,
    SharedReview,
    SharedRun,
    SharedView,
    SharedWorkload,
    ShareLinkCreate,
    ShareLinkRead,
    ShareState,
)

GONE_MESSAGE = "this share link does not exist or was revoked"
# the options of a run's and a campaign's view (a campaign groups as its compare link does)
RUN_OPTIONS = ComparisonTarget(runs=[uuid.UUID(int=0)])
CAMPAIGN_GROUP_BY = "device_environment"


class ShareLinkGone(NotFound):
    code = "share_link_not_found"


class ShareLinkExpired(AppError):
    status_code = 410
    code = "share_link_expired"


def _state(link: ShareLink, creator_is_member: bool) -> ShareState:
    if link.revoked_at is not None:
        return "revoked"
    if not creator_is_member:
        return "creator_left"
    if link.expires_at is not None and link.expires_at <= utcnow():
        return "expired"
    return "active"


def _creator_is_member(session: Session, link: ShareLink) -> bool:
    """A link lives only while its creator is a member of its team (any role): removing a member
    (or deleting the account) ends every link they made, since they hold those tokens and would
    otherwise keep reading the team's data without being in it (ADR 0018)."""
    return link.created_by is not None and bool(
        repository.members_of(session, link.team_id, {link.created_by})
    )


def _team_of_target(
    session: Session, principal: UserPrincipal, body: ShareLinkCreate
) -> tuple[uuid.UUID, dict[str, Any]]:
    """The team the target belongs to (one of the caller's) and the target as stored."""
    if body.kind == "comparison":
        if not isinstance(body.target, ComparisonTarget):
            raise Invalid("target", "a comparison's target is an object with runs (and its view options)")
        t = body.target
        runs = list(dict.fromkeys(t.runs))
        teams = repository.runs_in_teams(session, runs, principal.team_ids)
        missing = [str(r) for r in runs if r not in teams]
        if missing:
            raise Invalid("target.runs", f"not found in your teams: {', '.join(missing)}")
        if len(set(teams.values())) > 1:
            raise Invalid("target.runs", "all runs of a shared comparison must belong to one team")
        if t.baseline is not None and t.baseline not in teams:
            raise Invalid("target.baseline", "the baseline must be one of the compared runs")
        env = [f"{facet}:{value}" for facet, value in env_topology.parse_filters(t.env, "target.env")]
        frozen = t.model_copy(update={"runs": runs, "env": env}).model_dump(mode="json")
        return next(iter(teams.values())), frozen
    if not isinstance(body.target, uuid.UUID):
        raise Invalid("target", f"a {body.kind}'s target is its id")
    if body.kind == "run":
        team = repository.runs_in_teams(session, [body.target], principal.team_ids).get(body.target)
        if team is None:
            raise Invalid("target", "no such run in your teams")
        return team, {"run": str(body.target)}
    if body.kind == "review":
        try:
            review = review_service.get(session, principal=principal, review_id=body.target)
        except NotFound as exc:
            raise Invalid("target", "no such review in your teams") from exc
        return review.team_id, {"review": str(body.target)}
    try:
        campaign = campaign_service.get(session, principal=principal, campaign_id=body.target)
    except NotFound as exc:
        raise Invalid("target", "no such campaign in your teams") from exc
    return campaign.team_id, {"campaign": str(body.target)}


def create(session: Session, *, principal: UserPrincipal, body: ShareLinkCreate) -> tuple[ShareLink, str]:
    """A new link (members of the target's team); returns it and its raw token, shown once."""
    if body.expires_at is not None:
        try:
            expires = body.expires_at.astimezone(utcnow().tzinfo)
        except (OverflowError, ValueError) as exc:
            raise Invalid("expires_at", "not a representable UTC time") from exc
        if expires <= utcnow():
            raise Invalid("expires_at", "must be in the future")
    else:
        expires = None
    team_id, target = _team_of_target(session, principal, body)
    principal.require(team_id, Role.member)
    raw = new_token("")
    link = ShareLink(
        team_id=team_id,
        kind=body.kind,
        target=target,
        title=body.title,
        token_hash=token_hash(raw),
        created_by=principal.user_id,
        expires_at=expires,
    )
    repository.add(session, link)
    audit.record(
        session,
        team_id=team_id,
        action="share_link.created",
        target_kind="share_link",
        target_id=link.id,
        user_id=principal.user_id,
        details={"kind": body.kind, "title": body.title, "target": target},
    )
    return link, raw


def page(
    session: Session, *, principal: UserPrincipal, team_id: uuid.UUID, limit: int, offset: int
) -> tuple[list[ShareLink], int]:
    principal.teams_for(team_id)  # another team: 403 not_a_member, as every list's team_id
    principal.require(team_id, Role.member)
    return repository.page(session, team_id, limit=limit, offset=offset)


def to_read(session: Session, links: list[ShareLink]) -> list[ShareLinkRead]:
    creators = {x.created_by for x in links if x.created_by}
    names = repository.user_names(session, creators)
    members: dict[uuid.UUID, set[uuid.UUID]] = {}
    for team in {x.team_id for x in links}:
        members[team] = repository.members_of(session, team, creators)
    return [
        ShareLinkRead(
            id=x.id,
            team_id=x.team_id,
            kind=x.kind,
            title=x.title,
            target=x.target,
            created_by=x.created_by,
            created_by_name=names.get(x.created_by) if x.created_by else None,
            created_at=x.created_at,
            expires_at=x.expires_at,
            revoked_at=x.revoked_at,
            state=_state(x, x.created_by in members[x.team_id]),
            views=x.views,
            last_viewed_at=x.last_viewed_at,
        )
        for x in links
    ]


def revoke(session: Session, *, principal: UserPrincipal, link_id: uuid.UUID) -> None:
    """The creator or an admin of the team revokes a link: from then on its token answers 404."""
    link = repository.get(session, link_id, lock=True)
    if link is None or link.team_id not in principal.team_ids:
        raise NotFound("share link not found")
    if link.created_by != principal.user_id:
        try:
            principal.require(link.team_id, Role.admin)
        except Forbidden as exc:
            raise Forbidden(
                "revoking another member's share link needs the admin role in the team", code="forbidden"
            ) from exc
    if link.revoked_at is not None:
        raise Conflict("this share link is already revoked", code="already_revoked")
    link.revoked_at = utcnow()
    cache.forget(link.id)
    audit.record(
        session,
        team_id=link.team_id,
        action="share_link.revoked",
        target_kind="share_link",
        target_id=link.id,
        user_id=principal.user_id,
        details={"kind": link.kind, "title": link.title},
    )


def open_link(session: Session, *, token: str, count: bool = False) -> ShareLink:
    """The live link of a token, or 404 (unknown, revoked, or its creator is no longer a member of
    its team) / 410 (expired). `count`: one more view."""
    link = repository.by_token_hash(session, token_hash(token))
    if link is None or link.revoked_at is not None or not _creator_is_member(session, link):
        raise ShareLinkGone(GONE_MESSAGE)
    if link.expires_at is not None and link.expires_at <= utcnow():
        raise ShareLinkExpired(f"this share link expired on {link.expires_at:%Y-%m-%d %H:%M} UTC")
    if count:
        repository.count_view(session, link.id, utcnow())
    return link


@dataclass
class Frozen:
    """A link's view and the comparison it was built from (its labels scrubbed), for the exports."""

    view: SharedView
    comparison: Comparison | None
    review: ReviewRead | None = None


def _scrubber(paths: set[str]) -> Any:
    """Target paths out of the team's text (run names, labels, flags): each becomes `target-N`."""
    alias = {p: f"target-{i + 1}" for i, p in enumerate(sorted(p for p in paths if len(p) >= 3))}
    ordered = sorted(alias, key=len, reverse=True)

    def scrub(value: Any) -> Any:
        if isinstance(value, str):
            for p in ordered:
                value = value.replace(p, alias[p])
            return value
        if isinstance(value, list):
            return [scrub(v) for v in value]
        if isinstance(value, dict):
            return {scrub(k): scrub(v) for k, v in value.items()}
        return value

    return scrub


# A value of a workload difference shown as it is: a number, a flag, or a short word (a block
# size, an ioengine, a kernel release); anything longer (vdbench's parameter text) is not shared
SHORT_VALUE = re.compile(r"[\w.+:%,=/-]{1,64}")


def _public_comparability(c: Comparability, scrub: Any) -> Comparability:
    """The comparability without the team's free text: each differing string value that is not a
    short word becomes "text 1", "text 2"… (equal texts the same label), so the page still says
    which field differs and between which runs."""
    labels: dict[str, str] = {}

    def public(v: object) -> object:
        if v is None or isinstance(v, bool | int | float):
            return v
        if isinstance(v, str) and SHORT_VALUE.fullmatch(v) and "://" not in v:
            return scrub(v)
        key = json.dumps(v, sort_keys=True, default=str)
        return labels.setdefault(key, f"text {len(labels) + 1} (not shared)")

    return Comparability(
        verdict=c.verdict,
        fingerprint=c.fingerprint,
        fingerprints=dict(c.fingerprints),
        differences=[
            Difference(field=d.field, values={k: public(v) for k, v in d.values.items()})
            for d in c.differences
        ],
    )


def _public_origin(o: RunOrigin | None, scrub: Any) -> RunOrigin | None:
    """An imported or published run's label on a link: the tool, version, format and a published
    figure's reference; not the imported file's name or hash (the team's file)."""
    if o is None:
        return None
    reference = scrub(o.reference) if o.reference else None
    return o.model_copy(
        update={"file_name": None, "sha256": None, "reference": reference, "source_url": None, "files": []}
    )


def _shared_comparison(
    session: Session, c: Comparison
) -> tuple[SharedComparison, Comparison, dict[str, str]]:
    scrub = _scrubber({r.target_path for r in c.runs})
    keys = {col.key: f"col{i + 1}" for i, col in enumerate(c.columns)}
    columns = [col.model_copy(update={"key": keys[col.key], "label": scrub(col.label)}) for col in c.columns]
    envs = repository.environment_names(session, {r.environment_id for r in c.runs if r.environment_id})
    runs = [
        SharedRun(
            id=r.id,
            name=scrub(r.name),
            status=r.status,
            device_name=r.device_name,
            environment_name=envs.get(r.environment_id) if r.environment_id else None,
            workload=SharedWorkload.of(r.workload),
            created_at=r.created_at,
            started_at=r.started_at,
            finished_at=r.finished_at,
            jobs=r.jobs,
            passes=r.passes,
            energy=SharedEnergy.model_validate(r.energy),
            origin=_public_origin(r.origin, scrub),
        )
        for r in c.runs
    ]
    comparability = _public_comparability(c.comparability, scrub)
    validity = {
        k: [f.model_copy(update={"message": scrub(f.message)}) for f in v] for k, v in c.validity.items()
    }
    shared = SharedComparison(
        runs=runs,
        columns=columns,
        baseline=keys[c.baseline],
        group_by=c.group_by,
        comparability=comparability,
        jobs=c.jobs,
        energy=c.energy,
        validity=validity,
        suggestions=[scrub(s) for s in c.suggestions],
    )
    # the CSV export reads columns, jobs, energy and the runs' energy basis: the same labels as shown
    scrubbed = c.model_copy(update={"columns": columns, "baseline": shared.baseline})
    return shared, scrubbed, keys


def _latency(
    session: Session,
    reader: UserPrincipal,
    run_ids: list[uuid.UUID],
    opts: ComparisonTarget,
    shared: SharedComparison,
    keys: dict[str, str],
) -> LatencyCurves | None:
    """The compare page's latency chart for the frozen job (the first when none or gone), its
    columns and curves keyed as the shared comparison's."""
    if "latency" not in opts.charts or not shared.jobs:
        return None
    names = [j.name for j in shared.jobs]
    job = opts.job if opts.job in names else names[0]
    curves = compare_service.latency_curves(
        session, principal=reader, run_ids=run_ids, job=job, group_by=opts.group_by
    )
    if not curves.curves:
        return None
    return LatencyCurves(
        job=job,
        columns=shared.columns,
        curves=[c.model_copy(update={"column": keys[c.column]}) for c in curves.curves if c.column in keys],
    )


# An absolute path in a run's text ("rand on host:/srv/x", a validity message): not a URL's "//",
# not inside a word or a unit ("MB/s", "I/O")
PATH = re.compile(r"(?<![\w./])/(?!/)[^\s,;()'\"]+")


# a linked run's energy note in a shared review: its message is the energy's `reason`, which can
# quote the meter's address
PUBLIC_ENERGY_NOTE = "the run's energy is not available ({state})"


def _public_meter_reference(run_reference: str | None, reference: str | None) -> str:
    no_idle = review_service.NO_IDLE_NOTE
    suffix = no_idle if reference and no_idle in reference else ""
    return f"{run_reference or 'the run'}: its meter{suffix}"


def _shared_review(
    session: Session, reader: UserPrincipal, link: ShareLink
) -> tuple[SharedReview, ReviewRead] | None:
    """The review of a link as the review service reads it (decided: the snapshot frozen at its
    decision; undecided: computed now), without the team's, environment's and users' ids, and the
    paths in the linked runs' text as `target-N`; None when the review was deleted. Paths are
    found in the text itself, not from the runs, so a decided review's answer stays the same
    when its runs are deleted later."""
    try:
        read = review_service.read(session, principal=reader, review_id=uuid.UUID(str(link.target["review"])))
    except NotFound:
        return None
    data = read.model_dump(mode="json")
    alias: dict[str, str] = {}

    def scrub(text: str | None) -> str | None:
        if text is None:
            return None
        return PATH.sub(lambda m: alias.setdefault(m.group(0), f"target-{len(alias) + 1}"), text)

    for c in data["candidates"]:
        c["device_id"] = None
        if c["performance_source"] != "published":
            c["performance_reference"] = scrub(c["performance_reference"])
            if c["power_source"] in ("measured", "estimated"):
                # "run X (id): <the meter's name and driver>": the meter is the team's, not shared
                c["power_reference"] = _public_meter_reference(
                    c["performance_reference"], c["power_reference"]
                )
            else:
                c["power_reference"] = scrub(c["power_reference"])
            for note in c["validity"]:
                note["message"] = (
                    PUBLIC_ENERGY_NOTE.format(state=note["flag"].removeprefix("energy_").replace("_", " "))
                    if note["flag"].startswith("energy_")
                    else scrub(note["message"])
                )
    d = data["decision"]
    shared = SharedReview.model_validate(
        {
            **data,
            "decided": d is not None,
            "decision": None if d is None else {k: v for k, v in d.items() if k != "decided_by"},
        }
    )
    return shared, ReviewRead.model_validate(data)


def view(session: Session, *, link: ShareLink) -> Frozen:
    """The link's frozen view, read now: the compare service for the frozen runs that still exist
    (a review: the review service's read of it)."""
    reader = UserPrincipal(
        user_id=link.created_by or uuid.UUID(int=0), roles={link.team_id: Role.viewer}, scope="read"
    )
    if link.kind == "review":
        return _review_view(session, reader, link)
    campaign: SharedCampaign | None = None
    if link.kind == "comparison":
        opts = ComparisonTarget.model_validate(link.target)
        frozen = opts.runs
    elif link.kind == "run":
        opts = RUN_OPTIONS
        frozen = [uuid.UUID(str(link.target["run"]))]
    else:
        opts = RUN_OPTIONS.model_copy(update={"group_by": CAMPAIGN_GROUP_BY})
        frozen = []
        try:
            cmp = campaign_service.get(
                session, principal=reader, campaign_id=uuid.UUID(str(link.target["campaign"]))
            )
        except NotFound:
            cmp = None
        if cmp is not None:
            read = campaign_service.to_read(session, [cmp])[0]
            campaign = SharedCampaign(
                name=read.name,
                created_at=read.created_at,
                repeats=read.repeats,
                counts=read.counts,
                done=read.done,
            )
            frozen = repository.succeeded_runs_of_campaign(session, cmp.id)
    alive = repository.runs_in_teams(session, frozen, [link.team_id])
    kept = [r for r in frozen if r in alive]
    deleted = len(frozen) - len(kept)
    kept = kept[:MAX_SHARED_RUNS]  # a campaign may hold more runs than a comparison takes
    comparison: Comparison | None = None
    shared: SharedComparison | None = None
    latency: LatencyCurves | None = None
    env = env_topology.parse_filters(opts.env)
    if kept and env:  # the environment filter frozen with the link: matching runs only
        kept = repository.runs_matching_environment(session, kept, env)
    if kept:
        comparison = compare_service.compare(
            session,
            principal=reader,
            run_ids=kept,
            baseline=opts.baseline if opts.baseline in alive else None,
            group_by=opts.group_by,
            fingerprint_mode=opts.fingerprint,
            force=opts.force,
        )
        shared, comparison, keys = _shared_comparison(session, comparison)
        latency = _latency(session, reader, kept, opts, shared, keys)
    names = repository.user_names(session, {link.created_by} if link.created_by else set())
    v = SharedView(
        kind=link.kind,
        title=link.title,
        team_name=repository.team_name(session, link.team_id),
        shared_by=names.get(link.created_by) if link.created_by else None,
        created_at=link.created_at,
        expires_at=link.expires_at,
        options=SharedOptions(
            group_by=opts.group_by,
            fingerprint=opts.fingerprint,
            force=opts.force,
            job=opts.job,
            charts=opts.charts,
            table=opts.table,
            series_metric=opts.series_metric,
            env=opts.env,
        ),
        runs_total=len(frozen),
        runs_deleted=deleted,
        comparison=shared,
        latency=latency,
        campaign=campaign,
        review=None,
    )
    return Frozen(view=v, comparison=comparison)


def _review_view(session: Session, reader: UserPrincipal, link: ShareLink) -> Frozen:
    found = _shared_review(session, reader, link)
    names = repository.user_names(session, {link.created_by} if link.created_by else set())
    v = SharedView(
        kind=link.kind,
        title=link.title,
        team_name=repository.team_name(session, link.team_id),
        shared_by=names.get(link.created_by) if link.created_by else None,
        created_at=link.created_at,
        expires_at=link.expires_at,
        options=SharedOptions(
            group_by=RUN_OPTIONS.group_by,
            fingerprint=RUN_OPTIONS.fingerprint,
            force=RUN_OPTIONS.force,
            job=None,
            charts=[],
            table=RUN_OPTIONS.table,
            series_metric=RUN_OPTIONS.series_metric,
            env=[],
        ),
        runs_total=0,
        runs_deleted=0,
        comparison=None,
        latency=None,
        campaign=None,
        review=found[0] if found else None,
    )
    return Frozen(view=v, comparison=None, review=found[1] if found else None)


def to_csv(frozen: Frozen) -> str:
    """The shown comparison as the compare page's CSV (backend/compare to_csv), or a header only;
    a review: the review's CSV (one row per candidate, backend/review to_csv)."""
    if frozen.view.kind == "review":
        if frozen.review is None:
            return ",".join(review_service.CSV_COLUMNS) + "\r\n"
        return review_service.to_csv(frozen.review)
    if frozen.comparison is None:
        return "job,metric,unit,better\r\n"
    return compare_service.to_csv(frozen.comparison)


def to_json(view: dict[str, Any]) -> str:
    return json.dumps(view, indent=2)


@dataclass
class Shared:
    """What the anonymous routes answer for a link: the view (as JSON and as the schema), its CSV
    and the content version they were built for (backend/sharing/cache.py)."""

    view_json: dict[str, Any]
    csv: str
    version: str

    @property
    def view(self) -> SharedView:
        return SharedView.model_validate(self.view_json)


def shared(session: Session, *, link: ShareLink) -> Shared:
    """The link's view and CSV, computed once per link and content version (cached in Redis)."""
    version = cache.stamp(session, link)

    def build() -> bytes:
        frozen = view(session, link=link)
        return json.dumps({"view": frozen.view.model_dump(mode="json"), "csv": to_csv(frozen)}).encode()

    data = json.loads(cache.cached(link.id, "view", version, build))
    return Shared(view_json=data["view"], csv=data["csv"], version=version)
