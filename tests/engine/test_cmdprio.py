"""fio's per-command priorities (cmdprio_percentage, cmdprio_class, cmdprio, cmdprio_bssplit:
src/cmdprio.c), each run beside Debian's fio 3.33 on the same small job (1,024 I/Os of 4 KiB on
/dev/shm): what must agree is the shape of each direction's `prios` list (which priorities, in
which order, the latency key) and each priority's share of the I/Os, of the same order (each tool
draws with its own generator). The priority really reaches the kernel: libaio's io_submit
carries it (strace)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.strace import straced

from .conftest import FIO_CLOCK, run_engine

FIO = shutil.which("fio")
needs_fio = pytest.mark.skipif(FIO is None, reason="Debian's fio is not installed")


@pytest.fixture
def target(scratch: Path) -> str:
    f = scratch / "t.dat"
    f.write_bytes(b"\xa5" * (4 << 20))
    return str(f)


def common(target: str, *args: str, fmt: str = "json") -> list[str]:
    return ["--name=p", f"--filename={target}", "--size=4m", "--iodepth=4", *args, f"--output-format={fmt}"]


def fio_job(*args: str) -> dict[str, Any]:
    assert FIO
    p = subprocess.run([FIO, FIO_CLOCK, *args], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout[p.stdout.index("{") :])["jobs"][0]


def both(engine_bin: Path, target: str, *args: str, fmt: str = "json") -> list[dict[str, Any]]:
    c = common(target, *args, fmt=fmt)
    return [json.loads(run_engine(engine_bin, *c).stdout)["jobs"][0], fio_job(*c)]


def prios(job: dict[str, Any], ddir: str) -> list[tuple[int, int, str, int]]:
    """(class, level, latency key, N) per entry of a direction's prios list."""
    out = []
    for p in job[ddir].get("prios", []):
        (key,) = [k for k in p if k.endswith("_ns")]
        out.append((p["prioclass"], p["prio"], key, p[key]["N"]))
    return out


def shape(job: dict[str, Any], ddir: str) -> list[tuple[int, int, str]]:
    return [e[:3] for e in prios(job, ddir)]


def shares(job: dict[str, Any], ddir: str) -> list[float]:
    es = prios(job, ddir)
    total = sum(e[3] for e in es)
    assert total == job[ddir]["total_ios"], (es, job[ddir]["total_ios"])
    return [e[3] / total for e in es]


def close(a: list[float], b: list[float], tol: float = 0.12) -> bool:
    return len(a) == len(b) and all(abs(x - y) <= tol for x, y in zip(a, b, strict=True))


@needs_fio
def test_percentage_per_direction_like_fio(engine_bin: Path, target: str) -> None:
    """cmdprio_percentage=30,60: 30 % of the reads and 60 % of the writes realtime level 0 (the
    default class); the job's own priority (none: 0/0) first, as fio lists them."""
    ours, theirs = both(
        engine_bin, target, "--rw=randrw", "--ioengine=io_uring", "--cmdprio_percentage=30,60"
    )
    for ddir, want in (("read", [0.7, 0.3]), ("write", [0.4, 0.6])):
        assert shape(ours, ddir) == shape(theirs, ddir) == [(0, 0, "clat_ns"), (1, 0, "clat_ns")]
        assert close(shares(ours, ddir), want) and close(shares(theirs, ddir), want)
    p = ours["read"]["prios"][0]["clat_ns"]
    assert (
        set(p)
        == set(theirs["read"]["prios"][0]["clat_ns"])
        == {"min", "max", "mean", "stddev", "N", "percentile"}
    )
    assert list(ours["read"]).index("prios") == list(theirs["read"]).index("prios")  # after lat_ns
    opts = ours["iowatt"]["options"]
    assert (
        opts["cmdprio_percentage"] == [30, 60]
        and opts["cmdprio_class"] == [1, 1]
        and opts["cmdprio"] == [0, 0]
    )


@needs_fio
def test_normal_output_prints_each_priority_like_fio(engine_bin: Path, target: str) -> None:
    """fio's `clat prio C/L (unit): ...` line and `... (P% of IOs) percentiles` table per priority."""
    c = [
        "--name=p",
        f"--filename={target}",
        "--size=4m",
        "--iodepth=4",
        "--rw=randread",
        "--ioengine=io_uring",
    ]
    c += ["--cmdprio_percentage=30", "--output-format=normal"]
    assert FIO
    texts = [
        run_engine(engine_bin, *c).stdout,
        subprocess.run([FIO, FIO_CLOCK, *c], capture_output=True, text=True).stdout,
    ]
    shapes = []
    for t in texts:
        lines = [line for line in t.splitlines() if " prio " in line]
        # the unit (nsec, usec, msec) follows each tool's own latencies
        strip = [re.sub(r"\((n|u|m)sec\)", "(unit)", re.sub(r"=.*", "", line)) for line in lines]
        shapes.append([re.sub(r"\(\d+\.\d+% of IOs\)", "(P)", line) for line in strip])
        pcts = [float(m) for m in re.findall(r"\((\d+\.\d+)% of IOs\)", t)]
        assert len(pcts) == 2 and abs(sum(pcts) - 100) < 0.02 and abs(pcts[1] - 30) < 12, pcts
    assert shapes[0] == shapes[1] and len(shapes[0]) == 4, shapes


