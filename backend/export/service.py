"""A team's whole data as one zip of JSON and CSV (ADR 0021; format: docs/teams.md § Export).

The zip is written during the request into a spooled temporary file (memory up to SPOOL_BYTES,
then disk), reading the database in batches inside the request's own transaction (one consistent
snapshot; the caller's authorization and the `team.exported` audit event are in it too), and then
streamed to the client in chunks: a big team costs disk, not memory, and the answer starts once
the snapshot is written. A Celery task with progress would add a stored file to expire and a
second download route; docs/teams.md § Export says when that would be worth it."""

import csv
import io
import json
import tempfile
import uuid
import zipfile
from collections.abc import Iterable, Iterator
from datetime import date, datetime
from typing import IO, Any

from sqlalchemy import inspect
from sqlalchemy.orm import Session

from backend.audit import service as audit
from backend.auth.principal import UserPrincipal
from backend.errors import NotFound
from backend.export import repository
from backend.export.schemas import ENERGY_CSV, FORMAT, JOBS_CSV, RUNS_CSV, SECRET_COLUMNS, SERIES_CSV, VERSION
from backend.kit.csv import cell
from backend.kit.time import utcnow
from backend.models import Role, ShareLink

SPOOL_BYTES = 16 * 1024 * 1024
CHUNK = 256 * 1024


def _default(value: Any) -> Any:
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, uuid.UUID):
        return str(value)
    if hasattr(value, "value"):  # enums
        return value.value
    raise TypeError(f"not JSON: {type(value).__name__}")


def _dumps(value: Any) -> bytes:
    return json.dumps(value, default=_default, ensure_ascii=False, separators=(",", ":")).encode()


def row_dict(obj: Any) -> dict[str, Any]:
    """An ORM row as {column: value}, without the table's secret columns."""
    mapper = inspect(obj).mapper
    table = mapper.persist_selectable.name
    hidden = SECRET_COLUMNS.get(table, frozenset())
    return {a.key: getattr(obj, a.key) for a in mapper.column_attrs if a.key not in hidden}


def _share_link(link: ShareLink, run_ids: set[uuid.UUID]) -> dict[str, Any]:
    """A share link's row; a comparison's target without the runs deleted since it was shared
    (their ids are gone from everything else in the export) and `runs_deleted` counting them, as
    the live link says (GET /shared/{token})."""
    row = row_dict(link)
    if link.kind != "comparison":
        return row
    target = dict(link.target)
    frozen = [str(r) for r in target.get("runs") or []]
    kept = [r for r in frozen if _uuid(r) in run_ids]
    target["runs"] = kept
    if target.get("baseline") is not None and str(target["baseline"]) not in kept:
        target["baseline"] = None
    return {**row, "target": target, "runs_deleted": len(frozen) - len(kept)}


def _uuid(value: str) -> uuid.UUID | None:
    try:
        return uuid.UUID(value)
    except ValueError:
        return None


def _csv_value(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, datetime | uuid.UUID):
        return _default(value)
    if hasattr(value, "value") and not isinstance(value, int | float | str):
        return value.value
    return cell(value)


class _Zip:
    def __init__(self, out: IO[bytes]) -> None:
        self.zf = zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=6)
        self.counts: dict[str, int] = {}

    def json(self, name: str, value: Any) -> None:
        self.zf.writestr(name, _dumps(value) + b"\n")

    def json_list(self, name: str, items: Iterable[dict[str, Any]]) -> int:
        n = 0
        with self.zf.open(name, "w", force_zip64=True) as f:
            f.write(b"[")
            for item in items:
                f.write((b",\n" if n else b"\n") + _dumps(item))
                n += 1
            f.write(b"\n]\n")
        self.counts[name] = n
        return n

    def csv(self, name: str, header: Iterable[str], rows: Iterable[Iterable[Any]]) -> int:
        n = 0
        with self.zf.open(name, "w", force_zip64=True) as raw:
            text = io.TextIOWrapper(raw, encoding="utf-8", newline="")
            w = csv.writer(text)
            w.writerow(list(header))
            for row in rows:
                w.writerow([_csv_value(v) for v in row])
                n += 1
            text.flush()
            text.detach()
        self.counts[name] = n
        return n


