"""A SNIA PTS run on a raw block device (the kind `pts`; docs/pts.md, ADR 0046): a child process
of the agent, as TPC-H's (`kinds/pts.py` is its runner), that runs the protocol and reports it.

Parent side (`kinds/pts.PtsRunner.prepare`): the lease job parsed by libs/workload
(`iowatt_workload.pts.parse_job`), the device's capacity read, and the child's job written 0600:
`{"params": <lease job>, "device": <the resolved device>, "engine": <path>, "capacity_bytes": N,
"agent_options": {"filename": DEVICE, "destructive": "1"}, "work_dir": DIR}`. Every engine job
the child runs (`planned_jobs`) was judged by the host's rules as a block job before it starts
(libs/policy check_run: a device target the host marked destructive, the run's `destructive`).

Child side (`python -m iowatt_agent.pts --job=FILE`):
1. refuse a device in use (mounted, swap, held by another driver, or open exclusively);
2. purge (PTS "Purge"): `auto` takes the strongest the device has: NVMe Sanitize by the action
   the controller offers (Identify Controller's SANICAP: crypto erase, else block erase, else one
   overwrite pass; nvme-cli, its status log polled to the end), else NVMe Format with user-data
   erase; ATA SECURITY ERASE UNIT (hdparm, when supported, not frozen and no password set); else
   a discard of every block (`blkdiscard`; a zram device's only purge, which frees its pages, and
   its note says so). Neither NVMe command is used when it would also erase a namespace beside
   the listed one (a sanitize acts on the whole subsystem, a format on every namespace when FNA
   says so). A purge that fails falls back to the next (sanitize, format, discard; ATA, discard)
   and the note says why; `blkdiscard` asks for the discard; `none` skips it (the run is then
   not PTS-compliant). The method used is reported;
3. workload-independent preconditioning: the tested region written twice, SEQ 128 KiB (IOPS,
   Throughput, Latency; Write Saturation and Host Idle Recovery start from the purged state);
4. rounds: the test's whole matrix, round_s seconds per element, one engine run per round; after
   each, libs/workload's stop_rule: steady state or the round limit (Write Saturation: 4 x the
   region written or its 24 hours, 1,440 rounds, whichever first); `pts.stop` says which;
5. Host Idle Recovery only: for each wait state, its bursts (one engine run of burst_s each) each
   followed by the host idle (no engine running: the child sleeps), then its return to baseline
   (one engine run of bursts x burst_s, its per-second series cut into bursts' lengths);
6. stdout: one engine-like document: the last round's `jobs` (real engine figures, with its
   `iowatt` facts) and `pts`: the parameters, compliance, purge, preconditioning, every round's
   figures per element, the verdict with its window, and the window's averages per element (Host
   Idle Recovery: `hir`, every burst's IOPS and when it started).
Progress on stderr as JSON lines (`{"event": "progress", "mode": "pts", "phase": "purge" |
"wipc" | "round N" | "wait state N" | "baseline N", "percent"}`). Exit 0; 1 failed (the reason on
stderr's last line); the engine's 77 passed on (unsupported here)."""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import IO, Any

from iowatt_workload.pts import (
    PtsParams,
    Stop,
    baseline_job,
    burst_job,
    hir_seconds,
    last_rounds,
    parse_job,
    region_bytes,
    round_job,
    steady_state,
    stop_rule,
    tracking_value,
    wipc_job,
)

from . import nvme
from .policy import with_agent_options

PURGE_TIMEOUT_S = 6 * 3600  # a secure erase of a large disk takes hours (hdparm -I states it)
HDPARM_PASSWORD = "iowatt"  # set only for the erase, which clears it (ATA security's rule)
# share of the run's progress before the rounds (and, Host Idle Recovery, of its rounds)
PURGE_SPAN, WIPC_SPAN = 2.0, 18.0
HIR_ROUNDS_SPAN = 20.0
SYS_BLOCK = Path("/sys/class/block")


class PtsFailed(Exception):
    """The run cannot go on: the message is the failed run's reason."""

    def __init__(self, message: str, exit_code: int = 1) -> None:
        super().__init__(message)
        self.exit_code = exit_code


# --- progress ---------------------------------------------------------------------------------------

_T0 = time.monotonic()


def progress(phase: str, percent: float, **extra: Any) -> None:
    doc = {
        "event": "progress",
        "mode": "pts",
        "phase": phase,
        "percent": round(max(0.0, min(100.0, percent)), 2),
        "elapsed_ns": int((time.monotonic() - _T0) * 1e9),
        **extra,
    }
    sys.stderr.write(json.dumps(doc) + "\n")
    sys.stderr.flush()


