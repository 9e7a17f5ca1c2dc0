"""Named views (backend/views, docs/views.md): each seed layout from runs of the real presets.

The results are real: the preset's own jobs (same names, patterns, block sizes, queue depths,
threads, cache modes), run by the real engine on a file here with a shorter runtime and region,
then uploaded through the agent API as an agent would. The views' figures are checked against the
run detail (the one best-of rule) and the stored jobs, not against numbers computed here again.
"""

from __future__ import annotations

import csv
import io
import json
import subprocess
import tempfile
import uuid
from functools import cache
from pathlib import Path
from typing import Any, get_args

import pytest
from fastapi.testclient import TestClient
from iowatt_workload import GiB
from sqlalchemy import select
from sqlalchemy.orm import Session

from backend.models import Workload
from backend.run import service as run_service
from backend.views.schemas import BaseUnit
from backend.workload.builtin import BUILTINS, CDM_LEGACY_TESTS
from backend.workload.schemas import WorkloadSpec, stored_spec
from tests.backend.test_file_results import _once_per_session
from tests.factories import MiB, create_agent, create_run, create_user
from tests.services import in_the_background
from tests.stack import ENGINE

REPO = Path(__file__).resolve().parents[2]


def short(preset: str) -> WorkloadSpec:
    """The preset with its job names and shapes, shortened: 0.1 s per time-based job, small regions."""
    spec = BUILTINS[preset][1]
    jobs = []
    for j in spec.jobs:
        upd: dict[str, Any] = {"size_bytes": max(16 * MiB, 2 * (j.bs_bytes or 0))}
        if j.time_based:
            upd["runtime_s"] = 0.1
        if j.io_size_bytes is not None:
            upd["io_size_bytes"] = 4 * MiB
        jobs.append(j.model_copy(update=upd))
    return spec.model_copy(update={"jobs": jobs})


@cache
def engine_doc(preset: str, seed: int = 0, where: str | None = None) -> str:
    """The real engine's JSON for the shortened preset, on a file under `where` (default /tmp: a
    disk with O_DIRECT here): only data, so run once per test session (`_once_per_session`: the
    test processes that draw this module's tests share it), each `seed` a run of its own. A preset
    whose jobs are all time-based (flat out for their 0.1 s) runs on one CPU at the lowest priority
    (tests/services.py `in_the_background`); kernel-help's jobs move a set amount of data, the same
    CPU however slowly, so it runs as it is."""
    spec = short(preset)
    jobs = spec.engine_job()["jobs"]
    timed = all(j.time_based for j in spec.jobs)

    def run() -> str:
        with tempfile.TemporaryDirectory(prefix="iowatt-views-", dir=where) as tmp:
            work = Path(tmp)
            (work / "job.json").write_text(
                json.dumps({"global": {"filename": str(work / "target.dat")}, "jobs": jobs})
            )
            cmd = [str(ENGINE), "--output-format=json", str(work / "job.json")]
            r = subprocess.run(
                in_the_background(cmd) if timed else cmd,
                capture_output=True,
                text=True,
                timeout=300,
            )
        assert r.returncode == 0, r.stderr
        return r.stdout

    return _once_per_session(f"views {ENGINE} {seed} {where} {json.dumps(jobs, sort_keys=True)}", run)


def real_run(
    client: TestClient,
    session: Session,
    u: Any,
    preset: str,
    *,
    target: str = "/srv/bench",
    seed: int = 0,
    agent: Any = None,
    shorten: float | None = None,
    where: str | None = None,
) -> uuid.UUID:
    """A run of the preset, its result uploaded through the agent API (by a new agent unless given)."""
    a = agent or create_agent(session, team=u.team)
    wl = session.scalar(select(Workload).where(Workload.name == preset, Workload.builtin.is_(True)))
    run = create_run(session, agent=a.agent, target_path=target, workload_id=wl.id if wl else None)
    spec = short(preset)
    run.workload_spec = stored_spec(spec.shortened(shorten) if shorten else spec)  # as POST /runs shorten=
    session.flush()
    run_service.dispatch(session, run_id=run.id)
    lease = client.post(f"/api/v1/agents/{a.agent.id}/lease?wait_s=0", headers=a.headers).json()["lease"]
    lid = lease["lease_id"]
    assert (
        client.post(f"/api/v1/runs/{run.id}/start", json={"lease_id": lid}, headers=a.headers).status_code
        == 200
    )
    up = {
        "lease_id": lid,
        "upload_id": str(uuid.uuid4()),
        "engine_result": json.loads(engine_doc(preset, seed, where)),
        "engine_exit_code": 0,
        "started_at": "2026-11-22T10:00:00Z",
        "finished_at": "2026-11-22T10:01:00Z",
    }
    r = client.put(f"/api/v1/runs/{run.id}/result", json=up, headers=a.headers)
    assert r.status_code == 201, r.text
    return run.id


