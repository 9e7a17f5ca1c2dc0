"""TPC-H and heap/B-tree results on the server (issue 15, common15 § 3): ingest (validated, a 422
naming the field inside the document, jobs[0]'s row), the run read's `tpch` / `heap_btree` briefs.

The documents are real: heap/B-tree's from the built engine run here on tmpfs (small N); TPC-H's is
tests/backend/data/upload-tpch-postgresql-sf001.json, what the agent's TPC-H lease child printed on
this machine (PostgreSQL 15, SF 0.01; the command is in tests/backend/data/README-issue15.md).
"""

from __future__ import annotations

import copy
import json
import subprocess
import tempfile
import uuid
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from iowatt_workload import tpch_facts
from sqlalchemy import select
from sqlalchemy.orm import Session

from backend.models import ResultJob
from backend.workload.schemas import HeapBtreeSpec, TpchSpec, WorkloadSpec
from tests.backend.test_file_results import get_run, upload_run
from tests.factories import AgentCtx, UserCtx, create_agent, create_user
from tests.stack import ENGINE

DATA = Path(__file__).parent / "data"


def tpch_doc() -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((DATA / "upload-tpch-postgresql-sf001.json").read_text())
    return doc


def tpch_spec(scale_factor: float = 0.01, dbms: str = "postgresql") -> WorkloadSpec:
    return WorkloadSpec(
        kind="tpch",
        tpch=TpchSpec(dbms=dbms, scale_factor=scale_factor, query_timeout_s=300),  # type: ignore[arg-type]
    )


def hb_spec(records: int = 20000, fractions: tuple[float, ...] = (0.1, 0.5, 1.0)) -> WorkloadSpec:
    return WorkloadSpec(
        kind="heap_btree",
        heap_btree=HeapBtreeSpec(records=records, queries=500, cache_fractions=list(fractions), randseed=7),
    )


