"""Schema migrations as an operator meets them (docs/release.md, ADR 0043).

- `upgrade()` moves the database to this release's head and says why when it cannot: a failed
  migration names itself and its error, and the database stays where it was (every migration of
  one `upgrade` runs in one PostgreSQL transaction: migrations/env.py).
- A database that a newer release upgraded (its revision is unknown here) is refused before
  anything runs: running an older release on it would meet columns it does not know.
- Downgrades are refused (`alembic downgrade` included, through migrations/env.py): a downgrade
  drops what the newer release stored. Going back to an older release means restoring a backup it
  made (`iowatt-server restore`). Tests and a developer who knows what they drop may set
  IOWATT_ALLOW_DOWNGRADE=1 (or the Alembic config attribute `allow_downgrade`).
"""

import os
from pathlib import Path
from typing import Any

from alembic.config import Config
from alembic.script import ScriptDirectory
from alembic.util import CommandError
from sqlalchemy import Connection, create_engine, pool, text

from backend import __version__
from backend.config import REPO_ROOT, get_settings

DOWNGRADE_REFUSED = (
    "downgrades are refused: a downgrade drops what the newer release stored. To run an older "
    "release, restore a backup that release made (iowatt-server restore; docs/operations.md "
    "§ Backups and restores). Set IOWATT_ALLOW_DOWNGRADE=1 only on a database you can lose."
)


class MigrationRefused(CommandError):
    """The schema cannot be moved as asked; the message says why and what to do. An Alembic
    CommandError, so that `alembic downgrade` typed by hand says it in one line ("FAILED: ...",
    exit status 255) instead of a 35-line traceback ending in it."""


def _migrations_root() -> Path:
    """Where alembic.ini and migrations/ are: the checkout (make up), else the working directory
    (the server image installs the packages into site-packages and keeps both in its WORKDIR, /app)."""
    for root in (REPO_ROOT, Path.cwd()):
        if (root / "alembic.ini").is_file() and (root / "migrations").is_dir():
            return root
    raise MigrationRefused(
        f"no alembic.ini and migrations/ in {REPO_ROOT} or {Path.cwd()}: run this from the "
        "server's directory (the image's /app, or the checkout)"
    )


def alembic_config(url: str | None = None) -> Config:
    root = _migrations_root()
    cfg = Config(str(root / "alembic.ini"))
    cfg.set_main_option("script_location", str(root / "migrations"))
    if url:
        cfg.attributes["database_url"] = url
    cfg.attributes["configure_logger"] = False
    return cfg


def downgrade_allowed(cfg: Config) -> bool:
    return bool(cfg.attributes.get("allow_downgrade")) or os.environ.get("IOWATT_ALLOW_DOWNGRADE") == "1"


def current_revisions(conn: Connection) -> list[str]:
    """The revisions recorded in the database (none for an empty one)."""
    has = conn.execute(text("SELECT to_regclass('alembic_version') IS NOT NULL")).scalar()
    if not has:
        return []
    return [str(r) for r in conn.execute(text("SELECT version_num FROM alembic_version")).scalars()]


def check_known(script: ScriptDirectory, revisions: list[str]) -> None:
    """Refuse a database whose revision this release's migrations do not contain."""
    known = {s.revision for s in script.walk_revisions()}
    unknown = [r for r in revisions if r not in known]
    if unknown:
        raise MigrationRefused(
            f"the database is at schema revision {', '.join(unknown)}, which iowatt {__version__} does "
            f"not know (its newest is {script.get_current_head()}): a newer release upgraded it. "
            "Run that release again, or restore a backup this release made (iowatt-server restore). "
            "Downgrades are refused."
        )


def on_version_apply(cfg: Config) -> Any:
    """Alembic's per-step callback (migrations/env.py): a downgrade step raises, so the
    transaction holding every step of this command rolls back; an upgrade step is recorded in
    `cfg.attributes["applied"]`, so a failure can name the migration after the last one done."""

    def check(*, step: Any, **_: Any) -> None:
        if not step.is_upgrade and not downgrade_allowed(cfg):
            raise MigrationRefused(DOWNGRADE_REFUSED)
        if step.is_upgrade:
            cfg.attributes.setdefault("applied", []).append(step.up_revision_id)

    return check


def refuse_unknown(cfg: Config, conn: Connection) -> None:
    """migrations/env.py, before any step: the database's revision must be one of ours. The read
    ends its own transaction (unless the caller's was open), so Alembic's transaction that follows
    is the one that commits the steps."""
    was_open = conn.in_transaction()
    try:
        revisions = current_revisions(conn)
    finally:
        if not was_open and conn.in_transaction():
            conn.rollback()
    check_known(ScriptDirectory.from_config(cfg), revisions)


def upgrade(url: str | None = None) -> tuple[list[str], str]:
    """Upgrade the database to head; returns (revisions before, head). Raises MigrationRefused
    with the reason when it cannot."""
    from alembic import command

    url = url or get_settings().database_url
    cfg = alembic_config(url)
    script = ScriptDirectory.from_config(cfg)
    engine = create_engine(url, poolclass=pool.NullPool)
    try:
        with engine.connect() as conn:
            before = current_revisions(conn)
    except Exception as exc:  # noqa: BLE001 - unreachable database: say so plainly
        raise MigrationRefused(f"cannot reach the database: {str(exc).splitlines()[0]}") from None
    finally:
        engine.dispose()
    check_known(script, before)
    head = script.get_current_head() or ""
    # the path from the database's revision to head, oldest first
    path = [s.revision for s in script.iterate_revisions("head", before[0] if before else "base")][::-1]
    try:
        command.upgrade(cfg, "head")
    except MigrationRefused:
        raise
    except Exception as exc:  # noqa: BLE001 - any failure of a migration is reported, not a traceback
        done = len(cfg.attributes.get("applied", []))
        failed = path[done] if done < len(path) else "?"
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise MigrationRefused(
            f"migration {failed} failed: {type(exc).__name__}: {first[:500]}. The database stays at "
            f"{', '.join(before) or 'an empty schema'} (every step of an upgrade runs in one "
            "transaction, rolled back): fix the cause and run it again."
        ) from exc
    return before, head