def view(client: TestClient, u: Any, name: str, runs: list[uuid.UUID], **params: Any) -> dict[str, Any]:
    r = client.get(
        "/api/v1/views/table",
        params={"view": name, "runs": ",".join(map(str, runs)), **params},
        headers=u.headers,
    )
    assert r.status_code == 200, r.text
    data: dict[str, Any] = r.json()
    return data


def rows_by(t: dict[str, Any], key: str) -> list[dict[str, Any]]:
    """Rows as {column key: value}."""
    keys = [c["key"] for c in t["columns"]]
    return [{k: c["value"] for k, c in zip(keys, row["cells"], strict=True)} for row in t["rows"]]


def cells_by(t: dict[str, Any]) -> list[dict[str, Any]]:
    """Rows as {column key: cell}."""
    keys = [c["key"] for c in t["columns"]]
    return [dict(zip(keys, row["cells"], strict=True)) for row in t["rows"]]


def csv_of(client: TestClient, u: Any, name: str, runs: list[uuid.UUID], **params: Any) -> list[list[str]]:
    r = client.get(
        "/api/v1/views/table",
        params={"view": name, "runs": ",".join(map(str, runs)), "format": "csv", **params},
        headers=u.headers,
    )
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/csv"), r.text
    return list(csv.reader(io.StringIO(r.text)))


def test_the_legacy_preset_is_seed_002_table_1s_test_set() -> None:
    spec = BUILTINS["crystaldiskmark-legacy"][1]
    assert (spec.passes, spec.discard_passes) == (5, 0)
    tests = {j.name.rsplit(".", 1)[0]: j for j in spec.jobs}
    assert list(tests) == [f"{t}-{d}" for t, *_ in CDM_LEGACY_TESTS for d in ("read", "write")]
    shape = {n: (j.rw, j.bs_bytes, j.iodepth, j.numjobs, j.direct) for n, j in tests.items()}
    assert shape["Seq-read"] == ("read", MiB, 1, 1, True)
    assert shape["512K-write"] == ("randwrite", 512 * 1024, 1, 1, True)
    assert shape["4K-read"] == ("randread", 4096, 1, 1, True)
    assert shape["4K_QD32-read"] == ("randread", 4096, 32, 1, True)
    assert {j.size_bytes for j in spec.jobs} == {1000 * MiB} and 1000 * MiB < GiB
    assert len(spec.jobs) == 4 * 2 * 5


