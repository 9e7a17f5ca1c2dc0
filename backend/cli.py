"""Server administration: `iowatt-server bootstrap | enrollment-token | ensure-builtins | migrate |
backup | restore | series backfill`, and `--version`."""

import os
import secrets
import tempfile
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

import typer
from sqlalchemy import select
from sqlalchemy.orm import Session

from backend import __version__
from backend.agent import service as agent_service
from backend.agent.schemas import EnrollmentTokenCreate
from backend.auth import repository as auth_repo
from backend.auth import service as auth_service
from backend.db import unit_of_work
from backend.errors import Unauthorized
from backend.models import Membership, Role, Team
from backend.ops import backup as ops_backup
from backend.ops import migrate as ops_migrate
from backend.workload.service import ensure_builtins

app = typer.Typer(help="iowatt server administration", no_args_is_help=True)
series_app = typer.Typer(help="series of runs (history and change detection)", no_args_is_help=True)
app.add_typer(series_app, name="series")


def _write_secret(path: Path, content: str) -> None:
    """Mode 0600 from the moment the file exists (mkstemp), then an atomic rename over `path`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(content)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _team_named(session: Session, name: str) -> Team | None:
    """The team of this name; names are unique per member, not per server (ADR 0026), so two
    teams of one name are refused here rather than one picked at random."""
    rows = list(session.scalars(select(Team).where(Team.name == name).limit(2)))
    if len(rows) > 1:
        raise typer.BadParameter(f"several teams are named {name!r}: rename one first", param_hint="--team")
    return rows[0] if rows else None


@app.command()
def bootstrap(
    email: Annotated[str, typer.Option(help="admin login")] = "admin@iowatt.local",
    team: Annotated[str, typer.Option(help="the admin's team")] = "default",
    credentials_file: Annotated[Path, typer.Option(help="where the login and password are written")] = Path(
        ".iowatt/admin-credentials"
    ),
    token_file: Annotated[Path, typer.Option(help="where the admin API token is written")] = Path(
        ".iowatt/admin-token"
    ),
) -> None:
    """Create the admin user, team and an API token once; later calls keep what exists."""
    with unit_of_work() as session:
        ensure_builtins(session)
        user = auth_repo.user_by_email(session, email)
        if user is None:
            password = secrets.token_urlsafe(12)
            user = auth_service.create_user(
                session,
                email=email,
                password=password,
                display_name="Administrator",
                email_verified=True,  # the operator's own account
                instance_admin=True,
            )
            _write_secret(credentials_file, f"email={email}\npassword={password}\n")
        user.is_instance_admin = True
        team_row = _team_named(session, team)
        if team_row is None:
            team_row = auth_service.create_team(session, name=team, owner=user)
        elif (
            session.scalar(
                select(Membership).where(Membership.user_id == user.id, Membership.team_id == team_row.id)
            )
            is None
        ):
            session.add(Membership(user_id=user.id, team_id=team_row.id, role=Role.admin))
        token = token_file.read_text().strip() if token_file.exists() else ""
        try:
            if not token:
                raise Unauthorized("no token yet")
            auth_service.authenticate(session, raw_token=token)
        except Unauthorized:
            token, _ = auth_service.issue_token(
                session, user_id=user.id, name="admin (make up)", kind="personal", ttl_s=None
            )
            _write_secret(token_file, token + "\n")
    creds = credentials_file.read_text().split() if credentials_file.exists() else [f"email={email}"]
    typer.echo("admin login:    " + "  ".join(creds))
    typer.echo(f"admin token:    {token}  (also in {token_file})")


@app.command("enrollment-token")
def enrollment_token(
    team: Annotated[str, typer.Option(help="team the agent will belong to")] = "default",
    ttl_s: Annotated[int, typer.Option(help="lifetime in seconds")] = 3600,
) -> None:
    """Print a new enrollment token for `iowatt-agent enroll`."""
    with unit_of_work() as session:
        team_row = _team_named(session, team)
        if team_row is None:
            raise typer.BadParameter(f"no team named {team!r}", param_hint="--team")
        raw, _ = agent_service.create_enrollment_token(
            session, principal=None, body=EnrollmentTokenCreate(team_id=team_row.id, ttl_s=ttl_s)
        )
    typer.echo(raw)


@app.command("instance-admin")
def instance_admin(
    email: Annotated[str, typer.Argument(help="the account's e-mail")],
    revoke: Annotated[bool, typer.Option(help="take the role away instead")] = False,
) -> None:
    """Make an account an instance administrator (may create teams and issue reset links), or not."""
    with unit_of_work() as session:
        user = auth_repo.user_by_email(session, email)
        if user is None:
            raise typer.BadParameter(f"no account uses {email!r}", param_hint="EMAIL")
        user.is_instance_admin = not revoke
    typer.echo(f"{email}: {'no longer ' if revoke else ''}an instance administrator")


@app.command("ensure-builtins")
def ensure_builtin_workloads() -> None:
    """Insert or refresh the built-in workload presets."""
    with unit_of_work() as session:
        ensure_builtins(session)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"iowatt-server {__version__}")
        raise typer.Exit()


@app.callback()
def main(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version")
    ] = False,
) -> None:
    """iowatt server administration."""


@app.command()
def migrate() -> None:
    """Upgrade the database schema to this release's head (refuses a database a newer release
    upgraded; a failed migration leaves the database as it was and says why)."""
    try:
        before, head = ops_migrate.upgrade()
    except ops_migrate.MigrationRefused as exc:
        typer.echo(f"iowatt-server migrate: {exc}", err=True)
        raise typer.Exit(1) from None
    was = ", ".join(before) or "empty"
    typer.echo(f"schema at {head} (was {was})" if [head] != before else f"schema at {head}, as it was")


@app.command()
def backup(
    out: Annotated[Path, typer.Option(help="directory the archive is written to (mode 0600)")] = Path(
        "backups"
    ),
    state_dir: Annotated[
        Path | None, typer.Option(help="a `make up` instance's state directory: its secret files too")
    ] = None,
    secrets_file: Annotated[
        list[Path] | None, typer.Option(help="a file of secrets to keep too (compose's .env); repeatable")
    ] = None,
    tls_ca: Annotated[
        Path | None, typer.Option(help="the TLS CA directory (Caddy's pki/authorities/local)")
    ] = None,
) -> None:
    """Back up the database (pg_dump, one consistent snapshot, while the server runs), the
    instance's secrets and the TLS CA into one archive with a manifest of SHA-256 sums."""
    try:
        path = ops_backup.backup(
            out, state_dir=state_dir, secrets_files=tuple(secrets_file or ()), tls_ca=tls_ca
        )
    except ops_backup.BackupError as exc:
        typer.echo(f"iowatt-server backup: {exc}", err=True)
        raise typer.Exit(1) from None
    typer.echo(str(path))


