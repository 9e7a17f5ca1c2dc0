"""Issue 15's two views in Chromium at 1440×900 with runs of the built-in presets (Z): `tpch-smoke`
(PostgreSQL, SF 0.01, with the host's consent) on tmpfs and on the disk under /var/tmp, once in
each of two environments (the view groups by environment), measured by an estimate meter so the
power and energy rows show; and `heap-btree` at scale 0.02 (20,000 records) twice.
/views/tpch-qphh and /views/heap-btree-grid read QphH, SF, W and J; op/s, the Ratio columns and
the largest ÷ smallest row; both CSVs are downloaded and checked against the API's table
(tests/browser/db_views.mjs).

The runs are queued through the API to a second host of the stack (tests/stack.py's RecordedHost)
that answers each lease with a recorded document, as tests/backend/test_db_results does in process:
two real TPC-H runs of this machine (tests/backend/data/upload-tpch-postgresql-sf001*.json) and the
built engine's heap/B-tree sweep run here; the estimate meter measures for real around a short
stand-in load. Real TPC-H through the agent stays covered by tests/e2e/test_db_workloads_e2e.py and
tests/agent/test_tpch.py."""

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest

from tests.browser.test_browser import _needs, _node, _shot
from tests.stack import ENGINE, Stack, recorded_host

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("stack-c")]

DATA = Path(__file__).parents[1] / "backend" / "data"
TPCH = [
    json.loads((DATA / name).read_text())
    for name in ("upload-tpch-postgresql-sf001.json", "upload-tpch-postgresql-sf001-b.json")
]


def _heap_btree() -> dict[str, Any]:
    """The built engine's sweep at the preset's scale 0.02 (20,000 records, ten fractions) on tmpfs."""
    with tempfile.TemporaryDirectory(prefix="iowatt-dbviews-hb-", dir="/dev/shm") as tmp:
        r = subprocess.run(
            [str(ENGINE), "--heap-btree", f"--directory={tmp}", "--records=20000", "--randseed=7"],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert r.returncode == 0, r.stderr
    doc: dict[str, Any] = json.loads(r.stdout)
    assert len(doc["heap_btree"]) == 40  # ten fractions × heap/B-tree × insert/point query
    return doc


def _queue(live: Stack, agent_id: str, body: dict[str, Any]) -> str:
    with live.api() as api:
        r = api.post("/runs", json={"agent_id": agent_id, "idle_s": 1, **body})
        assert r.status_code == 201, r.text
        return str(r.json()["id"])


def test_db_views_with_preset_runs_in_chromium(live: Stack, tmp_path: Path) -> None:
    _needs()
    mem = tempfile.mkdtemp(prefix="iowatt-dbviews-mem-", dir="/dev/shm")
    disk = tempfile.mkdtemp(prefix="iowatt-dbviews-disk-", dir="/var/tmp")
    try:
        with recorded_host(live) as host:
            host.cli("targets", "allow-dbms", "postgresql")  # the host's consent (ADR 0009)
            host.cli("meters", "set", "plate", "estimate:5,9.5")  # datasheet watts: energy, labelled
            for d in (mem, disk):
                host.cli("targets", "add", d)
            host.report_inventory()
            with live.api() as api:
                team_id = api.get("/auth/me").json()["teams"][0]["id"]
                presets = {
                    w["name"]: w["id"] for w in api.get("/workloads", params={"limit": 500}).json()["items"]
                }
                envs = []
                for name, kind in (("Local Z", "local"), ("SAN Z", "san")):
                    r = api.post("/environments", json={"team_id": team_id, "name": name, "kind": kind})
                    assert r.status_code == 201, r.text
                    envs.append(str(r.json()["id"]))
            tpch = []
            for k, env in enumerate(envs):
                for i, d in enumerate((mem, disk)):
                    body = {
                        "workload_id": presets["tpch-smoke"],
                        "target_path": d,
                        "environment_id": env,
                        "meter": "plate",
                        "name": f"tpch-smoke {'tmpfs' if d == mem else 'disk'} {k + 1}",
                    }
                    tpch.append(_queue(live, host.agent_id, body))
                    host.answer(tpch[-1], TPCH[(k + i) % 2])
            hb = []
            sweep = _heap_btree()
            for k in (1, 2):
                body = {
                    "workload_id": presets["heap-btree"],
                    "target_path": mem,
                    "scale": 0.02,
                    "name": f"heap-btree {k}",
                }
                hb.append(_queue(live, host.agent_id, body))
                host.answer(hb[-1], sweep)
        for rid in [*tpch, *hb]:
            run = live.wait(rid, timeout_s=60)
            assert run["status"] == "succeeded", run["error"]
        with live.api() as api:
            q = api.get("/views/table", params={"view": "tpch-qphh", "runs": ",".join(tpch)})
            assert q.status_code == 200, q.text
            h = api.get("/views/table", params={"view": "heap-btree-grid", "runs": ",".join(hb)})
            assert h.status_code == 200, h.text
        qt, ht = q.json(), h.json()
        qkeys = [c["key"] for c in qt["columns"]]
        assert "rate" in qkeys, qkeys  # two devices: tmpfs and the disk
        first = dict(zip(qkeys, qt["rows"][0]["cells"], strict=True))
        assert first["measure"]["value"] == "QphH@Size"
        assert first["database"]["value"].startswith("SF 0.01"), first["database"]
        qphh = first["device_0"]["value"]
        assert isinstance(qphh, float) and qphh > 0
        hkeys = [c["key"] for c in ht["columns"]]
        hfirst = dict(zip(hkeys, ht["rows"][0]["cells"], strict=True))
        report = _node(
            "tests/browser/db_views.mjs",
            live,
            tmp_path,
            IOWATT_DBV_TPCH=",".join(tpch),
            IOWATT_DBV_HB=",".join(hb),
            IOWATT_DBV_QPHH=str(qphh),
            IOWATT_DBV_HB_FIRST=str(hfirst["run0_btree_insert"]["value"]),
        )
        assert "tpch-qphh" in report and "heap-btree-grid" in report
        keep = os.environ.get("IOWATT_DBV_SHOTS")  # a directory to keep a copy of the screenshots in
        for name in ("Z-tpch-qphh", "Z-heap-btree-grid"):
            png = tmp_path / f"{name}.png"
            _shot(report, tmp_path, name)
            if keep:
                (Path(keep) / png.name).write_bytes(png.read_bytes())
    finally:
        for d in (mem, disk):
            shutil.rmtree(d, ignore_errors=True)
