"""Migration 0016 (environment topology, run snapshots): existing environments keep their kind and
name and read back with nothing known; existing runs that name one get its snapshot, the others
none; downgrading drops both columns and keeps the rows."""

import uuid

from alembic import command
from sqlalchemy import create_engine, inspect, text

from backend.environment.schemas import EnvironmentSnapshot, EnvironmentTopology
from tests.conftest import alembic_config
from tests.services import Postgres


def test_0016_snapshots_existing_runs(pg: Postgres) -> None:
    url = pg.create_database("iowatt_migrations_0016")
    cfg = alembic_config(url)
    eng = create_engine(url)
    team, agent, env = uuid.uuid4(), uuid.uuid4(), uuid.uuid4()
    with_env, without = uuid.uuid4(), uuid.uuid4()
    try:
        command.upgrade(cfg, "0015")
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
            c.execute(
                text(
                    "INSERT INTO environments (id, team_id, name, kind, description, region, pue, currency) "
                    "VALUES (:e, :t, 'rack 3', 'raid', 'RAID 10 of 4', 'DE', 1.4, 'EUR')"
                ),
                {"e": env, "t": team},
            )
            for rid, eid in ((with_env, env), (without, None)):
                c.execute(
                    text(
                        "INSERT INTO runs (id, team_id, name, status, agent_id, environment_id, "
                        "workload_spec, target_path, attempt, cancel_requested) "
                        "VALUES (:r, :t, 'r', 'succeeded', :a, :e, '{\"jobs\": []}', '/srv', 0, false)"
                    ),
                    {"r": rid, "t": team, "a": agent, "e": eid},
                )
        command.upgrade(cfg, "0016")
        with eng.begin() as c:
            kind, topology = c.execute(text("SELECT kind, topology FROM environments")).one()
            snaps = dict(c.execute(text("SELECT id, environment_snapshot FROM runs")).tuples().all())
        assert (
            kind == "raid" and topology == {} and EnvironmentTopology.read(topology) == EnvironmentTopology()
        )
        assert snaps[without] is None
        snap = EnvironmentSnapshot.model_validate(snaps[with_env])  # the same document the server records
        assert (snap.environment_id, snap.name, snap.kind, snap.pue, snap.region) == (
            env,
            "rack 3",
            "raid",
            1.4,
            "DE",
        )
        command.downgrade(cfg, "0015")
        assert "environment_snapshot" not in {col["name"] for col in inspect(eng).get_columns("runs")}
        assert "topology" not in {col["name"] for col in inspect(eng).get_columns("environments")}
        with eng.begin() as c:
            assert c.execute(text("SELECT count(*) FROM runs")).scalar() == 2
    finally:
        eng.dispose()
