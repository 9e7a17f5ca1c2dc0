"""File workloads in Chromium at 1440×900 (issue 14): the workloads list and a preset's page, New
run with a scale, the run page of a PostMark and of a vdbench run, the two seed views
(vdbench-filesets, postmark-levels) with 2 and 8+ runs, and compare of file runs. The runs are
real: the file presets, scaled down, queued through the API and run by the stack's agent and
engine on tmpfs directory targets (/dev/shm) and on the disk (/var/tmp).

Half of the vdbench preset runs (the second tmpfs and the second disk directory's) are queued to a
second host of the stack (tests/stack.py's RecordedHost) that answers each lease with the document
the stack's engine wrote for the same preset on the same kind of device in this test: 64 threads
for a second each, the eight preset runs were most of the engine's CPU here, and the views need
their rows, not eight runs of the engine. The queue → agent → engine → upload path stays
covered by the runs that remain real here and by the e2e tests."""

import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest

from tests.browser.test_browser import _needs, _node, _shot
from tests.stack import RecordedHost, Stack, recorded_host
from tests.waiting import wait_until

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("stack-b")]

# each preset at a fraction of its default: seconds per run on tmpfs (PostMark: files and
# transactions times it; vdbench: its scale 0.001 times it, 1.1 s instead of 36 s: 64 threads at full speed)
PM_SCALE = 0.002
VD_SCALE = 0.03
INTERVALS = """fsd=fsd1,anchor=/ignored,depth=1,width=4,files=16,size=256k
fwd=fwd1,fsd=fsd1,rdpct=70,xfersize=8k,fileio=random,fileselect=random,threads=4
rd=rd1,fwd=fwd1,fwdrate=2000,format=yes,elapsed=8,interval=1,warmup=2
"""


def _presets(live: Stack) -> dict[str, str]:
    with live.api() as api:
        return {w["name"]: w["id"] for w in api.get("/workloads").json()["items"] if w["builtin"]}


def _run(
    live: Stack,
    presets: dict[str, str],
    target: str,
    preset: str,
    scale: float,
    meter: str | None = None,
    agent_id: str | None = None,
) -> str:
    with live.api() as api:
        r = api.post(
            "/runs",
            json={
                "agent_id": agent_id or live.agent_id,
                "target_path": target,
                "workload_id": presets[preset],
                **({"scale": scale} if scale != 1 else {}),
                "name": f"{preset} on {Path(target).name}",
                "idle_s": 0,
                **({"meter": meter} if meter else {}),
            },
        )
        assert r.status_code == 201, r.text
        return str(r.json()["id"])


def _recorded_vdbench(
    live: Stack,
    host: RecordedHost,
    presets: dict[str, str],
    real: dict[str, list[str]],
    copies: dict[str, str],
) -> dict[str, list[str]]:
    """Each preset's run on `copies`' targets, answered by `host` with the document of the real run
    of the same preset on the target it maps to (the same kind of device)."""
    out: dict[str, list[str]] = {}
    for target, source in copies.items():
        out[target] = []
        for k, s in enumerate(("big", "small")):
            with live.api() as api:
                doc = api.get(f"/runs/{real[source][k]}/result").json()["engine_result"]
            rid = _run(live, presets, target, f"vdbench-{s}", VD_SCALE, agent_id=host.agent_id)
            host.answer(rid, doc)
            out[target].append(rid)
    return out


def test_file_workloads_in_chromium(live: Stack, tmp_path: Path) -> None:
    _needs()
    with recorded_host(live, "files-recorded") as host:
        _file_workloads(live, host, tmp_path)


