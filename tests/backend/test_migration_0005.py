"""Migration 0005 (host policy) on data written before it: stored meter specs are dropped (runs,
run_power, run_energy), enrolment tokens become single-use, agent names stay unique among live
agents; downgrade keeps deleted agents' runs by renaming them."""

import uuid

from alembic import command
from sqlalchemy import create_engine, text

from tests.conftest import alembic_config
from tests.services import Postgres

SPEC = "ipmi:host=10.0.0.9,user=admin,password=hunter2"


def test_0005_drops_stored_specs_and_bounds_tokens(pg: Postgres) -> None:
    url = pg.create_database("iowatt_migrations_0005")
    cfg = alembic_config(url)
    eng = create_engine(url)
    team, agent = uuid.uuid4(), uuid.uuid4()
    spec_run, none_run, default_run = uuid.uuid4(), uuid.uuid4(), uuid.uuid4()
    used, unused = uuid.uuid4(), uuid.uuid4()
    try:
        command.upgrade(cfg, "0004")
        with eng.begin() as c:
            c.execute(text("INSERT INTO teams (id, name) VALUES (:t, 't')"), {"t": team})
            c.execute(
                text(
                    "INSERT INTO agents (id, team_id, name, hostname, token_hash, agent_version, state, "
                    "online) "
                    "VALUES (:a, :t, 'lab-1', 'h', 'x', '', 'idle', false)"
                ),
                {"a": agent, "t": team},
            )
            for rid, meter in ((spec_run, SPEC), (none_run, ""), (default_run, None)):
                c.execute(
                    text(
                        "INSERT INTO runs (id, team_id, name, status, agent_id, workload_spec, target_path, "
                        "attempt, cancel_requested, meter_spec) VALUES (:r, :t, 'r', 'queued', :a, '{}', "
                        "'/srv', 0, false, :m)"
                    ),
                    {"r": rid, "t": team, "a": agent, "m": meter},
                )
            c.execute(
                text(
                    "INSERT INTO run_power (run_id, meter, status, t0_utc, phases, agent_cleaning, "
                    "server_cleaning, samples) "
                    "VALUES (:r, CAST(:m AS jsonb), 'ok', now(), '[]', '{}', '{}', 0)"
                ),
                {
                    "r": spec_run,
                    "m": f'{{"spec": "{SPEC}", "driver": "ipmi", "tier": "bmc", "quantity": "power"}}',
                },
            )
            c.execute(
                text(
                    "INSERT INTO run_energy (run_id, summary, tier, estimated, load_w_mean, runtime_s, "
                    "total_j, uncertainty_j, grid_g_per_kwh, grid_source, carbon_method, pue, "
                    "operational_gco2e, computed_at) VALUES (:r, CAST(:s AS jsonb), 'bmc', false, "
                    "1, 1, 1, 0, 1, 'x', 'annual', 1, 1, now())"
                ),
                {"r": spec_run, "s": f'{{"source": "{SPEC}", "samples": 3}}'},
            )
            for tid, uses in ((used, 4), (unused, 0)):
                c.execute(
                    text(
                        "INSERT INTO enrollment_tokens (id, team_id, token_hash, uses) "
                        "VALUES (:i, :t, :h, :u)"
                    ),
                    {"i": tid, "t": team, "h": uuid.uuid4().hex, "u": uses},
                )
        command.upgrade(cfg, "0005")
        with eng.begin() as c:
            meters = dict(c.execute(text("SELECT id, meter FROM runs")).all())
            assert meters == {spec_run: None, none_run: "", default_run: None}
            assert not c.execute(text("SELECT bool_or(destructive) FROM runs")).scalar()
            power = c.execute(text("SELECT meter FROM run_power")).scalar_one()
            assert "spec" not in power and power["driver"] == "ipmi"
            summary = c.execute(text("SELECT summary FROM run_energy")).scalar_one()
            assert summary == {"source": "ipmi", "samples": 3}
            tokens = dict(c.execute(text("SELECT id, max_uses - uses FROM enrollment_tokens")).all())
            assert tokens == {used: 0, unused: 1}  # a used token is spent, an unused one works once
            everything = str(c.execute(text("SELECT row_to_json(r) FROM runs r")).all())
            everything += str(c.execute(text("SELECT row_to_json(p) FROM run_power p")).all())
            everything += str(c.execute(text("SELECT row_to_json(e) FROM run_energy e")).all())
            assert "hunter2" not in everything
            # deleted agents free their name; live names stay unique
            c.execute(text("UPDATE agents SET deleted_at = now(), revoked_at = now()"))
            c.execute(
                text(
                    "INSERT INTO agents (id, team_id, name, hostname, token_hash, agent_version, state, "
                    "online) "
                    "VALUES (:a, :t, 'lab-1', 'h', 'y', '', 'idle', false)"
                ),
                {"a": uuid.uuid4(), "t": team},
            )
        command.downgrade(cfg, "0004")
        with eng.begin() as c:
            names = sorted(c.execute(text("SELECT name FROM agents")).scalars())
            assert names[0] == "lab-1" and names[1].startswith("lab-1~deleted-")
            assert c.execute(text("SELECT count(*) FROM runs")).scalar() == 3  # the runs stay
        command.upgrade(cfg, "head")
    finally:
        eng.dispose()
