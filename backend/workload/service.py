import uuid

import structlog
from sqlalchemy.orm import Session

from backend.audit import service as audit
from backend.auth.principal import UserPrincipal
from backend.errors import Conflict, Invalid, NotFound
from backend.kit.repository import add_unique
from backend.models import Role, Workload
from backend.workload import repository
from backend.workload.builtin import BUILTINS
from backend.workload.facts import EngineUnavailable, with_facts
from backend.workload.schemas import WorkloadCreate, stored_spec

log = structlog.get_logger(__name__)


def ensure_builtins(session: Session) -> None:
    """Insert or update the built-in presets (idempotent; run at start-up and by the CLI). File
    presets carry the engine's facts when this server has an engine (else none: a run of them is
    refused until it has one, with the reason)."""
    for name, (description, spec) in BUILTINS.items():
        row = repository.builtin_by_name(session, name)
        try:
            spec = with_facts(spec)
        except (EngineUnavailable, Invalid) as exc:  # never stops the server from starting
            log.warning("builtins.no_facts", preset=name, error=str(exc).splitlines()[0][:200])
        data = stored_spec(spec)
        if row is None:
            session.add(Workload(team_id=None, name=name, description=description, spec=data, builtin=True))
        else:
            row.description, row.spec = description, data
    session.flush()


def create(session: Session, *, principal: UserPrincipal, body: WorkloadCreate) -> Workload:
    principal.require(body.team_id, Role.member)
    spec = with_facts(body.spec)  # a file workload: the engine's parser checks it, its facts are kept
    row = Workload(
        team_id=body.team_id,
        name=body.name,
        description=body.description,
        spec=stored_spec(spec),
        builtin=False,
    )
    add_unique(
        session,
        row,
        Conflict(f"a workload named {body.name!r} exists in this team", code="workload_name_taken"),
    )
    audit.record(
        session,
        team_id=body.team_id,
        action="workload.created",
        target_kind="workload",
        target_id=row.id,
        user_id=principal.user_id,
        details={"name": row.name},
    )
    return row


def get(session: Session, *, principal: UserPrincipal, workload_id: uuid.UUID) -> Workload:
    row = repository.get_visible(session, workload_id, principal.team_ids)
    if row is None:
        raise NotFound("workload not found")
    return row


def delete(session: Session, *, principal: UserPrincipal, workload_id: uuid.UUID) -> None:
    """An admin deletes one of the team's workloads (ADR 0021); built-in presets cannot be (409).
    Runs made from it keep their own copy of the spec (runs.workload_spec); they forget its id."""
    row = get(session, principal=principal, workload_id=workload_id)
    if row.team_id is None:
        raise Conflict(f"{row.name!r} is a built-in preset: presets cannot be deleted", code="preset")
    principal.require(row.team_id, Role.admin)
    audit.record(
        session,
        team_id=row.team_id,
        action="workload.deleted",
        target_kind="workload",
        target_id=row.id,
        user_id=principal.user_id,
        details={"name": row.name},
    )
    session.delete(row)
    session.flush()
