import hashlib
import tempfile
import uuid
from typing import Annotated, Any
from urllib.parse import quote

from fastapi import APIRouter, Query, Request, Response, status
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import ValidationError
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile
from starlette.formparsers import MultiPartException, MultiPartParser

from backend.auth.deps import SessionDep, UploaderDep, UserDep
from backend.errors import AppError, Invalid
from backend.imports import catalog, service
from backend.imports.formats import registry, vdbench
from backend.imports.formats.base import ImportFormatError
from backend.imports.schemas import (
    HOST_PATTERN,
    ImportFormat,
    ImportLabels,
    ImportResult,
    ImportText,
    PublishedImport,
)
from backend.kit import lanes
from backend.kit.lanes import BULK

router = APIRouter(tags=["imports"], dependencies=[BULK])
SPOOL_BYTES = 8 << 20
# multipart/form-data: at most this many file parts, text fields and bytes per text field
MAX_FILES = 32
MAX_FIELDS = 16
MAX_FIELD_BYTES = 4096
LABEL_FIELDS = frozenset({"team_id", "host", "device", "environment_id", "name", "format"})
SOURCE_TYPES = (
    "application/json",
    "text/plain; charset=utf-8",
    "text/csv",
    "text/html",
    "application/xml",
    "application/octet-stream",
)  # an upload above this waits on disk, not in memory


class UnsupportedMedia(AppError):
    status_code = 415
    code = "unsupported_media_type"


def _inline(schema: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in schema.items() if k != "title"}


IMPORT_BODY = {
    "requestBody": {
        "required": True,
        "content": {
            "application/json": {"schema": _inline(ImportText.model_json_schema())},
            "application/octet-stream": {
                "schema": {"type": "string", "format": "binary"},
            },
            "multipart/form-data": {
                "schema": {
                    "type": "object",
                    "properties": {
                        "file": {"type": "array", "items": {"type": "string", "format": "binary"}},
                        **{
                            k: v
                            for k, v in ImportLabels.model_json_schema()["properties"].items()
                            if k in LABEL_FIELDS
                        },
                    },
                    "required": ["file"],
                },
            },
        },
        "description": "pasted text with its labels (JSON); one file's bytes as they are with the "
        "labels as query parameters (team_id required); or one or several files as multipart/form-data "
        f"(at most {MAX_FILES} file parts, the labels as text fields or query parameters; the "
        "summary/totals/flatfile.html of one vdbench output directory make one run)",
    }
}