@app.command()
def restore(
    archive: Annotated[Path, typer.Argument(help="an archive iowatt-server backup wrote")],
    force: Annotated[bool, typer.Option(help="replace what a non-empty database holds")] = False,
    extract_to: Annotated[
        Path | None, typer.Option(help="where the archive's secrets and TLS CA are written (0600 files)")
    ] = None,
) -> None:
    """Restore a backup into this instance's database (empty, unless --force), then upgrade the
    schema to this release; secrets and the CA go to --extract-to."""
    try:
        m = ops_backup.restore(archive, force=force, extract_to=extract_to)
    except (ops_backup.BackupError, ops_migrate.MigrationRefused) as exc:
        typer.echo(f"iowatt-server restore: {exc}", err=True)
        raise typer.Exit(1) from None
    typer.echo(
        f"restored the backup of {m.data['created_at']} (iowatt {m.data['iowatt_version']}); "
        f"schema upgraded to this release's head"
    )
    if extract_to is not None:
        typer.echo(f"secrets and TLS CA written to {extract_to} (docs/operations.md § Backups and restores)")


if __name__ == "__main__":
    app()


@series_app.command("backfill")
def series_backfill(
    team: Annotated[
        str | None, typer.Option(help="only this team's runs (its name); default: every team")
    ] = None,
    since: Annotated[
        datetime | None, typer.Option(help="only runs created at or after this UTC time (e.g. 2026-01-01)")
    ] = None,
    batch: Annotated[int, typer.Option(min=1, max=5000, help="runs examined per transaction")] = 500,
) -> None:
    """Every run with a stored result that is in no series joins its series (made when it is the
    first): after an upgrade from a version without series, the runs stored before give their
    history. Batched ((created_at, id) order, one transaction each), resumable (a run already in a
    series is never examined again: run it again after an interruption) and idempotent. Joined
    runs are not tested as new runs (an old regression does not page anyone); each series it
    touched is then searched for change points by the worker (`series.backfill`), which shows old
    changes on the history page without alerting."""
    from backend.series import service as series_service

    if since is not None and since.tzinfo is None:
        since = since.replace(tzinfo=UTC)  # times on the command line are UTC, as on the wire
    team_id: uuid.UUID | None = None
    if team is not None:
        with unit_of_work() as session:
            row = _team_named(session, team)
            if row is None:
                raise typer.BadParameter(f"no team named {team!r}", param_hint="--team")
            team_id = row.id

    def progress(p: "series_service.BulkProgress") -> None:
        typer.echo(
            f"{p.examined:,} runs examined, {p.joined:,} joined {p.series:,} series ({p.rate:,.0f} runs/s); "
            f"up to {p.up_to:%Y-%m-%d %H:%M:%S} UTC"
        )

    done = series_service.backfill_stored(
        unit_of_work, team_id=team_id, since=since, batch=batch, progress=progress
    )
    typer.echo(
        f"done: {done.examined:,} runs examined, {done.joined:,} joined {done.series:,} series in "
        f"{done.seconds:.1f} s; their change points are searched by the worker"
    )