def test_crystaldiskmark_grid_from_a_real_run(client: TestClient, session: Session) -> None:
    u = create_user(session)
    rid = real_run(client, session, u, "crystaldiskmark")

    cat = client.get(f"/api/v1/views?runs={rid}", headers=u.headers).json()
    assert cat["runs"][0]["preset"] == "crystaldiskmark"
    assert {"crystaldiskmark", "crystaldiskmark-table"} <= set(cat["applicable"])
    assert "kernel-help" not in cat["applicable"]

    t = view(client, u, "crystaldiskmark", [rid])
    for c in t["columns"]:
        assert c["description"]
        if c["kind"] == "number":  # a base unit on the wire, the seed's unit in the header
            shown = t["display_units"].get(c["unit"], c["unit"])
            assert shown in c["label"] or c["unit"] == "IO/s", c
    assert t["display_units"]["B/s"] == "MB/s"
    groups = {c["key"]: c["group"] for c in t["columns"]}
    assert (
        groups["read_best_mbps"] == "Read" and groups["write_best_mbps"] == "Write" and groups["test"] is None
    )
    assert [c["key"] for c in t["columns"]][-2:] == ["read_passes", "write_passes"]
    rows = rows_by(t, "key")
    cells = cells_by(t)
    assert [r["test"] for r in rows] == [
        "SEQ1M Q8T1",
        "SEQ1M Q1T1",
        "RND4K Q32T1",
        "RND4K Q32T16",
        "RND4K Q1T1",
    ]
    # the server's one best-of rule, as the run detail shows it
    detail = {p["test"]: p for p in client.get(f"/api/v1/runs/{rid}", headers=u.headers).json()["passes"]}
    for r, c in zip(rows, cells, strict=True):
        test = r["test"].replace(" ", "_")
        for d in ("read", "write"):
            p = detail[f"{test}-{d}"]
            assert r[f"{d}_best_mbps"] == p["best_bw_bytes"] and c[f"{d}_best_mbps"]["unit"] == "B/s"
            assert r[f"{d}_median_mbps"] == p["median_bw_bytes"]
            assert r[f"{d}_best_iops"] == p["best_iops"] and c[f"{d}_best_iops"]["unit"] == "IO/s"
            assert 0 < r[f"{d}_median_mbps"] <= r[f"{d}_best_mbps"]
            assert r[f"{d}_spread_pct"] >= 0
            # every pass listed (B/s), the discarded one marked, the reported one marked best
            passes = c[f"{d}_passes"]["passes"]
            assert c[f"{d}_passes"]["unit"] == "B/s" and r[f"{d}_passes"] is None
            assert [x["index"] for x in passes] == [0, 1, 2, 3] and passes[0]["status"] == "discarded"
            best = int(p["best_job"].rsplit(".p", 1)[1])
            assert [x["index"] for x in passes if x["status"] == "best"] == [best]
            assert max(x["bw_bytes"] for x in passes[1:]) == p["best_bw_bytes"]
    assert any("discarded" in n for n in t["notes"]) and any("best" in n.lower() for n in t["notes"])

    # the CSV prints the seed's units, as the headers say: MB/s = 10^6 B/s, the pass list in MB/s
    table = csv_of(client, u, "crystaldiskmark", [rid])
    assert table[0] == [c["label"] for c in t["columns"]]
    assert len(table) == 1 + len(t["rows"])
    assert float(table[1][2]) == round(rows[0]["read_best_mbps"] / 1e6, 2)
    parts = table[1][-2].split(" · ")
    assert parts[0].startswith("p0 ") and parts[0].endswith("(discarded)") and len(parts) == 4
    assert f"{rows[0]['read_best_mbps'] / 1e6:.2f} (best)" in table[1][-2]


def test_legacy_table_as_seed_002_with_its_ratio_between_two_devices(
    client: TestClient, session: Session
) -> None:
    u = create_user(session)
    a = real_run(client, session, u, "crystaldiskmark-legacy", target="/srv/samsung", seed=0)
    b = real_run(client, session, u, "crystaldiskmark-legacy", target="/srv/intel", seed=1)
    t = view(client, u, "crystaldiskmark-table", [a, b])
    labels = [c["label"] for c in t["columns"]]
    la, lb = (r["label"] for r in t["runs"])
    assert la != lb  # no two columns read alike
    assert labels == ["Test", "Unit", la, lb, f"Ratio ({lb} ÷ {la})"]
    assert t["baseline_run_id"] == str(a)
    rows = [[c["value"] for c in r["cells"]] for r in t["rows"]]
    assert [r[0] for r in rows][:8] == [
        "Sequential Read",
        "Sequential Write",
        "Random Read 4kB",
        "IOPS",
        "Random Write 4kB",
        "IOPS",
        "Random Read 512kB",
        "Random Write 512kB",
    ]
    detail = {
        rid: {p["test"]: p for p in client.get(f"/api/v1/runs/{rid}", headers=u.headers).json()["passes"]}
        for rid in (a, b)
    }
    seq = rows[0]
    pa, pb = detail[a]["Seq-read"], detail[b]["Seq-read"]
    assert seq[2:4] == [pa["best_bw_bytes"], pb["best_bw_bytes"]]
    assert [c["unit"] for c in t["rows"][0]["cells"][2:]] == ["B/s", "B/s", "×"]
    assert seq[4] == pytest.approx(pb["best_bw_bytes"] / pa["best_bw_bytes"], rel=0.01, abs=0.001)
    assert rows[3][1] == "IOPS" and rows[3][4] is None  # IOPS rows: no ratio, as the report
    assert rows[3][2] == detail[a]["4K-read"]["best_iops"] and t["rows"][3]["cells"][2]["unit"] == "IO/s"
    # the other way round with baseline=
    t2 = view(client, u, "crystaldiskmark-table", [a, b], baseline=str(b))
    assert t2["columns"][-1]["label"] == f"Ratio ({la} ÷ {lb})"
    r2 = t2["rows"][0]["cells"][-1]["value"]
    assert r2 == pytest.approx(pa["best_bw_bytes"] / pb["best_bw_bytes"], rel=0.01, abs=0.001)
    # with two devices the ratio's reading says which way
    note = t["rows"][0]["cells"][-1]["note"]
    assert note.endswith("higher") or note.endswith("lower")


