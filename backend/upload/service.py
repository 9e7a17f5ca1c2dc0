"""A finished result uploaded from outside (CI): an imported run on an external host (ADR 0020).

The run is made through the run domain's `record_import` (source "import", stored succeeded), the
document stored by the result domain as an agent's upload is, the device named through the device
domain's identity rules (ADR 0014), and `run.imported` recorded in the audit log, all in the
request's transaction. Idempotent: the same `upload_id` of a team answers with the run it made."""

import re
import uuid
from typing import Any

from pydantic import ValidationError
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from backend.audit import service as audit
from backend.auth.principal import UserPrincipal
from backend.config import get_settings
from backend.device import service as device_service
from backend.environment import repository as environment_repo
from backend.errors import Invalid
from backend.kit.security import AGENT_TOKEN_PREFIX, new_token, token_hash
from backend.kit.time import utcnow
from backend.models import Agent, Role
from backend.power import service as power_service
from backend.power.schemas import MeterInfo, PhaseIn, PowerUpload, SamplesIn
from backend.result import service as result_service
from backend.result.schemas import EngineDocument
from backend.run import service as run_service
from backend.upload import repository
from backend.upload.schemas import ResultImport, ResultImported, UploadedPower
from backend.workload.schemas import SPEC_VERSION, JobSpec, WorkloadSpec, stored_spec

# upload ids are the uploader's own strings: each team's map to UUIDs of their own (uuid5), so two
# teams' "build-42" never meet, and the stored result's upload_id stays unique
UPLOAD_NAMESPACE = uuid.UUID("6f1d52a4-3c55-4d0e-9a51-1f3d0c2b7e20")
_RW = {"readwrite": "rw", "rw": "rw", "randrw": "randrw"}
_IOENGINES = {
    "psync": "psync",
    "sync": "psync",
    "pvsync": "psync",
    "libaio": "libaio",
    "io_uring": "io_uring",
}


def upload_uuid(team_id: uuid.UUID, upload_id: str) -> uuid.UUID:
    return uuid.uuid5(UPLOAD_NAMESPACE, f"{team_id}/{upload_id}")


def import_result(session: Session, *, principal: UserPrincipal, body: ResultImport) -> ResultImported:
    """POST /results: members of the team (an upload- or write-scoped token)."""
    principal.require(body.team_id, Role.member)
    upload_id = upload_uuid(body.team_id, body.upload_id)
    done = _stored(session, upload_id)
    if done is not None:
        return done
    if body.environment_id is not None:
        env = environment_repo.get(session, body.environment_id)
        if env is None or env.team_id != body.team_id:
            raise Invalid("environment_id", "no such environment in the team")
    doc = result_service.validate_document(body.engine_result)
    try:
        with session.begin_nested():
            run_id = _import(session, principal=principal, body=body, doc=doc, upload_id=upload_id)
    except IntegrityError:  # the same upload_id stored by a concurrent request (a CI retry)
        done = _stored(session, upload_id)
        if done is None:
            raise
        return done
    return ResultImported(run_id=run_id, url=_url(run_id), duplicate=False)


def _url(run_id: uuid.UUID) -> str:
    return f"{get_settings().public_url.rstrip('/')}/runs/{run_id}"


def _stored(session: Session, upload_id: uuid.UUID) -> ResultImported | None:
    found = result_service.by_upload_id(session, upload_id)
    if found is None:
        return None
    return ResultImported(run_id=found.run_id, url=_url(found.run_id), duplicate=True)


def _import(
    session: Session,
    *,
    principal: UserPrincipal,
    body: ResultImport,
    doc: EngineDocument,
    upload_id: uuid.UUID,
) -> uuid.UUID:
    host = external_host(session, team_id=body.team_id, name=body.host)
    device = device_service.resolve_declared(
        session,
        agent=host,
        model=body.device.model,
        serial=body.device.serial,
        capacity_bytes=body.device.capacity_bytes,
        media=body.device.media,
    )
    run = run_service.record_import(
        session,
        team_id=body.team_id,
        agent_id=host.id,
        device_id=device.id,
        environment_id=body.environment_id,
        name=body.name,
        workload_spec=spec_of(body.engine_result),
        target_path=body.target_path if body.target_path is not None else target_of(body.engine_result),
        created_by=principal.user_id,
        started_at=body.started_at,
        finished_at=body.finished_at,
        tags=body.tags,
    )
    result_service.store_document(
        session,
        run_id=run.id,
        upload_id=upload_id,
        engine_result=body.engine_result,
        doc=doc,
        engine_exit_code=0,
        agent_version=_producer(body.engine_result),
        started_at=body.started_at,
        finished_at=body.finished_at,
    )
    if body.power is not None:
        power_service.ingest(session, run_id=run.id, power=_power(body, body.power))
    audit.record(
        session,
        team_id=body.team_id,
        action="run.imported",
        target_kind="run",
        target_id=run.id,
        user_id=principal.user_id,
        details={"host": host.name, "upload_id": body.upload_id, "producer": _producer(body.engine_result)},
    )
    return run.id


