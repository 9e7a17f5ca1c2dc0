#!/usr/bin/env python3
"""iowatt-engine vs fio, side by side on the same target and the same job.

For each job: one warm-up pair (discarded), then N pairs in alternating order
(fio iowatt, iowatt fio, fio iowatt, ...: A B B A ...). The table shows, per job, the median of the
raw values of each tool and the median over pairs of the per-pair ratio iowatt/fio for IOPS,
CPU per I/O and clat p50/p99.

CPU per I/O = user + system CPU time of the whole process tree, from wait4() (so io_uring's
io-wq workers and fio's forked job process are counted), minus the tool's fixed start-up and
exit cost, divided by the I/Os: (cpu - cpu_fixed) / ios, where cpu_fixed is the median CPU of
three 10 ms runs of the same job, measured per tool and job after the warm-up pair. Without that,
fio's fixed cost (~0.15 s of CPU here vs ~0.03 s for iowatt) would flatter iowatt.

Job-thread CPU per I/O = the usr_cpu + sys_cpu each tool reports for the job, i.e. fio's own
definition (getrusage(RUSAGE_THREAD) of the threads doing the I/O; fio's main process and the
io_uring kernel workers are outside it for both tools), times the runtime, per I/O. It is the
tool's own cost without the device work that the kernel does for it in io-wq workers (on zram:
the copy). iowatt also reports that io-wq time (iowatt.io_uring.kernel_worker_cpu_ns): a third
table shows it per I/O.

Floor = bench/engine_vs_fio/floor.c, the bare system-call loop of the job's ioengine (no
statistics, no per-I/O clock, no buffer refresh, no random map), run three times per job on the
same target: the least CPU per I/O the job can cost, i.e. the kernel's and the device's share.
Overhead ratio = (iowatt - floor) / (fio - floor): the share of fio's own overhead that iowatt
still spends, the figure a tool can change; the plain CPU/IO ratio also contains the floor,
which is the same for every tool.

Targets (--target):
  zram          /dev/zram0, used raw (sized to --zram-size if it is 0; iowatt gets --destructive=1)
  loop-ext4     a file on ext4 on a loop device backed by /dev/shm (made and torn down here)
  PATH          any file (created) or block device (written only with --destructive)

    .venv/bin/python bench/engine_vs_fio/run.py --target zram --pairs 4 --runtime 3 --md out.md
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ENGINE = REPO / "agent" / "engine" / "build" / "iowatt-engine"
ENGINE_SOURCE = ""
SHORT_S = 0.01  # length of the runs that measure a tool's fixed (start-up + exit) CPU cost

# (name, common job options, options only fio gets, options only iowatt gets)
# Write buffers: the issue wants iowatt's default content incompressible AND refreshed for every
# write, which is fio's refill_buffers=1 -- so fio gets that on the default write jobs. The
# "fio default buffers" row compares fio's default (random once + scramble) with iowatt's
# refill_buffers=0 (random once + a fresh stamp per 512-byte sector), like for like.
JOBS: list[tuple[str, list[str], list[str], list[str]]] = [
    (
        "randread 4k page cache psync",
        ["--rw=randread", "--bs=4k", "--ioengine=psync", "--invalidate=0"],
        [],
        [],
    ),
    ("randread 4k direct QD1 psync", ["--rw=randread", "--bs=4k", "--ioengine=psync", "--direct=1"], [], []),
    (
        "randread 4k direct QD32 io_uring",
        ["--rw=randread", "--bs=4k", "--ioengine=io_uring", "--iodepth=32", "--direct=1"],
        [],
        [],
    ),
    (
        "randread 4k direct QD32 libaio",
        ["--rw=randread", "--bs=4k", "--ioengine=libaio", "--iodepth=32", "--direct=1"],
        [],
        [],
    ),
    (
        "randwrite 4k direct QD32 io_uring",
        ["--rw=randwrite", "--bs=4k", "--ioengine=io_uring", "--iodepth=32", "--direct=1"],
        ["--refill_buffers=1"],
        [],
    ),
    (
        "randwrite 4k direct QD32 io_uring, fio default buffers",
        ["--rw=randwrite", "--bs=4k", "--ioengine=io_uring", "--iodepth=32", "--direct=1"],
        [],
        ["--refill_buffers=0"],
    ),
    (
        "read 1m direct QD8 io_uring",
        ["--rw=read", "--bs=1m", "--ioengine=io_uring", "--iodepth=8", "--direct=1"],
        [],
        [],
    ),
    (
        "randrw 70/30 4k direct QD16 io_uring",
        ["--rw=randrw", "--rwmixread=70", "--bs=4k", "--ioengine=io_uring", "--iodepth=16", "--direct=1"],
        ["--refill_buffers=1"],
        [],
    ),
]

# Option families that change the I/O path (fio's verify, multi-file, rate limits and log
# writing), each on the job it changes. Placeholders: {dir} = the directory of the target file
# (multi-file jobs; skipped on a raw device), {logdir} = a fresh directory in /dev/shm per run.
# FLAGS says which rows the bare loop cannot stand for (floor.c knows one file and no verify)
# and which run size-bound instead of time-based (verify: write the region, then read it back).
FAMILY_JOBS: list[tuple[str, list[str], list[str], list[str]]] = [
    (
        "verify crc32c: randwrite 4k QD32 io_uring, then read back",
        ["--rw=randwrite", "--bs=4k", "--ioengine=io_uring", "--iodepth=32", "--direct=1", "--verify=crc32c"],
        [],
        [],
    ),
    (
        "multi-file: randread 4k QD32 io_uring, 8 files round robin",
        [
            "--rw=randread",
            "--bs=4k",
            "--ioengine=io_uring",
            "--iodepth=32",
            "--direct=1",
            "--directory={dir}",
            "--nrfiles=8",
            "--file_service_type=roundrobin",
        ],
        [],
        [],
    ),
    (
        "rate-limited: randread 4k QD8 io_uring at 20,000 IOPS",
        ["--rw=randread", "--bs=4k", "--ioengine=io_uring", "--iodepth=8", "--direct=1", "--rate_iops=20000"],
        [],
        [],
    ),
    (
        "logs on: randread 4k QD32 io_uring, lat/bw/iops logs per I/O",
        [
            "--rw=randread",
            "--bs=4k",
            "--ioengine=io_uring",
            "--iodepth=32",
            "--direct=1",
            "--write_lat_log={logdir}/bench",
            "--write_bw_log={logdir}/bench",
            "--write_iops_log={logdir}/bench",
        ],
        [],
        [],
    ),
]
FLAGS: dict[str, set[str]] = {
    FAMILY_JOBS[0][0]: {"no_floor", "size_bound"},
    FAMILY_JOBS[1][0]: {"no_floor", "files"},
}


def sh(*cmd: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(cmd), capture_output=True, text=True, check=check)


class Target:
    """The device or file both tools run on; cleans up what it created."""

    def __init__(self, spec: str, size: str, zram_size: str, destructive: bool) -> None:
        self.spec, self.size, self.cleanup_steps = spec, size, []  # type: ignore[var-annotated]
        self.destructive = destructive
        if spec == "zram":
            self.path = "/dev/zram0"
            if not Path("/sys/block/zram0").exists():
                sh("modprobe", "zram", check=False)
            if int(Path("/sys/block/zram0/disksize").read_text()) == 0:
                Path("/sys/block/zram0/disksize").write_text(zram_size)
                self.cleanup_steps.append(reset_zram)
            self.destructive = True
            algo = Path("/sys/block/zram0/comp_algorithm").read_text().split("[")[1].split("]")[0]
            self.desc = f"/dev/zram0 raw ({algo})"
        elif spec == "loop-ext4":
            d = Path(tempfile.mkdtemp(prefix="iowatt-bench-", dir="/dev/shm"))
            img, mnt = d / "ext4.img", d / "mnt"
            mnt.mkdir()
            sh("truncate", "-s", "3G", str(img))  # the 1 GiB region + the multi-file row's 1 GiB
            sh("mkfs.ext4", "-q", "-F", str(img))
            loop = sh("losetup", "--find", "--show", str(img)).stdout.strip()
            sh("mount", loop, str(mnt))
            self.cleanup_steps += [
                lambda: shutil.rmtree(d, ignore_errors=True),
                lambda: sh("losetup", "-d", loop, check=False),
                lambda: umount(mnt),
            ]
            self.path = str(mnt / "bench.dat")
            self.desc = f"file on ext4 on {loop} (backed by /dev/shm)"
        else:
            self.path = str(Path(spec).resolve())  # the tools run in a scratch cwd
            self.desc = spec
        self.is_blk = Path(self.path).exists() and Path(self.path).is_block_device()
        if self.is_blk and not self.destructive:
            raise SystemExit(f"{self.path} is a block device: pass --destructive to let both tools write it")

    def prepare(self) -> None:
        """Lay out the region once with incompressible data (the engine's own fill / a write pass)."""
        extra = ["--destructive=1"] if self.is_blk else []
        sh(
            str(ENGINE),
            f"--filename={self.path}",
            f"--size={self.size}",
            "--rw=write",
            "--bs=1m",
            "--direct=1" if self.is_blk else "--direct=0",
            "--end_fsync=1",
            *extra,
        )

    def cache(self) -> None:
        """Read the region through the page cache (for the buffered job) and keep a descriptor
        open until uncache(): Linux drops a block device's page cache when its last opener
        closes it, so without this every run would start cold."""
        n = parse_size(self.size)
        self.hold = open(self.path, "rb", buffering=0)  # noqa: SIM115
        left = n
        while left > 0:
            b = self.hold.read(min(left, 1 << 22))
            if not b:
                break
            left -= len(b)

    def uncache(self) -> None:
        if getattr(self, "hold", None):
            self.hold.close()
            self.hold = None

    def close(self) -> None:
        for step in reversed(self.cleanup_steps):
            step()


def reset_zram() -> None:
    """Unconfigure /dev/zram0, retrying while a tool that just exited still holds it."""
    for _ in range(20):
        try:
            Path("/sys/block/zram0/reset").write_text("1")
            return
        except OSError:
            time.sleep(0.5)
    print("warning: could not reset /dev/zram0; echo 1 > /sys/block/zram0/reset by hand", file=sys.stderr)


def umount(mnt: Path) -> None:
    """Unmount, retrying while the file system is briefly busy (a tool still exiting)."""
    for _ in range(20):
        if sh("umount", str(mnt), check=False).returncode == 0:
            return
        time.sleep(0.5)
    print(f"warning: could not unmount {mnt}; clean up by hand", file=sys.stderr)


def host_scheduling() -> str:
    """What decides when idle vCPUs wake and where tasks run: the cpuidle driver and governor, the
    guest halt-poll window, and this VM kernel's own sched_vcpu_pack if it has one (session 24:
    the loop-ext4 randrw QD16 row changed with the VM build, not with the engine)."""
    facts = []
    for name, path in (
        ("cpuidle", "/sys/devices/system/cpu/cpuidle/current_driver"),
        ("governor", "/sys/devices/system/cpu/cpuidle/current_governor"),
        ("guest_halt_poll_ns", "/sys/module/haltpoll/parameters/guest_halt_poll_ns"),
        ("sched_vcpu_pack", "/proc/sys/kernel/sched_vcpu_pack"),
    ):
        if Path(path).exists():
            facts.append(f"{name} {Path(path).read_text().strip()}")
    return ", ".join(facts) or "?"


def engine_source() -> str:
    """The commit the engine was built from, and whether agent/engine had uncommitted changes
    (run.py builds from the working tree: a colleague's edit once ended up in a measured binary)."""
    git = ("git", "-C", str(REPO))
    head = sh(*git, "rev-parse", "--short", "HEAD", check=False).stdout.strip() or "?"
    dirty = sh(*git, "status", "--porcelain", "--", "agent/engine", check=False).stdout.strip()
    return f"built from {head}{', agent/engine modified in the working tree' if dirty else ''}"


def parse_size(s: str) -> int:
    mult = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
    s = s.lower().rstrip("b").rstrip("i")
    return int(s[:-1]) * mult[s[-1]] if s[-1] in mult else int(s)


FLOOR_SRC = Path(__file__).resolve().parent / "floor.c"


def build_floor(dest: Path) -> Path:
    binary = dest / "floor"
    subprocess.run(
        ["cc", "-O2", "-Wall", "-o", str(binary), str(FLOOR_SRC), "-luring", "-laio"],
        check=True,
        capture_output=True,
        text=True,
    )
    return binary


def job_option(job: list[str], name: str, default: str) -> str:
    for a in job:
        if a.startswith(f"--{name}="):
            return a.split("=", 1)[1]
    return default


def run_measured(what: str, cmd: list[str]) -> tuple[str, resource.struct_rusage]:
    """Run cmd to completion; its stdout and the rusage of its whole process tree (wait4)."""
    # in a scratch directory: fio's verify jobs leave their state file (local-*-verify.state) in the cwd
    with (
        tempfile.TemporaryFile("w+") as out,
        tempfile.TemporaryFile("w+") as err,
        tempfile.TemporaryDirectory(prefix="iowatt-bench-cwd-") as cwd,
    ):
        p = subprocess.Popen(cmd, stdout=out, stderr=err, cwd=cwd)
        _, status, ru = os.wait4(p.pid, 0)
        rc = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    if rc != 0:
        raise SystemExit(f"{what} failed ({rc}): {' '.join(cmd)}\n{stderr}")
    return stdout, ru


def run_floor(floor: Path, target: Target, job: list[str], seconds: float) -> dict[str, float]:
    """One run of the bare loop for this job: CPU per I/O from wait4 (process tree, io-wq
    included) and from the loop thread's own rusage."""
    rw = job_option(job, "rw", "read")
    if rw == "randrw":
        assert job_option(job, "rwmixread", "50") == "70", "floor.c knows the 70/30 mix only"
        rw = "randrw70"
    engine = job_option(job, "ioengine", "psync")
    cmd = [
        str(floor),
        engine,
        target.path,
        str(parse_size(target.size)),
        str(parse_size(job_option(job, "bs", "4k"))),
        job_option(job, "iodepth", "1"),
        f"{seconds:g}",
        rw,
        job_option(job, "direct", "0"),
    ]
    text, ru = run_measured("floor", cmd)
    d = json.loads(text)
    return {
        "iops": d["ios"] / d["seconds"],
        "cpu_ns_per_io": (ru.ru_utime + ru.ru_stime) / d["ios"] * 1e9,
        "self_cpu_ns_per_io": d["thread_cpu_s"] / d["ios"] * 1e9,
    }


def run_one(tool: str, target: Target, common: list[str], job: list[str]) -> dict[str, float]:
    binary = shutil.which("fio") if tool == "fio" else str(ENGINE)
    assert binary
    extra = ["--destructive=1"] if tool == "iowatt" and target.is_blk else []
    multi = any(o.startswith("--directory=") for o in job)
    with tempfile.TemporaryDirectory(prefix="iowatt-bench-logs-", dir="/dev/shm") as logdir:
        job = [o.replace("{dir}", str(Path(target.path).parent)).replace("{logdir}", logdir) for o in job]
        cmd = [
            binary,
            "--name=bench",
            *([] if multi else [f"--filename={target.path}"]),
            *common,
            *job,
            *extra,
            "--output-format=json+",
        ]
        stdout, ru = run_measured(tool, cmd)
    j = json.loads(stdout[stdout.index("{") :])["jobs"][0]
    ios = j["read"]["total_ios"] + j["write"]["total_ios"]
    # fio times each direction on its own (a verify job: the write phase, then the read-back), so a
    # job's span is the sum when the phases follow each other and the longest when they overlap.
    spans = [j[d]["runtime"] for d in ("read", "write") if j[d]["total_ios"]]
    secs = (sum(spans) if "--verify=crc32c" in job else max(spans, default=0)) / 1000.0
    d = j["read"] if j["read"]["total_ios"] >= j["write"]["total_ios"] else j["write"]
    pct = d["clat_ns"].get("percentile", {})
    cpu_s = ru.ru_utime + ru.ru_stime
    kworker_ns = j.get("iowatt", {}).get("io_uring", {}).get("kernel_worker_cpu_ns", float("nan"))
    return {
        "kworker_ns_per_io": kworker_ns / ios if ios else float("nan"),
        "iops": ios / secs if secs else float("nan"),
        "bw_bytes": j["read"]["bw_bytes"] + j["write"]["bw_bytes"],
        "ios": ios,
        "cpu_s": cpu_s,
        "cpu_ns_per_io": cpu_s / ios * 1e9 if ios else float("nan"),
        "self_cpu_ns_per_io": (j["usr_cpu"] + j["sys_cpu"]) / 100.0 * secs / ios * 1e9
        if ios
        else float("nan"),
        "p50_ns": pct.get("50.000000", 0),
        "p99_ns": pct.get("99.000000", 0),
    }


def median_ratio(pairs: list[tuple[dict[str, float], dict[str, float]]], key: str) -> float:
    vals = [b[key] / f[key] for f, b in pairs if f[key]]
    return statistics.median(vals) if vals else float("nan")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--target", default="zram", help="zram | loop-ext4 | PATH (default zram)")
    ap.add_argument("--size", default="1g", help="region both tools use (default 1g)")
    ap.add_argument("--zram-size", default="2G", help="disksize when /dev/zram0 is unconfigured")
    ap.add_argument("--destructive", action="store_true", help="allow writing a block device PATH")
    ap.add_argument("--runtime", type=float, default=3.0, help="seconds per run (default 3)")
    ap.add_argument("--pairs", type=int, default=4, help="measured pairs per job after the warm-up pair")
    ap.add_argument("--only", help="substring filter on job names")
    ap.add_argument("--json", help="write every raw result here")
    ap.add_argument("--md", help="write the markdown table (with its header) here")
    ap.add_argument("--engine", help="iowatt-engine binary (default: agent/engine/build, built first)")
    a = ap.parse_args()
    if not shutil.which("fio"):
        print("fio not installed (apt-get install fio)", file=sys.stderr)
        return 77
    global ENGINE, ENGINE_SOURCE
    if a.engine:
        ENGINE = Path(a.engine).resolve()
        ENGINE_SOURCE = "given with --engine"
    else:
        ENGINE_SOURCE = engine_source()
        subprocess.run(["make", "-s", "-C", str(REPO / "agent" / "engine")], check=True)
    target = Target(a.target, a.size, a.zram_size, a.destructive)
    try:
        with tempfile.TemporaryDirectory() as d:
            a.floor = build_floor(Path(d))
            return bench(a, target)
    finally:
        target.close()


def bench(a: argparse.Namespace, target: Target) -> int:
    common = [f"--size={a.size}", f"--runtime={a.runtime:g}", "--time_based"]
    short = [f"--size={a.size}", f"--runtime={SHORT_S * 1000:g}ms", "--time_based"]
    target.prepare()
    raw: dict[str, dict[str, list[dict[str, float]]]] = {}
    rows = []
    t0 = time.time()
    for name, job, fio_only, iowatt_only in JOBS + FAMILY_JOBS:
        if a.only and a.only not in name:
            continue
        flags = FLAGS.get(name, set())
        if "files" in flags and target.is_blk:
            print(f"  {name}: skipped (needs a directory; the target is a raw device)", file=sys.stderr)
            continue
        # a size-bound job (verify: write the region, then read it all back) runs to its end
        job_common, job_short = (
            ([f"--size={a.size}"], ["--size=4m"]) if "size_bound" in flags else (common, short)
        )
        args = {"fio": job + fio_only, "iowatt": job + iowatt_only}
        if "page cache" in name:
            target.cache()
        fixed = {}
        for tool in ("fio", "iowatt"):  # warm-up pair, discarded; then each tool's fixed cost
            run_one(tool, target, job_common, args[tool])
            fixed[tool] = statistics.median(
                run_one(tool, target, job_short, args[tool])["cpu_s"] for _ in range(3)
            )
        res: dict[str, list[dict[str, float]]] = {"fio": [], "iowatt": []}
        for i in range(a.pairs):
            order = ("fio", "iowatt") if i % 2 == 0 else ("iowatt", "fio")
            for tool in order:
                r = run_one(tool, target, job_common, args[tool])
                r["fixed_cpu_s"] = fixed[tool]
                r["cpu_ns_per_io"] = (r["cpu_s"] - fixed[tool]) / r["ios"] * 1e9
                res[tool].append(r)
            f, b = res["fio"][-1], res["iowatt"][-1]
            print(
                f"  {name:55s} pair {i + 1}: fio {f['iops']:10.0f}  iowatt {b['iops']:10.0f}  "
                f"ratio {b['iops'] / f['iops']:.2f}",
                file=sys.stderr,
                flush=True,
            )
        nan = {"iops": float("nan"), "cpu_ns_per_io": float("nan"), "self_cpu_ns_per_io": float("nan")}
        floors = (
            [nan] if "no_floor" in flags else [run_floor(a.floor, target, job, a.runtime) for _ in range(3)]
        )
        res["floor"] = floors
        target.uncache()
        raw[name] = res
        pairs = list(zip(res["fio"], res["iowatt"], strict=True))

        def med(tool: str, key: str, res: dict[str, list[dict[str, float]]] = res) -> float:
            return statistics.median(r[key] for r in res[tool])

        iops_r = [b["iops"] / f["iops"] for f, b in pairs]
        rows.append(
            (
                name,
                med("fio", "iops"),
                med("iowatt", "iops"),
                median_ratio(pairs, "iops"),
                min(iops_r),
                max(iops_r),
                med("fio", "cpu_ns_per_io"),
                med("iowatt", "cpu_ns_per_io"),
                median_ratio(pairs, "cpu_ns_per_io"),
                med("fio", "p50_ns"),
                med("iowatt", "p50_ns"),
                median_ratio(pairs, "p50_ns"),
                med("fio", "p99_ns"),
                med("iowatt", "p99_ns"),
                median_ratio(pairs, "p99_ns"),
                med("fio", "self_cpu_ns_per_io"),
                med("iowatt", "self_cpu_ns_per_io"),
                median_ratio(pairs, "self_cpu_ns_per_io"),
                med("iowatt", "kworker_ns_per_io"),
                med("floor", "cpu_ns_per_io"),
                med("floor", "self_cpu_ns_per_io"),
            )
        )
    fio_ver = sh("fio", "--version").stdout.strip()
    eng_ver = sh(str(ENGINE), "--version").stdout.strip()
    cpu = next(
        (
            ln.split(":", 1)[1].strip()
            for ln in Path("/proc/cpuinfo").read_text().splitlines()
            if ln.startswith("model name")
        ),
        "?",
    )
    shown_engine = ENGINE.relative_to(REPO) if ENGINE.is_relative_to(REPO) else ENGINE
    lines = [
        f"- date: {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC; wall time {time.time() - t0:.0f} s",
        f"- machine: {platform.node()}, Linux {platform.release()}, {os.cpu_count()} vCPU ({cpu}), shared",
        f"- scheduling: {host_scheduling()}",
        f"- tools: {fio_ver} (Debian) vs {eng_ver} ({shown_engine}, {ENGINE_SOURCE})",
        f"- target: {target.desc}, region {a.size}; {a.runtime:g} s per run, time_based; "
        f"1 discarded warm-up pair + {a.pairs} pairs in order A B B A ...",
        "- ratio = median over pairs of iowatt/fio (per-pair); CPU/IO = usr+sys of the whole process "
        "tree (wait4) minus the tool's fixed start-up/exit CPU (median of three 10 ms runs), per I/O; "
        "p50/p99 = clat of the main direction",
        "",
        "| job | fio IOPS | iowatt IOPS | IOPS ratio (min–max) | fio CPU ns/IO | iowatt CPU ns/IO "
        "| CPU/IO ratio | fio p50 µs | iowatt p50 µs | p50 ratio | fio p99 µs | iowatt p99 µs | p99 ratio |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        lines.append(
            f"| {row[0]} | {row[1]:,.0f} | {row[2]:,.0f} | **{row[3]:.2f}** ({row[4]:.2f}–{row[5]:.2f}) "
            f"| {row[6]:,.0f} | {row[7]:,.0f} | **{row[8]:.2f}** | {row[9] / 1e3:,.1f} "
            f"| {row[10] / 1e3:,.1f} | {row[11]:.2f} "
            f"| {row[12] / 1e3:,.1f} | {row[13] / 1e3:,.1f} | {row[14]:.2f} |"
        )
    lines += [
        "",
        "Job-thread CPU per I/O (usr_cpu + sys_cpu as each tool reports them: fio's RUSAGE_THREAD "
        "definition, without fio's main process and without io_uring's io-wq kernel workers) and the "
        "io-wq workers' CPU per I/O that iowatt reports beside (`iowatt.io_uring.kernel_worker_cpu_ns`):",
        "",
        "| job | fio job-thread CPU ns/IO | iowatt job-thread CPU ns/IO | ratio | iowatt io-wq CPU ns/IO |",
        "|---|---:|---:|---:|---:|",
    ]
    for row in rows:
        kw = "—" if row[18] != row[18] else f"{row[18]:,.0f}"  # NaN: not io_uring
        lines.append(f"| {row[0]} | {row[15]:,.0f} | {row[16]:,.0f} | **{row[17]:.2f}** | {kw} |")

    def over(tool: float, fio: float, floor: float) -> str:
        return f"{(tool - floor) / (fio - floor):.2f}" if fio > floor else "—"

    def num(x: float, fmt: str = ",.0f") -> str:
        return "—" if x != x else format(x, fmt)  # NaN: the bare loop cannot stand for this job

    lines += [
        "",
        "Overhead above the floor (`floor.c`: the bare system-call loop of the job's ioengine, median "
        "of 3 runs): the CPU per I/O a tool adds to what the kernel and the device cost anyway. "
        "Overhead ratio = (iowatt − floor) / (fio − floor), per measure (medians):",
        "",
        "| job | floor CPU ns/IO (process tree) | floor/fio | overhead ratio (process tree) "
        "| floor job-thread CPU ns/IO | overhead ratio (job thread) |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        lines.append(
            f"| {row[0]} | {num(row[19])} | {num(row[19] / row[6], '.2f')} "
            f"| **{over(row[7], row[6], row[19])}** "
            f"| {num(row[20])} | **{over(row[16], row[15], row[20])}** |"
        )
    text = "\n".join(lines) + "\n"
    print("\n" + text)
    if a.md:
        Path(a.md).write_text(
            f"command: `{' '.join(['bench/engine_vs_fio/run.py', *sys.argv[1:]])}`\n\n" + text
        )
    if a.json:
        Path(a.json).write_text(json.dumps(raw, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