def test_diskspd_sweep_as_table_2_and_figure_1(client: TestClient, session: Session) -> None:
    u = create_user(session)
    rid = real_run(client, session, u, "diskspd-bs-sweep")
    t = view(client, u, "diskspd-bs-sweep", [rid])
    rows = [[c["value"] for c in r["cells"]] for r in t["rows"]]
    assert [r[0] for r in rows] == [4096 * 2**i for i in range(13)]  # 4 .. 16,384 kB, in bytes
    assert t["columns"][0]["label"] == "Block size (KiB)" and t["columns"][0]["unit"] == "B"
    assert t["columns"][1]["unit"] == "B/s" and t["display_units"]["B"] == "KiB"
    jobs = {j["name"]: j for j in client.get(f"/api/v1/runs/{rid}", headers=u.headers).json()["jobs"]}
    assert rows[0][1] == jobs["randread-4k"]["read"]["bw_bytes"] and rows[0][1] > 0
    (chart,) = t["charts"]
    assert chart["x"]["log"] and chart["x"]["unit"] == "B" and chart["y"]["unit"] == "B/s"
    table = csv_of(client, u, "diskspd-bs-sweep", [rid])  # the seed's kB and MB/s
    assert [float(r[0]) for r in table[1:]] == [4 * 2**i for i in range(13)]
    assert float(table[1][1]) == round(rows[0][1] / 1e6, 2)
    assert [p["x"] for p in chart["series"][0]["points"]] == [r[0] for r in rows]


def test_kernel_help_off_and_on_side_by_side_with_the_ratio(client: TestClient, session: Session) -> None:
    u = create_user(session)
    rid = real_run(client, session, u, "kernel-help")
    t = view(client, u, "kernel-help", [rid])
    rows = rows_by(t, "key")
    assert [r["bs_kib"] for r in rows] == [4096 * 2**i for i in range(11)]
    jobs = {j["name"]: j for j in client.get(f"/api/v1/runs/{rid}", headers=u.headers).json()["jobs"]}
    r0 = rows[0]
    off = jobs["randwrite-4k-nocache"]["write"]["bw_bytes"]
    on = jobs["randwrite-4k-cache-ra"]["write"]["bw_bytes"]
    assert r0["randwrite_off"] == off and r0["randwrite_on"] == on
    assert r0["randwrite_ratio"] == pytest.approx(on / off, rel=1e-9)
    assert r0["read_nora"] == jobs["read-4k-cache-nora"]["read"]["bw_bytes"]
    assert "write_nora" not in r0  # readahead applies to reads only
    keys = [c["key"] for c in t["charts"]]
    assert keys == ["kh-read", "kh-write", "kh-randread", "kh-randwrite", "kh-ratio"]
    titles = [c["title"] for c in t["charts"]]
    assert len(set(titles)) == len(titles)  # no two charts titled alike (issue 12)
    assert {s["label"].rsplit(", ", 1)[1] for s in t["charts"][0]["series"]} == {"help off", "help on"}


def test_latency_against_threads_is_a_chart_and_a_table(client: TestClient, session: Session) -> None:
    u = create_user(session)
    rid = real_run(client, session, u, "threads-latency")
    t = view(client, u, "threads-latency", [rid])
    rows = rows_by(t, "key")
    assert [r["threads"] for r in rows] == [1, 2, 4, 8, 16, 32, 64]
    jobs = {j["name"]: j for j in client.get(f"/api/v1/runs/{rid}", headers=u.headers).json()["jobs"]}
    j8 = jobs["randread-4k-t8"]["read"]
    assert rows[3]["lat_mean_ns"] == j8["lat_mean_ns"]
    assert rows[3]["clat_p99_ns"] == j8["clat_p99_ns"]
    assert {c["unit"] for c in t["columns"] if "lat" in c["key"]} == {"ns"}
    assert all(c["label"].endswith("(µs)") for c in t["columns"] if "lat" in c["key"])  # the seed's µs
    lat = next(c for c in t["charts"] if c["key"] == "threads-latency")
    assert lat["y"]["unit"] == "ns" and lat["x"]["label"] == "Threads" and t["display_units"]["ns"] == "µs"
    table = csv_of(client, u, "threads-latency", [rid])
    col = [c["key"] for c in t["columns"]].index("clat_p99_ns")
    assert float(table[4][col]) == round(j8["clat_p99_ns"] / 1000, 2)
    assert [len(s["points"]) for s in lat["series"]] == [7, 7]  # mean and p99
    assert all(p["y"] > 0 for s in lat["series"] for p in s["points"])