@needs_fio
def test_job_priority_first_and_total_latency_like_fio(engine_bin: Path, target: str) -> None:
    """libaio: prio=7 alone is best-effort 7 (the job's, listed first); cmdprio_class=3 cmdprio=4;
    lat_percentiles=1 makes each entry total latency (lat_ns), as fio; json+ adds the bins."""
    args = ["--rw=randread", "--ioengine=libaio", "--prio=7", "--cmdprio_percentage=25", "--cmdprio_class=3"]
    ours, theirs = both(engine_bin, target, *args, "--cmdprio=4", "--lat_percentiles=1", fmt="json+")
    assert shape(ours, "read") == shape(theirs, "read") == [(2, 7, "lat_ns"), (3, 4, "lat_ns")]
    assert close(shares(ours, "read"), [0.75, 0.25]) and close(shares(theirs, "read"), [0.75, 0.25])
    for j in (ours, theirs):
        e = j["read"]["prios"][1]["lat_ns"]
        assert sum(e["bins"].values()) == e["N"]


@needs_fio
def test_bssplit_both_formats_like_fio(engine_bin: Path, target: str) -> None:
    """fio's examples/cmdprio-bssplit.fio, small: per block size, entries with their own class and
    level or cmdprio_class/cmdprio's; a list for writes; entries without a percentage dropped.
    norandommap, so every I/O keeps its drawn size in both tools (the block size picks the entry):
    with the random map both cut 16k reads where a neighbour is covered (8k, 12k: no entry) and,
    the writes being 16k, end the pass early after a few dozen to ~300 I/Os (test_randommap), too
    few and too varied for fixed shares."""
    common = ["--rw=randrw", "--ioengine=io_uring", "--norandommap", "--bssplit=4k/40:16k/60,16k/100"]
    adv = [*common, "--cmdprio_bssplit=4k/25/1/1:4k/75/3/2:16k/0,16k/50"]
    ours, theirs = both(engine_bin, target, *adv)
    assert (
        shape(ours, "read")
        == shape(theirs, "read")
        == [(0, 0, "clat_ns"), (1, 1, "clat_ns"), (3, 2, "clat_ns")]
    )
    assert shape(ours, "write") == shape(theirs, "write") == [(0, 0, "clat_ns"), (1, 0, "clat_ns")]
    # reads: 60 % are 16k (none prioritized), 40 % 4k of which 25 % 1/1 and 75 % 3/2
    for j in (ours, theirs):
        assert close(shares(j, "read"), [0.6, 0.1, 0.3]) and close(shares(j, "write"), [0.5, 0.5])
    simple = [*common, "--cmdprio_bssplit=4k/100:16k/0", "--cmdprio_class=2", "--cmdprio=5"]
    ours, theirs = both(engine_bin, target, *simple)
    for ddir, want in (("read", [0.6, 0.4]), ("write", [0.0, 0.0])):
        if ddir == "write":  # a 4k entry only: no write is prioritized, so no list
            assert "prios" not in ours["write"] and "prios" not in theirs["write"]
            continue
        assert shape(ours, ddir) == shape(theirs, ddir) == [(0, 0, "clat_ns"), (2, 5, "clat_ns")]
        assert close(shares(ours, ddir), want) and close(shares(theirs, ddir), want)
    bss = ours["iowatt"]["options"]["cmdprio_bssplit"]
    assert {"ddir": "read", "bs_bytes": 4096, "percent": 100, "prioclass": 2, "prio": 5} in bss


@needs_fio
def test_one_priority_with_samples_has_no_list_and_groups_merge(engine_bin: Path, target: str) -> None:
    """fio lists priorities only when two or more have samples (100 %: all I/Os realtime); with
    group_reporting the clones' priorities are merged by value."""
    for j in both(engine_bin, target, "--rw=randread", "--ioengine=io_uring", "--cmdprio_percentage=100"):
        assert "prios" not in j["read"]
    grouped = [
        "--rw=randread",
        "--ioengine=io_uring",
        "--cmdprio_percentage=50",
        "--numjobs=2",
        "--group_reporting",
    ]
    for j in both(engine_bin, target, *grouped):
        assert shape(j, "read") == [(0, 0, "clat_ns"), (1, 0, "clat_ns")]
        assert close(shares(j, "read"), [0.5, 0.5])  # N adds up to both clones' I/Os
    # a member without per-command priorities (psync, prio=5) adds all its I/Os at its own, 2/5
    c = ["--group_reporting", f"--filename={target}", "--size=2m", "--rw=randread", "--name=a", "--iodepth=4"]
    c += ["--ioengine=io_uring", "--cmdprio_percentage=50", "--name=b", "--ioengine=psync", "--prio=5"]
    for j in (json.loads(run_engine(engine_bin, *c).stdout)["jobs"][0], fio_job(*c, "--output-format=json")):
        assert shape(j, "read") == [(0, 0, "clat_ns"), (1, 0, "clat_ns"), (2, 5, "clat_ns")]
        assert close(shares(j, "read"), [0.25, 0.25, 0.5])


