"""POST /workloads/facts: what the engine says a file workload does at a scale, before anything is
saved or queued. The UI's New run shows the file set and duration as the user types a scale; only
the engine knows how vdbench's scale rounds files and sizes (minimums per thread, whole transfers),
so the page asks it through the server rather than guessing (ADR 0022: the engine is the only
parser). Nothing is stored; the answer is the same `facts` a run queued with this spec records."""

from fastapi import APIRouter
from pydantic import Field

from backend.auth.deps import UserDep
from backend.errors import Invalid
from backend.kit.lanes import BULK
from backend.kit.schema import InputSchema
from backend.workload import facts
from backend.workload.kinds.jobfile import JobfileParse, JobfileSpec, JobfileText
from backend.workload.schemas import SCALE_MAX, FileFacts, WorkloadSpec

router = APIRouter(prefix="/workloads", tags=["workloads"], dependencies=[BULK])


class FactsAsk(InputSchema):
    spec: WorkloadSpec = Field(description="a file workload's spec (kind postmark or vdbench)")
    scale: float | None = Field(
        None,
        gt=0,
        le=SCALE_MAX,
        description="the run's scale on this spec, as POST /runs takes it (vdbench: multiplied into "
        "vdbench.scale; postmark: files and transactions times it); null = as the spec is",
    )


@router.post(
    "/facts",
    response_model=FileFacts,
    responses={
        503: {
            "description": "`engine_unavailable`: the server has no iowatt-engine to ask (IOWATT_ENGINE_PATH)"
        }
    },
)
def workload_facts(body: FactsAsk, principal: UserDep) -> FileFacts:
    """The engine's `--parse-only` bounds of a file workload at `scale` (files, directories, dataset
    bytes, threads, largest transfer, bytes written at most, duration). A refusal by the engine is a
    422 at the field holding the text (spec.postmark / spec.vdbench.parameters); a block workload
    is a 422 at spec.kind."""
    spec = body.spec
    if not spec.is_file:
        raise Invalid("spec.kind", "facts are the engine's for file workloads (postmark, vdbench)")
    if body.scale is not None:
        try:
            spec = spec.scaled(body.scale)
        except ValueError as exc:
            raise Invalid("scale", str(exc)) from None
    got = facts.with_facts(spec).facts  # TPC-H: libs/workload's bound; the others: the engine's
    if got is None:
        raise facts.EngineUnavailable("the engine printed no bounds: rebuild it (make -C agent/engine)")
    return got


@router.post(
    "/jobfile",
    response_model=JobfileParse,
    responses={
        503: {
            "description": "`engine_unavailable`: the server has no iowatt-engine to ask (IOWATT_ENGINE_PATH)"
        }
    },
)
def parse_jobfile(body: JobfileText, principal: UserDep) -> JobfileParse:
    """The jobs a fio job file makes, as the engine reads it (`iowatt-engine --untrusted
    --parse-only`; ADR 0029): each section's options and reporting group, and the filename /
    directory options the run's target will replace. Nothing is stored. A file the engine refuses
    is a 422 at `text` naming the line and the option ("line 12: bs: ..."); include and ${VAR}
    are refused."""
    spec = WorkloadSpec(kind="jobfile", jobfile=JobfileSpec(text=body.text))
    try:
        parsed = facts.with_facts(spec).jobfile
    except Invalid as exc:
        detail = exc.detail[0] if isinstance(exc.detail, list) and exc.detail else {}
        raise Invalid("text", str(detail.get("message") or exc)) from None
    assert parsed is not None and parsed.parsed is not None
    return parsed.parsed
