"""Upgrades rehearsed, backups restored (issue 30; docs/release.md, docs/operations.md § Backups and
restores).

- The fixture of each earlier release (tests/fixtures/upgrade/iowatt-VERSION.sql, made by
  scripts/make-upgrade-fixture.py from that release: teams, users, agents, runs with results and
  power, reviews, share links, comments, campaigns, ...) is restored and upgraded to this head:
  every row is still there and loads through the models, and every GET route answers the team's
  admin without a server error, the objects' own pages with 200.
- A downgrade is refused with the reason; so is a database a newer release upgraded.
- `backup` while a transaction is open (online; its uncommitted row is not in the snapshot), a
  wipe, `restore` onto a fresh database: every row of every table identical, and the agents'
  credentials still authenticate against the restored database.

All on the test process's own PostgreSQL (tests/services.py), in process: no server is started."""

import contextlib
import json
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from alembic import command
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import create_engine, select, text
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session

from backend.auth import service as auth_service
from backend.auth.principal import AgentPrincipal
from backend.models import Base
from backend.ops import backup as ops_backup
from backend.ops import migrate as ops_migrate
from tests.conftest import REPO
from tests.services import PG_BIN, Postgres
from tests.sessions import sessions_on

FIXTURES = sorted((Path(REPO) / "tests" / "fixtures" / "upgrade").glob("iowatt-*.sql"))
# the objects whose own pages must answer 200 after the upgrade (the rest: no 5xx)
CORE = (
    "/api/v1/runs/{run_id}",
    "/api/v1/runs/{run_id}/result",
    "/api/v1/reviews/{review_id}",
    "/api/v1/teams",
    "/api/v1/share-links",
    "/api/v1/shared/{token}",
    "/api/v1/agents/{agent_id}",
    "/api/v1/runs",
)


def _psql(pg: Postgres, db: str, sql: Path) -> None:
    subprocess.run(
        [
            str(PG_BIN / "psql"),
            "-X",
            "-q",
            "-v",
            "ON_ERROR_STOP=1",
            "-h",
            "127.0.0.1",
            "-p",
            str(pg.port),
            "-U",
            "postgres",
            "-d",
            db,
            "-f",
            str(sql),
        ],
        check=True,
        capture_output=True,
    )


def _rows(engine: Engine) -> dict[str, list[str]]:
    """Every row of every table, as text, in a stable order."""
    with engine.connect() as c:
        tables = (
            c.execute(text("SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY 1"))
            .scalars()
            .all()
        )
        return {t: list(c.execute(text(f'SELECT t::text FROM "{t}" t ORDER BY 1')).scalars()) for t in tables}


@contextlib.contextmanager
def _served_from(app_client: TestClient, url: str) -> Iterator[None]:
    """The in-process app answers from the database at `url`, inside one transaction rolled back
    at the end (what the requests write is not kept)."""
    engine = create_engine(url)
    conn = engine.connect()
    trans = conn.begin()
    app = app_client.app
    assert isinstance(app, FastAPI)
    try:
        with sessions_on(app, conn):
            yield
    finally:
        trans.rollback()
        conn.close()
        engine.dispose()


@pytest.fixture(scope="module", params=FIXTURES, ids=lambda p: p.stem)
def upgraded(
    request: pytest.FixtureRequest, pg: Postgres, db_url: str
) -> Iterator[tuple[str, dict[str, Any]]]:
    sql: Path = request.param
    meta = json.loads(sql.with_suffix(".json").read_text())
    db = f"iowatt_upgrade_{sql.stem.replace('.', '_').replace('-', '_')}"
    url = pg.create_database(db)
    _psql(pg, db, sql)
    ops_migrate.upgrade(url)
    yield url, meta


def test_there_is_a_fixture_of_the_previous_release() -> None:
    assert FIXTURES, "tests/fixtures/upgrade/ has no iowatt-*.sql: run scripts/make-upgrade-fixture.py"


def test_every_row_reads_back_after_the_upgrade(upgraded: tuple[str, dict[str, Any]]) -> None:
    url, meta = upgraded
    engine = create_engine(url)
    try:
        with engine.connect() as c:
            head = ops_migrate.ScriptDirectory.from_config(ops_migrate.alembic_config(url)).get_current_head()
            assert ops_migrate.current_revisions(c) == [head]
            for table, n in meta["rows"].items():
                if table == "alembic_version":
                    continue
                assert c.execute(text(f'SELECT count(*) FROM "{table}"')).scalar_one() == n, table
        with Session(engine) as s:
            for mapper in Base.registry.mappers:
                cls = mapper.class_
                rows = s.scalars(select(cls)).all()
                expected = meta["rows"].get(mapper.local_table.name)  # type: ignore[union-attr]
                if expected is not None:
                    assert len(rows) == expected, cls.__name__
    finally:
        engine.dispose()


