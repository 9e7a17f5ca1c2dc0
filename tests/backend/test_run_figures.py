"""A RunRead's job figures (`jobs`, `passes`) as a list reads them (backend/run/figures.py: result
rows read as plain tuples, validated in one call per run) for runs of every kind: the stored rows'
values field for field, in the schema's units, and the same whole RunRead (origin and energy labels,
file, database and PTS parts) as from the ORM rows a caller already loaded (compare's path)."""

import json
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy import select
from sqlalchemy.orm import Session

from backend.models import ResultJob, Run, RunStatus
from backend.result import service as result_service
from backend.run import repository, service
from backend.run.schemas import DirSummary, JobSummary
from backend.workload.builtin import BUILTINS
from backend.workload.schemas import WorkloadSpec, stored_spec
from tests.backend.test_db_results import hb_spec, heap_btree_doc, tpch_doc, tpch_spec
from tests.backend.test_file_results import postmark_json, postmark_spec
from tests.backend.test_imports import FIO2, post_file
from tests.backend.test_result_upload import body, token
from tests.factories import create_agent, create_result, create_run, create_user, engine_document

T0 = datetime(2026, 12, 7, 18, 0, tzinfo=UTC)
DATA = Path(__file__).resolve().parents[1] / "data"
# JobSummary's read/write as the rows hold them (the mapping before figures.py, written out)
SIDE = (
    "iops",
    "bw_bytes",
    "io_bytes",
    "total_ios",
    "lat_mean_ns",
    "clat_p50_ns",
    "clat_p99_ns",
    "clat_p999_ns",
    "clat_max_ns",
)


def _expected(j: ResultJob) -> dict[str, Any]:
    def side(d: str) -> DirSummary | None:
        if getattr(j, f"{d}_total_ios") in (None, 0):
            return None
        return DirSummary(**{f: getattr(j, f"{d}_{f}") for f in SIDE})

    return JobSummary(
        job_index=j.job_index,
        name=j.name,
        rw=j.rw,
        bs_bytes=j.bs_bytes,
        runtime_ns=j.runtime_ns,
        usr_cpu_pct=j.usr_cpu_pct,
        sys_cpu_pct=j.sys_cpu_pct,
        kernel_worker_cpu_pct=j.kernel_worker_cpu_pct,
        target_nowait=j.target_nowait,
        read=side("read"),
        write=side("write"),
    ).model_dump(mode="json")


def test_a_lists_job_figures_are_the_stored_rows_for_runs_of_every_kind(
    client: TestClient, session: Session
) -> None:
    u = create_user(session)
    a = create_agent(session, team=u.team).agent
    ids: dict[str, uuid.UUID] = {}

    def stored(kind: str, doc: dict[str, Any], spec: WorkloadSpec | None = None) -> None:
        run = create_run(session, agent=a, status=RunStatus.succeeded, name=f"figures {kind}")
        if spec is not None:
            run.workload_spec = stored_spec(spec)
        result_service.store_document(
            session,
            run_id=run.id,
            upload_id=uuid.uuid4(),
            engine_result=doc,
            doc=result_service.validate_document(doc),
            engine_exit_code=0,
            agent_version="test",
            started_at=T0,
            finished_at=T0,
        )
        ids[kind] = run.id

    stored("psync", engine_document(jobs=2))
    stored("io_uring", engine_document(ioengine="io_uring"))
    stored("postmark", json.loads(postmark_json()), postmark_spec())
    stored("tpch", tpch_doc(), tpch_spec())
    stored("heap_btree", heap_btree_doc(), hb_spec())
    stored("pts", json.loads((DATA / "pts" / "iops-trial.json").read_text()))
    # CrystalDiskMark's passes (3 measured after 1 discarded), figures entered as published ones
    cdm = create_run(session, agent=a, status=RunStatus.succeeded, name="figures cdm")
    cdm_spec = BUILTINS["crystaldiskmark"][1]
    cdm.workload_spec = stored_spec(cdm_spec)
    bw = {0: 9e9, 1: 2e9, 2: 3e9, 3: 1e9}  # B/s by pass: p0 discarded
    create_result(
        session,
        run=cdm,
        jobs=[
            {
                "name": j.name,
                "rw": j.rw,
                "bs_bytes": j.bs_bytes,
                f"{j.rw.removeprefix('rand')}_bw_bytes": bw[k],
            }
            for j in cdm_spec.jobs
            for k in [int(j.name.rsplit(".p", 1)[1])]
        ],
    )
    ids["cdm"] = cdm.id
    ids["queued"] = create_run(session, agent=a, name="figures queued").id
    session.flush()
    imported = client.post("/api/v1/results", json=body(u), headers=token(session, u, "upload"))
    assert imported.status_code == 201, imported.text
    ids["uploaded"] = uuid.UUID(imported.json()["run_id"])
    fio = post_file(client, u.headers, FIO2, team_id=u.team.id, file_name="fio.json", host="lab-7")
    assert fio.status_code == 201, fio.text
    ids["imported"] = uuid.UUID(fio.json()["runs"][0]["run_id"])

    r = client.get("/api/v1/runs", params={"limit": 50, "team_id": str(u.team.id)}, headers=u.headers)
    assert r.status_code == 200, r.text
    listed = {uuid.UUID(i["id"]): i for i in r.json()["items"]}
    assert set(ids.values()) <= set(listed)
    rows = repository.jobs_of(session, list(ids.values()))
    for kind, run_id in ids.items():
        item = listed[run_id]
        assert item["jobs"] == [_expected(j) for j in rows[run_id]], kind
        assert (kind == "queued") == (item["jobs"] == [])
    # a run's whole RunRead is the same from ORM rows given (compare's path)
    runs = list(session.scalars(select(Run).where(Run.id.in_(ids.values()))))
    given = service.to_read(session, runs, jobs=rows)
    assert {str(g.id): g.model_dump(mode="json") for g in given} == {str(i): listed[i] for i in ids.values()}
    assert listed[ids["uploaded"]]["source"] == "import"
    origin = listed[ids["imported"]]["origin"]
    assert origin["label"] == f"imported from fio {origin['version']}"
    assert listed[ids["io_uring"]]["jobs"][0]["kernel_worker_cpu_pct"] is not None
    assert listed[ids["tpch"]]["tpch"] is not None and listed[ids["pts"]]["pts"] is not None
    assert listed[ids["postmark"]]["file_workload"] is not None
    # passes: libs/workload's best of p1..p3 per test, in B/s
    first = listed[ids["cdm"]]["passes"][0]
    assert first["test"] == "SEQ1M_Q8T1-read" and first["direction"] == "read"
    assert (first["passes"], first["discarded"], first["bw_bytes"]) == (
        3,
        1,
        [2_000_000_000, 3_000_000_000, 1_000_000_000],
    )
    assert (first["best_bw_bytes"], first["median_bw_bytes"], first["best_job"]) == (
        3e9,
        2e9,
        "SEQ1M_Q8T1-read.p2",
    )
    assert first["spread_pct"] == 100.0
    assert len(listed[ids["cdm"]]["passes"]) == len({j.name.rsplit(".p", 1)[0] for j in cdm_spec.jobs})
    assert all(listed[i]["passes"] == [] for k, i in ids.items() if k != "cdm")
