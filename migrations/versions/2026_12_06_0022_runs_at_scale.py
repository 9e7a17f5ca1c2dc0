"""runs at scale (issue 30): indexes for the runs list at a million runs

Measured with bench/scale (docs/benchmarks.md § A million runs), each for a plan it changes:
- `ix_runs_created_id (created_at, id)`: the list's default order for a user of several teams
  (`team_id IN (...) ORDER BY created_at DESC, id`) was a parallel scan of every run and a sort
  (1.3 s); now the newest rows are read backwards and the teams filtered;
- `ix_runs_device_created (device_id, created_at)` and `ix_run_targets_device (device_id)`: the
  device filter, now one set of run ids from both (backend/run/repository.py);
- `ix_runs_workload_created (workload_id, created_at)`: the workload filter;
- `ix_runs_name (name)`: the list sorted by name (an incremental sort on the index's order).

Plain CREATE INDEX (inside the upgrade's transaction): writes to runs wait while each is built,
seconds at a million runs.

Revision ID: 0022
Revises: 0021
Create Date: 2026-12-06 05:40:00.000000+00:00
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0022"
down_revision: str | None = "0021"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index("ix_runs_created_id", "runs", ["created_at", "id"])
    op.create_index("ix_runs_device_created", "runs", ["device_id", "created_at"])
    op.create_index("ix_runs_workload_created", "runs", ["workload_id", "created_at"])
    op.create_index("ix_runs_name", "runs", ["name"])
    op.create_index("ix_run_targets_device", "run_targets", ["device_id"])


def downgrade() -> None:
    op.drop_index("ix_run_targets_device", table_name="run_targets")
    op.drop_index("ix_runs_name", table_name="runs")
    op.drop_index("ix_runs_workload_created", table_name="runs")
    op.drop_index("ix_runs_device_created", table_name="runs")
    op.drop_index("ix_runs_created_id", table_name="runs")