def _write(session: Session, z: _Zip, team_id: uuid.UUID, exported_by: str) -> None:
    team = repository.team(session, team_id)
    assert team is not None
    z.json("team.json", row_dict(team))
    z.json_list(
        "members.json",
        (
            {
                "user_id": u.id,
                "email": u.email,
                "display_name": u.display_name,
                "role": m.role,
                "joined_at": m.created_at,
                "sign_in": "password" if u.password_hash else "openid_connect",
            }
            for m, u in repository.members(session, team_id)
        ),
    )
    z.json_list("agents.json", (row_dict(a) for a in repository.agents(session, team_id)))
    z.json_list("devices.json", (row_dict(d) for d in repository.devices(session, team_id)))
    z.json_list("environments.json", (row_dict(e) for e in repository.environments(session, team_id)))
    z.csv(
        "environments_grid_intensity.csv",
        ("environment_id", "hour_utc", "g_per_kwh"),
        ((h.environment_id, h.hour_utc, h.g_per_kwh) for h in repository.grid_hours(session, team_id)),
    )
    z.json_list("workloads.json", (row_dict(w) for w in repository.workloads(session, team_id)))
    z.json_list("campaigns.json", (row_dict(c) for c in repository.campaigns(session, team_id)))

    tags = repository.tags(session, team_id)
    run_rows: list[dict[str, Any]] = []
    for r in repository.runs(session, team_id):
        d = row_dict(r)
        d["tags"] = tags.get(r.id, [])
        run_rows.append(d)
    z.json_list("runs.json", run_rows)
    z.csv(
        "runs.csv",
        RUNS_CSV,
        ([*(d.get(c) for c in RUNS_CSV[:-1]), " ".join(d["tags"])] for d in run_rows),
    )
    del run_rows

    documents = 0
    for res in repository.results(session, team_id):
        meta = row_dict(res)
        doc = meta.pop("engine_result")
        z.json(f"runs/{res.run_id}/engine.json", doc)
        z.json(f"runs/{res.run_id}/result.json", meta)
        documents += 1
    z.counts["runs/*/engine.json"] = documents
    powers = 0
    for p in repository.power(session, team_id):
        z.json(f"runs/{p.run_id}/power.json", row_dict(p))
        powers += 1
    z.counts["runs/*/power.json"] = powers
    # a multi-target run's targets: each one's row, and its engine document beside the combined one
    target_rows: list[dict[str, Any]] = []
    target_documents = 0
    for t in repository.run_targets(session, team_id):
        row = row_dict(t)
        doc = row.pop("engine_result")
        if doc is not None:
            z.json(f"runs/{t.run_id}/targets/{t.target_index}/engine.json", doc)
            target_documents += 1
        target_rows.append(row)
    z.counts["runs/*/targets/*/engine.json"] = target_documents
    z.json_list("run_targets.json", target_rows)
    del target_rows

    z.csv(
        "result_jobs.csv",
        JOBS_CSV,
        ([getattr(j, c) for c in JOBS_CSV] for j in repository.result_jobs(session, team_id)),
    )
    z.csv(
        "result_series.csv",
        SERIES_CSV,
        ([getattr(p, c) for c in SERIES_CSV] for p in repository.series(session, team_id)),
    )
    z.csv("power_samples.csv", ("run_id", "t_ns", "value"), repository.power_samples(session, team_id))
    energy = list(repository.energy(session, team_id))
    z.csv("energy.csv", ENERGY_CSV, ([getattr(e, c) for c in ENERGY_CSV] for e in energy))
    z.json_list("energy.json", (row_dict(e) for e in energy))

    comments = list(repository.comments(session, team_id))
    people = repository.user_labels(session, {c.author_id for c in comments if c.author_id})
    z.json_list(
        "comments.json",
        (
            {
                **row_dict(c),
                "author": people[c.author_id][1] if c.author_id in people else "deleted user",
            }
            for c in comments
        ),
    )
    run_ids = repository.run_ids(session, team_id)
    z.json_list(
        "share_links.json", (_share_link(s, run_ids) for s in repository.share_links(session, team_id))
    )
    z.json_list("invitations.json", (row_dict(i) for i in repository.invitations(session, team_id)))
    z.json_list("audit.json", (row_dict(e) for e in repository.audit_events(session, team_id)))
    z.json(
        "manifest.json",
        {
            "format": FORMAT,
            "version": VERSION,
            "team": {"id": team.id, "name": team.name},
            "exported_at": utcnow(),
            "exported_by": exported_by,
            "files": z.counts,
            "units": "bytes, ns, s, W, J, gCO2e; UTC timestamps (ISO 8601)",
        },
    )


def export_team(session: Session, *, principal: UserPrincipal, team_id: uuid.UUID) -> tuple[str, IO[bytes]]:
    """The export's file name and the finished zip, rewound (the caller streams and closes it)."""
    if team_id not in principal.team_ids:
        raise NotFound("team not found")
    principal.require(team_id, Role.admin)
    team = repository.team(session, team_id)
    if team is None:
        raise NotFound("team not found")
    event = audit.record(
        session,
        team_id=team_id,
        action="team.exported",
        target_kind="team",
        target_id=team_id,
        user_id=principal.user_id,
    )
    session.flush()
    out = tempfile.SpooledTemporaryFile(max_size=SPOOL_BYTES)  # noqa: SIM115 - closed by chunks()
    try:
        z = _Zip(out)
        _write(session, z, team_id, event.actor)
        z.zf.close()
    except BaseException:
        out.close()
        raise
    out.seek(0)
    # the team's own name, any script: the router's Content-Disposition encodes it (RFC 6266)
    slug = "".join(ch if ch.isalnum() or ch in "-_" else "-" for ch in team.name)
    slug = "-".join(x for x in slug.split("-") if x)[:60].strip("-") or "team"
    return f"iowatt-{slug}-{utcnow():%Y%m%d-%H%M%S}.zip", out


def chunks(f: IO[bytes]) -> Iterator[bytes]:
    """The file in CHUNK-sized pieces; closes it at the end (or when the client goes away)."""
    try:
        while block := f.read(CHUNK):
            yield block
    finally:
        f.close()