def test_every_get_route_answers_after_the_upgrade(
    upgraded: tuple[str, dict[str, Any]], app_client: TestClient
) -> None:
    from tests.security.test_authz_matrix import PATH_IDS, PATH_IDS_BY_OP, QUERIES
    from tests.security.world import World

    url, meta = upgraded
    w = meta["world"]
    world = World(**{**w})
    app = app_client.app
    assert isinstance(app, FastAPI)
    failures, answered = [], 0
    with _served_from(app_client, url):
        spec = app.openapi()
        for template, item in spec["paths"].items():
            if "get" not in item:
                continue
            op = f"GET {template}"
            if template.endswith(("/pdf", ".png")):
                continue  # Chromium and matplotlib renderings: seconds of CPU, their data read elsewhere
            ids = {**PATH_IDS, **PATH_IDS_BY_OP.get(op, {})}
            names = [p["name"] for p in item["get"].get("parameters", []) if p["in"] == "path"]
            if any(ids.get(n) not in w["ids"] for n in names):
                continue  # an object a later world has and this release's fixture does not
            path = template
            for n in names:
                path = path.replace(f"{{{n}}}", w["ids"][ids[n]])
            params = QUERIES[op](world) if op in QUERIES else None
            r = app_client.get(path, headers=w["headers"]["admin"], params=params)
            answered += 1
            if r.status_code >= 500 or (template in CORE and r.status_code != 200):
                failures.append(f"{op}: {r.status_code} {r.text[:200]}")
    assert answered > 50
    assert not failures, "\n".join(failures)


