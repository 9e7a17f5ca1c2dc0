"""Migration 0014 (runs.preset) on runs stored before it: a run queued from a built-in workload
gets that preset's name, a run of a team's own workload or of an inline spec stays null (the views
keep their old guess for those); downgrading drops the column and keeps the runs."""

import uuid

from alembic import command
from sqlalchemy import create_engine, inspect, text

from tests.conftest import alembic_config
from tests.services import Postgres


def test_0014_records_the_preset_of_runs_queued_from_a_builtin(pg: Postgres) -> None:
    url = pg.create_database("iowatt_migrations_0014")
    cfg = alembic_config(url)
    eng = create_engine(url)
    team, agent, builtin, own = uuid.uuid4(), uuid.uuid4(), uuid.uuid4(), uuid.uuid4()
    runs = {"builtin": uuid.uuid4(), "own": uuid.uuid4(), "inline": uuid.uuid4()}
    try:
        command.upgrade(cfg, "0013")
        with eng.begin() as c:
            c.execute(text("INSERT INTO teams (id, name) VALUES (:t, 't')"), {"t": team})
            c.execute(
                text(
                    "INSERT INTO agents (id, team_id, name, hostname, token_hash, token_expires_at, "
                    "agent_version, state, online) "
                    "VALUES (:a, :t, 'lab-1', 'h', 'hash-1', now(), '', 'idle', false)"
                ),
                {"a": agent, "t": team},
            )
            for wid, tid, name, is_builtin in (
                (builtin, None, "kernel-help", True),
                (own, team, "kernel-help", False),  # a team's workload may share a preset's name
            ):
                c.execute(
                    text(
                        "INSERT INTO workloads (id, team_id, name, description, spec, builtin) "
                        "VALUES (:w, :t, :n, '', '{}', :b)"
                    ),
                    {"w": wid, "t": tid, "n": name, "b": is_builtin},
                )
            for key, wid in (("builtin", builtin), ("own", own), ("inline", None)):
                c.execute(
                    text(
                        "INSERT INTO runs (id, team_id, name, status, agent_id, workload_id, workload_spec, "
                        "target_path, attempt, cancel_requested) "
                        "VALUES (:r, :t, :n, 'succeeded', :a, :w, '{\"jobs\": []}', '/srv', 0, false)"
                    ),
                    {"r": runs[key], "t": team, "n": key, "a": agent, "w": wid},
                )
        command.upgrade(cfg, "0014")
        with eng.begin() as c:
            got = dict(c.execute(text("SELECT name, preset FROM runs")).tuples().all())
        assert got == {"builtin": "kernel-help", "own": None, "inline": None}
        command.downgrade(cfg, "0013")
        assert "preset" not in {col["name"] for col in inspect(eng).get_columns("runs")}
        with eng.begin() as c:
            assert c.execute(text("SELECT count(*) FROM runs")).scalar() == 3
    finally:
        eng.dispose()
