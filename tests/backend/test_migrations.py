import contextlib
import io
import json
import runpy

from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import create_engine, inspect

from backend.models import Base
from tests.conftest import REPO, alembic_config
from tests.services import Postgres


def test_upgrade_downgrade_upgrade_and_models_match(pg: Postgres) -> None:
    url = pg.create_database("iowatt_migrations")
    cfg = alembic_config(url)
    eng = create_engine(url)
    try:
        command.upgrade(cfg, "head")
        assert "runs" in inspect(eng).get_table_names()
        command.downgrade(cfg, "base")
        assert set(inspect(eng).get_table_names()) <= {"alembic_version"}
        command.upgrade(cfg, "head")
        with eng.connect() as conn:
            diff = compare_metadata(
                MigrationContext.configure(conn, opts={"compare_type": True}), Base.metadata
            )
        assert diff == [], f"models and migrations differ: {diff}"
    finally:
        eng.dispose()


def test_0004_adds_and_drops_the_io_uring_columns(pg: Postgres) -> None:
    url = pg.create_database("iowatt_migrations_0004")
    cfg = alembic_config(url)
    eng = create_engine(url)

    def columns() -> dict[str, bool]:
        return {c["name"]: c["nullable"] for c in inspect(eng).get_columns("result_jobs")}

    try:
        command.upgrade(cfg, "0004")
        assert columns()["kernel_worker_cpu_pct"] is True and columns()["target_nowait"] is True
        command.downgrade(cfg, "0003")
        assert not {"kernel_worker_cpu_pct", "target_nowait"} & set(columns())
        command.upgrade(cfg, "0004")
        assert {"kernel_worker_cpu_pct", "target_nowait"} <= set(columns())
    finally:
        eng.dispose()


def test_openapi_snapshot_is_current() -> None:
    """frontend/openapi.json is what the UI's client is generated from: it must match the server.
    `python -m backend.openapi` (make client) run in this process: the same module as __main__,
    without a second interpreter importing the server and building the document again (~6 CPU-s)."""
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        runpy.run_module("backend.openapi", run_name="__main__", alter_sys=False)
    out = buf.getvalue()
    with open(f"{REPO}/frontend/openapi.json") as f:
        assert json.loads(out) == json.load(f), (
            "run `make client` to refresh frontend/openapi.json and the client"
        )