def test_disk_flash_memory_as_seed_004(client: TestClient, session: Session) -> None:
    u = create_user(session)
    host = create_agent(session, team=u.team)
    disk = real_run(client, session, u, "seq-rand-table", target="/srv/disk", seed=0, agent=host)
    flash = real_run(client, session, u, "seq-rand-table", target="/srv/flash", seed=1, agent=host)
    t = view(client, u, "disk-flash-memory", [disk, flash])
    # here both targets sit on the machine's one disk: the targets, not the device twice, name the columns
    if t["runs"][0]["device_name"] == t["runs"][1]["device_name"]:
        assert [c["label"] for c in t["columns"]][1:3] == [
            f"/srv/disk on {host.agent.name} (MB/s)",
            f"/srv/flash on {host.agent.name} (MB/s)",
        ]
    rows = [[c["value"] for c in r["cells"]] for r in t["rows"]]
    assert [r[0] for r in rows] == [
        "Sequential read",
        "Random read (4 KiB)",
        "Sequential write",
        "Random write (4 KiB)",
    ]
    for r in rows:
        assert r[1] > 0 and r[2] > 0 and r[3] == pytest.approx(r[2] / r[1], rel=0.01, abs=0.001)
    table = csv_of(client, u, "disk-flash-memory", [disk, flash])
    assert table[0] == [c["label"] for c in t["columns"]] and len(table) == 5


def test_bad_input_is_a_422_naming_the_field(client: TestClient, session: Session) -> None:
    u = create_user(session)
    other = create_user(session)
    rid = real_run(client, session, u, "seq-rand-table")
    queued = create_run(session, agent=create_agent(session, team=u.team).agent)
    queued.workload_spec = stored_spec(short("seq-rand-table"))
    session.flush()

    def get(params: dict[str, str], who: Any = u) -> Any:
        return client.get("/api/v1/views/table", params=params, headers=who.headers)

    cases = [
        ({"view": "nope", "runs": str(rid)}, "view"),
        ({"view": "disk-flash-memory", "runs": "not-a-uuid"}, "runs"),
        ({"view": "disk-flash-memory", "runs": ""}, "runs"),
        ({"view": "crystaldiskmark", "runs": str(rid)}, "runs"),  # another preset's run
        ({"view": "disk-flash-memory", "runs": str(queued.id)}, "runs"),  # no result yet
        ({"view": "disk-flash-memory", "runs": str(rid), "baseline": str(uuid.uuid4())}, "baseline"),
        ({"view": "disk-flash-memory", "runs": str(rid), "format": "xml"}, "format"),
    ]
    for params, field in cases:
        r = get(params)
        assert r.status_code == 422, (params, r.text)
        assert field in json.dumps(r.json()["detail"]), (params, r.text)
    # another team's run: not found in the caller's teams, and nothing of it in the answer
    r = get({"view": "disk-flash-memory", "runs": str(rid)}, who=other)
    assert r.status_code == 422 and "runs" in r.text
    assert client.get(f"/api/v1/views?runs={rid}", headers=other.headers).status_code == 422
    assert client.get("/api/v1/views/table?view=disk-flash-memory&runs=" + str(rid)).status_code == 401


def test_a_shortened_run_is_flagged_beside_its_figures(client: TestClient, session: Session) -> None:
    """A preset run shortened by a factor (POST /runs shorten=, recorded as shortened_by) is still
    its preset's run, and says so in its column's name and the notes."""
    u = create_user(session)
    rid = real_run(client, session, u, "seq-rand-table", shorten=0.5)
    cat = client.get(f"/api/v1/views?runs={rid}", headers=u.headers).json()
    assert cat["runs"][0]["preset"] == "seq-rand-table" and cat["runs"][0]["shortened_by"] == 0.5
    t = view(client, u, "disk-flash-memory", [rid])
    assert t["columns"][1]["label"].endswith("(shortened ×0.5) (MB/s)")
    assert any("shortened" in n for n in t["notes"])


