"""The seeds' block workloads as presets: definitions, engine options, pass summaries."""

import re
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from backend.run import service as run_service
from backend.workload.builtin import BS_SWEEP, BUILTINS, KH_SIZES, THREADS
from backend.workload.schemas import WorkloadSpec
from tests.factories import create_agent, create_result, create_run, create_user


def test_every_preset_is_served_and_valid(client: TestClient, session: Session) -> None:
    u = create_user(session)
    items = {w["name"]: w for w in client.get("/api/v1/workloads", headers=u.headers).json()["items"]}
    assert set(BUILTINS) <= set(items)
    for name in BUILTINS:
        WorkloadSpec.model_validate(items[name]["spec"])  # what the server serves is valid input again
    cdm = items["crystaldiskmark"]["spec"]
    assert (cdm["passes"], cdm["discard_passes"], len(cdm["jobs"])) == (3, 1, 5 * 2 * 4)
    assert len(items["diskspd-bs-sweep"]["spec"]["jobs"]) == 13 and BS_SWEEP[-1] == 16 * 1024 * 1024
    assert [j["numjobs"] for j in items["threads-latency"]["spec"]["jobs"]] == THREADS
    assert KH_SIZES[0] == 4096 and KH_SIZES[-1] == 4 * 1024 * 1024


def test_preset_engine_options() -> None:
    cdm = BUILTINS["crystaldiskmark"][1].engine_job()["jobs"]
    q32t16 = next(j for j in cdm if j["name"] == "RND4K_Q32T16-read.p1")
    assert (q32t16["iodepth"], q32t16["numjobs"], q32t16["ioengine"], q32t16["direct"]) == (
        "32",
        "16",
        "io_uring",
        "1",
    )
    assert q32t16["size"] == str(1024**3) and q32t16["runtime"] == "5000ms" and q32t16["stonewall"] == "1"
    kh = {j["name"]: j for j in BUILTINS["kernel-help"][1].engine_job()["jobs"]}
    # readahead off = RANDOM; on = no hint at all, the kernel's default window (not SEQUENTIAL)
    hints = [kh[f"read-4k-{m}"]["fadvise_hint"] for m in ("cache-nora", "cache-ra")]
    assert hints == ["random", "0"]
    assert kh["read-4k-cache-ra"]["invalidate"] == "1" and "fadvise_hint" not in kh["read-4k-nocache"]
    for j in kh.values():  # 64 MiB of I/O in the first 1 GiB
        assert (j["offset"], j["size"], j["io_size"]) == ("0", str(1024**3), str(64 * 1024**2))
    synced = {n for n, j in kh.items() if j.get("end_fsync") == "1"}
    assert synced == {n for n in kh if n.startswith(("write-", "randwrite-"))} and len(synced) == 44


def test_pass_names_are_checked() -> None:
    job = {"name": "x.p5", "rw": "read", "bs_bytes": 4096, "size_bytes": 8192}
    with pytest.raises(ValueError, match=r"\.p0 … \.p3"):
        WorkloadSpec.model_validate({"jobs": [job], "passes": 3, "discard_passes": 1})