@router.post(
    "/imports",
    response_model=ImportResult,
    status_code=status.HTTP_201_CREATED,
    openapi_extra=IMPORT_BODY,
    responses={
        200: {"model": ImportResult, "description": "a dry run, or this file was imported before"},
        413: {"description": "larger than IOWATT_IMPORT_MAX_BYTES"},
        207: {
            "description": 'several files (multipart): {"files": [ImportResult, ...]} in the order sent, '
            "all stored in one transaction (one bad file stores none); a vdbench output directory's "
            "files answer one ImportResult, where the first of them was"
        },
        415: {"description": "a urlencoded form (send multipart/form-data, a file's bytes or JSON)"},
        422: {"description": "the file is not what its format says: the format, the line, what was expected"},
    },
)
async def create_import(
    request: Request,
    principal: UploaderDep,
    session: SessionDep,
    response: Response,
    dry_run: Annotated[bool, Query(description="answer what the file holds; store nothing")] = False,
    team_id: Annotated[uuid.UUID | None, Query(description="with a file's bytes: the team")] = None,
    format: Annotated[str | None, Query(min_length=1, max_length=40, description="the format's name")] = None,
    host: Annotated[str | None, Query(min_length=1, max_length=120, pattern=HOST_PATTERN)] = None,
    device: Annotated[str | None, Query(min_length=1, max_length=200)] = None,
    environment_id: Annotated[uuid.UUID | None, Query()] = None,
    name: Annotated[str | None, Query(min_length=1, max_length=200)] = None,
    file_name: Annotated[str | None, Query(min_length=1, max_length=255)] = None,
) -> ImportResult | JSONResponse:  # JSONResponse: several files, 207
    """Import another tool's output (fio JSON/json+/terse/normal, CrystalDiskMark, DiskSpd, vdbench,
    elbencho, sysbench, PostMark: docs/imports.md) as runs of the team, each labelled "imported
    from <tool>" with the `imported` validity flag; the original bytes are kept
    (GET /runs/{id}/source). `dry_run=true` answers what was found and stores nothing. The same
    bytes again answer the runs they made (200, duplicate). Members of the team (write or upload token)."""
    ctype = request.headers.get("content-type", "").split(";")[0].strip().lower()
    query = {
        "team_id": team_id,
        "host": host,
        "device": device,
        "environment_id": environment_id,
        "name": name,
        "format": format,
    }
    if ctype == "multipart/form-data":
        return await _create_from_multipart(request, principal, session, response, query, dry_run)
    if ctype == "application/json":
        async with lanes.outside(request):  # the text arrives without a bulk slot (ADR 0056)
            raw = await request.body()
        try:
            body = ImportText.model_validate_json(raw)
        except ValidationError as e:
            raise RequestValidationError(
                [{**err, "loc": ("body", *err["loc"])} for err in e.errors(include_url=False)]
            ) from None
        data = body.text.encode("utf-8")
        spool: Any = tempfile.SpooledTemporaryFile(max_size=SPOOL_BYTES)  # noqa: SIM115 - closed below
        spool.write(data)
        labels = ImportLabels(**body.model_dump(exclude={"text", "file_name"}))
        fname, digest, size = body.file_name, hashlib.sha256(data).hexdigest(), len(data)
    elif ctype == "application/x-www-form-urlencoded":
        raise UnsupportedMedia(
            "send files as multipart/form-data or a file's bytes as the body (Content-Type: "
            "application/octet-stream) with the labels as query parameters, or pasted text as JSON",
        )
    else:
        if team_id is None:
            raise _missing_team()
        labels = ImportLabels(**query)
        h = hashlib.sha256()
        size = 0
        spool = tempfile.SpooledTemporaryFile(max_size=SPOOL_BYTES)  # noqa: SIM115 - closed below
        async with lanes.outside(request):  # the bytes arrive without a bulk slot (ADR 0056)
            async for chunk in request.stream():  # the body limit (backend/kit/limits.py) applies here
                h.update(chunk)
                size += len(chunk)
                spool.write(chunk)
        fname, digest = file_name or "imported", h.hexdigest()
    try:
        out = await run_in_threadpool(
            service.import_file,
            session,
            principal=principal,
            labels=labels,
            fp=spool,
            file_name=fname,
            sha256=digest,
            size_bytes=size,
            dry_run=dry_run,
        )
    finally:
        spool.close()
    if dry_run or out.duplicate:
        response.status_code = status.HTTP_200_OK
    return out


def _missing_team() -> RequestValidationError:
    return RequestValidationError(
        [{"type": "missing", "loc": ("query", "team_id"), "msg": "Field required", "input": None}]
    )


async def _create_from_multipart(
    request: Request,
    principal: Any,
    session: Any,
    response: Response,
    query: dict[str, Any],
    dry_run: bool,
) -> ImportResult | JSONResponse:
    """multipart/form-data: one or several file parts (any field name) and the labels as text
    fields (or query parameters). The body limit is the octet-stream path's (the whole request);
    each file spools to disk above 1 MiB (Starlette's UploadFile). Every file is imported in the
    request's one transaction: one bad file stores none. One file answers its ImportResult (201,
    or 200 for a dry run or a duplicate); several answer 207 with {"files": [ImportResult, ...]}
    in the order sent."""
    parser = MultiPartParser(
        request.headers,
        request.stream(),
        max_files=MAX_FILES,
        max_fields=MAX_FIELDS,
        max_part_size=MAX_FIELD_BYTES,
    )
    try:
        async with lanes.outside(request):  # the files arrive without a bulk slot (ADR 0056)
            form = await parser.parse()
    except MultiPartException as e:
        raise Invalid("body", f"multipart/form-data: {e.message}") from None
    try:
        fields: dict[str, Any] = {}
        uploads: list[UploadFile] = []
        for key, value in form.multi_items():
            if isinstance(value, UploadFile):
                uploads.append(value)
            elif key in LABEL_FIELDS:
                fields[key] = value or None
            else:
                raise Invalid(key, f"unknown form field; the labels are {', '.join(sorted(LABEL_FIELDS))}")
        if not uploads:
            raise Invalid("file", "no file part in the multipart/form-data body")
        merged = {k: v for k, v in query.items() if v is not None} | {
            k: v for k, v in fields.items() if v is not None
        }
        if merged.get("team_id") is None:
            raise _missing_team()
        try:
            labels = ImportLabels.model_validate(merged)
        except ValidationError as e:
            raise RequestValidationError(
                [{**err, "loc": ("body", *err["loc"])} for err in e.errors(include_url=False)]
            ) from None
        parts: list[tuple[str, Any, str, int]] = []
        for up in uploads:
            h = hashlib.sha256()
            size = 0
            up.file.seek(0)
            while chunk := up.file.read(1 << 20):
                h.update(chunk)
                size += len(chunk)
            up.file.seek(0)
            parts.append((up.filename or "imported", up.file, h.hexdigest(), size))
        vd = _vdbench_parts(parts, labels.format)
        results: list[ImportResult] = []
        for i, (fname, fp, digest, size) in enumerate(parts):
            if vd and i == vd[0]:  # one vdbench output directory's files: one run, where the first was
                results.append(
                    await run_in_threadpool(
                        service.import_set,
                        session,
                        principal=principal,
                        labels=labels,
                        files=[parts[j] for j in vd],
                        dry_run=dry_run,
                    )
                )
            elif i not in vd:
                results.append(
                    await run_in_threadpool(
                        service.import_file,
                        session,
                        principal=principal,
                        labels=labels,
                        fp=fp,
                        file_name=fname,
                        sha256=digest,
                        size_bytes=size,
                        dry_run=dry_run,
                    )
                )
    finally:
        await form.close()
    if len(results) > 1:
        return JSONResponse(
            status_code=207,
            content={"files": [r.model_dump(mode="json") for r in results]},
        )
    if dry_run or results[0].duplicate:
        response.status_code = status.HTTP_200_OK
    return results[0]