def say(message: str) -> None:
    sys.stderr.write(message.rstrip() + "\n")
    sys.stderr.flush()


# --- the device --------------------------------------------------------------------------------------


def _sys_dir(real: str) -> Path:
    return SYS_BLOCK / os.path.basename(real)


def _dev_numbers(real: str) -> set[str]:
    """ "major:minor" of the device and its partitions."""
    st = os.stat(real)
    found = {f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}"}
    base = _sys_dir(real)
    try:
        for entry in base.iterdir():
            if (entry / "partition").exists() and (entry / "dev").exists():
                found.add((entry / "dev").read_text().strip())
    except OSError:
        pass
    return found


def device_in_use(real: str, mountinfo: str | None = None, swaps: str | None = None) -> str | None:
    """Why the device must not be purged (a mounted file system on it or a partition, swap,
    another driver holding it, an exclusive opener), or None."""
    numbers = _dev_numbers(real)
    if mountinfo is None:
        mountinfo = Path("/proc/self/mountinfo").read_text()
    for line in mountinfo.splitlines():
        fields = line.split()
        if len(fields) > 4 and fields[2] in numbers:
            return f"a file system on it is mounted at {fields[4]}"
    if swaps is None:
        try:
            swaps = Path("/proc/swaps").read_text()
        except OSError:
            swaps = ""
    for line in swaps.splitlines()[1:]:
        path = line.split()[0] if line.split() else ""
        if path and os.path.exists(path) and os.path.realpath(path).startswith(real):
            return f"it holds swap ({path})"
    base = _sys_dir(real)
    dirs = [base] + [e for e in base.iterdir() if (e / "partition").exists()] if base.exists() else []
    for d in dirs:
        holders = d / "holders"
        if holders.is_dir() and any(holders.iterdir()):
            names = ", ".join(sorted(p.name for p in holders.iterdir()))
            return f"{d.name} is held by {names} (LVM, RAID, dm)"
    try:
        fd = os.open(real, os.O_RDONLY | os.O_EXCL)
    except OSError as exc:
        return f"it cannot be opened exclusively ({exc.strerror})"
    os.close(fd)
    return None


def discard_supported(real: str) -> bool:
    path = _sys_dir(real) / "queue" / "discard_max_bytes"
    if not path.exists():  # a partition: its disk's queue
        path = _sys_dir(real).resolve().parent / "queue" / "discard_max_bytes"
    try:
        return int(path.read_text().strip()) > 0
    except (OSError, ValueError):
        return False


def ata_security(hdparm_identify: str) -> dict[str, bool]:
    """hdparm -I's "Security:" section: supported, enabled, locked, frozen (missing: False)."""
    out = {"supported": False, "enabled": False, "locked": False, "frozen": False}
    inside = False
    for line in hdparm_identify.splitlines():
        if line.startswith("Security:"):
            inside = True
            continue
        if inside and line and not line[0].isspace():
            break
        if not inside:
            continue
        words = line.split()
        if not words:
            continue
        negated = words[0] == "not"
        word = words[1] if negated and len(words) > 1 else words[0]
        if word in out and (len(words) == (2 if negated else 1)):
            out[word] = not negated
    return out


NVME_NAME = re.compile(r"nvme\d+n\d+$")
ATA_NAME = re.compile(r"sd[a-z]+$")
ZRAM_NAME = re.compile(r"zram\d+$")
ZRAM_NOTE = (
    "zram (a compressed RAM disk): every page discarded, which frees it from the compressed store "
    "so that it reads as zeros; zram has no erase or format command, a discard is its purge"
)


Plan = tuple[str, list[list[str]], str]  # (method, commands, note)


def nvme_namespaces(real: str) -> list[str]:
    """The block devices of every namespace beside `real` that shares its controller (or, with
    native multipath, its subsystem): nvme0n2 beside nvme0n1."""
    m = re.match(r"(nvme\d+)n\d+$", os.path.basename(real))
    if not m:
        return []
    try:
        names = [e.name for e in SYS_BLOCK.iterdir()]
    except OSError:
        return []
    own = os.path.basename(real)
    return sorted(n for n in names if n != own and re.fullmatch(rf"{m.group(1)}n\d+", n))


