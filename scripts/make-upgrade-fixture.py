#!/usr/bin/env python3
"""Make the upgrade rehearsal's fixture (tests/fixtures/upgrade/, docs/release.md): a database
populated by this checkout's release, as a plain pg_dump, and what the test needs to read it back.

It starts a private PostgreSQL and Redis (tests/services.py), migrates a database to this
checkout's head, runs the real API on it (in process) and builds the security tests' world through it
(tests/security/world.py: teams, users, agents, runs done and in flight with results and power,
reviews with candidates, share links, comments, campaigns, schedules, series, alert channels,
invitations), then writes

    tests/fixtures/upgrade/iowatt-VERSION.sql    pg_dump --format=plain --no-owner --no-acl
    tests/fixtures/upgrade/iowatt-VERSION.json   version, schema revision, rows per table, the world
                                                 (ids, e-mails, tokens: test data only)

Run it from a checkout of the release (the checklist's step), with `make deps` done:

    .venv/bin/python scripts/make-upgrade-fixture.py
"""

import json
import os
import subprocess
import sys
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
# this checkout's libraries, not whatever another checkout installed editable into the venv
PATHS = [str(REPO), *(str(p) for p in sorted((REPO / "libs").glob("*/src")))]
sys.path[:0] = PATHS
os.environ["PYTHONPATH"] = os.pathsep.join(PATHS)  # the API server it starts, too
os.environ["IOWATT_ENV"] = "test"
os.environ.setdefault("IOWATT_ARGON2_MEMORY_KIB", "1024")
os.environ.setdefault("IOWATT_ARGON2_TIME_COST", "1")


def main() -> None:
    import psycopg
    from fastapi.testclient import TestClient
    from sqlalchemy import create_engine
    from sqlalchemy.orm import Session

    from backend import __version__
    from tests.services import PG_BIN, postgres, redis_server

    out = REPO / "tests" / "fixtures" / "upgrade"
    out.mkdir(parents=True, exist_ok=True)
    db = "iowatt_upgrade_fixture"
    with postgres() as pg, redis_server() as redis_url:
        url = pg.migrated_database(db)
        os.environ["IOWATT_DATABASE_URL"], os.environ["IOWATT_REDIS_URL"] = url, redis_url
        from backend.main import create_app
        from tests.security.world import build

        engine = create_engine(url)
        # the real API in process: each request commits as a served one does
        with TestClient(create_app()) as http, Session(engine, expire_on_commit=False) as session:
            world_obj = build(session, http, commit=session.commit, openapi=http.app.openapi())  # type: ignore[attr-defined]
        engine.dispose()
        with psycopg.connect(f"host=127.0.0.1 port={pg.port} user=postgres dbname={db}") as c:
            tables = [
                r[0]
                for r in c.execute(
                    "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename"
                )
            ]
            rows = {t: c.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0] for t in tables}  # type: ignore[index]
            (revision,) = c.execute("SELECT version_num FROM alembic_version").fetchone()  # type: ignore[misc]
        sql = subprocess.run(
            [
                str(PG_BIN / "pg_dump"),
                "--format=plain",
                "--no-owner",
                "--no-acl",
                "--host=127.0.0.1",
                f"--port={pg.port}",
                "--username=postgres",
                db,
            ],
            check=True,
            capture_output=True,
        ).stdout
        world = asdict(world_obj)
    world["team_a"], world["team_b"] = str(world["team_a"]), str(world["team_b"])
    (out / f"iowatt-{__version__}.sql").write_bytes(sql)
    meta = {
        "iowatt_version": __version__,
        "schema_revision": revision,
        "made_at": datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
        "rows": rows,
        "world": world,
    }
    (out / f"iowatt-{__version__}.json").write_text(json.dumps(meta, indent=1, sort_keys=True) + "\n")
    total = sum(rows.values())
    print(f"wrote {out}/iowatt-{__version__}.sql ({len(sql)} bytes, schema {revision}, {total} rows)")


if __name__ == "__main__":
    main()
