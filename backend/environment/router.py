from fastapi import APIRouter, status
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from backend.auth.deps import SessionDep, UserDep
from backend.environment.schemas import EnvironmentCreate, EnvironmentRead
from backend.errors import Conflict
from backend.kit.schema import Page
from backend.models import Environment, Role

router = APIRouter(prefix="/environments", tags=["environments"])


@router.get("", response_model=Page[EnvironmentRead])
def list_environments(principal: UserDep, session: SessionDep) -> Page[EnvironmentRead]:
    rows = list(
        session.scalars(
            select(Environment).where(Environment.team_id.in_(principal.team_ids)).order_by(Environment.name)
        )
    )
    return Page[EnvironmentRead](items=[EnvironmentRead.model_validate(e) for e in rows], total=len(rows))


@router.post("", response_model=EnvironmentRead, status_code=status.HTTP_201_CREATED)
def create_environment(body: EnvironmentCreate, principal: UserDep, session: SessionDep) -> EnvironmentRead:
    principal.require(body.team_id, Role.member)
    env = Environment(**body.model_dump())
    try:
        with session.begin_nested():
            session.add(env)
            session.flush()
    except IntegrityError as exc:
        raise Conflict(
            f"an environment named {body.name!r} exists in this team", code="environment_name_taken"
        ) from exc
    return EnvironmentRead.model_validate(env)