def external_host(session: Session, *, team_id: uuid.UUID, name: str) -> Agent:
    """The team's external host of this name, made on first use. It holds no usable token (a random
    one nobody is told, already expired) and is never online, so nothing is dispatched to it."""
    found = repository.live_host(session, team_id, name)
    if found is not None and found.kind == "agent":
        raise Invalid("host", f"{name!r} is an enrolled agent of this team: upload under another host name")
    if found is not None and found.revoked_at is not None:
        raise Invalid("host", f"the external host {name!r} was revoked: a team admin deletes it first")
    if found is not None:
        return found
    now = utcnow()
    host = Agent(
        team_id=team_id,
        name=name,
        hostname=name,
        kind="external",
        token_hash=token_hash(new_token(AGENT_TOKEN_PREFIX)),
        token_expires_at=now,
        agent_version="",
        state="external",
        inventory=None,
        online=False,
        last_heartbeat_at=None,
    )
    return repository.add_host(session, host)


def _producer(document: dict[str, Any]) -> str:
    """What wrote the document: "iowatt-engine-0.1.0", "fio-3.33" (its "fio version")."""
    return str(document.get("fio version") or "unknown")[:50]


def _options(document: dict[str, Any], job: dict[str, Any]) -> dict[str, Any]:
    """A job's options as fio states them: the global options, then the job's own."""
    glob = document.get("global options")
    own = job.get("job options")
    return {**(glob if isinstance(glob, dict) else {}), **(own if isinstance(own, dict) else {})}


def target_of(document: dict[str, Any]) -> str:
    for job in document.get("jobs") or []:
        if isinstance(job, dict):
            opts = _options(document, job)
            for key in ("filename", "directory"):
                if isinstance(opts.get(key), str) and opts[key]:
                    return str(opts[key])[:4096]
    return ""


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


def _seconds(value: Any) -> float | None:
    """fio's time value ("30", "30s", "2m", "500ms"): seconds, or None."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*", str(value)) if value is not None else None
    if not m:
        return None
    return float(m.group(1)) * {"ms": 0.001, "s": 1, "m": 60, "h": 3600, None: 1}[m.group(2)]


def _job(document: dict[str, Any], index: int, job: dict[str, Any], names: set[str]) -> dict[str, Any]:
    """What iowatt's workload spec can say of one job of the document (the document stays the truth)."""
    opts = _options(document, job)
    ext = job.get("iowatt")
    engine: dict[str, Any] = {}
    if isinstance(ext, dict) and isinstance(ext.get("options"), dict):
        engine = ext["options"]
    kb = opts.get("kb_base", 1024)
    name = re.sub(r"[^A-Za-z0-9_.-]", "_", str(job.get("jobname") or ""))[:90] or f"job{index}"
    while name in names:
        name = f"{name[:90]}.{index}"
    names.add(name)
    rw = str(engine.get("rw") or opts.get("rw") or opts.get("readwrite") or "read")
    bs = _int(engine.get("bs_bytes")) or result_service.parse_size(opts.get("bs", ""), kb) or 4096
    moved = sum(
        _int((job.get(side) or {}).get("io_bytes")) or 0
        for side in ("read", "write")
        if isinstance(job.get(side), dict)
    )
    size = (
        _int(engine.get("size_bytes"))
        or result_service.parse_size(opts.get("size", ""), kb)
        or max(moved, bs)
    )
    out: dict[str, Any] = {
        "name": name,
        "rw": _RW.get(rw, rw),
        "bs_bytes": bs,
        "size_bytes": size,
        "iodepth": _int(engine.get("iodepth")) or _int(opts.get("iodepth")) or 1,
        "numjobs": _int(engine.get("numjobs")) or _int(opts.get("numjobs")) or 1,
        "ioengine": _IOENGINES.get(str(engine.get("ioengine") or opts.get("ioengine") or "psync"), "psync"),
        "direct": str(engine.get("direct", opts.get("direct", "0"))).lower() in ("1", "true"),
    }
    runtime = _seconds(opts.get("runtime"))
    if runtime:
        out["runtime_s"] = runtime
        out["time_based"] = "time_based" in opts and str(opts["time_based"]) not in ("0", "false")
    if isinstance(document.get("source"), dict):  # another tool's file (POST /imports)
        out["unstated"] = _unstated(engine, opts, kb)
    return out


