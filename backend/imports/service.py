"""Other tools' output imported as runs (docs/imports.md, ADR 0031).

A file is detected and parsed by the format registry (backend/imports/formats), each run it holds
written as an engine document (fio's JSON shape: per direction bytes/s, IOPS, ns latencies and
percentiles, plus a `source` block) and stored through the upload domain's path (POST /results:
an external host, the device named as declared, a run of source "import", the document as its
result, the audit event), then marked with its origin (run.origin: `imported` validity flag).
The original bytes are kept once per team (import_files, gzip), downloadable byte for byte.
Everything in the request's one transaction: a file that fails stores nothing. Idempotent: the
same bytes again (SHA-256 per team) answer the runs they made."""

from __future__ import annotations

import hashlib
import json
import mimetypes
import re
import uuid
import zlib
from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any, BinaryIO

from pydantic import ValidationError
from sqlalchemy.orm import Session

from backend.auth.principal import UserPrincipal
from backend.config import get_settings
from backend.environment import repository as environment_repo
from backend.errors import AppError, Invalid, NotFound
from backend.imports import repository
from backend.imports.formats import registry, vdbench
from backend.imports.formats.base import Direction, ImportFormatError, Job, Latency, ParsedFile, Run
from backend.imports.schemas import (
    ImportedDirection,
    ImportedJob,
    ImportedLatency,
    ImportedRun,
    ImportLabels,
    ImportResult,
    PublishedImport,
)
from backend.kit.time import utcnow
from backend.models import ImportFile, Role
from backend.run import service as run_service
from backend.upload import service as upload_service
from backend.upload.schemas import DeclaredDevice, ResultImport

GZIP_WBITS = 31  # zlib's gzip container
READ_CHUNK = 1 << 20
DEFAULT_HOST = "imported"
MAX_RUNS = 200


class ImportInvalid(AppError):
    """422 for a file that is not what its format says: the format, the line, what was expected."""

    status_code = 422
    code = "import_invalid"

    def __init__(self, err: ImportFormatError) -> None:
        super().__init__(
            str(err),
            detail=[
                {
                    "field": "file",
                    "format": err.format,
                    "line": err.line,
                    "expected": err.expected,
                    "message": str(err),
                }
            ],
        )


# --- the engine document of one imported run ---------------------------------------------------


def _lat_doc(lat: Latency | None) -> dict[str, Any]:
    if lat is None:
        return {"N": 0}  # not measured, or not carried: unknown, never 0 ns
    out: dict[str, Any] = {}
    for key, v in (
        ("min", lat.min_ns),
        ("max", lat.max_ns),
        ("mean", lat.mean_ns),
        ("stddev", lat.stddev_ns),
    ):
        if v is not None and v >= 0:
            out[key] = v
    out["percentile"] = {f"{p:.6f}": v for p, v in sorted(lat.percentiles_ns.items()) if v >= 0}
    if lat.bins:  # fio json+'s histogram, as a measured run's document holds it
        out["bins"] = {str(k): n for k, n in sorted(lat.bins.items())}
        out["N"] = sum(lat.bins.values())
    return out