@cache
def heap_btree_json(records: int = 20000, fractions: str = "0.1,0.5,1") -> str:
    """The built engine's --heap-btree on tmpfs (it removes its files)."""
    with tempfile.TemporaryDirectory(prefix="iowatt-hb-results-", dir="/dev/shm") as tmp:
        r = subprocess.run(
            [
                str(ENGINE),
                "--heap-btree",
                f"--directory={tmp}",
                f"--records={records}",
                f"--cache-fraction={fractions}",
                "--queries=500",
                "--randseed=7",
            ],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert r.returncode == 0, r.stderr
        assert not list(Path(tmp).iterdir())
    return r.stdout


def heap_btree_doc(records: int = 20000, fractions: str = "0.1,0.5,1") -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(heap_btree_json(records, fractions))
    return doc


def _setup(session: Session) -> tuple[UserCtx, AgentCtx]:
    u = create_user(session)
    return u, create_agent(session, team=u.team)


def test_a_tpch_result_is_stored_with_its_job_row_and_read_in_brief(
    client: TestClient, session: Session
) -> None:
    u, a = _setup(session)
    doc = tpch_doc()
    rid = upload_run(client, session, a, tpch_spec(), doc, target="/srv/bench")
    row = session.scalar(select(ResultJob).where(ResultJob.run_id == rid))
    assert row is not None
    # jobs[0] as the agent built it: name and rw tpch, runtime = power + throughput, no I/O counters
    assert (row.name, row.rw, row.bs_bytes) == ("tpch", "tpch", None)
    assert row.runtime_ns == doc["jobs"][0]["iowatt"]["runtime_ns"] > 0
    assert row.read_total_ios is None and row.write_total_ios is None  # not measured: not zero I/O
    read = get_run(client, u, rid)
    assert read["file_workload"] is None and read["heap_btree"] is None
    t, src = read["tpch"], doc["tpch"]
    assert t["label"] == "TPC-H-derived, not audited"
    assert (t["dbms"], t["scale_factor"], t["streams"]) == ("postgresql", 0.01, 2)
    assert t["qphh_at_size"] == src["qphh_at_size"] > 0
    assert t["power_at_size"] == src["power_at_size"] and t["throughput_at_size"] == src["throughput_at_size"]
    assert t["load_s"] == src["load_s"] and t["throughput_s"] == src["throughput_s"]
    assert len(t["queries"]) == 66 == 22 * 3  # the power test and two streams
    assert [q["stream"] for q in t["queries"]] == sorted(q["stream"] for q in t["queries"])
    power = [q for q in t["queries"] if q["stream"] == 0]
    assert [q["query"] for q in power] == list(range(1, 23))
    assert t["answers_ok"] == t["answers_checked"] == 66 and t["timeouts"] == 0
    want_power = sum(q["seconds"] for q in src["queries"] if q["test"] == "power") + sum(
        r["seconds"] for r in src["refresh"]["timings"] if r["test"] == "power"
    )
    assert t["power_s"] == pytest.approx(want_power)
    assert t["settings"]["shared_buffers"] == "16MB" and t["buffer_pool_bytes"] == 16 * 2**20
    assert t["database_bytes"] == tpch_facts(0.01, 2)["dataset_bytes"]
    listed = client.get("/api/v1/runs", headers=u.headers).json()["items"]
    assert next(r for r in listed if r["id"] == str(rid))["tpch"]["qphh_at_size"] == src["qphh_at_size"]


def test_a_tpch_run_with_a_timed_out_query_reads_without_metrics(
    client: TestClient, session: Session
) -> None:
    u, a = _setup(session)
    doc = tpch_doc()
    q = doc["tpch"]["queries"][3]
    q.update({"seconds": None, "answer_ok": None, "timed_out": True})
    doc["tpch"].update(
        {
            "timeouts": 1,
            "power_at_size": None,
            "throughput_at_size": None,
            "qphh_at_size": None,
            "metrics_note": "x",
        }
    )
    rid = upload_run(client, session, a, tpch_spec(), doc, target="/srv/bench")
    t = get_run(client, u, rid)["tpch"]
    assert t["qphh_at_size"] is None and t["timeouts"] == 1 and t["answers_checked"] == 65
    assert [x for x in t["queries"] if x["timed_out"]] == [
        {
            "query": q["query"],
            "stream": 0,
            "seconds": None,
            "answer_ok": None,
            "timed_out": True,
            "error": None,
        }
    ]


def test_a_heap_btree_result_is_stored_with_its_job_row_and_read_in_brief(
    client: TestClient, session: Session
) -> None:
    u, a = _setup(session)
    doc = heap_btree_doc()
    rid = upload_run(client, session, a, hb_spec(), doc)
    row = session.scalar(select(ResultJob).where(ResultJob.run_id == rid))
    assert row is not None
    job = doc["jobs"][0]
    assert (row.name, row.rw, row.bs_bytes) == ("heap-btree", "heap-btree", 8192)
    assert row.read_total_ios == job["read"]["total_ios"] > 0  # device reads in 8 KiB pages
    assert row.write_io_bytes == job["write"]["io_bytes"] > 0
    read = get_run(client, u, rid)
    assert read["tpch"] is None and read["file_workload"] is None
    h = read["heap_btree"]
    assert (h["records"], h["queries"], h["randseed"], h["page_bytes"]) == (20000, 500, 7, 8192)
    assert len(h["rows"]) == 3 * 2 * 2 == len(doc["heap_btree"])
    for got, src in zip(h["rows"], doc["heap_btree"], strict=True):
        assert (got["structure"], got["operation"], got["cache_fraction"]) == (
            src["structure"],
            src["operation"],
            src["cache_fraction"],
        )
        assert got["ops_per_s"] == src["ops_per_s"] > 0 and got["device_reads"] == src["device_reads"]
        assert got["hit_ratio"] == src["hit_ratio"]
    # the whole structure in the pool: the B+tree's point queries hit every page
    full = next(
        r
        for r in h["rows"]
        if r["structure"] == "btree" and r["operation"] == "point_query" and r["cache_fraction"] == 1
    )
    assert full["device_reads"] == 0 and full["hit_ratio"] == 1


@pytest.mark.parametrize(
    ("path", "value", "field"),
    [
        (("tpch", "queries", 0, "query"), 23, "engine_result.tpch.queries.0.query"),
        (("tpch", "queries", 1, "seconds"), -1, "engine_result.tpch.queries.1.seconds"),
        (("tpch", "scale_factor"), 0, "engine_result.tpch.scale_factor"),
        (("tpch", "dbms"), "oracle", "engine_result.tpch.dbms"),
        (("tpch", "qphh_at_size"), "fast", "engine_result.tpch.qphh_at_size"),
    ],
)
def test_a_tpch_document_with_a_bad_figure_is_a_422_naming_it(
    client: TestClient, session: Session, path: tuple[Any, ...], value: Any, field: str
) -> None:
    _, a = _setup(session)
    doc = tpch_doc()
    node: Any = doc
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    r = _last_upload_error(client, session, a, doc)
    assert r["detail"][0]["field"] == field, r


@pytest.mark.parametrize(
    ("key", "value", "field"),
    [
        ("cache_fraction", 1.5, "engine_result.heap_btree.2.cache_fraction"),
        ("structure", "hash", "engine_result.heap_btree.2.structure"),
        ("ops_per_s", -3, "engine_result.heap_btree.2.ops_per_s"),
        ("hit_ratio", 2, "engine_result.heap_btree.2.hit_ratio"),
    ],
)
def test_a_heap_btree_document_with_a_bad_figure_is_a_422_naming_it(
    client: TestClient, session: Session, key: str, value: Any, field: str
) -> None:
    _, a = _setup(session)
    doc = copy.deepcopy(heap_btree_doc())
    doc["heap_btree"][2][key] = value
    r = _last_upload_error(client, session, a, doc, spec=hb_spec())
    assert r["detail"][0]["field"] == field, r


def _last_upload_error(
    client: TestClient, session: Session, a: AgentCtx, doc: dict[str, Any], spec: WorkloadSpec | None = None
) -> dict[str, Any]:
    """Upload `doc` for a new leased run and return the 422's body."""
    from backend.run import service as run_service
    from backend.workload.schemas import stored_spec
    from tests.factories import create_run

    run = create_run(session, agent=a.agent, target_path="/srv/bench")
    run.workload_spec = stored_spec(spec or tpch_spec())
    session.flush()
    run_service.dispatch(session, run_id=run.id)
    lease = client.post(f"/api/v1/agents/{a.agent.id}/lease?wait_s=0", headers=a.headers).json()["lease"]
    lid = lease["lease_id"]
    assert (
        client.post(f"/api/v1/runs/{run.id}/start", json={"lease_id": lid}, headers=a.headers).status_code
        == 200
    )
    body = {
        "lease_id": lid,
        "upload_id": str(uuid.uuid4()),
        "engine_result": doc,
        "engine_exit_code": 0,
        "started_at": "2026-11-23T10:00:00Z",
        "finished_at": "2026-11-23T10:00:25Z",
    }
    r = client.put(f"/api/v1/runs/{run.id}/result", json=body, headers=a.headers)
    assert r.status_code == 422, r.text
    data: dict[str, Any] = r.json()
    return data


# --- compare ------------------------------------------------------------------------------------


def _metrics(c: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {f"{j['name']}/{m['key']}": m for j in c["jobs"] for m in j["metrics"]}


def tpch_doc_b() -> dict[str, Any]:
    """A second real run of the same workload (the lease child again, another target)."""
    doc: dict[str, Any] = json.loads((DATA / "upload-tpch-postgresql-sf001-b.json").read_text())
    return doc


def test_two_tpch_runs_compare_by_qphh_power_throughput_and_query(
    client: TestClient, session: Session
) -> None:
    u, a = _setup(session)
    da, db = tpch_doc(), tpch_doc_b()
    ra = upload_run(client, session, a, tpch_spec(), da, target="/srv/a")
    rb = upload_run(client, session, a, tpch_spec(), db, target="/srv/b")
    c = client.get(f"/api/v1/compare?runs={ra},{rb}", headers=u.headers).json()
    assert c["comparability"]["verdict"] == "comparable"
    names = [j["name"] for j in c["jobs"]]
    assert names == ["TPC-H (TPC-H-derived, not audited)", *(f"Q{n}" for n in range(1, 23))]
    m = _metrics(c)
    q = m["TPC-H (TPC-H-derived, not audited)/qphh_at_size"]
    assert (q["label"], q["kind"], q["better"]) == ("QphH@Size", "iops", "higher")
    assert q["values"] == pytest.approx([da["tpch"]["qphh_at_size"], db["tpch"]["qphh_at_size"]])
    ratio = q["values"][1] / q["values"][0]
    assert q["ratios"][1] == pytest.approx(ratio)
    # direction-aware: a higher QphH is better, a longer load worse
    assert q["changes"][1]["verdict"] == (
        "same" if abs(ratio - 1) < 0.005 else ("better" if ratio > 1 else "worse")
    )
    load = m["TPC-H (TPC-H-derived, not audited)/load_s"]
    lr = load["values"][1] / load["values"][0]
    assert load["better"] == "lower" and load["changes"][1]["verdict"] == (
        "same" if abs(lr - 1) < 0.005 else ("better" if lr < 1 else "worse")
    )
    assert m["TPC-H (TPC-H-derived, not audited)/power_at_size"]["values"][0] == pytest.approx(
        da["tpch"]["power_at_size"]
    )
    assert m["TPC-H (TPC-H-derived, not audited)/throughput_s"]["values"][1] == pytest.approx(
        db["tpch"]["throughput_s"]
    )
    q6 = m["Q6/power_s"]
    want = [
        next(x["seconds"] for x in d["tpch"]["queries"] if x["stream"] == 0 and x["query"] == 6)
        for d in (da, db)
    ]
    assert q6["values"] == pytest.approx(want) and q6["unit"] == "s" and q6["better"] == "lower"
    streams = [x["seconds"] for x in da["tpch"]["queries"] if x["stream"] > 0 and x["query"] == 6]
    assert m["Q6/streams_mean_s"]["values"][0] == pytest.approx(sum(streams) / len(streams))
    r = client.get(f"/api/v1/compare?runs={ra},{rb}&format=csv", headers=u.headers)
    assert r.status_code == 200 and "QphH@Size" in r.text and "TPC-H-derived, not audited" in r.text


def test_two_heap_btree_runs_compare_per_structure_operation_and_fraction(
    client: TestClient, session: Session
) -> None:
    u, a = _setup(session)
    doc = heap_btree_doc()
    ra = upload_run(client, session, a, hb_spec(), doc, target="/dev/shm/x")
    rb = upload_run(client, session, a, hb_spec(), doc, target="/dev/shm/b")
    c = client.get(f"/api/v1/compare?runs={ra},{rb}", headers=u.headers).json()
    assert c["comparability"]["verdict"] == "comparable"
    names = [j["name"] for j in c["jobs"]]
    assert names[:4] == [
        "Heap insert, cache 10 %",
        "Heap point query, cache 10 %",
        "B-tree insert, cache 10 %",
        "B-tree point query, cache 10 %",
    ]
    assert len(names) == 12
    m = _metrics(c)
    ops = m["B-tree point query, cache 50 %/ops_per_s"]
    src = next(
        r
        for r in doc["heap_btree"]
        if (r["structure"], r["operation"], r["cache_fraction"]) == ("btree", "point_query", 0.5)
    )
    assert ops["values"] == pytest.approx([src["ops_per_s"]] * 2) and ops["better"] == "higher"
    assert ops["changes"][1]["verdict"] == "same"
    hit = m["B-tree point query, cache 50 %/hit_ratio"]
    assert hit["better"] == "higher" and hit["values"][0] == pytest.approx(src["hit_ratio"])
    assert m["Heap insert, cache 10 %/device_writes"]["better"] == "lower"
    # a smaller sweep is another workload: not comparable unless forced
    other = upload_run(client, session, a, hb_spec(records=10000), heap_btree_doc(10000), target="/dev/shm/x")
    c = client.get(f"/api/v1/compare?runs={ra},{other}", headers=u.headers).json()
    assert c["comparability"]["verdict"] == "not_comparable" and c["jobs"] == []


def test_block_file_tpch_and_heap_btree_runs_do_not_compare(client: TestClient, session: Session) -> None:
    from backend.workload.builtin import BUILTINS
    from tests.factories import engine_document

    u, a = _setup(session)
    tp = upload_run(client, session, a, tpch_spec(), tpch_doc(), target="/srv/bench")
    hb = upload_run(client, session, a, hb_spec(), heap_btree_doc())
    block = upload_run(client, session, a, BUILTINS["quick"][1], engine_document(), target="/srv/bench")
    for x, y in ((block, tp), (block, hb), (tp, hb)):
        for force in ("false", "true"):
            r = client.get(f"/api/v1/compare?runs={x},{y}&force={force}", headers=u.headers)
            assert r.status_code == 422, r.text
            body = json.dumps(r.json())
            assert str(x) in body and str(y) in body and "do not compare" in body


def test_a_tpch_database_that_fits_in_ram_on_postgresql_is_flagged(
    client: TestClient, session: Session
) -> None:
    u = create_user(session)
    from tests.factories import INVENTORY

    a = create_agent(session, team=u.team, inventory={**INVENTORY, "mem_bytes": 8 * 1024**3})
    rid = upload_run(client, session, a, _with_facts(tpch_spec()), tpch_doc(), target="/srv/bench")
    c = client.get(f"/api/v1/compare?runs={rid}", headers=u.headers).json()
    flags = {f["flag"]: f["message"] for f in c["validity"][str(rid)]}
    assert "PostgreSQL reads through it" in flags["cache_resident"]
    maria = upload_run(
        client, session, a, _with_facts(tpch_spec(dbms="mariadb")), tpch_doc_mariadb(), target="/srv/a"
    )
    c = client.get(f"/api/v1/compare?runs={maria}", headers=u.headers).json()
    assert "cache_resident" not in {f["flag"] for f in c["validity"][str(maria)]}  # InnoDB: O_DIRECT
    big = upload_run(client, session, a, _with_facts(tpch_spec(10)), tpch_doc(), target="/srv/b")
    c = client.get(f"/api/v1/compare?runs={big}", headers=u.headers).json()
    assert "cache_resident" not in {f["flag"] for f in c["validity"][str(big)]}  # 25 GB > 8 GiB


def _with_facts(spec: WorkloadSpec) -> WorkloadSpec:
    from backend.workload.facts import with_facts

    return with_facts(spec)


def tpch_doc_mariadb() -> dict[str, Any]:
    """A real MariaDB run (the lease child, MariaDB 10.11, SF 0.01; tests/backend/data/README-issue15.md)."""
    doc: dict[str, Any] = json.loads((DATA / "upload-tpch-mariadb-sf001.json").read_text())
    return doc


# --- views --------------------------------------------------------------------------------------


def test_tpch_qphh_view_is_seed_000_figures_8_to_11_with_power_and_energy(
    client: TestClient, session: Session
) -> None:
    from backend.models import Environment, Run
    from backend.power import service as power_service
    from tests.backend.test_energy import power_doc
    from tests.backend.test_file_results import rows_of, view, view_csv

    u = create_user(session)
    hdd = create_agent(session, team=u.team, name="hdd-host")
    ram = create_agent(session, team=u.team, name="ram-host")
    local = Environment(team_id=u.team.id, name="Local", kind="local")
    san = Environment(team_id=u.team.id, name="SAN", kind="local")
    session.add_all([local, san])
    session.flush()
    docs = {"hdd-host": tpch_doc(), "ram-host": tpch_doc_b()}
    watts = {"hdd-host": (262.81, 263.76), "ram-host": (423.85, 424.03)}
    ids = []
    for ag in (hdd, ram):
        for env in (local, san):
            idle, load = watts[ag.agent.name]
            rid = upload_run(
                client,
                session,
                ag,
                tpch_spec(),
                docs[ag.agent.name],
                preset="tpch-smoke",
                target="/srv/bench",
                power=power_doc(idle_w=idle, load_w=load),
            )
            run = session.get(Run, rid)
            assert run is not None
            run.environment_id = env.id
            session.flush()
            power_service.compute(session, run_id=rid)
            ids.append(rid)
    cat = client.get(f"/api/v1/views?runs={','.join(map(str, ids))}", headers=u.headers).json()
    assert cat["applicable"] == ["tpch-qphh"]
    t = view(client, u, "tpch-qphh", ids, baseline=str(ids[0]))
    assert "TPC-H-derived, not audited" in t["view"]["title"]
    rows = rows_of(t)
    groups = [row["group"] for row in t["rows"]]
    assert groups == ["qphh:Local", "qphh:SAN", "power:Local", "power:Local", "power:SAN", "power:SAN"] + [
        "energy:Local",
        "energy:SAN",
    ]
    first = rows[0]
    assert first["environment"]["value"] == "Local"
    assert first["database"]["value"].startswith("SF 0.01 (about")
    assert first["database"]["value"].endswith("postgresql")
    assert first["device_0"]["unit"] == "QphH" and first["device_0"]["value"] == pytest.approx(
        docs["hdd-host"]["tpch"]["qphh_at_size"]
    )
    assert first["device_1"]["value"] == pytest.approx(docs["ram-host"]["tpch"]["qphh_at_size"])
    assert first["rate"]["value"] == pytest.approx(
        docs["ram-host"]["tpch"]["qphh_at_size"] / docs["hdd-host"]["tpch"]["qphh_at_size"]
    )
    assert rows[2]["database"]["value"] == "Non-load"
    assert rows[2]["device_0"]["value"] == pytest.approx(262.81)
    energy = rows[6]
    assert energy["device_0"]["unit"] == "J" and energy["device_0"]["value"] > 0
    assert "estimated" not in json.dumps(t["rows"])  # measured by the (command) meter
    # one scale factor: no chart by database size (each point sat on the y axis), a note says why
    assert t["charts"] == [] and any("two or more scale factors" in n for n in t["notes"])
    csv_rows = view_csv(client, u, "tpch-qphh", ids)
    assert csv_rows[0][:3] == ["Measure", "Environment", "Database capacity"]
    assert csv_rows[1][0] == "QphH@Size" and float(csv_rows[1][3]) == pytest.approx(
        docs["hdd-host"]["tpch"]["qphh_at_size"], abs=0.1
    )
    assert "Kw" not in json.dumps(t) and any("J (1 Wh = 3600 J" in n for n in t["notes"])


def test_tpch_qphh_view_without_meter_data_and_a_withheld_metric(
    client: TestClient, session: Session
) -> None:
    from tests.backend.test_file_results import rows_of, view

    u, a = _setup(session)
    doc = tpch_doc()
    withheld = {"qphh_at_size": None, "power_at_size": None, "throughput_at_size": None, "timeouts": 1}
    doc["tpch"].update(withheld)
    rid = upload_run(client, session, a, tpch_spec(), doc, preset="tpch-smoke", target="/srv/bench")
    maria = upload_run(
        client, session, a, tpch_spec(dbms="mariadb"), tpch_doc_mariadb(), preset="tpch-mariadb",
        target="/srv/a",
    )  # fmt: skip
    t = view(client, u, "tpch-qphh", [rid, maria])
    rows = rows_of(t)
    assert [r["measure"]["value"] for r in rows] == ["QphH@Size"]  # no power rows; PostgreSQL's withheld
    assert rows[0]["database"]["value"].endswith("mariadb")
    assert any("No run has meter data" in n for n in t["notes"])
    assert any("timed out or failed" in n for n in t["notes"])


def test_heap_btree_grid_is_seed_002_table_3_with_ratios(client: TestClient, session: Session) -> None:
    from backend.workload.builtin import BUILTINS
    from tests.backend.test_file_results import rows_of, view, view_csv

    u, a = _setup(session)
    spec = BUILTINS["heap-btree"][1].scaled(0.02)  # the preset at N = 20,000
    assert spec.heap_btree is not None and spec.heap_btree.records == 20000
    doc = heap_btree_doc(20000, "0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9,1")
    ra = upload_run(client, session, a, spec, doc, target="/dev/shm/x")
    rb = upload_run(client, session, a, spec, doc, target="/dev/shm/b")
    cat = client.get(f"/api/v1/views?runs={ra},{rb}", headers=u.headers).json()
    assert cat["applicable"] == ["heap-btree-grid"]
    t = view(client, u, "heap-btree-grid", [ra, rb])
    rows = rows_of(t)
    assert [r["cache"]["value"] for r in rows[:10]] == pytest.approx([10.0 * i for i in range(1, 11)])
    assert rows[10]["cache"]["value"] == "100 % ÷ 10 %"
    src = {(r["structure"], r["operation"], r["cache_fraction"]): r["ops_per_s"] for r in doc["heap_btree"]}
    assert rows[0]["run0_btree_point_query"]["value"] == pytest.approx(src[("btree", "point_query", 0.1)])
    assert rows[0]["run0_heap_insert"]["unit"] == "op/s"
    ratio = src[("btree", "insert", 1.0)] / src[("btree", "insert", 0.1)]
    assert rows[10]["run0_btree_insert"]["value"] == (f"{ratio:.2f}×" if ratio >= 1 else f"{ratio:.3g}×")
    assert float(rows[10]["run0_btree_insert"]["note"].split(":")[0]) == pytest.approx(ratio, rel=1e-5)
    assert rows[4]["ratio_heap_insert"]["value"] == pytest.approx(1.0)  # the same document twice
    assert [c["key"] for c in t["charts"]] == ["heap-btree-heap", "heap-btree-btree"]
    assert len(t["charts"][1]["series"]) == 4 and len(t["charts"][1]["series"][0]["points"]) == 10
    assert any("50,000,000" in n for n in t["notes"])
    csv_rows = view_csv(client, u, "heap-btree-grid", [ra, rb])
    assert csv_rows[0][0] == "Cache buffer (% of data blocks)" and len(csv_rows) == 12
    # a TPC-H run is not this view's
    tp = upload_run(client, session, a, tpch_spec(), tpch_doc(), preset="tpch-smoke", target="/srv/bench")
    r = client.get(
        "/api/v1/views/table", params={"view": "heap-btree-grid", "runs": f"{ra},{tp}"}, headers=u.headers
    )
    assert r.status_code == 422 and r.json()["detail"][0]["field"] == "runs"
