"""host policy (ADR 0009): runs name a meter instead of carrying its spec, destructive runs,
bounded enrolment tokens, agent deletion

- `runs.meter_spec` becomes `runs.meter`, the NAME of a meter the host configured (`""` = none,
  null = the host's default). Stored specs are dropped, not converted: a spec can hold BMC/plug
  credentials or a `command:` to run, and the server must never hand one to an agent again. Runs
  that carried a spec now read null (the host's default meter) — a queued one measures with
  whatever its host configured as default, or nothing; `""` (no meter) is kept. Downgrading
  cannot bring the specs back: the column comes back holding the names.
- `run_power.meter` and `run_energy.summary` lose the meter spec (`spec`, `source`): what a run
  shows is the meter's name, driver and tier. `source` becomes the driver name.
- `runs.destructive`: the run's half of the two-key rule for raw devices (false for every
  existing run).
- `enrollment_tokens.max_uses` (single-use by default) and `.operator` (created on the server
  host by `iowatt-server enrollment-token`, which may replace an agent like a team admin's token).
  Existing tokens become single-use: one already used is spent, an unused one works once.
- `agents.deleted_at`: an admin deletes an agent; its runs and results stay (they name it), its
  token is refused and its name is free again. Names are unique among agents not deleted.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-22 18:30:00.000000+00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # runs: meter by name, destructive
    op.execute("UPDATE runs SET meter_spec = NULL WHERE meter_spec IS NOT NULL AND meter_spec <> ''")
    op.alter_column(
        "runs",
        "meter_spec",
        new_column_name="meter",
        type_=sa.String(length=120),
        existing_type=sa.String(length=1000),
        existing_nullable=True,
    )
    op.add_column("runs", sa.Column("destructive", sa.Boolean(), server_default=sa.false(), nullable=False))
    # power: no spec stored or shown
    op.execute("UPDATE run_power SET meter = meter - 'spec' WHERE meter ? 'spec'")
    op.execute(
        "UPDATE run_energy e SET summary = e.summary || jsonb_build_object('source', "
        "coalesce(p.meter->>'name', p.meter->>'driver', '')) "
        "FROM run_power p WHERE p.run_id = e.run_id AND e.summary ? 'source'"
    )
    # enrolment tokens: use count and who may replace
    op.add_column(
        "enrollment_tokens", sa.Column("max_uses", sa.Integer(), server_default="1", nullable=False)
    )
    op.add_column(
        "enrollment_tokens",
        sa.Column("operator", sa.Boolean(), server_default=sa.false(), nullable=False),
    )
    op.execute("UPDATE enrollment_tokens SET max_uses = GREATEST(uses, 1)")
    # agents: deletion frees the name, keeps the runs
    op.add_column("agents", sa.Column("deleted_at", sa.DateTime(timezone=True), nullable=True))
    op.drop_constraint("uq_agents_team_id", "agents", type_="unique")
    op.create_index(
        "uq_agents_team_name_live",
        "agents",
        ["team_id", "name"],
        unique=True,
        postgresql_where=sa.text("deleted_at IS NULL"),
    )


def downgrade() -> None:
    # deleted agents would collide with live ones of the same name: rename them (runs stay)
    op.execute(
        "UPDATE agents SET name = left(name, 100) || '~deleted-' || left(id::text, 8), "
        "revoked_at = coalesce(revoked_at, deleted_at) WHERE deleted_at IS NOT NULL"
    )
    op.drop_index("uq_agents_team_name_live", table_name="agents")
    op.create_unique_constraint("uq_agents_team_id", "agents", ["team_id", "name"])
    op.drop_column("agents", "deleted_at")
    op.drop_column("enrollment_tokens", "operator")
    op.drop_column("enrollment_tokens", "max_uses")
    op.drop_column("runs", "destructive")
    op.alter_column(
        "runs",
        "meter",
        new_column_name="meter_spec",
        type_=sa.String(length=1000),
        existing_type=sa.String(length=120),
        existing_nullable=True,
    )
