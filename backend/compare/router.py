import uuid
from typing import Annotated, Literal

from fastapi import APIRouter, Query, Response

from backend.auth.deps import SessionDep, UserDep
from backend.compare import service
from backend.compare.schemas import Comparison, FingerprintMode, GroupBy, LatencyCurves
from backend.environment.topology import parse_filters
from backend.errors import Invalid
from backend.kit.lanes import BULK

router = APIRouter(prefix="/compare", tags=["compare"], dependencies=[BULK])

RunsParam = Annotated[str, Query(description="comma-separated run ids; the first is the default baseline")]
EnvParam = Annotated[
    list[Annotated[str, Query(max_length=300)]] | None,
    Query(
        max_length=20,
        description="FIELD:VALUE of the runs' recorded environments (raid_level:raid10, kind:san; "
        "none: runs without it); only matching runs are compared; repeat: every field must match, "
        "values of one field any of them",
    ),
]


TargetsParam = Annotated[
    list[Annotated[str, Query(max_length=100)]] | None,
    Query(
        max_length=200,
        description="RUN_ID:N: compare target N of that multi-target run (its own figures) instead of "
        "the targets combined; repeat for several runs",
    ),
]


def _targets(values: list[str]) -> list[tuple[uuid.UUID, int]]:
    out = []
    for v in values:
        run, _, index = v.rpartition(":")
        try:
            out.append((uuid.UUID(run), int(index)))
        except ValueError as exc:
            raise Invalid("targets", f"{v!r}: give RUN_ID:N (a run id and a target's index)") from exc
    return out


def _ids(runs: str) -> list[uuid.UUID]:
    try:
        return [uuid.UUID(x.strip()) for x in runs.split(",") if x.strip()]
    except ValueError as exc:
        raise Invalid("runs", "must be comma-separated UUIDs") from exc


@router.get(
    "",
    response_model=Comparison,
    responses={
        200: {
            "description": "The comparison; with format=csv the same table as text/csv (a download)",
            "content": {"text/csv": {"schema": {"type": "string"}}},
        }
    },
)
def compare(
    principal: UserDep,
    session: SessionDep,
    runs: RunsParam,
    baseline: uuid.UUID | None = None,
    group_by: GroupBy = "none",
    fingerprint: FingerprintMode = "workload",
    force: bool = False,
    env: EnvParam = None,
    targets: TargetsParam = None,
    format: Annotated[
        Literal["json", "csv"],
        Query(description="csv: the same table as text/csv (a download), one row per metric"),
    ] = "json",
) -> Comparison | Response:
    c = service.compare(
        session,
        principal=principal,
        run_ids=_ids(runs),
        baseline=baseline,
        group_by=group_by,
        fingerprint_mode=fingerprint,
        force=force,
        env_filters=parse_filters(env or []),
        targets=_targets(targets or []),
    )
    if format == "csv":
        return Response(
            service.to_csv(c),
            media_type="text/csv",
            headers={"Content-Disposition": 'attachment; filename="iowatt-compare.csv"'},
        )
    # built and validated as a Comparison already: serialised once, not dumped and validated again
    # against response_model (a third of the time of a 30-run comparison; bench/compare)
    return Response(c.model_dump_json(), media_type="application/json")


@router.get("/latency", response_model=LatencyCurves)
def latency(
    principal: UserDep,
    session: SessionDep,
    runs: RunsParam,
    job: Annotated[str, Query(min_length=1, description="job name")],
    group_by: GroupBy = "none",
    env: EnvParam = None,
) -> LatencyCurves:
    return service.latency_curves(
        session,
        principal=principal,
        run_ids=_ids(runs),
        job=job,
        group_by=group_by,
        env_filters=parse_filters(env or []),
    )