def _dir_doc(d: Direction | None, bs: int | None, estimated: list[str], where: str) -> dict[str, Any]:
    """fio's direction object from what the tool gave; what the engine document needs but the
    tool did not give (the I/O count, bytes) derived from it and listed in `estimated`."""
    if d is None:
        return {"io_bytes": 0, "bw_bytes": 0, "iops": 0.0, "runtime": 0, "total_ios": 0}
    runtime = d.runtime_ms if d.runtime_ms is not None and d.runtime_ms >= 0 else 0.0
    bw = d.bw_bytes
    if bw is None and d.iops is not None and bs:
        bw = d.iops * bs
        estimated.append(f"{where} bytes/s = IOPS x block size")
    iops = d.iops
    if iops is None and bw is not None and bs:
        iops = bw / bs
        estimated.append(f"{where} IOPS = bytes/s / block size")
    io_bytes = d.io_bytes
    if io_bytes is None and bw is not None and runtime:
        io_bytes = round(bw * runtime / 1000)
        estimated.append(f"{where} bytes moved = bytes/s x runtime")
    total = d.total_ios
    if total is None and iops is not None and runtime:
        total = round(iops * runtime / 1000)
        estimated.append(f"{where} I/O count = IOPS x runtime")
    elif total is None and io_bytes and bs:
        total = io_bytes // bs
        estimated.append(f"{where} I/O count = bytes / block size")
    if total is None and (bw or iops):
        total = 1  # figures without a duration (a datasheet): at least one I/O, so they are shown
        estimated.append(f"{where} I/O count unknown")
    return {
        "io_bytes": max(int(io_bytes or 0), 0),
        "bw_bytes": max(round(bw or 0), 0),
        "iops": max(float(iops or 0.0), 0.0),
        "runtime": round(runtime),
        "total_ios": max(int(total or 0), 0),
        "lat_ns": _lat_doc(d.lat),
        "clat_ns": _lat_doc(d.clat),
        "slat_ns": _lat_doc(d.slat),
    }


def _option_text(v: Any) -> str:
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)[:200]


def _job_doc(job: Job, index: int, estimated: list[str]) -> dict[str, Any]:
    s = job.settings
    bs = s.get("bs") if isinstance(s.get("bs"), int) and not isinstance(s.get("bs"), bool) else None
    options = {k: _option_text(v) for k, v in s.items() if v is not None and not isinstance(v, dict | list)}
    for ours, fios in (("runtime_s", "runtime"), ("ramp_time_s", "ramp_time")):
        if ours in options:
            options[fios] = options.pop(ours)
    engine: dict[str, Any] = {}
    if bs:
        engine["bs_bytes"] = bs
    for key in ("rw", "iodepth", "numjobs", "direct", "ioengine"):
        if s.get(key) is not None:
            engine[key] = s[key]
    if isinstance(s.get("size"), int) and not isinstance(s.get("size"), bool):
        engine["size_bytes"] = s["size"]
    dirs = {n: d for n, d in (("read", job.read), ("write", job.write), ("trim", job.trim))}
    runtime_ms = (
        max((d.runtime_ms or 0.0) for d in dirs.values() if d is not None) if any(dirs.values()) else 0.0
    )
    if not runtime_ms and isinstance(s.get("runtime_s"), int | float):
        runtime_ms = float(s["runtime_s"]) * 1000
    out: dict[str, Any] = {
        "jobname": (job.name or f"job{index}")[:200],
        "groupid": job.group,
        "job options": options,
        "job_runtime": round(job.metrics.get("job_runtime_ms", runtime_ms)),
        "usr_cpu": job.metrics.get("usr_cpu_pct", 0.0),
        "sys_cpu": job.metrics.get("sys_cpu_pct", 0.0),
        "iowatt": {"options": engine},
        "metrics": dict(job.metrics),
    }
    for name, d in dirs.items():
        if name != "trim" or d is not None:
            out[name] = _dir_doc(d, bs, estimated, f"{out['jobname']} {name}")
    return out


def engine_document(parsed: ParsedFile, run: Run, source: dict[str, Any]) -> dict[str, Any]:
    """One imported run as an engine document: fio's keys, base units, and the `source` block."""
    estimated: list[str] = []
    jobs = [_job_doc(j, i, estimated) for i, j in enumerate(run.jobs)]
    version = f"{parsed.tool}-{parsed.version}" if parsed.version else parsed.tool
    return {
        "fio version": version[:100],
        "jobs": jobs,
        "source": {
            **source,
            "tool": parsed.tool,
            "version": parsed.version,
            "format": parsed.format,
            "host": dict(run.host),
            "device": dict(run.device),
            "command_line": run.command_line,
            "absent": list(run.absent),
            "notes": list(run.notes)[:200],
            "estimated": estimated[:200],
            "warnings": list(parsed.warnings)[:50],
        },
    }


# --- what the API answers ----------------------------------------------------------------------


