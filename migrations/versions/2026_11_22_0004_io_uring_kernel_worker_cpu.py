"""io_uring kernel worker CPU: result_jobs.kernel_worker_cpu_pct and result_jobs.target_nowait, null
for results without the engine's `iowatt.io_uring` (other ioengines, older engines, fio documents)

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-22 02:35:09.000000+00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("result_jobs", sa.Column("kernel_worker_cpu_pct", sa.Float(), nullable=True))
    op.add_column("result_jobs", sa.Column("target_nowait", sa.Boolean(), nullable=True))


def downgrade() -> None:
    op.drop_column("result_jobs", "target_nowait")
    op.drop_column("result_jobs", "kernel_worker_cpu_pct")
