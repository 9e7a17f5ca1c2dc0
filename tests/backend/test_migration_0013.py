"""Migration 0013 (issue 22, ADR 0026) on data: who counts as having proven their address, whose
password and tokens go (an SSO-linked account that also had a password: it may be a squatter's),
who becomes an instance administrator, and team names that stop being unique come back apart on
downgrade."""

from alembic import command
from sqlalchemy import create_engine, text

from tests.conftest import alembic_config
from tests.services import Postgres

USERS = """
INSERT INTO users (id, email, display_name, password_hash, is_active, created_at, oidc_issuer, oidc_subject)
VALUES
 ('00000000-0000-0000-0000-000000000001', 'first@x.test', 'First', 'h', true, now() - interval '2 days',
  NULL, NULL),
 ('00000000-0000-0000-0000-000000000002', 'squatted@x.test', 'S', 'squatter', true, now() - interval '1 day',
  'https://idp', 'victim'),
 ('00000000-0000-0000-0000-000000000003', 'sso@x.test', 'O', NULL, true, now(), 'https://idp', 'owner'),
 ('00000000-0000-0000-0000-000000000004', 'plain@x.test', 'P', 'h', true, now(), NULL, NULL)
"""
TOKENS = """
INSERT INTO api_tokens (id, user_id, name, kind, scope, token_hash)
VALUES ('10000000-0000-0000-0000-000000000002', '00000000-0000-0000-0000-000000000002', 'x', 'personal',
        'write', 'a'), ('10000000-0000-0000-0000-000000000004', '00000000-0000-0000-0000-000000000004', 'y',
        'personal', 'write', 'b')
"""


def test_0013_on_existing_accounts_and_back(pg: Postgres) -> None:
    url = pg.create_database("iowatt_migrations_0013")
    cfg = alembic_config(url)
    eng = create_engine(url)
    try:
        command.upgrade(cfg, "0012")
        with eng.begin() as c:
            c.execute(text(USERS))
            c.execute(text(TOKENS))
        command.upgrade(cfg, "0013")
        with eng.connect() as c:
            rows = {
                r.email: (r.proven, r.password_hash, r.is_instance_admin)
                for r in c.execute(
                    text(
                        "SELECT email, email_verified_at IS NOT NULL AS proven, password_hash, "
                        "is_instance_admin FROM users"
                    )
                )
            }
            tokens = set(c.execute(text("SELECT token_hash FROM api_tokens")).scalars())
        assert rows == {
            "first@x.test": (False, "h", True),  # the oldest account keeps someone who creates teams
            "squatted@x.test": (True, None, False),  # SSO vouches; the password may be a squatter's
            "sso@x.test": (True, None, False),
            "plain@x.test": (False, "h", False),  # unproven until its owner proves it
        }
        assert tokens == {"b"}  # the SSO-linked account with a password lost its tokens
        # names stop being unique; a downgrade sets duplicates apart before the constraint returns
        with eng.begin() as c:
            c.execute(
                text(
                    "INSERT INTO teams (id, name) "
                    "VALUES (gen_random_uuid(), 'lab'), (gen_random_uuid(), 'lab')"
                )
            )
        command.downgrade(cfg, "0012")
        with eng.connect() as c:
            names = sorted(c.execute(text("SELECT name FROM teams")).scalars())
        assert names[0] == "lab" and names[1].startswith("lab (") and len(names) == 2
    finally:
        eng.dispose()