def _lat_out(lat: Latency | None) -> ImportedLatency | None:
    if lat is None:
        return None
    return ImportedLatency(
        mean_ns=lat.mean_ns,
        min_ns=lat.min_ns,
        max_ns=lat.max_ns,
        stddev_ns=lat.stddev_ns,
        percentiles_ns={f"{p:g}": v for p, v in sorted(lat.percentiles_ns.items())},
    )


def _dir_out(d: Direction | None) -> ImportedDirection | None:
    if d is None:
        return None
    return ImportedDirection(
        bw_bytes=d.bw_bytes,
        iops=d.iops,
        io_bytes=d.io_bytes,
        total_ios=d.total_ios,
        runtime_ms=d.runtime_ms,
        lat=_lat_out(d.lat),
        clat=_lat_out(d.clat),
        slat=_lat_out(d.slat),
    )


def _job_out(j: Job) -> ImportedJob:
    return ImportedJob(
        name=j.name,
        group=j.group,
        settings=dict(j.settings),
        read=_dir_out(j.read),
        write=_dir_out(j.write),
        trim=_dir_out(j.trim),
        metrics=dict(j.metrics),
    )


def _host_name(labels: ImportLabels, run: Run) -> str:
    if labels.host:
        return labels.host
    found = re.sub(r"[^A-Za-z0-9_.\-]", "-", run.host.get("hostname", "")).strip("-.")[:120]
    return found or DEFAULT_HOST


def _device_name(labels: ImportLabels, run: Run) -> str:
    if labels.device:
        return labels.device
    d = run.device
    return (d.get("model") or d.get("name") or d.get("target") or "unknown device")[:200]


def _times(run: Run) -> tuple[datetime, datetime]:
    """The run's start and end as the file states them; else it ends now and lasts its longest job."""
    longest = 0.0
    for j in run.jobs:
        for d in (j.read, j.write, j.trim):
            if d is not None and d.runtime_ms:
                longest = max(longest, d.runtime_ms)
    end = run.finished_at or (
        run.started_at + timedelta(milliseconds=longest) if run.started_at else utcnow()
    )
    start = run.started_at or end - timedelta(milliseconds=longest)
    if end.tzinfo is None:
        end = end.replace(tzinfo=utcnow().tzinfo)
    if start.tzinfo is None:
        start = start.replace(tzinfo=end.tzinfo)
    return (start, end) if start <= end else (end, end)


def _run_out(labels: ImportLabels, run: Run, run_id: uuid.UUID | None) -> ImportedRun:
    start, end = (run.started_at, run.finished_at)
    return ImportedRun(
        name=labels.name or run.name,
        run_id=run_id,
        url=_url(run_id) if run_id else None,
        host=_host_name(labels, run),
        device=_device_name(labels, run),
        started_at=start,
        finished_at=end,
        host_facts=dict(run.host),
        device_facts=dict(run.device),
        command_line=run.command_line,
        absent=list(run.absent),
        notes=list(run.notes)[:200],
        jobs=[_job_out(j) for j in run.jobs],
    )


def _url(run_id: uuid.UUID) -> str:
    return f"{get_settings().public_url.rstrip('/')}/runs/{run_id}"


# --- importing ---------------------------------------------------------------------------------


def parse(fp: BinaryIO, *, file_name: str, hint: str | None) -> ParsedFile:
    """The registry's parse, its errors as the API's 422."""
    try:
        parsed = registry.parse(file_name, fp, hint)
    except ImportFormatError as e:
        raise ImportInvalid(e) from e
    if not parsed.runs or not any(r.jobs for r in parsed.runs):
        raise ImportInvalid(
            ImportFormatError(parsed.format, "no results in the file", expected="at least one test")
        )
    if len(parsed.runs) > MAX_RUNS:
        raise ImportInvalid(
            ImportFormatError(parsed.format, f"{len(parsed.runs)} runs", expected=f"at most {MAX_RUNS}")
        )
    return parsed


def content_type_of(file_name: str, fmt: str) -> str:
    if fmt.startswith("fio-json") or file_name.lower().endswith(".json"):
        return "application/json"
    guess, _ = mimetypes.guess_type(file_name)
    if guess in ("text/csv", "text/html", "application/xml", "text/xml"):
        return guess if guess != "text/xml" else "application/xml"
    return "text/plain; charset=utf-8"


