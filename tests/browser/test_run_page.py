"""The run page in Chromium at 1440x900 with real runs on the real platform (issue 12): summary
and system with validity flags, latency percentiles, one-click engine JSON, clone and re-run,
live progress with phases, ETA and a per-second chart, comparison by target, logout revokes.

In the same session, SNIA PTS (tests/browser/pts_steps.mjs): a second host of the stack
(tests/stack.py's RecordedHost) reports a raw device it marked destructive; the New run form
queues a PTS short trial on it with the typed key, and the host answers the lease with a PTS
document the agent's child recorded on a loop device (tests/data/pts/); a Write Saturation run,
queued through the API and answered the same way, shows its two plots, and a Host Idle Recovery
run its IOPS per burst over time, and a PTS Client run (recorded on a zram device) its profile
and "not PTS Client-compliant". The PTS runs themselves on loop and zram devices are
tests/backend/test_pts.py's. Two runs of the qos-randread-4k preset, queued the same way and
answered with recorded real sweeps (tests/data/qos), open the QoS view: the figure at the target,
the curve, IOPS per watt (estimated: the host's estimate meter), the units."""

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest

from tests.browser.test_browser import _needs, _node, _shot
from tests.stack import RecordedHost, Stack, recorded_host

PTS_DATA = Path(__file__).parents[1] / "data" / "pts"
WRITEBACK_DATA = Path(__file__).parents[1] / "data" / "writeback"
QOS_DATA = Path(__file__).parents[1] / "data" / "qos"
PTS_DEVICE = {
    "path": "/dev/disk/by-id/nvme-EXAMPLE_SSD_2TB_S0000001",
    "size_bytes": 2_000_398_934_016,
    "model": "EXAMPLE SSD 2TB",
    "destructive": True,
}

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("stack-b")]


def _job(name: str, runtime_s: int, rw: str = "randread") -> dict[str, object]:
    return {
        "name": name,
        "rw": rw,
        "bs_bytes": 4096,
        "size_bytes": 16 * 1024 * 1024,
        "runtime_s": runtime_s,
        "time_based": True,
        "direct": True,
    }


def test_run_page_in_chromium(live: Stack, tmp_path: Path) -> None:
    _needs()
    # three directories of one disk: a comparison by device sees one column, by target three
    dirs = [tempfile.mkdtemp(prefix=f"iowatt-run-page-{k}-", dir="/var/tmp") for k in "abc"]
    try:
        # paced: the pages compare these runs by target and by device and draw their latencies,
        # not their speed (unpaced, the engine spent ~0.55 CPU-s on each run's 2 s of direct
        # reads, paced ~0.2)
        short = {"jobs": [{**_job("rand4k", 2), "rate_iops": 2000}]}
        ids = [live.queue(d, workload=short, name=f"run page: {Path(d).name}") for d in dirs]
        ids.append(live.queue(dirs[0], workload=short, name="run page: repeat"))
        for rid in ids:
            assert live.wait(rid)["status"] == "succeeded"
        with recorded_host(live, "pts-host") as host:
            # first the PTS host and its Write Saturation run: the live run below must still be
            # running when the script opens it
            host.cli("targets", "add", dirs[2])  # the write-back run's directory
            host.report_inventory(devices=[PTS_DEVICE])
            wsat_id = _pts_run(live, host, json.loads((PTS_DATA / "wsat-trial.json").read_text()))
            hir_id = _pts_run(live, host, json.loads((PTS_DATA / "hir-trial.json").read_text()))
            client_id = _pts_run(
                live, host, json.loads((PTS_DATA / "iops-client-zram-trial.json").read_text())
            )
            writeback_id = _writeback_run(live, host, dirs[2])
            qos_ids, qos_figure = _qos_runs(live, host, dirs[2])

            def answer_the_forms_run() -> None:
                with live.api() as api:
                    waiting = api.get(
                        "/runs",
                        params=[("agent_id", host.agent_id), ("status", "queued"), ("status", "assigned")],
                    )
                    [run] = waiting.json()["items"]
                host.answer(run["id"], json.loads((PTS_DATA / "iops-matrix.json").read_text()), load_s=0)

            # the live run: a 2 s idle baseline, then one 15 s job
            with live.api() as api:
                body = {
                    "agent_id": live.agent_id,
                    "target_path": dirs[1],
                    # paced: the page shows its progress, phases and per-second points, not its
                    # speed (unpaced, the engine spent ~2.4 CPU-s on the 20 s of direct reads)
                    "workload": {"jobs": [{**_job("long-randread", 20), "rate_iops": 500}]},
                    "name": "run page: live",
                    "idle_s": 3,
                }
                r = api.post("/runs", json=body)
                assert r.status_code == 201, r.text
                live_id = r.json()["id"]
            report = _node(
                "tests/browser/run_page.mjs",
                live,
                tmp_path,
                pauses={"pts-host": host.heartbeat, "pts-queued": answer_the_forms_run},
                IOWATT_RUN_ID=ids[0],
                IOWATT_LIVE_RUN_ID=live_id,
                IOWATT_RUN_IDS=",".join(ids),
                IOWATT_PTS_AGENT="pts-host",
                IOWATT_PTS_MODEL=str(PTS_DEVICE["model"]),
                IOWATT_PTS_WSAT_RUN_ID=wsat_id,
                IOWATT_PTS_HIR_RUN_ID=hir_id,
                IOWATT_PTS_CLIENT_RUN_ID=client_id,
                IOWATT_WRITEBACK_RUN_ID=writeback_id,
                IOWATT_QOS_RUN_IDS=",".join(qos_ids),
                IOWATT_QOS_FIGURE=str(qos_figure),
            )
        assert "log out revokes the session token" in report
        assert "Write Saturation over time and over total GB written" in report
        assert "Host Idle Recovery: IOPS per burst over time" in report
        assert live.wait(live_id)["status"] == "succeeded"
        assert "the page cache panel: Dirty and Writeback beside throughput, with the limits" in report
        assert "the QoS view: IOPS at the latency target, the curve, IOPS per watt" in report
        for shot in ("M-run-live", "M-run-page", "M-compare-by-target", "M-runs", "M-run-writeback"):
            _shot(report, tmp_path, shot)
        for shot in ("M-qos-view", "M-qos-view-2"):
            _shot(report, tmp_path, shot)
        assert "a PTS Client run: its profile, never called compliant" in report
        for shot in (
            "M-new-run-pts",
            "M-new-run-pts-hir",
            "M-pts-report",
            "M-pts-wsat",
            "M-pts-hir",
            "M-pts-client",
            "M-new-run-pts-client",
        ):
            _shot(report, tmp_path, shot)
    finally:
        for d in dirs:
            shutil.rmtree(d, ignore_errors=True)


