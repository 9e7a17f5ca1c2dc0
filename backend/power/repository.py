"""All SQL of the power domain: a run's meter and samples (COPY in, bucketed out) and its energy."""

import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import Any, cast

import psycopg
from sqlalchemy import func, select, text
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session

from backend.counters import ingested
from backend.models import Device, PowerSample, ResultJob, Run, RunEnergy, RunPower, RunResult


def add(session: Session, power: RunPower, t_ns: Sequence[int], value: Sequence[float]) -> None:
    """The run's power row, then its samples with COPY on the request's own connection."""
    session.add(power)
    session.flush()
    if t_ns:
        dbapi = cast(psycopg.Connection[Any], session.connection().connection.dbapi_connection)
        with (
            dbapi.cursor() as cur,
            cur.copy("COPY power_samples (run_id, t_ns, value) FROM STDIN (FORMAT BINARY)") as copy,
        ):
            copy.write(_copy_binary(power.run_id, t_ns, value))
        ingested(session, "power_samples", len(t_ns))


# COPY's binary format (PostgreSQL's docs, "COPY", Binary Format): a signature, flags and header
# extension length, then per row the field count and each field as its length and big-endian value
# (uuid 16 bytes, bigint 8, double precision 8), then -1. Built as one array by numpy: per sample in
# Python, text rows (`f"{t}\t{v!r}"`) were ~50 ms of a 100,000-sample upload and write_row as long
# as PostgreSQL took to store them (bench/load, docs/benchmarks.md); PostgreSQL reads the binary
# doubles without parsing text either.
_COPY_HEADER = b"PGCOPY\n\xff\r\n\x00" + bytes(8)
_COPY_TRAILER = b"\xff\xff"


def _copy_binary(run_id: uuid.UUID, t_ns: Sequence[int], value: Sequence[float]) -> bytes:
    import numpy as np  # imported by the first upload with samples, not by every process at start

    row = np.dtype(
        [
            ("n", ">i2"),
            ("run_len", ">i4"),
            ("run", "S16"),
            ("t_len", ">i4"),
            ("t", ">i8"),
            ("v_len", ">i4"),
            ("v", ">f8"),
        ]
    )
    rows = np.empty(len(t_ns), row)
    rows["n"], rows["run_len"], rows["t_len"], rows["v_len"] = 3, 16, 8, 8
    rows["run"] = run_id.bytes
    rows["t"] = t_ns
    rows["v"] = value
    return _COPY_HEADER + rows.tobytes() + _COPY_TRAILER


def get(session: Session, run_id: uuid.UUID) -> RunPower | None:
    return session.get(RunPower, run_id)


def run(session: Session, run_id: uuid.UUID) -> Run | None:
    return session.get(Run, run_id)


def device(session: Session, device_id: uuid.UUID | None) -> Device | None:
    return session.get(Device, device_id) if device_id is not None else None


def samples(session: Session, run_id: uuid.UUID) -> list[tuple[int, float]]:
    rows = session.execute(
        select(PowerSample.t_ns, PowerSample.value)
        .where(PowerSample.run_id == run_id)
        .order_by(PowerSample.t_ns)
    )
    return [(t, v) for t, v in rows]


def io_totals(session: Session, run_id: uuid.UUID) -> tuple[int, int]:
    """(bytes moved, I/Os) of the run's jobs, reads and writes together."""
    io_bytes, total_ios = session.execute(
        select(
            func.coalesce(
                func.sum(
                    func.coalesce(ResultJob.read_io_bytes, 0) + func.coalesce(ResultJob.write_io_bytes, 0)
                ),
                0,
            ),
            func.coalesce(
                func.sum(
                    func.coalesce(ResultJob.read_total_ios, 0) + func.coalesce(ResultJob.write_total_ios, 0)
                ),
                0,
            ),
        ).where(ResultJob.run_id == run_id)
    ).one()
    return int(io_bytes), int(total_ios)