def _file_row(
    labels: ImportLabels,
    principal: UserPrincipal,
    parsed: ParsedFile,
    file_name: str,
    sha256: str,
    size_bytes: int,
    data: bytes,
) -> ImportFile:
    """An imported file's row (gzip-compressed bytes): the one owner of its columns' bounds."""
    return ImportFile(
        team_id=labels.team_id,
        sha256=sha256,
        file_name=file_name,
        content_type=content_type_of(file_name, parsed.format),
        format=parsed.format[:40],
        tool=parsed.tool[:60],
        version=(parsed.version or None) and parsed.version[:100],
        size_bytes=size_bytes,
        encoding="gzip",
        data=data,
        created_by=principal.user_id,
    )


def _compress(fp: BinaryIO) -> bytes:
    fp.seek(0)
    z = zlib.compressobj(1, zlib.DEFLATED, GZIP_WBITS)  # level 1: a 200 MB json+ file in about 2 s
    parts = []
    while chunk := fp.read(READ_CHUNK):
        parts.append(z.compress(chunk))
    parts.append(z.flush())
    return b"".join(parts)


def _check_labels(session: Session, principal: UserPrincipal, labels: ImportLabels) -> None:
    principal.require(labels.team_id, Role.member)
    if labels.environment_id is not None:
        env = environment_repo.get(session, labels.environment_id)
        if env is None or env.team_id != labels.team_id:
            raise Invalid("environment_id", "no such environment in the team")


def import_file(
    session: Session,
    *,
    principal: UserPrincipal,
    labels: ImportLabels,
    fp: BinaryIO,
    file_name: str,
    sha256: str,
    size_bytes: int,
    dry_run: bool,
) -> ImportResult:
    """POST /imports: members of the team (a write- or upload-scoped token)."""
    _check_labels(session, principal, labels)
    file_name = _base_name(file_name)
    if not dry_run:
        done = repository.file_by_hash(session, labels.team_id, sha256)
        if done is not None:
            return _duplicate(session, labels, done)
    fp.seek(0)
    parsed = parse(fp, file_name=file_name, hint=labels.format)
    out = ImportResult(
        format=parsed.format,
        tool=parsed.tool,
        version=parsed.version,
        file_name=file_name,
        sha256=sha256,
        size_bytes=size_bytes,
        dry_run=dry_run,
        duplicate=False,
        runs=[_run_out(labels, r, None) for r in parsed.runs],
        warnings=list(parsed.warnings),
    )
    if dry_run:
        return out
    row = repository.add_file(
        session, _file_row(labels, principal, parsed, file_name, sha256, size_bytes, _compress(fp))
    )
    if row is None:  # the same bytes imported by a concurrent request
        found = repository.file_by_hash(session, labels.team_id, sha256)
        assert found is not None
        return _duplicate(session, labels, found)
    origin = {
        "kind": "imported",
        "tool": parsed.tool,
        "version": parsed.version,
        "format": parsed.format,
        "file_id": str(row.id),
        "file_name": file_name,
        "sha256": sha256,
    }
    ids = _store(session, principal=principal, labels=labels, parsed=parsed, origin=origin)
    return _with_ids(out, ids)


def _base_name(file_name: str) -> str:
    return (file_name.replace("\\", "/").rsplit("/", 1)[-1] or "imported")[:255]