# the server's own list (one owner: backend/views/schemas.py's BaseUnit)
BASE_UNITS = set(get_args(BaseUnit))


def test_every_views_figure_travels_in_a_base_unit(
    client: TestClient, session: Session, tmp_path: Path
) -> None:
    """The team rule (STYLE.md 6): bytes, ns on the wire; the seed's MB/s, µs and KiB are the
    page's and the CSV's business. Every figure of every view names a base unit."""
    u = create_user(session)
    host = create_agent(session, team=u.team)
    shown: dict[str, list[uuid.UUID]] = {
        "crystaldiskmark": [real_run(client, session, u, "crystaldiskmark")],
        "diskspd-bs-sweep": [real_run(client, session, u, "diskspd-bs-sweep")],
        "kernel-help": [real_run(client, session, u, "kernel-help")],
        "threads-latency": [real_run(client, session, u, "threads-latency")],
    }
    legacy = [
        real_run(client, session, u, "crystaldiskmark-legacy", target=f"/srv/{n}", seed=i, agent=host)
        for i, n in enumerate(("a", "b"))
    ]
    shown["crystaldiskmark-table"] = legacy
    shown["disk-flash-memory"] = [
        real_run(client, session, u, "seq-rand-table", target="/srv/disk", agent=host),
        real_run(
            client, session, u, "seq-rand-table-buffered", target="/dev/shm/x", agent=host, where="/dev/shm"
        ),
    ]
    # the file workloads' views (tests/backend/test_file_results.py has their layouts)
    from tests.backend.test_file_results import (
        postmark_json,
        postmark_spec,
        upload_run,
        vdbench_json,
        vdbench_spec,
    )

    shown["vdbench-filesets"] = [
        upload_run(client, session, host, vdbench_spec(p), json.loads(vdbench_json(p)), preset=p)
        for p in ("vdbench-big", "vdbench-small")
    ]
    shown["postmark-levels"] = [
        upload_run(client, session, host, postmark_spec(), json.loads(postmark_json()), preset="postmark-low")
    ]
    # issue 15's views (tests/backend/test_db_results.py has their layouts): real documents
    from tests.backend.test_db_results import hb_spec, heap_btree_doc, tpch_doc, tpch_spec

    shown["tpch-qphh"] = [
        upload_run(client, session, host, tpch_spec(), tpch_doc(), preset="tpch-smoke", target="/srv/bench")
    ]
    shown["heap-btree-grid"] = [
        upload_run(client, session, host, hb_spec(), heap_btree_doc(), preset="heap-btree")
    ]
    # issue 29's views (tests/backend/test_qos.py and test_writeback.py have their layouts)
    from tests.backend.test_qos import qos_run
    from tests.backend.test_writeback import writeback_run

    shown["qos"] = [qos_run(session, u).id]
    shown["writeback"] = [writeback_run(client, session, u, tmp_path)]
    from tests.backend.test_innodb_flush import innodb_run

    shown["innodb-flush"] = [innodb_run(client, session, u)[0]]
    assert set(shown) == {v["name"] for v in client.get("/api/v1/views", headers=u.headers).json()["views"]}
    for name, runs in shown.items():
        t = view(client, u, name, runs)
        assert set(t["display_units"]) <= BASE_UNITS and t["display_units"]["B/s"] == "MB/s", name
        for c in t["columns"]:
            assert c["unit"] is None or c["unit"] in BASE_UNITS, (name, c)
            assert (c["unit"] is None) == (
                c["kind"] == "text"
                or c["run_id"] is not None
                and name.endswith("table")
                or name in ("postmark-levels", "tpch-qphh")
                and c["key"].startswith("device_")  # rows of several units
                or name == "heap-btree-grid"
                and c["key"].startswith("run")  # op/s, and × in the last row
                or name == "writeback"
                and c["key"].startswith("bw_")  # B/s, and × in the last row
            ), (name, c)
        figures = 0
        for row in t["rows"]:
            for c, cell in zip(t["columns"], row["cells"], strict=True):
                if isinstance(cell["value"], int | float) or cell["passes"] is not None:
                    figures += 1
                    assert cell["unit"] in BASE_UNITS, (name, c["key"], cell)
                    assert c["unit"] in (None, cell["unit"]), (name, c["key"], cell)
                else:
                    assert cell["unit"] is None, (name, c["key"], cell)
        assert figures > 0, name
        for ch in t["charts"]:
            assert ch["x"]["unit"] in BASE_UNITS and ch["y"]["unit"] in BASE_UNITS, (name, ch["key"])
        # the CSV converts every figure with the same table: a B/s figure reads in MB/s there
        table = csv_of(client, u, name, runs)
        for row, line in zip(t["rows"], table[1:], strict=True):
            for cell, text in zip(row["cells"], line, strict=True):
                if cell["unit"] == "B/s" and cell["value"] is not None:
                    assert float(text) == round(cell["value"] / 1e6, 2), (name, cell, text)
                if cell["unit"] == "B" and cell["value"] is not None:
                    assert float(text) == round(cell["value"] / 1024, 2), (name, cell, text)
                if cell["unit"] == "ns" and cell["value"] is not None:  # µs, or the seed's ms or s
                    per = {"µs": 1e3, "ms": 1e6, "s": 1e9}[t["display_units"]["ns"]]
                    shown = cell["value"] / per  # below 1: three significant digits, as the page
                    want = float(f"{shown:.3g}") if 0 < abs(shown) < 1 else round(shown, 2)
                    assert float(text) == pytest.approx(want, rel=1e-9), (name, cell, text)


