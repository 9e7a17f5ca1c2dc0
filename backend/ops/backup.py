"""`iowatt-server backup` and `restore` (docs/operations.md § Backups and restores, ADR 0044).

A backup is one tar file, mode 0600 (it holds secrets):

    manifest.json        format, iowatt version, schema revision, time, and every other member's
                         size and SHA-256
    database.dump        pg_dump --format=custom of the instance's database: one snapshot (pg_dump
                         reads in one repeatable-read transaction), taken while the server runs
    secrets/server.env   IOWATT_SECRET_KEY as the server holds it
    secrets/files/NAME   files named with --secrets-file (compose's .env) or found in --state-dir
                         (make up's secret-key, admin-token, admin-credentials, instance-id)
    tls-ca/...           the TLS CA directory named with --tls-ca (Caddy's local CA: losing it means
                         re-pinning every agent)

Restore checks every hash first, refuses a backup made by a newer release (its schema revision is
unknown here) and a database that is not empty (unless --force), restores with pg_restore in one
transaction, then upgrades the schema to this release's head. Secrets and the CA are written to
--extract-to (0600 files in 0700 directories), never over a running instance's files.

pg_dump and pg_restore come from IOWATT_PG_BIN, else PostgreSQL 15's directory, else PATH; the
password reaches them in PGPASSWORD, never on a command line.
"""

import hashlib
import io
import json
import os
import shutil
import subprocess
import tarfile
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from alembic.script import ScriptDirectory
from sqlalchemy import create_engine, pool, text
from sqlalchemy.engine import make_url

from backend import __version__
from backend.config import get_settings
from backend.ops import migrate

FORMAT = "iowatt-backup/1"
STATE_SECRETS = ("secret-key", "admin-token", "admin-credentials", "instance-id")
PG15 = Path("/usr/lib/postgresql/15/bin")


class BackupError(Exception):
    """The backup or restore cannot go on; the message says why."""


@dataclass(frozen=True)
class Manifest:
    data: dict[str, Any]

    @property
    def files(self) -> dict[str, dict[str, Any]]:
        return {f["path"]: f for f in self.data["files"]}


def _pg_tool(name: str) -> str:
    for d in (os.environ.get("IOWATT_PG_BIN"), str(PG15)):
        if d and (Path(d) / name).is_file():
            return str(Path(d) / name)
    found = shutil.which(name)
    if not found:
        raise BackupError(f"{name} is missing: install PostgreSQL's client (postgresql-client-15)")
    return found


def libpq(url: str) -> tuple[list[str], dict[str, str]]:
    """Connection arguments for pg_dump/pg_restore and the environment with the password."""
    u = make_url(url)
    args = ["--host", u.host or "127.0.0.1", "--port", str(u.port or 5432), "--username", u.username or ""]
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    if u.password:
        env["PGPASSWORD"] = u.password
    return args + ["--dbname", u.database or ""], env


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _revision(url: str) -> list[str]:
    engine = create_engine(url, poolclass=pool.NullPool)
    try:
        with engine.connect() as conn:
            return migrate.current_revisions(conn)
    finally:
        engine.dispose()


def _run(cmd: list[str], env: dict[str, str], what: str) -> None:
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        raise BackupError(f"{what} failed (exit {done.returncode}): {' / '.join(tail)[:800]}")


