import uuid
from datetime import datetime

from sqlalchemy import BigInteger, ForeignKey, String
from sqlalchemy.orm import Mapped, mapped_column

from backend.models.base import Base


class PowerSample(Base):
    """A wattmeter reading during a run's idle-before, load or idle-after phase.

    `t_ns` is on the engine's monotonic clock relative to the run's start, `ts` is UTC; the
    energy issue fills this table (bulk COPY) and derives energy and carbon from it.
    """

    __tablename__ = "power_samples"
    run_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True)
    source: Mapped[str] = mapped_column(String(200), primary_key=True)
    t_ns: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    ts: Mapped[datetime]
    phase: Mapped[str] = mapped_column(String(20))
    watts: Mapped[float]
    tier: Mapped[str] = mapped_column(String(20))
