"""environment topology and run snapshots (ADR 0035)

- `environments.topology` (JSONB, not null, `{}`): the storage topology (RAID, controller, fabric,
  NAS protocol, file system; backend/environment/schemas.py EnvironmentTopology). Existing
  environments keep their kind, name and description and read back with nothing known (`{}`).
- `runs.environment_snapshot` (JSONB, null): the environment as it was when the run was stored
  (backend/models/environment.py `Environment.snapshot`). Existing runs that name an environment
  get today's, built here in SQL with the same keys (`recorded_at` = the migration's time: that is
  when it was recorded); runs without one stay null.

Downgrading drops both columns (the runs keep their environment_id).

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-05 20:30:00.000000+00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0016"
down_revision: str | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column(
        "environments",
        sa.Column("topology", postgresql.JSONB(), nullable=False, server_default=sa.text("'{}'::jsonb")),
    )
    op.add_column("runs", sa.Column("environment_snapshot", postgresql.JSONB(), nullable=True))
    op.execute(
        """
        UPDATE runs SET environment_snapshot = jsonb_build_object(
            'version', 1,
            'environment_id', e.id::text,
            'name', e.name,
            'kind', e.kind,
            'description', coalesce(e.description, ''),
            'topology', e.topology,
            'region', e.region,
            'grid_g_per_kwh', e.grid_g_per_kwh,
            'grid_source', e.grid_source,
            'pue', coalesce(e.pue, 1.0),
            'electricity_price_per_kwh', e.electricity_price_per_kwh,
            'currency', coalesce(e.currency, 'EUR'),
            'recorded_at', to_jsonb(now())
        )
        FROM environments e
        WHERE runs.environment_id = e.id
        """
    )


def downgrade() -> None:
    op.drop_column("runs", "environment_snapshot")
    op.drop_column("environments", "topology")
