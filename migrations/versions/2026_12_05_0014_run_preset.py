"""run preset: the built-in preset a run was created from, recorded on the run

- `runs.preset`: the name of the built-in workload a run was queued from (run/service.create sets
  it; campaigns queue through it). The named views read it instead of guessing the preset from the
  run's job names (backend/views/loading.py).
- Existing runs queued from a built-in workload get its name; the others (inline or saved
  workloads, imported results, runs whose workload was deleted) stay null, and the views keep
  their old guess for them.

Downgrading drops the column.

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-05 09:00:00.000000+00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("runs", sa.Column("preset", sa.String(length=120), nullable=True))
    op.execute(
        "UPDATE runs SET preset = workloads.name FROM workloads "
        "WHERE runs.workload_id = workloads.id AND workloads.builtin"
    )


def downgrade() -> None:
    op.drop_column("runs", "preset")