def test_crystaldiskmark_best_of_median_and_spread(client: TestClient, session: Session) -> None:
    u = create_user(session)
    a = create_agent(session, team=u.team)
    spec = {
        "passes": 3,
        "discard_passes": 1,
        "jobs": [
            {
                "name": f"SEQ1M_Q8T1-read.p{k}",
                "rw": "read",
                "bs_bytes": 1048576,
                "size_bytes": 1 << 30,
                "runtime_s": 5,
                "time_based": True,
                "direct": True,
                "iodepth": 8,
            }
            for k in range(4)
        ],
    }
    runs = []
    for target, mbs in (("/srv/a", [900, 500, 520, 480]), ("/dev/shm/b", [3000, 2000, 2100, 1900])):
        run = create_run(session, agent=a.agent, target_path=target)
        run.workload_spec = spec
        create_result(
            session,
            run=run,
            jobs=[
                {
                    "name": f"SEQ1M_Q8T1-read.p{k}",
                    "rw": "read",
                    "bs_bytes": 1048576,
                    "read_bw_bytes": v * 10**6,
                }
                for k, v in enumerate(mbs)
            ],
        )
        runs.append(run)
    read = run_service.to_read(session, [runs[0]])[0]
    (p,) = read.passes
    assert (p.test, p.direction, p.passes, p.discarded) == ("SEQ1M_Q8T1-read", "read", 3, 1)
    assert (
        p.best_bw_bytes == 520 * 10**6 and p.median_bw_bytes == 500 * 10**6
    )  # the 900 warm-up pass is discarded
    assert p.spread_pct == pytest.approx((520 - 480) / 500 * 100) and p.best_job == "SEQ1M_Q8T1-read.p2"
    c = client.get(f"/api/v1/compare?runs={runs[0].id},{runs[1].id}", headers=u.headers).json()
    assert [j["name"] for j in c["jobs"]] == ["SEQ1M_Q8T1-read"]  # one row per test, best pass
    bw = next(m for m in c["jobs"][0]["metrics"] if m["key"] == "read_bw_bytes")
    assert bw["values"] == [520e6, 2100e6]


def test_agent_preset_file_matches_the_server_definitions() -> None:
    import json
    from pathlib import Path

    from backend.workload.export import presets
    from tests.conftest import REPO

    shipped = json.loads((Path(REPO) / "agent/src/iowatt_agent/presets.json").read_text())
    assert shipped == json.loads(json.dumps(presets())), (
        "run: .venv/bin/python -m backend.workload.export > agent/src/iowatt_agent/presets.json"
    )


def _jobs(name: str) -> list[dict[str, Any]]:
    return [j.model_dump() for j in BUILTINS[name][1].jobs]


def test_crystaldiskmark_jobs_as_issue_3() -> None:
    spec = BUILTINS["crystaldiskmark"][1]
    assert (spec.passes, spec.discard_passes) == (3, 1)
    got = [
        (j["name"], j["rw"], j["bs_bytes"], j["iodepth"], j["numjobs"], j["ioengine"])
        for j in _jobs("crystaldiskmark")
    ]
    want = [
        (f"{test}-{d}.p{k}", ("rand" if bs == 4096 else "") + d, bs, qd, t, "io_uring" if qd > 1 else "psync")
        for test, bs, qd, t in (
            ("SEQ1M_Q8T1", 1024**2, 8, 1),
            ("SEQ1M_Q1T1", 1024**2, 1, 1),
            ("RND4K_Q32T1", 4096, 32, 1),
            ("RND4K_Q32T16", 4096, 32, 16),
            ("RND4K_Q1T1", 4096, 1, 1),
        )
        for d in ("read", "write")
        for k in range(4)  # 1 discarded + 3 measured passes
    ]
    assert got == want
    for j in _jobs("crystaldiskmark"):  # a 1 GiB file, 5 s per test, O_DIRECT
        assert (j["size_bytes"], j["offset_bytes"], j["runtime_s"], j["time_based"], j["direct"]) == (
            1024**3,
            0,
            5,
            True,
            True,
        )


def test_diskspd_bs_sweep_jobs_as_issue_3() -> None:
    jobs = _jobs("diskspd-bs-sweep")
    assert [j["bs_bytes"] for j in jobs] == [4096 * 2**i for i in range(13)]  # 4 KiB ... 16 MiB
    for j in jobs:  # diskspd -d5 -o1 -t1 -r -h
        assert (j["rw"], j["iodepth"], j["numjobs"], j["ioengine"], j["direct"]) == (
            "randread",
            1,
            1,
            "psync",
            True,
        )
        assert (j["runtime_s"], j["time_based"], j["size_bytes"]) == (5, True, 1024**3)