def test_disk_flash_memory_has_a_buffered_memory_column(client: TestClient, session: Session) -> None:
    """Memory in seed 004 is tmpfs, which has no O_DIRECT before Linux 6.6: its column comes from
    seq-rand-table-buffered (the same jobs through the page cache), run here on /dev/shm by the real
    engine, labelled buffered beside the direct disk column."""
    spec = BUILTINS["seq-rand-table-buffered"][1]
    assert [(j.name, j.rw, j.bs_bytes) for j in spec.jobs] == [
        (j.name, j.rw, j.bs_bytes) for j in BUILTINS["seq-rand-table"][1].jobs
    ]
    assert {j.direct for j in spec.jobs} == {False} and {
        j.direct for j in BUILTINS["seq-rand-table"][1].jobs
    } == {True}
    u = create_user(session)
    host = create_agent(session, team=u.team)
    disk = real_run(client, session, u, "seq-rand-table", target="/srv/disk", agent=host)
    memory = real_run(
        client, session, u, "seq-rand-table-buffered", target="/dev/shm/iowatt", agent=host, where="/dev/shm"
    )
    cat = client.get(f"/api/v1/views?runs={disk},{memory}", headers=u.headers).json()
    assert [r["preset"] for r in cat["runs"]] == ["seq-rand-table", "seq-rand-table-buffered"]
    assert "disk-flash-memory" in cat["applicable"]
    t = view(client, u, "disk-flash-memory", [disk, memory])
    labels = [c["label"] for c in t["columns"]]
    assert "buffered" not in labels[1] and labels[2].endswith(", buffered (MB/s)"), labels
    assert "page cache" in t["columns"][2]["description"]
    assert any("seq-rand-table-buffered" in n and "6.6" in n for n in t["notes"])
    jobs = {j["name"]: j for j in client.get(f"/api/v1/runs/{memory}", headers=u.headers).json()["jobs"]}
    rows = [[c["value"] for c in r["cells"]] for r in t["rows"]]
    assert rows[0][2] == jobs["seq-read"]["read"]["bw_bytes"] > 0  # the memory column has figures
    for r in rows:
        assert r[1] > 0 and r[2] > 0 and r[3] == pytest.approx(r[2] / r[1], rel=1e-9)
    # a run of the buffered variant is not another view's
    other = client.get(
        "/api/v1/views/table", params={"view": "crystaldiskmark", "runs": str(memory)}, headers=u.headers
    )
    assert other.status_code == 422 and "runs" in other.text


