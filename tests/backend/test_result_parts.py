"""result.repository.document_parts: the parts of stored engine documents a RunRead shows (file,
DBMS and PTS), read for many runs in one statement that is made once per process."""

import uuid
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Connection
from sqlalchemy.orm import Session

from backend.models import RunResult, RunStatus
from backend.result import repository
from tests.factories import create_agent, create_run, create_user, engine_document
from tests.sql import captured_sql

T0 = datetime(2026, 11, 1, tzinfo=UTC)


def test_document_parts_reads_each_kind_of_document_in_one_statement_made_once(
    session: Session, connection: Connection
) -> None:
    """A vdbench, a TPC-H, a PTS and a plain block document: each run's parts come back under its
    kind (the intervals counted, not read), a block run and an unknown id have none, and every call
    (one run or several) is one statement built once, its ids a parameter."""
    u = create_user(session)
    agent = create_agent(session, team=u.team).agent
    plain = engine_document(jobs=1)
    docs: dict[str, dict[str, Any]] = {
        "file": {**plain, "fileset": {"intervals": [{"i": 1}, {"i": 2}, {"i": 3}], "files": 8}},
        "db": {**plain, "tpch": {"queries": [1]}, "heap_btree_run": {"n": 2}},
        "pts": {
            **plain,
            "pts": {"test": "iops", "compliant": True, "deviations": [], "steady_state": {}},
        },
        "plain": plain,
    }
    ids: dict[str, uuid.UUID] = {}
    for kind, doc in docs.items():
        run = create_run(session, agent=agent, status=RunStatus.succeeded)
        session.add(
            RunResult(
                run_id=run.id,
                upload_id=uuid.uuid4(),
                engine_result=doc,
                engine_exit_code=0,
                agent_version="test",
                started_at=T0,
                finished_at=T0,
                uploaded_at=T0,
            )
        )
        ids[kind] = run.id
    session.flush()
    with captured_sql(connection, savepoints=False) as statements:
        files, dbs, verdicts = repository.document_parts(session, [*ids.values(), uuid.uuid4()])
        alone = repository.document_parts(session, [ids["file"]])
        none = repository.document_parts(session, [])
    usr = plain["jobs"][0]["usr_cpu"]
    assert files == {
        ids["file"]: {
            "postmark": None,
            "fileset": {"files": 8},
            "usr_cpu": usr,
            "sys_cpu": plain["jobs"][0]["sys_cpu"],
            "mem_bytes": None,
            "intervals": 3,
        }
    }
    assert dbs == {ids["db"]: {"tpch": {"queries": [1]}, "heap_btree": None, "heap_btree_run": {"n": 2}}}
    # a document from before profiles has none: the verdict reads it as Enterprise's
    assert verdicts == {
        ids["pts"]: {"test": "iops", "profile": None, "compliant": True, "deviations": [], "steady_state": {}}
    }
    assert alone == ({ids["file"]: files[ids["file"]]}, {}, {}) and none == ({}, {}, {})
    assert len(statements) == 2  # one a call with ids, none without
    assert repository._document_parts_query() is repository._document_parts_query()