def _nvme_plans(real: str, run: Callable[[list[str]], str] | None) -> tuple[list[Plan], list[str]]:
    """NVMe Sanitize (the action SANICAP offers, preferred first: crypto erase, block erase,
    overwrite), then Format NVM with user data erase; and why either was left out. Both erase
    more than the namespace when the controller says so (a sanitize always acts on the whole
    subsystem; a format on every namespace when FNA says so): then neither is used on a
    namespace that has others beside it, which the host did not list, and no sanitize on a
    subsystem that may have other controllers (a dual-port drive: another host's namespaces)."""
    others = nvme_namespaces(real)
    ctrl: nvme.Controller | None = None
    why: list[str] = []
    if run is not None:
        try:
            ctrl = nvme.parse_id_ctrl(run(["nvme", "id-ctrl", real, "-o", "json"]))
        except nvme.NvmeOutputError as exc:
            why.append(f"nvme id-ctrl unreadable ({exc})")
    plans: list[Plan] = []
    shared = f"{os.path.basename(real)} shares its controller with {', '.join(others)}"
    if ctrl is not None and ctrl.sanitize_actions:
        action = ctrl.sanitize_actions[0]
        if others:
            why.append(f"no sanitize: it erases every namespace and {shared}")
        elif ctrl.other_controllers:
            why.append("no sanitize: it erases the whole subsystem, which may have other controllers (CMIC)")
        else:
            argv = ["nvme", "sanitize", real, f"--sanact={action.sanact}", "--ause"]
            if action.name == "overwrite":
                argv += ["--owpass=1", "--ovrpat=0"]
            offered = ", ".join(a.label.split(",")[0] for a in ctrl.sanitize_actions)
            plans.append(
                (
                    f"nvme-sanitize-{action.name}",
                    [argv],
                    f"NVMe Sanitize, {action.label} (the controller offers: {offered})",
                )
            )
    elif ctrl is not None:
        why.append("no sanitize: the controller offers none (SANICAP 0)")
    if ctrl is not None and not ctrl.format_nvm:
        why.append("no format: the controller has no Format NVM (OACS bit 1)")
    elif others and (ctrl is None or ctrl.format_erases_every_namespace):
        why.append(f"no format: it may erase every namespace and {shared}")
    else:
        note = "; ".join(["NVMe Format, user data erase", *why])
        # nvme-cli's own timeout would end a long erase (the kernel then resets the controller)
        argv = ["nvme", "format", real, "--ses=1", "--force", f"--timeout={PURGE_TIMEOUT_S * 1000}"]
        plans.append(("nvme-format", [argv], note))
    return plans, why


def purge_plans(method: str, real: str, *, run: Callable[[list[str]], str] | None = None) -> list[Plan]:
    """The purges to try in turn for the purge asked (`auto`, `blkdiscard`, `none`) on the
    device at `real` (its /dev path), each (method, commands, note), the strongest first: NVMe
    Sanitize, NVMe Format; ATA SECURITY ERASE UNIT; a discard of every block. `run` reads a
    command's output (nvme id-ctrl, hdparm -I). A later plan is used when an earlier one fails."""
    name = os.path.basename(real)
    if method == "none":
        return [("none", [], "no purge asked")]
    plans: list[Plan] = []
    why: list[str] = []  # why a stronger purge was left out, said by the one used
    if method == "auto" and NVME_NAME.match(name) and shutil.which("nvme"):
        plans, why = _nvme_plans(real, run)
    if method == "auto" and ATA_NAME.match(name) and shutil.which("hdparm") and run is not None:
        sec = ata_security(run(["hdparm", "-I", real]))
        if sec["supported"] and not (sec["enabled"] or sec["locked"] or sec["frozen"]):
            plans.append(
                (
                    "ata-secure-erase",
                    [
                        ["hdparm", "--user-master", "u", "--security-set-pass", HDPARM_PASSWORD, real],
                        ["hdparm", "--user-master", "u", "--security-erase", HDPARM_PASSWORD, real],
                    ],
                    "ATA SECURITY ERASE UNIT",
                )
            )
    if discard_supported(real) and shutil.which("blkdiscard"):
        note = ZRAM_NOTE if ZRAM_NAME.match(name) else "every block discarded (TRIM/UNMAP/deallocate)"
        plans.append(("blkdiscard", [["blkdiscard", real]], "; ".join([note, *why] if not plans else [note])))
    elif method == "blkdiscard":
        raise PtsFailed(
            f"{real} does not support discard (or blkdiscard is not installed): purge none or auto"
        )
    if not plans:
        offers = "the device offers no purge here (no NVMe sanitize or format, ATA secure erase or discard)"
        plans.append(("none", [], "; ".join([offers, *why])))
    return plans


def purge_plan(method: str, real: str, *, run: Callable[[list[str]], str] | None = None) -> Plan:
    """The first of purge_plans: the purge tried first."""
    return purge_plans(method, real, run=run)[0]


