"""TPC-H and heap/B-tree in Chromium at 1440×900 (issue 15, U15): the workloads list and the TPC-H
preset's page, New run for TPC-H on a host that has not allowed a DBMS (the refusal and the host
command beside the target), a TPC-H run's page (metrics with their formulas, per-query bars per
stream, DBMS settings, energy per database size, estimated labelled) and a heap/B-tree run's sweep,
with 2 and then 10 TPC-H runs. The documents are real: the agent's TPC-H lease output
(tests/backend/data/upload-tpch-postgresql-sf001.json, PostgreSQL SF 0.01 on this machine) and the
built engine's --heap-btree on tmpfs, uploaded as CI uploads results (POST /api/v1/results) with a
power trace (a plug meter or an estimate) so the runs have energy."""

import copy
import json
import os
import subprocess
import tempfile
import uuid
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from tests.browser.test_browser import _needs, _node, _shot
from tests.stack import ENGINE, Stack
from tests.waiting import wait_until

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("stack-c")]

DATA = Path(__file__).parents[1] / "backend" / "data"
TPCH = json.loads((DATA / "upload-tpch-postgresql-sf001.json").read_text())
DEVICES = [
    ("Samsung SSD 990 PRO 2TB", "ssd"),
    ("WDC WD40EFRX 4TB", "hdd"),
    ("NetApp LUN C-Mode", "ssd"),
    ("Intel Optane P5800X", "ssd"),
    ("Seagate Exos X18", "hdd"),
]


def _heap_btree() -> dict[str, Any]:
    """The built engine's sweep on tmpfs, small N (it removes its files)."""
    with tempfile.TemporaryDirectory(prefix="iowatt-hb-browser-", dir="/dev/shm") as tmp:
        r = subprocess.run(
            [
                str(ENGINE),
                "--heap-btree",
                f"--directory={tmp}",
                "--records=20000",
                "--queries=2000",
                "--randseed=7",
            ],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert r.returncode == 0, r.stderr
    doc: dict[str, Any] = json.loads(r.stdout)
    assert len(doc["heap_btree"]) == 40  # ten fractions × heap/B-tree × insert/point query
    return doc


def _power(watts: float, seconds: int, tier: str) -> dict[str, Any]:
    return {
        "meter": "plug-1" if tier == "plug" else "model",
        "driver": "upload",
        "tier": tier,
        "samples": [{"t_ns": k * 1_000_000_000, "watts": watts + (k % 3)} for k in range(seconds + 1)],
    }


def _upload(
    live: Stack, team_id: str, doc: dict[str, Any], k: int, name: str, tier: str, env_id: str | None = None
) -> str:
    model, media = DEVICES[k % len(DEVICES)]
    seconds = 20 + 5 * k
    body: dict[str, Any] = {
        "team_id": team_id,
        "upload_id": f"u15-{k}-{uuid.uuid4().hex[:6]}",
        "host": f"db-host-{k % 2 + 1}",
        "device": {"model": model, "serial": f"DB{k:04d}", "media": media},
        "name": name,
        "engine_result": doc,
        "started_at": "2026-11-23T10:00:00Z",
        "finished_at": f"2026-11-23T10:{seconds // 60:02d}:{seconds % 60:02d}Z",
        "target_path": "/srv/db",
        "power": _power(40.0 + 3 * k, seconds, tier),
        "tags": ["issue-15", media],
        **({"environment_id": env_id} if env_id else {}),
    }
    with live.api() as api:
        r = api.post("/results", json=body)
        assert r.status_code == 201, r.text
        return str(r.json()["run_id"])


def _energy_done(live: Stack, run_id: str) -> bool:
    with live.api() as api:
        energy = api.get(f"/runs/{run_id}").json().get("energy") or {}
        return energy.get("status") in ("ok", "failed", "none", "no_meter_data")


def test_db_workloads_in_chromium(live: Stack, tmp_path: Path) -> None:
    _needs()
    with live.api() as api:
        team_id = api.get("/auth/me").json()["teams"][0]["id"]
        presets = {w["name"]: w for w in api.get("/workloads").json()["items"] if w["builtin"]}
        # seed 000 groups QphH@Size by environment: a local disk and a SAN
        envs = []
        for name, kind in (("Local U15", "local"), ("SAN U15", "san")):
            r = api.post("/environments", json={"team_id": team_id, "name": name, "kind": kind})
            assert r.status_code == 201, r.text
            envs.append(str(r.json()["id"]))
    assert presets["tpch-postgresql"]["spec"]["kind"] == "tpch"
    assert presets["heap-btree"]["spec"]["kind"] == "heap_btree"
    # one TPC-H run with a timed-out query (the agent marks it and withholds the metrics)
    timed = copy.deepcopy(TPCH)
    for q in timed["tpch"]["queries"]:
        if q["query"] == 18 and q["stream"] == 1:
            q.update(timed_out=True, answer_ok=None, seconds=timed["tpch"]["query_timeout_s"])
    for key in ("power_at_size", "throughput_at_size", "qphh_at_size"):
        timed["tpch"][key] = None
    timed["tpch"]["metrics_note"] = "a query timed out (Q18, stream 1): the metrics are withheld"
    timed["tpch"]["timeouts"] = 1
    runs = [
        _upload(live, team_id, TPCH, 0, "tpch-postgresql SF 0.01 #1", "plug", envs[0]),
        _upload(live, team_id, timed, 1, "tpch-postgresql SF 0.01 #2 (Q18 timed out)", "estimate", envs[1]),
    ]
    hb = _upload(live, team_id, _heap_btree(), 2, "heap-btree N 20k", "plug")
    for rid in [*runs, hb]:
        wait_until(partial(_energy_done, live, rid), timeout=120, message=f"energy of {rid}")
    env = {
        "IOWATT_DB_TPCH_RUN": runs[0],
        "IOWATT_DB_TIMED_RUN": runs[1],
        "IOWATT_DB_HB_RUN": hb,
        "IOWATT_DB_TPCH_PRESET": presets["tpch-postgresql"]["id"],
    }

    def eight_more() -> None:
        for k in range(3, 11):
            runs.append(
                _upload(
                    live,
                    team_id,
                    TPCH,
                    k,
                    f"tpch-postgresql SF 0.01 #{k}",
                    "plug" if k % 2 else "estimate",
                    envs[k % 2],
                )
            )

    # one browser: two TPC-H runs, then (while the script waits) eight more
    report = _node(
        "tests/browser/db_workloads.mjs",
        live,
        tmp_path,
        pauses={"many": eight_more},
        IOWATT_DB_PHASE="two,many",
        **env,
    )
    assert "the TPC-H run page" in report
    assert "10 TPC-H runs" in report
    keep = os.environ.get("IOWATT_DB_SHOTS")  # a directory to keep a copy of the screenshots in
    for name in (
        "U15-workloads",
        "U15-workload-tpch",
        "U15-new-run-tpch",
        "U15-run-tpch",
        "U15-run-tpch-timed-out",
        "U15-run-heap-btree",
        "U15-runs-2",
        "U15-runs-10",
    ):
        png = tmp_path / f"{name}.png"
        _shot(report, tmp_path, name)
        if keep:
            (Path(keep) / png.name).write_bytes(png.read_bytes())
