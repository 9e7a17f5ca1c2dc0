"""check_run for file workloads (issue 14): the job's shape, a directory target only, and the
host's limits against the engine's `bounds` (its --parse-only), never guessed from the text."""

from __future__ import annotations

from typing import Any

import pytest
from iowatt_policy import Limits, MeterInfo, ReportedPolicy, Target, Violation, check_run

DEV = "/dev/disk/by-id/nvme-Example_SSD_S123"
POSTMARK = {"mode": "postmark", "commands": "set number 100\nrun\nquit\n"}
VDBENCH = {
    "mode": "vdbench",
    "parameters": "fsd=f,anchor=/x,width=2,files=3,size=64k\nfwd=w,fsd=f\nrd=r,fwd=w,elapsed=2\n",
    "scale": "1",
}


def policy(**limits: Any) -> ReportedPolicy:
    return ReportedPolicy(
        targets=(
            Target.directory("/data/bench"),
            Target.file("/data/rw.img", allow_write=True),
            Target.device(DEV, destructive=True),
        ),
        meters=(MeterInfo("wall", "shelly", "plug"),),
        default_meter="wall",
        limits=Limits(**limits),
    )


def facts(**over: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "mode": "vdbench",
        "threads": 2,
        "max_block_bytes": 4096,
        "bytes_written_max": 1 << 20,
        "runtime_s_max": 2.0,
        "dataset_bytes": 393216,
        "files": 6,
        "directories": 2,
    }
    doc.update(over)
    return doc


def check(
    engine_job: dict[str, Any],
    target: str = "/data/bench",
    *,
    file_facts: dict[str, Any] | None = None,
    pol: ReportedPolicy | None = None,
    destructive: bool = False,
    meter: str | None = None,
) -> list[Violation]:
    return check_run(
        pol or policy(),
        target_path=target,
        engine_job=engine_job,
        meter=meter,
        destructive=destructive,
        file_facts=file_facts,
    )


def pairs(violations: list[Violation]) -> list[tuple[str, str]]:
    return [(v.rule, v.field) for v in violations]


def test_file_workloads_in_a_directory_target_pass() -> None:
    assert check(POSTMARK) == []
    assert check(POSTMARK, file_facts=facts(mode="postmark", threads=1, runtime_s_max=None)) == []
    assert check(VDBENCH) == []
    assert check({**VDBENCH, "elapsed": "5"}, file_facts=facts()) == []


@pytest.mark.parametrize("target", ["/data/rw.img", DEV])
def test_a_file_workload_needs_a_directory_target(target: str) -> None:
    found = check(POSTMARK, target)
    assert pairs(found) == [("target.kind", "target_path")]
    assert "directory target" in found[0].message and "/data/bench" in found[0].fix
    assert pairs(check(VDBENCH, target, destructive=True)) == [
        ("target.kind", "target_path"),
        ("target.kind", "destructive"),
    ]


def test_unlisted_and_traversing_targets() -> None:
    assert pairs(check(POSTMARK, "/etc")) == [("target.not_allowed", "target_path")]
    assert pairs(check(VDBENCH, "/data/bench/../../etc")) == [("target.not_allowed", "target_path")]


@pytest.mark.parametrize(
    ("engine_job", "field"),
    [
        ({"mode": "fio"}, "workload.kind"),
        ({"mode": None, "commands": "run"}, "workload.kind"),
        ({**POSTMARK, "directory": "/etc"}, "workload.directory"),
        ({**POSTMARK, "beneath": "/"}, "workload.beneath"),
        ({**POSTMARK, "jobs": []}, "workload.jobs"),
        ({**VDBENCH, "keep": "1"}, "workload.keep"),
        ({**POSTMARK, "scale": "2"}, "workload.scale"),  # postmark scales by its numbers
        ({"mode": "postmark"}, "workload.postmark"),
        ({"mode": "postmark", "commands": ["run"]}, "workload.postmark"),
        ({"mode": "postmark", "commands": "   "}, "workload.postmark"),
        ({"mode": "postmark", "commands": "run\x00"}, "workload.postmark"),
        ({"mode": "postmark", "commands": "#" * (64 * 1024 + 1)}, "workload.postmark"),
        ({"mode": "vdbench", "parameters": VDBENCH["parameters"]}, "workload.vdbench.scale"),
        ({**VDBENCH, "scale": "0"}, "workload.vdbench.scale"),
        ({**VDBENCH, "scale": "nan"}, "workload.vdbench.scale"),
        ({**VDBENCH, "scale": "1e9"}, "workload.vdbench.scale"),
        ({**VDBENCH, "scale": "1000.5"}, "workload.vdbench.scale"),  # the engine's bound
        ({**VDBENCH, "scale": 2}, "workload.vdbench.scale"),
        ({**VDBENCH, "elapsed": "-1"}, "workload.vdbench.elapsed_s"),
        ({**VDBENCH, "elapsed": "inf"}, "workload.vdbench.elapsed_s"),
    ],
)
def test_bad_or_extra_keys_are_refused_never_ignored(engine_job: dict[str, Any], field: str) -> None:
    found = check(engine_job)
    assert ("option.not_allowed", field) in pairs(found), found