def _vdbench_parts(parts: list[tuple[str, Any, str, int]], hint: str | None) -> list[int]:
    """The indexes of the parts that are vdbench output files (summary/totals/flatfile.html) when
    there are two or more of them (a run's output directory: imported as one run), else none."""
    if len(parts) < 2:
        return []
    if hint is not None:
        try:
            if registry.by_name(hint).tool != "vdbench":
                return []
        except ImportFormatError:
            return []  # each file's import answers the unknown format
    ours = {vdbench.SUMMARY_IMPORTER.format, vdbench.FLAT_IMPORTER.format}
    found = []
    for i, (fname, fp, _, _) in enumerate(parts):
        head = fp.read(registry.HEAD_BYTES)
        fp.seek(0)
        claims = registry.candidates(fname, head)
        if claims and set(claims) <= ours:
            found.append(i)
    return found if len(found) > 1 else []


@router.get("/imports/formats", response_model=list[ImportFormat])
def list_import_formats(principal: UserDep) -> list[ImportFormat]:
    """The formats the importers read: the key to give as the `format` hint, the tool, the other
    names the hint accepts, the versions and the kinds of file. Any signed-in user."""
    del principal
    return catalog.formats()


@router.post(
    "/imports/published",
    response_model=ImportResult,
    status_code=status.HTTP_201_CREATED,
    responses={200: {"model": ImportResult, "description": "a dry run, or these figures were stored before"}},
)
def create_published(
    body: PublishedImport,
    principal: UploaderDep,
    session: SessionDep,
    response: Response,
    dry_run: bool = False,
) -> ImportResult:
    """A datasheet's or review's figures (vendor, model, test, value, unit, reference) as a run
    marked published: labelled everywhere as not measured here (the `published` validity flag).
    Members of the team."""
    out = service.import_published(session, principal=principal, body=body, dry_run=dry_run)
    if dry_run or out.duplicate:
        response.status_code = status.HTTP_200_OK
    return out


@router.get(
    "/runs/{run_id}/source",
    response_class=StreamingResponse,
    responses={
        200: {
            "description": "the imported file, byte for byte (its content type as imported)",
            "content": {t: {} for t in SOURCE_TYPES},
        }
    },
)
def run_source(
    run_id: uuid.UUID,
    principal: UserDep,
    session: SessionDep,
    file: Annotated[
        str | None,
        Query(
            min_length=1,
            max_length=255,
            description="a run made of several files (a vdbench output directory): which one, by name",
        ),
    ] = None,
) -> StreamingResponse:
    """The file an imported run was made of, as it was imported (its content type and name); a run
    of a vdbench output directory's files: its flatfile (else the first by name), the others by `file`.
    The run's team (any role)."""
    row, chunks = service.source(session, principal=principal, run_id=run_id, file_name=file)
    ascii_name = "".join(
        c if c.isascii() and c.isprintable() and c not in '"\\;' else "_" for c in row.file_name
    )
    return StreamingResponse(
        chunks,
        media_type=row.content_type,
        headers={
            "Content-Disposition": (
                f"attachment; filename=\"{ascii_name}\"; filename*=UTF-8''{quote(row.file_name)}"
            ),
            "X-Content-Type-Options": "nosniff",
            "X-Content-SHA256": row.sha256,
        },
    )