def _output(argv: list[str]) -> str:
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=60, check=False, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{argv[0]}: {exc}"
    return done.stdout


SANITIZE_POLL_S = 2.0
# how long the status log may still show what it showed before the command (the sanitize not yet
# begun, as the log reads it) before this sanitize counts as not started
SANITIZE_START_S = 30.0
NOTE_MAX = 1900  # the server keeps 2,000 characters of a purge's note (backend/pts/schemas.py)


def wait_sanitize(
    read_log: Callable[[], str],
    sanact: int,
    *,
    before: nvme.SanitizeStatus | None = None,
    timeout_s: float = PURGE_TIMEOUT_S,
    start_s: float = SANITIZE_START_S,
    poll_s: float = SANITIZE_POLL_S,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
    report: Callable[[float], None] = lambda fraction: None,
) -> str | None:
    """Poll the Sanitize Status log (read_log: `nvme sanitize-log DEV -o json`) until the
    sanitize started with action `sanact` is over: None when it completed, else why not (failed,
    unreadable, another action's result, not done after timeout_s). `report` gets the progress
    (0..1) while it runs.

    `before` is the log read before the command. Right after `nvme sanitize` returns, the log
    may still read as it did (an earlier sanitize's "completed", or "never sanitized"): until it
    has been seen in progress, a log equal to `before` is not this sanitize's, and is polled
    again for up to start_s; then this sanitize counts as not started, unless that log says
    completed with Global Data Erased set: nothing was written since the last sanitize that
    completed, whichever it was, and it is taken."""
    start = clock()
    deadline = start + timeout_s
    running = False
    while True:
        try:
            st = nvme.parse_sanitize_log(read_log())
        except nvme.NvmeOutputError as exc:
            return f"the sanitize status log is unreadable: {exc}"
        if st.in_progress:
            running = True
            report(st.progress)
            if clock() >= deadline:
                return f"not complete after {timeout_s:.0f} s ({st.progress * 100:.0f} %)"
            sleep(poll_s)
            continue
        if not running and st == before:
            if clock() - start < start_s:
                sleep(poll_s)
                continue
            if not (st.succeeded and st.global_erased):
                return (
                    f"the sanitize status log still reads as before the command (status {st.status}) "
                    f"after {start_s:.0f} s: the sanitize did not start"
                )
        if st.failed:
            return "the sanitize status log says the operation failed"
        if not st.succeeded:
            return f"the sanitize status log says status {st.status}, not completed"
        if st.sanact is not None and st.sanact != sanact:
            return f"the sanitize status log's last action is {st.sanact}, not {sanact}"
        return None


def _sanitize_log(real: str) -> nvme.SanitizeStatus | None:
    try:
        return nvme.parse_sanitize_log(_output(["nvme", "sanitize-log", real, "-o", "json"]))
    except nvme.NvmeOutputError:
        return None


def _finish_sanitize(real: str, sanact: int, before: nvme.SanitizeStatus | None) -> str | None:
    """After `nvme sanitize` returned: wait for the operation (progress on stderr, a line each
    10 %); on failure leave the failure mode (it was started with --ause) so a format may follow."""
    shown = [-1]

    def report(fraction: float) -> None:
        progress("purge", PURGE_SPAN * fraction)
        if int(fraction * 10) != shown[0]:
            shown[0] = int(fraction * 10)
            say(f"pts: purge: sanitize {fraction * 100:.0f} %")

    why = wait_sanitize(
        lambda: _output(["nvme", "sanitize-log", real, "-o", "json"]), sanact, before=before, report=report
    )
    if why is not None:
        _output(["nvme", "sanitize", real, f"--sanact={nvme.SANACT_EXIT_FAILURE}"])
    return why