def import_set(
    session: Session,
    *,
    principal: UserPrincipal,
    labels: ImportLabels,
    files: list[tuple[str, BinaryIO, str, int]],
    dry_run: bool,
) -> ImportResult:
    """POST /imports, several files of one vdbench output directory (name, file, sha256, size):
    one run (vdbench.parse_set); each file kept as its own stored file, the flatfile (else the
    first by name) as the run's source, all of them downloadable (GET /runs/{id}/source?file=NAME).
    The same set again (its files' SHA-256s) answers the run it made."""
    _check_labels(session, principal, labels)
    files = [(_base_name(n), fp, h, z) for n, fp, h, z in files]
    digest = hashlib.sha256("\n".join(sorted(h for _, _, h, _ in files)).encode()).hexdigest()
    datas = []
    for name, fp, _, _ in files:
        fp.seek(0)
        datas.append((name, fp.read()))
    try:
        parsed = vdbench.parse_set(datas)
    except ImportFormatError as e:
        raise ImportInvalid(e) from e
    flat = [i for i, d in enumerate(datas) if vdbench.FLAT_IMPORTER.sniff(*d)]
    main = min(flat or range(len(files)), key=lambda i: (files[i][0], files[i][2]))  # not the order sent
    name = files[main][0]
    if not dry_run:
        done = repository.file_by_hash(session, labels.team_id, files[main][2])
        if done is not None:
            runs = [
                r.id
                for r in repository.runs_of_file(session, labels.team_id, done.id)
                if (r.origin or {}).get("set_sha256") == digest
            ]
            if runs:
                dup = _duplicate(session, labels, done)
                return dup.model_copy(
                    update={
                        "file_name": name,
                        "sha256": digest,
                        "size_bytes": sum(z for *_, z in files),
                        "runs": [r for r in dup.runs if r.run_id in runs],
                    }
                )
    out = ImportResult(
        format=parsed.format,
        tool=parsed.tool,
        version=parsed.version,
        file_name=name,
        sha256=digest,
        size_bytes=sum(z for *_, z in files),
        dry_run=dry_run,
        duplicate=False,
        runs=[_run_out(labels, r, None) for r in parsed.runs],
        warnings=[*parsed.warnings, "one vdbench run of the files " + ", ".join(n for n, *_ in files)],
    )
    if dry_run:
        return out
    kept = []
    for fname, fp, sha, size in files:
        row = repository.add_file(
            session, _file_row(labels, principal, parsed, fname, sha, size, _compress(fp))
        ) or repository.file_by_hash(session, labels.team_id, sha)  # these bytes were stored before
        assert row is not None
        kept.append({"file_id": str(row.id), "file_name": fname, "sha256": sha})
    origin = {
        "kind": "imported",
        "tool": parsed.tool,
        "version": parsed.version,
        "format": parsed.format,
        "file_id": kept[main]["file_id"],
        "file_name": name,
        "sha256": digest,
        "set_sha256": digest,
        "files": kept,
    }
    ids = _store(session, principal=principal, labels=labels, parsed=parsed, origin=origin)
    return _with_ids(out, ids)


def _store(
    session: Session,
    *,
    principal: UserPrincipal,
    labels: ImportLabels,
    parsed: ParsedFile,
    origin: dict[str, Any],
) -> list[uuid.UUID]:
    """Each run through the upload domain's path (external host, declared device, run, result,
    audit), then its origin. One run's failure fails the request: nothing is half-stored."""
    ids = []
    for i, run in enumerate(parsed.runs):
        start, end = _times(run)
        doc = engine_document(
            parsed,
            run,
            {"file_name": origin.get("file_name"), "sha256": origin.get("sha256"), "run_index": i},
        )
        try:
            doc = json.loads(
                json.dumps(doc, allow_nan=False).replace("\\u0000", "")
            )  # PostgreSQL stores no NUL
            body = _result_import(
                labels=labels, run=run, parsed=parsed, origin=origin, index=i, doc=doc, start=start, end=end
            )
        except ValueError as e:  # a figure not finite; a ValidationError is a ValueError too
            if not isinstance(e, ValidationError):
                raise ImportInvalid(
                    ImportFormatError(parsed.format, f"cannot be stored: {e}", expected="finite numbers")
                ) from None
            err = e.errors(include_url=False)[0]
            where = ".".join(str(x) for x in err["loc"])
            raise ImportInvalid(
                ImportFormatError(
                    parsed.format, f"cannot be stored: {where}: {err['msg']}", expected="storable values"
                )
            ) from None
        stored = upload_service.import_result(session, principal=principal, body=body)
        run_service.set_origin(session, run_id=stored.run_id, origin={**origin, "run_index": i})
        ids.append(stored.run_id)
    return ids