def test_the_preset_is_recorded_when_a_run_is_queued_and_the_views_read_it(
    client: TestClient, session: Session
) -> None:
    """A run queued from a built-in preset (POST /runs, or a campaign, which queues through it)
    records the preset's name (RunRead.preset); a custom workload records none. The views read the
    recorded name and guess from the workload row and job names only for a run without one."""
    u = create_user(session)
    a = create_agent(session, team=u.team)

    def builtin(name: str) -> str:
        wl = session.scalar(select(Workload).where(Workload.name == name, Workload.builtin.is_(True)))
        assert wl is not None
        return str(wl.id)

    body = {"agent_id": str(a.agent.id), "target_path": "/srv/bench"}
    r = client.post(
        "/api/v1/runs", json={**body, "workload_id": builtin("seq-rand-table")}, headers=u.headers
    )
    assert r.status_code == 201, r.text
    assert r.json()["preset"] == "seq-rand-table"
    custom = {"kind": "block", "jobs": [j.model_dump(mode="json") for j in short("seq-rand-table").jobs]}
    r = client.post("/api/v1/runs", json={**body, "workload": custom}, headers=u.headers)
    assert r.status_code == 201, r.text
    assert r.json()["preset"] is None  # its jobs are the preset's, but it was not queued from it
    camp = {
        "name": "kh",
        "workload_id": builtin("kernel-help"),
        "targets": [{**body, "target_path": p} for p in ("/srv/a", "/srv/b")],
    }
    r = client.post("/api/v1/campaigns", json=camp, headers=u.headers)
    assert r.status_code == 201, r.text
    presets = [
        client.get(f"/api/v1/runs/{i}", headers=u.headers).json()["preset"] for i in r.json()["run_ids"]
    ]
    assert presets == ["kernel-help", "kernel-help"]

    # the views take the recorded name, whatever the spec's job names would suggest ...
    recorded = create_run(session, agent=a.agent, preset="diskspd-bs-sweep")  # the factory's QUICK spec
    # ... and guess only for a run without one (stored before runs.preset, or imported)
    legacy = create_run(session, agent=a.agent, workload_id=uuid.UUID(builtin("threads-latency")))
    cat = client.get(f"/api/v1/views?runs={recorded.id},{legacy.id}", headers=u.headers).json()
    assert [x["preset"] for x in cat["runs"]] == ["diskspd-bs-sweep", "threads-latency"]
    cat = client.get(f"/api/v1/views?runs={recorded.id}", headers=u.headers).json()
    assert cat["applicable"] == ["diskspd-bs-sweep"]


def test_an_imported_runs_origin_is_in_its_view_label_and_served(
    client: TestClient, session: Session
) -> None:
    """issue 26: a view labels an imported run as imported wherever it names it (headers, row
    groups, chart legends take `label`) and serves the origin for the page's badge."""
    u = create_user(session)
    a = create_agent(session, team=u.team)
    imported = create_run(session, agent=a.agent, preset="crystaldiskmark")
    imported.origin = {
        "kind": "imported",
        "tool": "CrystalDiskMark",
        "version": "8",
        "format": "crystaldiskmark",
    }
    measured = create_run(session, agent=a.agent, preset="crystaldiskmark")
    session.flush()
    cat = client.get(f"/api/v1/views?runs={imported.id},{measured.id}", headers=u.headers).json()
    first, second = cat["runs"]
    assert first["label"].endswith(" (imported from CrystalDiskMark 8)")  # the tool's major version
    assert first["preset"] == "crystaldiskmark"  # the import catalogue: the format stands for it
    assert (first["origin"]["kind"], first["origin"]["label"]) == (
        "imported",
        f"imported from CrystalDiskMark {first['origin']['version']}",
    )
    assert second["origin"] is None and "imported" not in second["label"]


def test_a_qphh_point_of_repeated_runs_carries_its_interval() -> None:
    """issue 25: a view's chart point that is a mean of repeats carries its 95 % interval (the UI's
    error bar); a single measurement carries none (the UI says so in the tooltip)."""
    from types import SimpleNamespace as NS

    from backend.views.builders.tpch import _qphh_points

    figures = [(1.0, 100.0), (1.0, 110.0), (1.0, 90.0), (10.0, 50.0)]
    rs = [NS(environment="Local", tpch=NS(scale_factor=sf, qphh_at_size=q)) for sf, q in figures]
    sf1, sf10 = _qphh_points(rs, "Local")  # type: ignore[arg-type]
    assert sf1.n == 3 and sf1.y == pytest.approx(100.0)
    assert sf1.ci95_low is not None and sf1.ci95_high is not None and sf1.ci95_low < 100.0 < sf1.ci95_high
    assert (sf10.n, sf10.ci95_low, sf10.ci95_high) == (1, None, None)