@needs_fio
def test_log_lines_carry_each_io_s_priority_like_fio(engine_bin: Path, target: str, scratch: Path) -> None:
    """A per-I/O log's last column is the I/O's own priority (log_prio=1: 0x4003 for class 2
    level 3, 0x0000 for the job's none), as many lines of each as the JSON counts; a windowed
    line (log_avg_msec) has priority 0 in fio 3.33, also for a realtime job."""
    args = [
        "--rw=randread",
        "--ioengine=io_uring",
        "--cmdprio_percentage=50",
        "--cmdprio_class=2",
        "--cmdprio=3",
    ]
    for tool in ("ours", "fio"):
        c = common(target, *args, "--log_prio=1", f"--write_lat_log={scratch}/{tool}")
        j = json.loads(run_engine(engine_bin, *c).stdout)["jobs"][0] if tool == "ours" else fio_job(*c)
        log = (scratch / f"{tool}_clat.1.log").read_text().splitlines()
        counts = {v: sum(1 for line in log if line.rsplit(", ", 1)[1] == v) for v in ("0x0000", "0x4003")}
        assert sum(counts.values()) == len(log) == 1024, (tool, len(log))
        assert [counts["0x0000"], counts["0x4003"]] == [e[3] for e in prios(j, "read")], tool
    for tool in ("ours", "fio"):
        c = common(target, "--rw=randread", "--ioengine=io_uring", "--prioclass=1", "--log_avg_msec=1")
        c.append(f"--write_lat_log={scratch}/w{tool}")
        _ = run_engine(engine_bin, *c) if tool == "ours" else fio_job(*c)
        lines = (scratch / f"w{tool}_clat.1.log").read_text().splitlines()
        assert lines and all(line.endswith(", 0") for line in lines), (tool, lines[:3])


@pytest.mark.skipif(shutil.which("strace") is None, reason="strace is not installed")
def test_libaio_sends_each_io_s_priority(engine_bin: Path, target: str, scratch: Path) -> None:
    cmd = [str(engine_bin), "--name=p", f"--filename={target}", "--size=256k", "--rw=randread"]
    cmd += ["--ioengine=libaio", "--cmdprio_percentage=50", "--cmdprio_class=2", "--cmdprio=3"]
    p, lines = straced(cmd, scratch / "trace", "-e", "trace=io_submit")
    assert p.returncode == 0, p.stderr
    text = "\n".join(lines)
    sent = text.count("IOPRIO_PRIO_VALUE(IOPRIO_CLASS_BE, 3)")
    assert text.count("io_submit(") == 64 and 10 <= sent <= 54, (sent, text[:400])


@pytest.mark.parametrize(
    ("args", "option", "words"),
    [
        (["--cmdprio_percentage=10"], "cmdprio_percentage", "not of ioengine=psync"),
        (
            ["--ioengine=io_uring", "--cmdprio_percentage=10", "--cmdprio_bssplit=4k/5"],
            "cmdprio_bssplit",
            "exclusive",
        ),
        (["--ioengine=io_uring", "--cmdprio_bssplit=4k/60:4k/50"], "cmdprio_bssplit", "add up to 110"),
        (["--ioengine=io_uring", "--cmdprio_bssplit=4k/10/2/0/1"], "cmdprio_bssplit", "hints"),
        (["--ioengine=io_uring", "--cmdprio_bssplit=4k/10/2"], "cmdprio_bssplit", "BS/PERCENT"),
        (["--ioengine=libaio", "--cmdprio_class=0"], "cmdprio_class", "from 1 to 3"),
        (["--ioengine=libaio", "--cmdprio=1,8"], "cmdprio", "from 0 to 7"),
        (
            ["--ioengine=libaio", "--io_submit_mode=offload", "--cmdprio_percentage=5"],
            "cmdprio_percentage",
            "offload",
        ),
    ],
)
def test_refusals_exit_2_naming_the_option(
    engine_bin: Path, target: str, args: list[str], option: str, words: str
) -> None:
    r = run_engine(
        engine_bin, "--name=p", f"--filename={target}", "--size=1m", *args, "--parse-only", check=False
    )
    assert r.rc == 2 and r.stderr.startswith(f"iowatt-engine: {option}: ") and words in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