def _result_import(
    *,
    labels: ImportLabels,
    run: Run,
    parsed: ParsedFile,
    origin: dict[str, Any],
    index: int,
    doc: dict[str, Any],
    start: datetime,
    end: datetime,
) -> ResultImport:
    return ResultImport(
        team_id=labels.team_id,
        upload_id=f"import:{origin.get('sha256') or uuid.uuid4()}:{index}",
        host=_host_name(labels, run),
        device=DeclaredDevice(
            model=_device_name(labels, run),
            capacity_bytes=_capacity(run.device.get("size_bytes")),
        ),
        environment_id=labels.environment_id,
        name=(labels.name or run.name or parsed.tool)[:200],
        engine_result=doc,
        target_path=(run.device.get("target") or run.device.get("name") or "")[:4096],
        started_at=start,
        finished_at=end,
        tags=[],
    )


def _with_ids(out: ImportResult, ids: list[uuid.UUID]) -> ImportResult:
    runs = [r.model_copy(update={"run_id": i, "url": _url(i)}) for r, i in zip(out.runs, ids, strict=True)]
    return out.model_copy(update={"runs": runs})


def _capacity(v: Any) -> int | None:
    try:
        n = int(str(v))
    except (TypeError, ValueError):
        return None
    return n if 0 < n < 2**63 else None


def _duplicate(session: Session, labels: ImportLabels, row: ImportFile) -> ImportResult:
    runs = repository.runs_of_file(session, labels.team_id, row.id)
    return ImportResult(
        format=row.format,
        tool=row.tool,
        version=row.version,
        file_name=row.file_name,
        sha256=row.sha256,
        size_bytes=row.size_bytes,
        dry_run=False,
        duplicate=True,
        runs=[
            ImportedRun(
                name=r.name,
                run_id=r.id,
                url=_url(r.id),
                host="",
                device="",
                started_at=r.started_at,
                finished_at=r.finished_at,
                host_facts={},
                device_facts={},
                command_line=None,
                absent=[],
                notes=["imported before: nothing added"],
                jobs=[],
            )
            for r in runs
        ],
        warnings=[],
    )


# --- published figures -------------------------------------------------------------------------

_BW = {"B/s": 1, "KB/s": 1e3, "MB/s": 1e6, "GB/s": 1e9, "KiB/s": 2**10, "MiB/s": 2**20, "GiB/s": 2**30}
_LAT = {"ns": 1, "us": 1e3, "µs": 1e3, "ms": 1e6}


def published_run(body: PublishedImport) -> ParsedFile:
    """The figures as one run, a job per test (figures of one test and direction merge)."""
    tests: dict[tuple[str, str], dict[str, Any]] = {}
    for f in body.figures:
        direction: str = f.direction or ("write" if re.search(r"write|wr\b", f.test, re.I) else "read")
        t = tests.setdefault((f.test, direction), {"settings": {}, "bw": None, "iops": None, "lat": None})
        if f.unit in _BW:
            t["bw"] = f.value * _BW[f.unit]
        elif f.unit in ("IOPS", "kIOPS"):
            t["iops"] = f.value * (1000 if f.unit == "kIOPS" else 1)
        else:
            t["lat"] = f.value * _LAT[f.unit]
        for key, v in (("bs", f.bs_bytes), ("iodepth", f.iodepth), ("numjobs", f.numjobs)):
            if v is not None:
                t["settings"][key] = v
    jobs = []
    for (test, direction), t in tests.items():
        d = Direction(
            bw_bytes=t["bw"],
            iops=t["iops"],
            lat=Latency(mean_ns=t["lat"]) if t["lat"] is not None else None,
        )
        jobs.append(
            Job(
                name=test
                if (test, "read" if direction == "write" else "write") not in tests
                else f"{test} {direction}",
                settings={**t["settings"], "rw": direction},
                read=d if direction == "read" else None,
                write=d if direction == "write" else None,
            )
        )
    run = Run(
        name=body.name or f"{body.vendor} {body.model} (published)",
        jobs=jobs,
        device={
            "model": f"{body.vendor} {body.model}"[:200],
            **({"size_bytes": str(body.capacity_bytes)} if body.capacity_bytes else {}),
        },
        absent=[
            "everything but the published figures: not measured here (no runtime, I/O count or percentiles)"
        ],
        notes=[f"source: {body.reference}"],
    )
    return ParsedFile(format="published", tool=body.vendor, version=None, runs=[run])


