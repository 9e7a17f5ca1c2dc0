"""The program tests/agent/test_nvme_guest.py runs inside the NVMe guest (nvme_guest.py's /init runs
it as /check.py): it writes a known pattern to both namespaces of QEMU's NVMe controller, runs the
agent's own purge (iowatt_agent.pts: the plan from nvme-cli's real output, then the commands) on
the first, and reads both back with O_DIRECT (no page cache between the device and the check).
Then the same with the purge `blkdiscard`. Then the sanitize commands the purge sends, on a second
controller's only namespace: the id-ctrl read says each action in turn is offered (QEMU's SANICAP
is 0, the one value changed), the agent's purge sends nvme-cli's sanitize to the real controller,
which refuses it, and falls back to the format. Last, a whole PTS run (a Write Saturation trial
over the namespace's first MiB) as the agent starts it: PtsRunner's job and its child `python -m
iowatt_agent.pts` with the real engine, whose document names the purge it did. Every finding is
one line "IOWATT-GUEST tag {json}"."""

import json
import mmap
import os
import re
import subprocess
import sys
from pathlib import Path

from iowatt_agent import nvme, pts
from iowatt_agent.kinds.pts import PtsRunner

CHUNK = 1 << 20


def by_serial() -> dict[str, list[str]]:
    """Each controller's namespaces (/dev paths, by namespace id) under its serial: the guest's
    kernel names controllers in its probe order."""
    found: dict[str, list[str]] = {}
    for dev in Path("/sys/block").iterdir():
        m = re.fullmatch(r"nvme\d+n(\d+)", dev.name)
        if m:
            serial = (dev / "device" / "serial").read_text().strip()
            found.setdefault(serial, []).append(f"{int(m.group(1)):04d}/dev/{dev.name}")
    return {serial: [d[4:] for d in sorted(devs)] for serial, devs in found.items()}


DEVICES = by_serial()
FIRST, SECOND = DEVICES["iowatt-29"]
(SOLO,) = DEVICES["iowatt-29-solo"]


def say(tag: str, doc: object) -> None:
    print(f"IOWATT-GUEST {tag} {json.dumps(doc)}", flush=True)


def offsets(dev: str) -> list[int]:
    sectors = Path(f"/sys/class/block/{os.path.basename(dev)}/size").read_text()
    size = int(sectors) * 512
    return [0, (size // 2) // CHUNK * CHUNK, size - CHUNK]


def pattern(dev: str, offset: int) -> bytes:
    line = f"iowatt issue 29 {dev} @ {offset:#x} ".encode()
    return (line * (CHUNK // len(line) + 1))[:CHUNK]


def write(dev: str) -> None:
    fd = os.open(dev, os.O_WRONLY)
    try:
        for off in offsets(dev):
            os.pwrite(fd, pattern(dev, off), off)
        os.fsync(fd)
    finally:
        os.close(fd)


def read(dev: str) -> dict[str, object]:
    """What each offset holds now, read past the page cache."""
    buf = mmap.mmap(-1, CHUNK)  # page-aligned, as O_DIRECT needs
    fd = os.open(dev, os.O_RDONLY | os.O_DIRECT)
    found = {"pattern": 0, "zero": 0, "other": 0}
    try:
        for off in offsets(dev):
            n = os.preadv(fd, [buf], off)
            data = bytes(buf[:n])
            if data == pattern(dev, off):
                found["pattern"] += 1
            elif data.count(0) == len(data):
                found["zero"] += 1
            else:
                found["other"] += 1
    finally:
        os.close(fd)
        buf.close()
    return found


def main() -> int:
    say("devices", {"first": FIRST, "second": SECOND, "solo": SOLO})
    ctrl = subprocess.run(["nvme", "id-ctrl", FIRST, "-o", "json"], capture_output=True, text=True)
    ctrl_text = ctrl.stdout
    say("id-ctrl", {"text": ctrl_text})
    log = subprocess.run(["nvme", "sanitize-log", FIRST, "-o", "json"], capture_output=True, text=True)
    say("sanitize-log", {"rc": log.returncode, "stdout": log.stdout, "stderr": log.stderr[-300:]})
    caps = nvme.parse_id_ctrl(ctrl_text)
    say("controller", {"sanicap": caps.sanicap, "oacs": caps.oacs, "fna": caps.fna, "cmic": caps.cmic})
    say("namespaces", pts.nvme_namespaces(FIRST))
    for method in ("auto", "blkdiscard"):
        write(FIRST)
        write(SECOND)
        say(f"{method}-before", {"first": read(FIRST), "second": read(SECOND)})
        say(f"{method}-in-use", pts.device_in_use(FIRST))
        say(f"{method}-plans", [p[0] for p in pts.purge_plans(method, FIRST, run=pts._output)])
        record = pts.purge(method, FIRST)
        say(f"{method}-purge", record)
        say(f"{method}-after", {"first": read(FIRST), "second": read(SECOND)})
    refused()
    whole_run()
    return 0


def refused() -> None:
    """The purge on the second controller's only namespace, its id-ctrl read saying that each
    sanitize action in turn is offered (SANICAP bit 0, 1, 2; the rest is the controller's own
    answer): the agent's real purge reads the status log, sends `nvme sanitize` as it would to a
    drive with that action, the controller refuses it (QEMU has no Sanitize), and the purge falls
    back to the format, which erases."""
    real_output = pts._output
    for name, sanicap in (("crypto", 1), ("block", 2), ("overwrite", 4)):

        def claimed(argv: list[str], sanicap: int = sanicap) -> str:
            text = real_output(argv)
            if argv[:2] == ["nvme", "id-ctrl"]:
                text = json.dumps(json.loads(text) | {"sanicap": sanicap})
            return text

        write(SOLO)
        say(f"refused-{name}-before", read(SOLO))
        pts._output = claimed
        try:
            say(f"refused-{name}-plans", [p[0] for p in pts.purge_plans("auto", SOLO, run=claimed)])
            record = pts.purge("auto", SOLO)
        finally:
            pts._output = real_output
        say(f"refused-{name}-purge", record)
        say(f"refused-{name}-after", read(SOLO))


def whole_run() -> None:
    """A Write Saturation trial on the first namespace's first MiB (4 MiB of RND 4 KiB writes):
    the purge, then the engine's rounds, from the document the agent would upload."""
    write(FIRST)
    write(SECOND)
    engine = "/usr/bin/iowatt-engine"
    job = {"mode": "pts", "test": "wsat", "purge": "auto", "threads": 1, "iodepth": 4}
    job |= {"ioengine": "libaio", "round_s": 1, "capacity_fraction": 1 / 64}
    runner = PtsRunner()
    Path("/tmp/pts").mkdir()
    run = runner.prepare(engine, job, text_file=Path("/tmp/pts/job.json"), target=FIRST, run_key="nvme")
    run.make_dir()
    argv = [str(runner.program(run, engine)), *runner.arguments(run)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    run.discard()
    say("run-exit", {"code": done.returncode, "stderr": done.stderr[-1500:]})
    doc = json.loads(done.stdout)["pts"]
    keys = ("purge", "stop", "region_bytes", "deviations", "bytes_written")
    say("run-pts", {k: doc[k] for k in keys} | {"rounds": len(doc["rounds"])})
    say("run-after", {"first": read(FIRST), "second": read(SECOND)})


if __name__ == "__main__":
    sys.exit(main())