def test_limits_against_the_engines_bounds() -> None:
    tight = policy(max_threads=4, max_bs_bytes=65536, max_bytes_written=1 << 20, max_runtime_s=10)
    assert check(VDBENCH, file_facts=facts(), pol=tight) == []
    found = check(
        VDBENCH,
        file_facts=facts(
            threads=64, max_block_bytes=131072, bytes_written_max=5 << 30, runtime_s_max=36000.0
        ),
        pol=tight,
    )
    assert pairs(found) == [
        ("limit.threads", "workload.vdbench.parameters"),
        ("limit.block_size", "workload.vdbench.parameters"),
        ("limit.bytes_written", "workload.vdbench.scale"),
        ("limit.runtime", "workload.vdbench.elapsed_s"),
    ]
    assert found[0].fix == "iowatt-agent targets limits --max-threads 64"
    assert found[2].fix == f"iowatt-agent targets limits --max-bytes-written {5 << 30}"
    assert "64 threads" in found[0].message and "allows 4" in found[0].message
    # unbounded writes (time-based without maxdata) are refused while the limit is set
    unbounded = check(VDBENCH, file_facts=facts(bytes_written_max=None), pol=tight)
    assert pairs(unbounded) == [("limit.bytes_written", "workload.vdbench.scale")]
    assert unbounded[0].fix == "iowatt-agent targets limits --max-bytes-written none"
    assert check(VDBENCH, file_facts=facts(bytes_written_max=None), pol=policy(max_bytes_written=None)) == []
    # postmark: size-bound (runtime null) is capped by the agent's timeout, not refused
    pm = facts(
        mode="postmark", threads=1, max_block_bytes=4096, runtime_s_max=None, bytes_written_max=3 << 20
    )
    assert pairs(check(POSTMARK, file_facts=pm, pol=tight)) == [("limit.bytes_written", "workload.postmark")]


def test_facts_none_skips_the_limits_but_bad_facts_refuse() -> None:
    tight = policy(max_threads=1, max_bytes_written=1)
    assert check(VDBENCH, pol=tight) == []  # a caller without the engine (the agent always has facts)
    broken = check(VDBENCH, file_facts={"mode": "vdbench"}, pol=tight)
    assert pairs(broken) == [
        ("limit.threads", "workload.vdbench.parameters"),
        ("limit.block_size", "workload.vdbench.parameters"),
        ("limit.bytes_written", "workload.vdbench.scale"),
        ("limit.runtime", "workload.vdbench.elapsed_s"),
        ("limit.files", "workload.vdbench.parameters"),  # the default cap is in force
    ]
    assert "cannot check" in broken[0].message
    assert pairs(check(VDBENCH, file_facts=facts(threads="2"), pol=tight))[0] == (
        "limit.threads",
        "workload.vdbench.parameters",
    )
    assert pairs(check(VDBENCH, file_facts=facts(mode="postmark"), pol=tight)) == [
        ("option.not_allowed", "workload.kind")
    ]


def test_meter_rules_apply_to_file_workloads_too() -> None:
    assert pairs(check(POSTMARK, meter="command:/bin/sh")) == [("meter.spec_from_server", "meter")]
    assert pairs(check(POSTMARK, meter="lab")) == [("meter.unknown", "meter")]
    assert check(POSTMARK, meter="wall") == []


def test_block_jobs_are_unchanged() -> None:
    job = {"global": {}, "jobs": [{"name": "j", "rw": "randread", "bs": "4096", "size": "1048576"}]}
    assert check(job) == []
    # a block job carrying a mode is a file job with extra keys: refused, not half-read
    assert ("option.not_allowed", "workload.global") in pairs(
        check({**job, "mode": "postmark", "commands": "run"})
    )