def _file_workloads(live: Stack, host: RecordedHost, tmp_path: Path) -> None:
    # two kinds of device: tmpfs (a, b) and the disk under /var/tmp (c, d), so the views have columns
    dirs = [tempfile.mkdtemp(prefix=f"iowatt-files-{k}-", dir="/dev/shm") for k in "ab"]
    dirs += [tempfile.mkdtemp(prefix=f"iowatt-files-{k}-", dir="/var/tmp") for k in "cd"]
    # an estimate meter (datasheet watts): the PostMark runs get energy, labelled estimated
    live.agent_cli("meters", "set", "plate", "estimate:5,9.5")
    try:
        for d in dirs[:3]:  # the fourth directory is the second host's only
            live.allow(d)
        presets = _presets(live)
        for name in ("postmark-low", "postmark-medium", "postmark-high", "vdbench-big", "vdbench-small"):
            assert name in presets, f"preset {name} missing: {sorted(presets)}"
        # postmark-levels: three levels on three targets (9 runs); vdbench-filesets: big and small
        # on four targets (8 runs; the second host's four from the engine's documents of the first
        # two). The first target's runs are the 2-run views.
        pm = {
            d: [
                _run(live, presets, d, f"postmark-{lvl}", PM_SCALE, "plate")
                for lvl in ("low", "medium", "high")
            ]
            for d in dirs[:3]
        }
        # the engine on one tmpfs and one disk directory; the other two get those documents
        vd = {
            d: [_run(live, presets, d, f"vdbench-{s}", VD_SCALE) for s in ("big", "small")]
            for d in (dirs[0], dirs[2])
        }
        for d in (dirs[1], dirs[3]):
            host.cli("targets", "add", d)
        host.report_inventory()
        # the vdbench run page: a team's own file set with 1 s intervals (the presets' 30 s interval
        # gives a 4 s run one point), a warm-up included; at 2,000 operations/s, not as fast as the
        # CPU goes (the page needs the intervals, not the speed)
        with live.api() as api:
            team = api.get("/auth/me").json()["teams"][0]["id"]
            w = api.post(
                "/workloads",
                json={
                    "team_id": team,
                    "name": "u-browser vdbench intervals",
                    "spec": {"kind": "vdbench", "vdbench": {"parameters": INTERVALS, "scale": 1}},
                },
            )
            assert w.status_code == 201, w.text
        vd_run = _run(live, {"intervals": w.json()["id"]}, dirs[0], "intervals", 1)
        # a team's own PostMark (fsync after each write: not in PostMark) and the same vdbench file
        # set on the disk (/var/tmp): their run pages walked too
        with live.api() as api:
            pw = api.post(
                "/workloads",
                json={
                    "team_id": team,
                    "name": "u-browser postmark on disk",
                    "spec": {
                        "kind": "postmark",
                        "postmark": {
                            "number": 200,
                            "size_low_bytes": 4096,
                            "size_high_bytes": 65536,
                            "subdirectories": 4,
                            "read_block_bytes": 4096,
                            "write_block_bytes": 4096,
                            "transactions": 400,
                            "fsync": True,
                        },
                    },
                },
            )
            assert pw.status_code == 201, pw.text
        pm_custom = _run(live, {"pm": pw.json()["id"]}, dirs[2], "pm", 1)
        vd_custom = _run(live, {"intervals": w.json()["id"]}, dirs[2], "intervals", 1)
        every: list[str] = [r for v in (*pm.values(), *vd.values()) for r in v] + [
            vd_run,
            pm_custom,
            vd_custom,
        ]
        for rid in every:
            run: dict[str, Any] = live.wait(rid, timeout_s=600)
            assert run["status"] == "succeeded", run
            assert run["file_workload"] is not None, run
        vd |= _recorded_vdbench(live, host, presets, vd, {dirs[1]: dirs[0], dirs[3]: dirs[2]})
        for rid in [r for d in (dirs[1], dirs[3]) for r in vd[d]]:
            run = live.wait(rid, timeout_s=60)
            assert run["status"] == "succeeded", run
            assert run["file_workload"] is not None, run
        vd = {d: vd[d] for d in dirs}  # in the targets' order, as before
        with live.api() as api:  # the worker computes the PostMark runs' energy (or says why not)

            def energy_final(rid: str) -> bool:
                return api.get(f"/runs/{rid}").json()["energy"]["status"] not in ("pending",)

            for rid in [r for v in pm.values() for r in v]:
                wait_until(
                    lambda rid=rid: energy_final(rid), timeout=120, interval=1, message=f"energy of {rid}"
                )
        pm_all = [r for v in pm.values() for r in v]
        vd_all = [r for v in vd.values() for r in v]
        first_pm, first_vd = pm[dirs[0]], vd[dirs[0]]
        with live.api() as api:
            pm_run = api.get(f"/runs/{first_pm[0]}").json()
        report = _node(
            "tests/browser/file_workloads.mjs",
            live,
            tmp_path,
            IOWATT_FILE_PM=",".join(pm_all),
            IOWATT_FILE_VD=",".join(vd_all),
            IOWATT_FILE_PM2=",".join(first_pm[:2]),
            IOWATT_FILE_VD2=",".join(first_vd),
            # like for like: the same preset on two targets
            IOWATT_FILE_PM_LIKE=f"{pm[dirs[0]][0]},{pm[dirs[1]][0]}",
            IOWATT_FILE_VD_LIKE=f"{vd[dirs[0]][0]},{vd[dirs[1]][0]}",
            IOWATT_FILE_PM_TRANSACTIONS=str(pm_run["file_workload"]["postmark"]["transactions"]),
            IOWATT_FILE_VD_RUN=vd_run,
            IOWATT_FILE_PM_CUSTOM=pm_custom,
            IOWATT_FILE_VD_CUSTOM=vd_custom,
        )
        assert "file_workloads:" in report
        for shot in (
            "U-workloads",
            "U-workload-vdbench-big",
            "U-new-run-scale",
            "U-run-postmark",
            "U-run-vdbench",
            "U-view-vdbench-filesets-2",
            "U-view-vdbench-filesets-8",
            "U-view-postmark-levels-2",
            "U-view-postmark-levels-9",
            "U-compare-postmark",
            "U-compare-vdbench",
            "Q-run-postmark-custom-disk",
            "Q-run-vdbench-custom-disk",
        ):
            _shot(report, tmp_path, shot)
        keep = os.environ.get("IOWATT_FILE_SHOTS")
        if keep:  # a copy of the screenshots for review
            for png in [*tmp_path.glob("U-*.png"), *tmp_path.glob("Q-*")]:
                shutil.copy(png, Path(keep) / png.name)
    finally:
        with live.api() as api:  # the workload the script made through the form
            for w in api.get("/workloads").json()["items"]:
                if w["name"].startswith("u-browser"):
                    api.delete(f"/workloads/{w['id']}")
        for d in dirs:
            shutil.rmtree(d, ignore_errors=True)
