"""The SQL statements a block of a test sends on a connection, for the tests that hold a code path
to its statements (how many, which tables, no row lock, no whole document read): the long-polls,
a run's answer, a series' gathering, a device's resolution, the runs list."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from sqlalchemy import event

SAVEPOINTS = ("SAVEPOINT", "RELEASE SAVEPOINT")  # a rollback to one is kept: it is news


@contextlib.contextmanager
def captured_sql(connection: Any, *, savepoints: bool = True) -> Iterator[list[str]]:
    """Every statement sent on `connection` (a SQLAlchemy Connection: `session.connection()`)
    inside the block, in order, its whitespace collapsed and upper-cased (`FROM AGENTS`, `FOR
    UPDATE`). `savepoints=False` leaves out the savepoints the tests' rolled-back transaction and
    a nested unit of work issue. The list may be cleared inside the block to capture a step of it
    alone; it keeps what the block sent after the block."""
    statements: list[str] = []

    def seen(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        text = " ".join(statement.split()).upper()
        if savepoints or not text.startswith(SAVEPOINTS):
            statements.append(text)

    event.listen(connection, "before_cursor_execute", seen)
    try:
        yield statements
    finally:
        event.remove(connection, "before_cursor_execute", seen)


def blocked_on_locks(engine: Any) -> int:
    """How many sessions of `engine`'s database wait for a lock now. A transaction per look:
    pg_stat_activity is a snapshot taken once per transaction, so a look inside one transaction
    that began before the other session blocked saw 0 to its end (test_devices_identity's flake)."""
    from sqlalchemy import text
    from sqlalchemy.orm import Session

    with Session(engine) as s:
        return int(
            s.scalar(
                text(
                    "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                    " AND datname = current_database()"
                )
            )
            or 0
        )