def backup(
    out_dir: Path,
    *,
    url: str | None = None,
    state_dir: Path | None = None,
    secrets_files: tuple[Path, ...] = (),
    tls_ca: Path | None = None,
    now: datetime | None = None,
) -> Path:
    """Write a backup archive into out_dir; returns its path."""
    settings = get_settings()
    url = url or settings.database_url
    now = now or datetime.now(UTC)
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / f"iowatt-backup-{now.strftime('%Y%m%dT%H%M%SZ')}.tar"
    with tempfile.TemporaryDirectory(prefix="iowatt-backup-") as tmp:
        work = Path(tmp)
        dump = work / "database.dump"
        args, env = libpq(url)
        _run(
            [_pg_tool("pg_dump"), "--format=custom", "--no-password", "--file", str(dump), *args],
            env,
            "pg_dump",
        )
        members: list[tuple[str, Path]] = [("database.dump", dump)]
        server_env = work / "server.env"
        server_env.write_text(f"IOWATT_SECRET_KEY={settings.secret_key}\n")
        members.append(("secrets/server.env", server_env))
        for name in STATE_SECRETS if state_dir else ():
            p = state_dir / name  # type: ignore[operator]
            if p.is_file():
                members.append((f"secrets/files/{name}", p))
        for p in secrets_files:
            if not p.is_file():
                raise BackupError(f"--secrets-file {p}: no such file")
            members.append((f"secrets/files/{p.name}", p))
        if tls_ca is not None:
            if not tls_ca.is_dir():
                raise BackupError(f"--tls-ca {tls_ca}: no such directory")
            for p in sorted(tls_ca.rglob("*")):
                if p.is_file():
                    members.append((f"tls-ca/{p.relative_to(tls_ca)}", p))
        manifest = {
            "format": FORMAT,
            "iowatt_version": __version__,
            "schema_revisions": _revision(url),
            "created_at": now.isoformat().replace("+00:00", "Z"),
            "database": make_url(url).database,
            "files": [{"path": n, "bytes": p.stat().st_size, "sha256": _sha256(p)} for n, p in members],
        }
        fd = os.open(target.with_suffix(".tar.part"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as raw, tarfile.open(fileobj=raw, mode="w") as tar:
            blob = json.dumps(manifest, indent=2).encode() + b"\n"
            info = tarfile.TarInfo("manifest.json")
            info.size, info.mode, info.mtime = len(blob), 0o600, int(now.timestamp())
            tar.addfile(info, io.BytesIO(blob))
            for name, p in members:
                info = tar.gettarinfo(str(p), arcname=name)
                info.mode, info.uid, info.gid, info.uname, info.gname = 0o600, 0, 0, "", ""
                with p.open("rb") as f:
                    tar.addfile(info, f)
        os.replace(target.with_suffix(".tar.part"), target)
    return target


def _unpack(archive: Path, into: Path) -> None:
    """Unpack the archive's members into `into`: regular files only, each at a plain relative path
    below it, written 0600 (directories 0700). Anything else (a link, a device, a directory entry,
    an absolute or `..` path, a name twice, a file where another member needs a directory) is
    refused before anything is written: a backup holds files only.
    Not tarfile's `filter="data"`: Python 3.11 has it from 3.11.4, Debian 12's 3.11.2 does not."""
    try:
        with tarfile.open(archive, mode="r") as tar:
            _write_members(tar, archive, into)
    except (tarfile.TarError, EOFError) as e:
        raise BackupError(f"{archive} is not a readable backup archive: {e}") from e


def _write_members(tar: tarfile.TarFile, archive: Path, into: Path) -> None:
    members = tar.getmembers()
    names = {m.name for m in members}
    for m in members:
        parts = m.name.split("/")
        if (
            not m.isfile()
            or len(names) != len(members)
            or any("/".join(parts[:k]) in names for k in range(1, len(parts)))
            or m.name.startswith("/")
            or any(x in ("", ".", "..") for x in parts)
            or "\0" in m.name
        ):
            raise BackupError(
                f"{archive}: refusing member {m.name!r} (a backup holds plain relative files only)"
            )
    for m in members:
        dest = into.joinpath(*m.name.split("/"))
        try:
            dest.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            src = tar.extractfile(m)
            assert src is not None  # a regular file (checked above)
            fd = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
            with src, os.fdopen(fd, "wb") as out:
                shutil.copyfileobj(src, out)
        except OSError as e:
            raise BackupError(f"{archive}: cannot unpack {m.name!r}: {e.strerror}") from e


def read_manifest(archive: Path, into: Path) -> Manifest:
    """Unpack the archive into `into` (0700) and check every member against the manifest."""
    _unpack(archive, into)
    mf = into / "manifest.json"
    if not mf.is_file():
        raise BackupError(f"{archive} is not an iowatt backup (no manifest.json)")
    data = json.loads(mf.read_text())
    if data.get("format") != FORMAT:
        raise BackupError(f"{archive}: unknown backup format {data.get('format')!r} (expected {FORMAT})")
    for f in data["files"]:
        p = into / f["path"]
        if not p.is_file() or p.stat().st_size != f["bytes"] or _sha256(p) != f["sha256"]:
            raise BackupError(f"{archive}: {f['path']} does not match the manifest (damaged or altered)")
    return Manifest(data)


def restore(
    archive: Path,
    *,
    url: str | None = None,
    force: bool = False,
    extract_to: Path | None = None,
    upgrade: bool = True,
) -> Manifest:
    """Restore the archive's database into the (empty) database at url and upgrade it to head."""
    url = url or get_settings().database_url
    with tempfile.TemporaryDirectory(prefix="iowatt-restore-") as tmp:
        work = Path(tmp)
        manifest = read_manifest(archive, work)
        script = ScriptDirectory.from_config(migrate.alembic_config(url))
        migrate.check_known(script, list(manifest.data["schema_revisions"]))
        engine = create_engine(url, poolclass=pool.NullPool)
        try:
            with engine.connect() as conn:
                tables = conn.execute(
                    text("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'")
                ).scalar_one()
        finally:
            engine.dispose()
        if tables and not force:
            raise BackupError(
                f"the database {make_url(url).database} is not empty ({tables} tables): restore onto a "
                "fresh database, or pass --force to replace what it holds"
            )
        args, env = libpq(url)
        cmd = [_pg_tool("pg_restore"), "--no-owner", "--no-acl", "--exit-on-error", "--single-transaction"]
        if tables:
            cmd += ["--clean", "--if-exists"]
        _run([*cmd, "--no-password", *args, str(work / "database.dump")], env, "pg_restore")
        if upgrade:
            migrate.upgrade(url)
        if extract_to is not None:
            for f in manifest.data["files"]:
                if f["path"] == "database.dump":
                    continue
                dest = extract_to / f["path"]
                dest.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
                fd = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
                with os.fdopen(fd, "wb") as out, (work / f["path"]).open("rb") as src:
                    shutil.copyfileobj(src, out)
    return manifest