def test_a_downgrade_is_refused_with_the_reason(
    pg: Postgres, db_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from alembic.config import CommandLine, Config

    url = pg.migrated_database("iowatt_no_downgrade")
    cfg = ops_migrate.alembic_config(url)
    with pytest.raises(ops_migrate.MigrationRefused, match="downgrades are refused"):
        command.downgrade(cfg, "-1")
    # `alembic downgrade -1` typed by hand: the reason in one line and a failed exit, not a
    # traceback ending in it (as alembic's command line runs it, but for its logging set-up)
    cli = CommandLine()
    options = cli.parser.parse_args(["downgrade", "-1"])
    by_hand = Config(cfg.config_file_name, cmd_opts=options)
    by_hand.attributes.update(cfg.attributes)
    with pytest.raises(SystemExit) as exited:
        cli.run_cmd(by_hand, options)
    said = capsys.readouterr()
    assert exited.value.code != 0
    assert "FAILED: downgrades are refused" in said.out + said.err
    assert "Traceback" not in said.out + said.err
    engine = create_engine(url)
    try:
        with engine.connect() as c:
            head = ops_migrate.ScriptDirectory.from_config(cfg).get_current_head()
            assert ops_migrate.current_revisions(c) == [head]  # rolled back: nothing dropped
            # a database a newer release upgraded: refused before anything runs
            c.execute(text("UPDATE alembic_version SET version_num = '9999'"))
            c.commit()
        with pytest.raises(ops_migrate.MigrationRefused, match="9999.*newer release"):
            ops_migrate.upgrade(url)
    finally:
        engine.dispose()


def test_backup_wipe_restore_gives_back_every_row_and_the_agents_credentials(
    upgraded: tuple[str, dict[str, Any]],
    pg: Postgres,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    app_client: TestClient,
) -> None:
    from typer.testing import CliRunner

    from backend.cli import app as cli
    from backend.config import get_settings

    upgraded_url, meta = upgraded
    # a copy of the upgraded fixture: this test drops it
    with psycopg.connect(
        f"host=127.0.0.1 port={pg.port} user=postgres dbname=postgres", autocommit=True
    ) as c:
        c.execute('DROP DATABASE IF EXISTS "iowatt_backup_src" WITH (FORCE)')
        c.execute(f'CREATE DATABASE "iowatt_backup_src" TEMPLATE "{upgraded_url.rsplit("/", 1)[1]}"')
    url = pg.url("iowatt_backup_src")
    src = create_engine(url)
    # the fixture's agent tokens expire 30 days after it was made: renew the date (the hash stays)
    with src.begin() as c:
        c.execute(text("UPDATE agents SET token_expires_at = now() + interval '30 days'"))
    before = _rows(src)
    tls = tmp_path / "ca"
    tls.mkdir()
    (tls / "root.crt").write_text("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n")
    # online: a transaction of the running server holds a row it has not committed
    busy = src.connect()
    busy.begin()
    busy.execute(
        text("INSERT INTO teams (id, name, created_at) VALUES (gen_random_uuid(), 'uncommitted', now())")
    )
    try:  # as the operator runs it: the command, on the instance's database
        monkeypatch.setattr(get_settings(), "database_url", url)
        out = CliRunner().invoke(cli, ["backup", "--out", str(tmp_path / "backups"), "--tls-ca", str(tls)])
        assert out.exit_code == 0, out.output
        archive = Path(out.output.strip().splitlines()[-1])
    finally:
        busy.rollback()
        busy.close()
    assert archive.stat().st_mode & 0o777 == 0o600
    src.dispose()
    # wipe: the database is gone
    with psycopg.connect(
        f"host=127.0.0.1 port={pg.port} user=postgres dbname=postgres", autocommit=True
    ) as c:
        c.execute(f'DROP DATABASE "{url.rsplit("/", 1)[1]}" WITH (FORCE)')
    fresh = pg.create_database("iowatt_restored")
    extracted = tmp_path / "extracted"
    manifest = ops_backup.restore(archive, url=fresh, extract_to=extracted)
    restored = create_engine(fresh)
    try:
        with restored.connect() as c:
            assert manifest.data["schema_revisions"] == ops_migrate.current_revisions(c)
        after = _rows(restored)
        assert after == before  # every run, result, review, ... identical; the uncommitted team absent
        assert (extracted / "tls-ca" / "root.crt").read_text() == (tls / "root.crt").read_text()
        assert (extracted / "secrets" / "server.env").stat().st_mode & 0o777 == 0o600
        with Session(restored) as s, s.begin():
            for who in ("agent_x", "agent_y"):
                raw = meta["world"]["headers"][who]["Authorization"].split(" ", 1)[1]
                principal = auth_service.authenticate(s, raw_token=raw)
                assert isinstance(principal, AgentPrincipal)
        # the agents reconnect: each one's own client (iowatt_agent), with the token it held before
        # the backup, heartbeats the server that now answers from the restored database
        from iowatt_agent import __version__ as agent_version
        from iowatt_agent.client import ApiClient
        from iowatt_agent.schemas import HeartbeatRequest

        from tests.agent.test_real_server import bridge

        with _served_from(app_client, fresh):
            for who in ("agent_x", "agent_y"):
                raw = meta["world"]["headers"][who]["Authorization"].split(" ", 1)[1]
                agent = ApiClient(
                    "http://testserver", raw, transport=bridge(app_client), sleep=lambda s: None
                )
                beat = HeartbeatRequest(state="idle", current_run_id=None, agent_version=agent_version)
                answer = agent.heartbeat(uuid.UUID(meta["world"]["ids"][who]), beat)
                assert answer.heartbeat_interval_s > 0, who
        # a restore onto a database that holds data is refused unless forced
        with pytest.raises(ops_backup.BackupError, match="not empty"):
            ops_backup.restore(archive, url=fresh)
    finally:
        restored.dispose()


def test_a_failed_migration_names_itself_and_the_database_stays(
    pg: Postgres, db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What `make up` and compose's api print before they stop (`iowatt-server migrate`, exit 1)."""
    from typer.testing import CliRunner

    from backend.cli import app
    from backend.config import get_settings
    from tests.conftest import alembic_config

    url = pg.migrated_database("iowatt_failing_migration")
    command.downgrade(alembic_config(url), "-1")  # one migration to go
    head = ops_migrate.ScriptDirectory.from_config(ops_migrate.alembic_config(url)).get_current_head()
    engine = create_engine(url)
    try:
        with engine.connect() as c:
            before = ops_migrate.current_revisions(c)
            c.execute(text("ALTER DATABASE iowatt_failing_migration SET default_transaction_read_only = on"))
            c.commit()
        with pytest.raises(ops_migrate.MigrationRefused, match=rf"migration {head} failed: .*read-only"):
            ops_migrate.upgrade(url)
        monkeypatch.setattr(get_settings(), "database_url", url)
        out = CliRunner().invoke(app, ["migrate"])
        assert out.exit_code == 1 and f"migration {head} failed" in out.output, out.output
        with engine.connect() as c:
            assert ops_migrate.current_revisions(c) == before != [head]
    finally:
        engine.dispose()
