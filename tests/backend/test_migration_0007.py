"""Migration 0007 (agent token expiry, docs/adr/0011) on an agent enrolled before it: its token
gets 30 days from the upgrade (no agent is locked out by the upgrade) and no previous token;
downgrading drops the columns and keeps the agent and its token."""

import uuid
from datetime import UTC, datetime, timedelta

from alembic import command
from sqlalchemy import create_engine, inspect, text

from tests.conftest import alembic_config
from tests.services import Postgres


def test_0007_gives_existing_agents_30_days(pg: Postgres) -> None:
    url = pg.create_database("iowatt_migrations_0007")
    cfg = alembic_config(url)
    eng = create_engine(url)
    team, agent = uuid.uuid4(), uuid.uuid4()
    try:
        command.upgrade(cfg, "0006")
        with eng.begin() as c:
            c.execute(text("INSERT INTO teams (id, name) VALUES (:t, 't')"), {"t": team})
            c.execute(
                text(
                    "INSERT INTO agents (id, team_id, name, hostname, token_hash, agent_version, state, "
                    "online) VALUES (:a, :t, 'lab-1', 'h', 'hash-1', '', 'idle', false)"
                ),
                {"a": agent, "t": team},
            )
        before = datetime.now(UTC)
        command.upgrade(cfg, "0007")
        with eng.begin() as c:
            row = c.execute(
                text(
                    "SELECT token_hash, token_expires_at, previous_token_hash, previous_token_expires_at "
                    "FROM agents WHERE id = :a"
                ),
                {"a": agent},
            ).one()
        assert row.token_hash == "hash-1"
        assert before + timedelta(days=30) - timedelta(minutes=1) <= row.token_expires_at
        assert row.token_expires_at <= datetime.now(UTC) + timedelta(days=30)
        assert row.previous_token_hash is None and row.previous_token_expires_at is None
        command.downgrade(cfg, "0006")
        columns = {c["name"] for c in inspect(eng).get_columns("agents")}
        assert not columns & {"token_expires_at", "previous_token_hash", "previous_token_expires_at"}
        with eng.begin() as c:
            assert (
                c.execute(text("SELECT token_hash FROM agents WHERE id = :a"), {"a": agent}).scalar()
                == "hash-1"
            )
    finally:
        eng.dispose()