def import_published(
    session: Session, *, principal: UserPrincipal, body: PublishedImport, dry_run: bool
) -> ImportResult:
    """POST /imports/published: members of the team. Idempotent as a file is: the same figures
    (the canonical JSON of the body) again answer the run they made."""
    labels = ImportLabels(
        team_id=body.team_id,
        host="published",
        device=f"{body.vendor} {body.model}"[:200],
        environment_id=body.environment_id,
        name=body.name,
    )
    _check_labels(session, principal, labels)
    raw = json.dumps(body.model_dump(mode="json"), sort_keys=True, ensure_ascii=False).encode()
    sha = hashlib.sha256(raw).hexdigest()
    parsed = published_run(body)
    out = ImportResult(
        format="published",
        tool=body.vendor,
        version=None,
        file_name="published.json",
        sha256=sha,
        size_bytes=len(raw),
        dry_run=dry_run,
        duplicate=False,
        runs=[_run_out(labels, r, None) for r in parsed.runs],
        warnings=[],
    )
    if dry_run:
        return out
    done = repository.file_by_hash(session, body.team_id, sha)
    if done is not None:
        return _duplicate(session, labels, done)
    row = repository.add_file(
        session,
        ImportFile(
            team_id=body.team_id,
            sha256=sha,
            file_name="published.json",
            content_type="application/json",
            format="published",
            tool=body.vendor[:60],
            version=None,
            size_bytes=len(raw),
            encoding="gzip",
            data=_gzip(raw),
            created_by=principal.user_id,
        ),
    )
    if row is None:
        found = repository.file_by_hash(session, body.team_id, sha)
        assert found is not None
        return _duplicate(session, labels, found)
    origin = {
        "kind": "published",
        "tool": body.vendor,
        "version": None,
        "format": "published",
        "file_id": str(row.id),
        "file_name": "published.json",
        "sha256": sha,
        "reference": body.reference,
    }
    ids = _store(session, principal=principal, labels=labels, parsed=parsed, origin=origin)
    return _with_ids(out, ids)


def _gzip(raw: bytes) -> bytes:
    z = zlib.compressobj(6, zlib.DEFLATED, GZIP_WBITS)
    return z.compress(raw) + z.flush()


# --- the original bytes ------------------------------------------------------------------------


def source(
    session: Session, *, principal: UserPrincipal, run_id: uuid.UUID, file_name: str | None = None
) -> tuple[ImportFile, Iterator[bytes]]:
    """GET /runs/{id}/source: the team's members (any role) download the imported file, byte for byte;
    `file_name`: one of the files a run of several was made of (a vdbench output directory)."""
    run = run_service.get(session, principal=principal, run_id=run_id)
    origin = run.origin or {}
    if file_name is not None:
        match = [f for f in origin.get("files") or [] if f.get("file_name") == file_name]
        if not match:
            raise NotFound("no such file among the run's imported files", code="no_source")
        origin = match[0]
    try:
        file_id = uuid.UUID(str(origin.get("file_id")))
    except ValueError:
        raise NotFound("this run was not imported from a file", code="no_source") from None
    row = repository.file_by_id(session, file_id)
    if row is None or row.team_id != run.team_id:
        raise NotFound("the imported file is no longer stored", code="no_source")
    return row, _inflate(row.data)


def _inflate(data: bytes) -> Iterator[bytes]:
    z = zlib.decompressobj(GZIP_WBITS)
    for i in range(0, len(data), READ_CHUNK):
        out = z.decompress(data[i : i + READ_CHUNK], READ_CHUNK * 8)
        yield out
        while z.unconsumed_tail:
            yield z.decompress(z.unconsumed_tail, READ_CHUNK * 8)
    yield z.flush()