def upsert_energy(session: Session, run_id: uuid.UUID, values: dict[str, Any]) -> RunEnergy | None:
    session.execute(
        insert(RunEnergy)
        .values(run_id=run_id, **values)
        .on_conflict_do_update(index_elements=["run_id"], set_=values)
    )
    return session.get(RunEnergy, run_id, populate_existing=True)


def runs_with_power(
    session: Session,
    *,
    environment_id: uuid.UUID | None,
    device_id: uuid.UUID | None,
    after: uuid.UUID | None = None,
    limit: int | None = None,
) -> list[uuid.UUID]:
    """The runs with a power record, by id: those after `after`, at most `limit`."""
    q = select(Run.id).join(RunPower, RunPower.run_id == Run.id).where(RunPower.status == "ok")
    if environment_id is not None:
        q = q.where(Run.environment_id == environment_id)
    if device_id is not None:
        q = q.where(Run.device_id == device_id)
    if after is not None:
        q = q.where(Run.id > after)
    return list(session.scalars(q.order_by(Run.id).limit(limit)))


def powers_of(session: Session, run_ids: list[uuid.UUID]) -> dict[uuid.UUID, RunPower]:
    return {p.run_id: p for p in session.scalars(select(RunPower).where(RunPower.run_id.in_(run_ids)))}


def energies_of(session: Session, run_ids: list[uuid.UUID]) -> dict[uuid.UUID, RunEnergy]:
    return {e.run_id: e for e in session.scalars(select(RunEnergy).where(RunEnergy.run_id.in_(run_ids)))}


def powers_with_energies(
    session: Session, run_ids: list[uuid.UUID]
) -> tuple[dict[uuid.UUID, RunPower], dict[uuid.UUID, RunEnergy]]:
    """`powers_of` and, of those runs, `energies_of` in one query (a run's energy is read only
    beside its power record)."""
    rows = session.execute(
        select(RunPower, RunEnergy)
        .outerjoin(RunEnergy, RunEnergy.run_id == RunPower.run_id)
        .where(RunPower.run_id.in_(run_ids))
    ).tuples()
    powers: dict[uuid.UUID, RunPower] = {}
    energies: dict[uuid.UUID, RunEnergy] = {}
    for p, e in rows:
        powers[p.run_id] = p
        if e is not None:
            energies[e.run_id] = e
    return powers, energies


def uploaded_before(session: Session, run_ids: list[uuid.UUID], before: datetime) -> set[uuid.UUID]:
    """Which of these runs had their result uploaded before `before`."""
    if not run_ids:
        return set()
    return set(
        session.scalars(
            select(RunResult.run_id).where(RunResult.run_id.in_(run_ids), RunResult.uploaded_at < before)
        )
    )


def sample_bounds(session: Session, run_id: uuid.UUID) -> tuple[int | None, int | None]:
    lo, hi = session.execute(
        select(func.min(PowerSample.t_ns), func.max(PowerSample.t_ns)).where(PowerSample.run_id == run_id)
    ).one()
    return lo, hi


def buckets(
    session: Session, run_id: uuid.UUID, *, bucket_ns: int, counter: bool
) -> list[tuple[int, float, float, float]]:
    """(last t_ns, mean, min, max) watts per bucket of `bucket_ns`; `counter`: the samples are an
    energy counter, so watts are its differences over time."""
    if counter:
        sql = """WITH d AS (SELECT t_ns,
                                   (value - lag(value) OVER w) / ((t_ns - lag(t_ns) OVER w) / 1e9) AS v
                            FROM power_samples WHERE run_id = :run WINDOW w AS (ORDER BY t_ns))
                 SELECT max(t_ns), avg(v), min(v), max(v) FROM d WHERE v IS NOT NULL
                 GROUP BY t_ns / :bucket ORDER BY 1"""
    else:
        sql = """SELECT max(t_ns), avg(value), min(value), max(value)
                 FROM power_samples WHERE run_id = :run GROUP BY t_ns / :bucket ORDER BY 1"""
    return [
        (t, mean, lo, hi)
        for t, mean, lo, hi in session.execute(text(sql), {"run": run_id, "bucket": bucket_ns})
    ]