def test_kernel_help_jobs_as_issue_3() -> None:
    jobs = {j["name"]: j for j in _jobs("kernel-help")}
    sizes = [4096 * 2**i for i in range(11)]  # 4 KiB ... 4 MiB
    modes = {"read": 3, "randread": 3, "write": 2, "randwrite": 2}  # readahead only for buffered reads
    assert len(jobs) == sum(modes.values()) * len(sizes)
    for rw, n in modes.items():
        for bs in sizes:
            points = [jobs[f"{rw}-{bs // 1024}k-{m}"] for m in ("nocache", "cache-ra", "cache-nora")[:n]]
            assert [(p["rw"], p["bs_bytes"], p["direct"]) for p in points] == [
                (rw, bs, True),
                (rw, bs, False),
                (rw, bs, False),
            ][:n]
            assert [p["readahead"] for p in points] == ["default", "on", "off"][:n]
    for j in jobs.values():  # 64 MiB of I/O per point in a 1 GiB region from its start, QD1 (report l. 44)
        assert (j["size_bytes"], j["offset_bytes"], j["io_size_bytes"]) == (1024**3, 0, 64 * 1024**2)
        assert (j["runtime_s"], j["time_based"], j["invalidate"]) == (None, False, True)
        assert (j["numjobs"], j["iodepth"], j["ioengine"]) == (1, 1, "psync")
        # the report fdatasyncs before it exits (l. 229): writes are timed until the data is down
        assert j["end_fsync"] is (j["rw"] in ("write", "randwrite"))


def test_threads_latency_jobs_as_issue_3() -> None:
    jobs = _jobs("threads-latency")
    assert [j["numjobs"] for j in jobs] == [1, 2, 4, 8, 16, 32, 64]
    for j in jobs:  # 4 KiB random pread, one I/O in flight per thread
        assert (j["rw"], j["bs_bytes"], j["ioengine"], j["iodepth"]) == ("randread", 4096, "psync", 1)
        assert (j["runtime_s"], j["time_based"], j["size_bytes"]) == (10, True, 1024**3)


def test_seq_rand_table_jobs_as_issue_3() -> None:
    got = [(j["name"], j["rw"], j["bs_bytes"], j["iodepth"], j["numjobs"]) for j in _jobs("seq-rand-table")]
    assert got == [
        ("seq-read", "read", 1024**2, 1, 1),
        ("seq-write", "write", 1024**2, 1, 1),
        ("rand-read-4k", "randread", 4096, 1, 1),
        ("rand-write-4k", "randwrite", 4096, 1, 1),
    ]
    for j in _jobs("seq-rand-table"):
        assert (j["direct"], j["runtime_s"], j["time_based"], j["size_bytes"]) == (
            True,
            10,
            True,
            256 * 1024**2,
        )


def test_file_presets_describe_sizes_in_binary_units_as_their_facts() -> None:
    """The workloads page shows a preset's description beside the engine's facts (MiB/GiB): one
    quantity, one unit, one number (QA finding 13: "about 23 GB" beside "21.8 GiB")."""
    for name, (text, _) in BUILTINS.items():
        if name.startswith(("postmark-", "vdbench-")):
            assert not re.search(r"\d\s*[kMGT]B\b", text), (name, text)
    files = {"postmark-low": 10_000, "postmark-medium": 30_000, "postmark-high": 70_000}
    for name, n in files.items():
        shown = re.search(r"File set about ([\d.]+) GiB", BUILTINS[name][0])
        assert shown, name
        assert float(shown[1]) == pytest.approx(n * 327 * 1024 / 1024**3, abs=0.05), name
    assert "65 files of about 5.1 MiB (about 333 MiB)" in BUILTINS["vdbench-big"][0]


def test_presets_are_short_only_by_design() -> None:
    """Issue 25: the product does not flag its own presets. A time-based job of a built-in preset
    runs at least the short-run rule's MIN_RUNTIME_S, or the preset names its design (the words
    the short_run flag says: CrystalDiskMark's own 5 s)."""
    from iowatt_workload import MIN_RUNTIME_S

    from backend.workload.builtin import SHORT_BY_DESIGN

    for name, (_, spec) in BUILTINS.items():
        short = [j.name for j in spec.jobs if j.time_based and (j.runtime_s or 0) < MIN_RUNTIME_S]
        assert not short or name in SHORT_BY_DESIGN, (name, short)
    assert set(SHORT_BY_DESIGN) <= set(BUILTINS)
    assert "CrystalDiskMark's own 5 s" in SHORT_BY_DESIGN["crystaldiskmark"]
