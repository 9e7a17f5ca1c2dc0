"""IOPS at a latency target on a rate-limited device (issue 29): a loop device read through a
cgroup-v1 blkio throttle (no device-mapper here) of THROTTLE_IOPS, the qos preset's shape at a
small scale (1 s per depth, a latency_target search in 1 s windows), the real engine. The throttle caps the
IOPS whatever the depth, so past the throttle's budget latency grows and IOPS do not: the sweep
crosses the target, the engine's search settles under it, and the figure is the throttle's rate.
Needs root, losetup and the blkio controller (skipped otherwise)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import uuid
from pathlib import Path

import pytest

from backend.views.builders.qos import best_under, figure, meets, points_from_document
from tests.stack import ENGINE

THROTTLE_IOPS = 400
# cgroup v1's throttle hands out its budget in 100 ms slices: up to a slice's budget in flight (40
# I/Os) the p99 is about a slice, past it two slices and more
TARGET_MS = 150
BLKIO = Path("/sys/fs/cgroup/blkio")

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0
    or not shutil.which("losetup")
    or not (BLKIO / "blkio.throttle.read_iops_device").exists(),
    reason="needs root, losetup and cgroup v1's blkio throttle",
)

JOB = """\
[global]
filename={dev}
rw=randread
bs=4k
size=32m
direct=1
ioengine=libaio
time_based=1
runtime=1
stonewall

[qd1]
iodepth=1

[qd4]
iodepth=4

[qd16]
iodepth=16

[qd64]
iodepth=64

[at-target]
iodepth=16
runtime=10
latency_target={target}ms
latency_window=1s
latency_percentile=99
"""


@pytest.fixture
def throttled(tmp_path: Path):
    backing = tmp_path / "backing.img"
    with backing.open("wb") as f:
        f.truncate(32 << 20)
    try:
        dev = subprocess.run(
            ["losetup", "-f", "--show", str(backing)], check=True, capture_output=True, text=True
        ).stdout.strip()
    except subprocess.CalledProcessError as exc:
        pytest.skip(f"no loop device here: {exc.stderr.strip()}")
    cg = BLKIO / f"iowatt-test-qos-{uuid.uuid4().hex[:8]}"
    try:
        cg.mkdir()
        st = os.stat(dev)
        (cg / "blkio.throttle.read_iops_device").write_text(
            f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)} {THROTTLE_IOPS}\n"
        )
        yield dev, cg
    finally:
        if cg.exists():
            cg.rmdir()
        subprocess.run(["losetup", "-d", dev], check=False)


@pytest.mark.early  # ~11 s of waiting on a 400 IOPS throttle (docs/testing.md, Session 18)
def test_the_sweep_and_the_search_find_the_knee_of_a_throttled_device(
    throttled: tuple[str, Path], tmp_path: Path
) -> None:
    dev, cg = throttled
    job = tmp_path / "qos.fio"
    job.write_text(JOB.format(dev=dev, target=TARGET_MS))
    # the engine joins the cgroup before it starts: its I/O is the throttle's
    r = subprocess.run(
        [
            "sh",
            "-c",
            f'echo $$ > {cg}/cgroup.procs && exec "$0" --output-format=json "$1"',
            str(ENGINE),
            str(job),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    points, target = points_from_document(json.loads(r.stdout))
    assert target is not None and target.latency_ns == TARGET_MS * 1_000_000 and target.percentile == 99
    by = {p.name: p for p in points}
    # the throttle caps every depth: no more IOPS at QD64 than at QD1, and past a slice's budget
    # the latency doubles: the sweep crosses the target there
    assert by["qd64"].iops < 1.3 * by["qd1"].iops, points
    assert meets(by["qd64"], target) is False, points
    best = best_under(points, target)
    assert best is not None and best.depth is not None and best.depth <= 16, points
    fig = figure(points, target)
    assert fig is not None and fig.search and fig.depth is not None and fig.depth <= 16, points
    assert 0.7 * THROTTLE_IOPS <= fig.iops <= 1.3 * THROTTLE_IOPS, fig