def _run_plan(used: str, commands: list[list[str]], real: str) -> str | None:
    """Run one purge's commands: None when they did it, else why not."""
    before = None
    if used.startswith("nvme-sanitize-"):  # what the status log says before this sanitize
        before = _sanitize_log(real)
        if before is not None and before.in_progress:
            return "a sanitize is already in progress (the sanitize status log)"
    for argv in commands:
        say(f"pts: purge: {' '.join(argv if used != 'ata-secure-erase' else argv[:-2] + ['***', real])}")
        try:
            done = subprocess.run(
                argv,
                capture_output=True,
                text=True,
                timeout=PURGE_TIMEOUT_S,
                check=False,
                stdin=subprocess.DEVNULL,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            return str(exc)[:300]
        if done.returncode != 0:
            if used == "ata-secure-erase":  # never leave a password set on the drive
                subprocess.run(
                    ["hdparm", "--user-master", "u", "--security-disable", HDPARM_PASSWORD, real],
                    capture_output=True,
                    timeout=60,
                    check=False,
                    stdin=subprocess.DEVNULL,
                )
            return (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1][:300]
        if used.startswith("nvme-sanitize-"):
            why = _finish_sanitize(real, int(argv[3].split("=")[1]), before)
            if why is not None:
                return why
    return None


def purge(method: str, real: str) -> dict[str, Any]:
    plans = purge_plans(method, real, run=_output)
    t0 = time.monotonic()
    failed: list[str] = []
    for i, (used, commands, note) in enumerate(plans):
        why = _run_plan(used, commands, real)
        if why is None:
            return {
                "method": used,
                "commands": [
                    " ".join(a if a != HDPARM_PASSWORD else "***" for a in argv) for argv in commands
                ],
                "seconds": round(time.monotonic() - t0, 3),
                "note": "; ".join(failed + [note])[:NOTE_MAX],
            }
        failed.append(f"{used} failed ({why})")
        if i + 1 < len(plans):
            say(f"pts: {used} failed ({why}): falling back to {plans[i + 1][0]}")
    raise PtsFailed(f"purge failed: {'; '.join(failed)}")


# --- the engine --------------------------------------------------------------------------------------


def run_engine(
    engine: str, job: dict[str, Any], job_file: Path, *, phase: str, start: float, span: float
) -> dict[str, Any]:
    """One engine run of `job` (written to `job_file`), its progress mapped to `start` + `span` %
    of the whole run; its document (PtsFailed with the engine's last words otherwise)."""
    job_file.write_text(json.dumps(job, indent=1) + "\n")
    os.chmod(job_file, 0o600)
    proc = subprocess.Popen(
        [engine, "--output-format=json", "--progress=jsonl", str(job_file)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None and proc.stdout is not None
    # stdout is read beside stderr: a document larger than the pipe's buffer (a round of 56 jobs)
    # would otherwise block the engine's final write while this reads stderr to its end
    chunks: list[str] = []
    reader = threading.Thread(target=lambda: chunks.append(proc.stdout.read()), daemon=True)  # type: ignore[union-attr]
    reader.start()
    last = ""
    jobs = max(1, len(job.get("jobs") or []))
    for line in proc.stderr:
        doc = _json_line(line)
        if doc is not None and doc.get("event") == "progress":
            done = float(doc.get("job_index") or 0) + float(doc.get("percent") or 0.0) / 100.0
            progress(phase, start + span * min(1.0, done / jobs), job=str(doc.get("job", ""))[:100])
        elif line.strip():
            last = line.strip()
            say(last)
    code = proc.wait()
    reader.join()
    out = "".join(chunks)
    job_file.unlink(missing_ok=True)
    if code != 0:
        raise PtsFailed(f"{phase}: the engine exited {code}: {last[:500]}", 77 if code == 77 else 1)
    try:
        result = json.loads(out)
    except ValueError as exc:
        raise PtsFailed(f"{phase}: the engine printed no JSON document ({exc})") from None
    if not isinstance(result, dict) or not isinstance(result.get("jobs"), list):
        raise PtsFailed(f"{phase}: the engine's document has no jobs")
    return result


def _json_line(line: str) -> dict[str, Any] | None:
    line = line.strip()
    if not line.startswith("{"):
        return None
    try:
        doc = json.loads(line)
    except ValueError:
        return None
    return doc if isinstance(doc, dict) else None


def _num(d: Any, *keys: str) -> float:
    for k in keys:
        d = d.get(k) if isinstance(d, dict) else None
    return float(d) if isinstance(d, int | float) and not isinstance(d, bool) else 0.0


def _percentiles(direction: dict[str, Any]) -> dict[str, int]:
    pct = (direction.get("clat_ns") or {}).get("percentile") or {}
    return {f"{float(k):g}": int(v) for k, v in pct.items() if isinstance(v, int | float)}


def cell_figures(p: PtsParams, doc: dict[str, Any]) -> list[dict[str, Any]]:
    """A round's key figures per element, from its engine document (jobs by name)."""
    by_name = {str(j.get("jobname")): j for j in doc.get("jobs") or [] if isinstance(j, dict)}
    out = []
    for cell in p.cells:
        j = by_name.get(cell.name)
        if j is None:
            raise PtsFailed(f"the engine's document has no job {cell.name}")
        r, w = j.get("read") or {}, j.get("write") or {}
        ios = _num(r, "total_ios") + _num(w, "total_ios")
        lat_sum = _num(r, "lat_ns", "mean") * _num(r, "total_ios") + _num(w, "lat_ns", "mean") * _num(
            w, "total_ios"
        )
        out.append(
            {
                "name": cell.name,
                "bs": cell.bs,
                "read_pct": cell.read_pct,
                "read_iops": _num(r, "iops"),
                "write_iops": _num(w, "iops"),
                "read_bw_bytes": int(_num(r, "bw_bytes")),
                "write_bw_bytes": int(_num(w, "bw_bytes")),
                "write_io_bytes": int(_num(w, "io_bytes")),
                "lat_mean_ns": lat_sum / ios if ios else None,
                "lat_max_ns": max(_num(r, "lat_ns", "max"), _num(w, "lat_ns", "max")) or None,
                "read_clat_percentiles_ns": _percentiles(r),
                "write_clat_percentiles_ns": _percentiles(w),
            }
        )
    return out


def window_averages(
    p: PtsParams, rounds: list[dict[str, Any]], first: int, last: int
) -> list[dict[str, Any]]:
    """Every element's figures averaged over the rounds first..last (the measurement window);
    maximum latency is the window's maximum."""
    chosen = [r for r in rounds if first <= r["round"] <= last]
    out = []
    for i, cell in enumerate(p.cells):
        cells = [r["cells"][i] for r in chosen]
        n = len(cells)

        def mean(key: str, cells: list[dict[str, Any]] = cells) -> float | None:
            vals = [c[key] for c in cells if c.get(key) is not None]
            return sum(vals) / len(vals) if vals else None

        maxes = [c["lat_max_ns"] for c in cells if c.get("lat_max_ns") is not None]
        pcts: dict[str, dict[str, float]] = {}
        for side in ("read_clat_percentiles_ns", "write_clat_percentiles_ns"):
            keys = set().union(*(c.get(side, {}).keys() for c in cells)) if cells else set()
            pcts[side] = {
                k: sum(c[side][k] for c in cells if k in c.get(side, {}))
                / max(1, sum(1 for c in cells if k in c.get(side, {})))
                for k in sorted(keys, key=float)
            }
        out.append(
            {
                "name": cell.name,
                "bs": cell.bs,
                "read_pct": cell.read_pct,
                "rounds": n,
                "read_iops": mean("read_iops") or 0.0,
                "write_iops": mean("write_iops") or 0.0,
                "read_bw_bytes": mean("read_bw_bytes") or 0.0,
                "write_bw_bytes": mean("write_bw_bytes") or 0.0,
                "lat_mean_ns": mean("lat_mean_ns"),
                "lat_max_ns": max(maxes) if maxes else None,
                **pcts,
            }
        )
    return out


# --- Host Idle Recovery ------------------------------------------------------------------------------


def _write_iops(doc: dict[str, Any]) -> tuple[float, int]:
    """The write IOPS and bytes of an engine run's first job (a burst or a return to baseline)."""
    job = (doc.get("jobs") or [{}])[0]
    return _num(job, "write", "iops"), int(_num(job, "write", "io_bytes"))


def baseline_points(doc: dict[str, Any], burst_s: int, bursts: int) -> list[float]:
    """A return to baseline's IOPS per burst's length: its per-second series (the engine's `series`
    of the run's one job) cut into `bursts` windows of `burst_s` seconds, each window's write IOPS
    the mean of its seconds weighted by their lengths (the last second may be short)."""
    job = (doc.get("jobs") or [{}])[0]
    series = ((job.get("iowatt") or {}).get("series")) or []
    edges = [burst_s * (k + 1) * 1_000_000_000 for k in range(bursts)]
    sums = [0.0] * bursts
    lengths = [0.0] * bursts
    prev = 0
    for point in series:
        if not isinstance(point, dict):
            continue
        t = int(_num(point, "t_ns"))
        length = max(0, t - prev)
        k = min(bursts - 1, next((i for i, e in enumerate(edges) if prev < e), bursts - 1))
        sums[k] += _num(point, "write_iops") * length
        lengths[k] += length
        prev = t
    return [sums[k] / lengths[k] if lengths[k] else 0.0 for k in range(bursts)]


def host_idle_recovery(
    p: PtsParams, engine: str, options: dict[str, str], region: int, work: Path, *, start: float, span: float
) -> tuple[dict[str, Any], int]:
    """The wait-state segments and their returns to baseline (PTS-E 11.2.4-11.2.8): every burst's
    write IOPS, when it started (seconds from the first burst) and the host idle measured before
    it (from the previous engine's exit to this engine's start: the idle asked, give or take a
    millisecond; the engines' own start and exit, without I/O, add to the device's idle). The
    section and the bytes written."""
    burst = with_agent_options(burst_job(p, region), options)
    baseline = with_agent_options(baseline_job(p, region), options)
    total = max(1, hir_seconds(p))
    done_s = 0.0
    segments: list[dict[str, Any]] = []
    written = 0
    t0 = time.monotonic()
    last_end: float | None = None
    for ws in p.wait_state_list:
        idle = p.idle_s(ws)
        points: list[dict[str, Any]] = []
        for k in range(1, p.bursts + 1):
            began = time.monotonic()
            doc = run_engine(
                engine,
                burst,
                work / "burst.json",
                phase=f"wait state {ws}",
                start=start + span * done_s / total,
                span=span * p.burst_s / total,
            )
            ended = time.monotonic()
            iops, nbytes = _write_iops(doc)
            written += nbytes
            points.append(
                {
                    "burst": k,
                    "t_s": round(began - t0, 3),
                    "iops": iops,
                    "idle_s": round(began - last_end, 3) if last_end is not None else None,
                }
            )
            done_s += p.burst_s + idle
            progress(f"wait state {ws}", start + span * min(1.0, done_s / total), burst=k)
            time.sleep(idle)  # the host idle: no I/O from the host (PTS-E 11.2.4.1 "Access B")
            last_end = ended
        segments.append(
            {
                "kind": "wait",
                "wait_state": ws,
                "idle_s": idle,
                "points": points,
                "average_iops": sum(x["iops"] for x in points) / len(points),
            }
        )
        began = time.monotonic()
        doc = run_engine(
            engine,
            baseline,
            work / "baseline.json",
            phase=f"baseline {ws}",
            start=start + span * done_s / total,
            span=span * p.bursts * p.burst_s / total,
        )
        written += _write_iops(doc)[1]
        values = baseline_points(doc, p.burst_s, p.bursts)
        base = [
            {"burst": k + 1, "t_s": round(began - t0 + k * p.burst_s, 3), "iops": v, "idle_s": 0.0}
            for k, v in enumerate(values)
        ]
        last_end = time.monotonic()
        done_s += p.bursts * p.burst_s
        segments.append(
            {
                "kind": "baseline",
                "wait_state": ws,
                "idle_s": 0,
                "points": base,
                "average_iops": sum(values) / len(values) if values else 0.0,
            }
        )
        waited, back = segments[-2]["average_iops"], segments[-1]["average_iops"]
        say(f"pts: wait state {ws}: {waited:.6g} IOPS, baseline {back:.6g}")
    return {"burst_s": p.burst_s, "bursts": p.bursts, "segments": segments}, written


# --- the run ---------------------------------------------------------------------------------------


def run(spec: dict[str, Any]) -> dict[str, Any]:
    p = parse_job(spec["params"])
    device, engine = str(spec["device"]), str(spec["engine"])
    options = {str(k): str(v) for k, v in dict(spec["agent_options"]).items()}
    capacity = int(spec["capacity_bytes"])
    work = Path(spec["work_dir"])
    region = region_bytes(capacity, p.capacity_fraction)
    real = os.path.realpath(device)
    if not stat.S_ISBLK(os.stat(real).st_mode):
        raise PtsFailed(f"{device} is not a block device")
    busy = device_in_use(real)
    if busy:
        raise PtsFailed(f"{device} is in use: {busy}: nothing was written")
    deviations = p.deviations()

    progress("purge", 0.0)
    purged = purge(p.purge, real)
    if purged["method"] == "none" and p.purge != "none":
        deviations.append(f"no purge: {purged['note']}")

    wipc_span = WIPC_SPAN if p.test_def.wipc else 0.0
    if p.test_def.wipc:
        progress("wipc", PURGE_SPAN)
        t0 = time.monotonic()
        wipc = run_engine(
            engine,
            with_agent_options(wipc_job(p, region), options),
            work / "wipc.json",
            phase="wipc",
            start=PURGE_SPAN,
            span=WIPC_SPAN,
        )
        wjob = (wipc.get("jobs") or [{}])[0]
        preconditioning = {
            "applies": True,
            "block_size_bytes": 131072,
            "loops": 2,
            "bytes_written": int(_num(wjob, "write", "io_bytes")),
            "write_bw_bytes": int(_num(wjob, "write", "bw_bytes")),
            "seconds": round(time.monotonic() - t0, 3),
        }
    else:  # WSAT and HIR: from the purged (fresh-out-of-box) state to the test's own stimulus
        preconditioning = {
            "applies": False,
            "block_size_bytes": 131072,
            "loops": 0,
            "bytes_written": 0,
            "write_bw_bytes": 0,
            "seconds": 0.0,
        }

    limit = p.round_limit
    rounds: list[dict[str, Any]] = []
    series: list[float] = []
    written = 0
    last_doc: dict[str, Any] = {}
    rounds_span = HIR_ROUNDS_SPAN if p.test == "hir" else 100.0 - PURGE_SPAN - wipc_span
    job = with_agent_options(round_job(p, region), options)
    verdict = steady_state([], max_rounds=p.max_rounds) if p.test_def.steady_state else last_rounds([])
    stop: Stop | None = None
    for k in range(1, limit + 1):
        started = time.time()
        last_doc = run_engine(
            engine,
            job,
            work / f"round-{k}.json",
            phase=f"round {k}",
            start=PURGE_SPAN + wipc_span + rounds_span * (k - 1) / limit,
            span=rounds_span / limit,
        )
        cells = cell_figures(p, last_doc)
        value = tracking_value(p, cells)
        written += sum(c["write_io_bytes"] for c in cells)
        rounds.append(
            {"round": k, "started_at": started, "tracking": value, "bytes_written": written, "cells": cells}
        )
        series.append(value if value is not None else 0.0)
        # Write Saturation has no steady-state rule: its figures are its last rounds' (last_rounds)
        if p.test_def.steady_state:
            verdict = steady_state(series, max_rounds=p.max_rounds)
        else:
            verdict = last_rounds(series)
        steady = " (steady)" if verdict.reached else ""
        say(f"pts: round {k}: {p.tracking.name} {value or 0.0:.6g}{steady}")
        stop = stop_rule(p, rounds=k, bytes_written=written, region=region, steady=verdict.reached)
        if stop is not None:
            break
    assert stop is not None  # the last round allowed always stops the run
    say(f"pts: stopped after round {stop.round}: {stop.rule}")
    judged = verdict
    window = judged.window
    if window is not None:
        averages = window_averages(p, rounds, window.first_round, window.last_round)
    elif rounds and not p.test_def.steady_state:  # Write Saturation after one round: its figures
        averages = window_averages(p, rounds, 1, len(rounds))
    else:
        averages = []
    if p.test_def.steady_state and not judged.reached:
        deviations.append(f"steady state not reached in {judged.rounds} rounds")
    hir: dict[str, Any] | None = None
    if p.test == "hir":  # after the preconditioning, reached or not (the verdict says which)
        start = PURGE_SPAN + HIR_ROUNDS_SPAN
        hir, hir_written = host_idle_recovery(
            p, engine, options, region, work, start=start, span=100.0 - start
        )
        written += hir_written
    progress("done", 100.0)
    return {
        **{k: v for k, v in last_doc.items() if k != "jobs"},
        "jobs": last_doc.get("jobs") or [],
        "pts": {
            "spec": p.spec,
            "profile": p.profile,
            "test": p.test,
            "params": p.as_job(),
            "compliant": not deviations,
            "deviations": deviations,
            "device": device,
            "capacity_bytes": capacity,
            "region_bytes": region,
            "threads": p.thread_count,
            "iodepth": p.queue_depth,
            "round_s": p.round_s,
            "purge": purged,
            "preconditioning": preconditioning,
            "tracking": {"element": p.tracking.name, "metric": p.test_def.tracking_metric},
            "rounds": rounds,
            "steady_state": judged.as_dict() | {"applies": p.test_def.steady_state},
            "stop": stop.as_dict(),
            "window_averages": averages,
            "bytes_written": written + preconditioning["bytes_written"],
            **({"hir": hir} if hir is not None else {}),
        },
    }


def main(argv: list[str] | None = None, out: IO[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m iowatt_agent.pts")
    parser.add_argument("--job", required=True)
    # what the agent gives every program it runs as the engine (runner.EngineProcess): this child
    # always prints one JSON document and JSON-lines progress
    parser.add_argument("--output-format", default="json")
    parser.add_argument("--progress", default="jsonl")
    args = parser.parse_args(argv)

    def stopped(signum: int, frame: FrameType | None) -> None:
        raise PtsFailed(f"stopped by signal {signum}", 130)

    signal.signal(signal.SIGTERM, stopped)
    try:
        spec = json.loads(Path(args.job).read_text())
        doc = run(spec)
    except PtsFailed as exc:
        say(f"pts: {exc}")
        return exc.exit_code
    except (OSError, ValueError, KeyError, TypeError) as exc:
        say(f"pts: {exc}")
        return 1
    (out or sys.stdout).write(json.dumps(doc) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