def _writeback_run(live: Stack, host: RecordedHost, target: str) -> str:
    """A buffered write past the background threshold (tests/data/writeback: 2.5 GiB written by
    the real engine through `iowatt-agent bench --json` on this machine's disk, the agent's page
    cache record with Dirty and Writeback each second), queued as its job file on the host's
    directory and answered with that document."""
    text = (WRITEBACK_DATA / "buffered-write-trial.fio").read_text()
    body = {
        "agent_id": host.agent_id,
        "target_path": target,
        "idle_s": 0,
        "workload": {"kind": "jobfile", "jobfile": {"text": text}},
        "name": "buffered write past the background threshold",
    }
    with live.api() as api:
        r = api.post("/runs", json=body)
        assert r.status_code == 201, r.text
    run_id = str(r.json()["id"])
    host.answer(run_id, json.loads((WRITEBACK_DATA / "buffered-write-trial.json").read_text()), load_s=0)
    return run_id


def _qos_runs(live: Stack, host: RecordedHost, target: str) -> tuple[list[str], float]:
    """Two runs of the qos-randread-4k preset queued on the host's directory, as a user queues
    them, with the host's estimate meter, each answered with a recorded real sweep
    (tests/data/qos: the preset's job file run by the real engine on ext4 on a loop device behind
    a blkio read throttle of 20,000 and 40,000 IOPS). Returns their ids and the figure the API's
    qos view gives the first (IOPS at the target), which the page must show."""
    host.cli("meters", "set", "plate", "estimate:5,9.5")  # datasheet watts: IOPS per watt, labelled
    host.report_inventory(devices=[PTS_DEVICE])
    with live.api() as api:
        presets = {w["name"]: w["id"] for w in api.get("/workloads", params={"limit": 500}).json()["items"]}
    ids = []
    for rate in ("20k", "40k"):
        body = {
            "agent_id": host.agent_id,
            "target_path": target,
            "idle_s": 0,
            "workload_id": presets["qos-randread-4k"],
            "meter": "plate",
            "name": f"qos-randread-4k behind a {rate} IOPS throttle",
        }
        with live.api() as api:
            r = api.post("/runs", json=body)
            assert r.status_code == 201, r.text
        ids.append(str(r.json()["id"]))
        doc = json.loads((QOS_DATA / f"qos-randread-4k-{rate}.json").read_text())
        host.answer(ids[-1], doc, load_s=1, idle_s=0)  # the power over the search's last window
    host.cli("meters", "unset", "plate")  # the form's PTS run below is answered without a meter
    host.report_inventory(devices=[PTS_DEVICE])
    with live.api() as api:
        t = api.get("/views/table", params={"view": "qos", "runs": ids[0]})
        assert t.status_code == 200, t.text
    keys = [c["key"] for c in t.json()["columns"]]
    head = dict(zip(keys, [c["value"] for c in t.json()["rows"][0]["cells"]], strict=True))
    assert head["meets"] == "yes" and isinstance(head["iops_per_w"], float), head
    return ids, float(head["iops"])


def _pts_run(live: Stack, host: RecordedHost, doc: dict[str, Any]) -> str:
    """A PTS run of the recorded document's parameters on the host's device, answered with it."""
    params = {k: v for k, v in doc["pts"]["params"].items() if k != "mode"}
    body = {
        "agent_id": host.agent_id,
        "target_path": PTS_DEVICE["path"],
        "destructive": True,
        "idle_s": 0,
        "workload": {"kind": "pts", "pts": params},
        "name": f"SNIA PTS {params['test']} trial",
    }
    with live.api() as api:
        r = api.post("/runs", json=body)
        assert r.status_code == 201, r.text
    run_id = str(r.json()["id"])
    host.answer(run_id, doc, load_s=0)
    return run_id