def _unstated(engine: dict[str, Any], opts: dict[str, Any], kb: int) -> list[str]:
    """The settings of an imported job its file did not state (or stated as nothing iowatt's spec
    can hold, an ioengine it has not): their values in the spec are placeholders, never shown."""
    stated = {
        "rw": engine.get("rw") or opts.get("rw") or opts.get("readwrite"),
        "bs_bytes": _int(engine.get("bs_bytes")) or result_service.parse_size(opts.get("bs", ""), kb),
        "size_bytes": _int(engine.get("size_bytes")) or result_service.parse_size(opts.get("size", ""), kb),
        "iodepth": _int(engine.get("iodepth")) or _int(opts.get("iodepth")),
        "numjobs": _int(engine.get("numjobs")) or _int(opts.get("numjobs")),
        "ioengine": _IOENGINES.get(str(engine.get("ioengine") or opts.get("ioengine"))),
        "direct": engine.get("direct", opts.get("direct")),
    }
    return [k for k, v in stated.items() if v is None or v == ""]


def spec_of(document: dict[str, Any]) -> dict[str, Any]:
    """The stored workload spec of an imported run, from the document's job options: each job as
    far as iowatt's spec can state it (rw, block size, size, depth, jobs, ioengine, direct,
    runtime), the rest read from the document itself (stored whole)."""
    jobs_in = [j for j in (document.get("jobs") or []) if isinstance(j, dict)][:200]
    names: set[str] = set()
    jobs = []
    marks: list[list[str] | None] = []
    for i, job in enumerate(jobs_in):
        d = _job(document, i, job, names)
        marks.append(d.pop("unstated", None))
        try:
            jobs.append(JobSpec.model_validate(d))
        except ValidationError:
            if marks[-1] is not None:  # what the essentials leave out is not stated either
                marks[-1] = sorted({*marks[-1], "iodepth", "numjobs", "ioengine", "direct"})
            try:  # the essentials only (an option beyond today's limits, an rw iowatt has not)
                jobs.append(
                    JobSpec.model_validate(
                        {**{k: d[k] for k in ("name", "bs_bytes", "size_bytes")}, "rw": d["rw"]}
                    )
                )
            except ValidationError:
                jobs.append(JobSpec.model_construct(**d))
    try:
        out = stored_spec(WorkloadSpec.model_validate({"jobs": jobs}))
    except ValidationError:
        out = {
            "jobs": [j.model_dump(mode="json", warnings=False) for j in jobs],
            "spec_version": SPEC_VERSION,
        }
    # an imported job's settings its file did not state: their stored values stay (placeholders
    # that keep the spec valid for its readers), the list says not to show them (JobSpec.unstated)
    for stored, unstated in zip(out["jobs"], marks, strict=True):
        if unstated is not None:
            stored["unstated"] = unstated
    return out


def _power(body: ResultImport, power: UploadedPower) -> PowerUpload:
    """The uploaded samples as an agent's power upload: one load phase, the run's whole length."""
    end_ns = int((body.finished_at - body.started_at).total_seconds() * 1e9)
    samples = sorted(power.samples, key=lambda p: p.t_ns)
    return PowerUpload(
        meter=MeterInfo(
            name=power.meter, driver=power.driver, tier=power.tier, quantity="power", nominal_interval_s=1.0
        ),
        status="ok",
        t0_utc=body.started_at,
        phases=[PhaseIn(name="load", start_ns=0, end_ns=max(end_ns, samples[-1].t_ns))],
        samples=SamplesIn(t_ns=[p.t_ns for p in samples], value=[p.watts for p in samples]),
    )
