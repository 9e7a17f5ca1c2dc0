"""The host's page cache and write-back around a run (issue 29, seed 004's question: how the kernel's
write-back of dirty pages shapes buffered writes).

Every run records the kernel's write-back settings (`/proc/sys/vm/dirty_*`) and the target device's
queue settings (read-ahead, I/O scheduler, write cache mode, from `/sys`); a run with buffered I/O
also samples `/proc/meminfo`'s `Dirty` and `Writeback` and `/proc/vmstat`'s dirty thresholds (the
limits the kernel computes from those settings and the memory it may dirty) once a second while the
engine runs. They go up with the result as the document's top-level `page_cache` (the agent's
measurement beside the engine's own keys; docs/writeback.md): bytes and nanoseconds on the wire,
`t_ns` since the engine started.

Nothing here fails a run: an unreadable file is a null figure (a container without /proc/sys/vm,
a target on a file system without a block device).
"""

from __future__ import annotations

import logging
import os
import stat
import threading
import time
from pathlib import Path
from typing import Any

log = logging.getLogger("iowatt_agent.pagecache")

SOURCE = "iowatt-agent"
# /proc/sys/vm/<name> -> (the wire's key, factor to its base unit): ratios stay percent, centiseconds
# become nanoseconds
VM_SETTINGS: dict[str, tuple[str, int]] = {
    "dirty_ratio": ("dirty_ratio_pct", 1),
    "dirty_background_ratio": ("dirty_background_ratio_pct", 1),
    "dirty_bytes": ("dirty_bytes", 1),
    "dirty_background_bytes": ("dirty_background_bytes", 1),
    "dirty_expire_centisecs": ("dirty_expire_ns", 10_000_000),
    "dirty_writeback_centisecs": ("dirty_writeback_ns", 10_000_000),
}
SAMPLE_KEYS = ("dirty_bytes", "writeback_bytes", "dirty_threshold_bytes", "background_threshold_bytes")
MAX_SAMPLES = 100_000  # about 28 h at one a second; the server's bound (result/schemas.py)
TEXT_MAX = 40


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except (OSError, UnicodeDecodeError):
        return None


def _int(text: str | None) -> int | None:
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None


def vm_settings(proc: Path = Path("/proc")) -> dict[str, int | None]:
    """The kernel's write-back settings in base units (null when unreadable), and the RAM."""
    out: dict[str, int | None] = {}
    for name, (key, factor) in VM_SETTINGS.items():
        value = _int(_read(proc / "sys/vm" / name))
        out[key] = value * factor if value is not None and value >= 0 else None
    out["mem_total_bytes"] = meminfo(proc).get("MemTotal")
    return out


def meminfo(proc: Path = Path("/proc")) -> dict[str, int]:
    """/proc/meminfo's fields in bytes (its kB are KiB)."""
    out: dict[str, int] = {}
    text = _read(proc / "meminfo") or ""
    for line in text.splitlines():
        name, _, rest = line.partition(":")
        parts = rest.split()
        if not parts or not parts[0].isdigit():
            continue
        scale = 1024 if len(parts) > 1 and parts[1] == "kB" else 1
        out[name.strip()] = int(parts[0]) * scale
    return out


def vmstat(proc: Path = Path("/proc"), names: tuple[str, ...] = ()) -> dict[str, int]:
    out: dict[str, int] = {}
    for line in (_read(proc / "vmstat") or "").splitlines():
        name, _, value = line.partition(" ")
        if name in names and value.strip().isdigit():
            out[name] = int(value)
    return out


def _device_dir(target: str, sys: Path) -> Path | None:
    """The sysfs directory of the whole disk under `target` (a device node, or the file system of a
    file or directory: its st_dev; a file not made yet: its directory's)."""
    path = Path(target)
    st = None
    for p in (path, path.parent):
        try:
            st = os.stat(p)
            break
        except OSError:
            continue
    if st is None:
        return None
    dev = st.st_rdev if stat.S_ISBLK(st.st_mode) else st.st_dev
    try:
        here = (sys / "dev/block" / f"{os.major(dev)}:{os.minor(dev)}").resolve(strict=True)
    except OSError:
        return None  # tmpfs, overlay, NFS: no block device
    if (here / "partition").exists():
        here = here.parent  # a partition: the disk holds the queue
    return here if (here / "queue").is_dir() else None


def device_settings(target: str | None, sys: Path = Path("/sys")) -> dict[str, Any] | None:
    """The target device's read-ahead, scheduler (the one in use) and write cache mode."""
    if not target:
        return None
    disk = _device_dir(target, sys)
    if disk is None:
        return None
    queue = disk / "queue"
    ra_kb = _int(_read(queue / "read_ahead_kb"))
    sched_text = _read(queue / "scheduler") or ""
    active = next((w[1:-1] for w in sched_text.split() if w.startswith("[") and w.endswith("]")), None)
    if active is None and sched_text and " " not in sched_text:
        active = sched_text  # a single scheduler is printed without brackets ("none")
    cache = _read(queue / "write_cache")
    return {
        "name": disk.name[:64],
        "read_ahead_bytes": ra_kb * 1024 if ra_kb is not None and ra_kb >= 0 else None,
        "scheduler": active[:TEXT_MAX] if active else None,
        "write_cache": cache[:TEXT_MAX] if cache else None,
    }


def is_buffered(job: dict[str, Any]) -> bool:
    """Whether a lease's (or bench's) engine job does I/O through the page cache: a block or fio
    job-file job whose `direct` is off; a file or database workload (their own rules: always)."""
    if "mode" in job:
        return True
    glob = job.get("global") or {}
    for j in job.get("jobs") or []:
        direct = str(j.get("direct", glob.get("direct", "0"))).strip().lower()
        if direct not in ("1", "true", "yes", "on"):
            return True
    return False


class PageCacheProbe:
    """Records the settings when the engine starts and, for buffered I/O, samples Dirty/Writeback
    and the thresholds every `interval_s` until `stop()`; `document()` is the result's
    `page_cache`. Thread-safe for one start/stop pair."""

    def __init__(
        self,
        target: str | None,
        *,
        buffered: bool,
        interval_s: float = 1.0,
        proc: Path = Path("/proc"),
        sys: Path = Path("/sys"),
    ) -> None:
        self.target = target
        self.buffered = buffered
        self.interval_s = interval_s
        self.proc = proc
        self.sys = sys
        self.settings: dict[str, int | None] = {}
        self.device: dict[str, Any] | None = None
        self.samples: dict[str, list[int | None]] = {"t_ns": [], **{k: [] for k in SAMPLE_KEYS}}
        self.truncated = False
        self._page = os.sysconf("SC_PAGE_SIZE")
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._t0 = 0

    def start(self) -> None:
        try:
            self.settings = vm_settings(self.proc)
            self.device = device_settings(self.target, self.sys)
        except Exception:  # noqa: BLE001 - a fact we cannot read never stops the benchmark
            log.exception("pagecache.settings_failed")
        self._t0 = time.monotonic_ns()
        if self.buffered:
            self._sample()
            self._thread = threading.Thread(target=self._loop, name="pagecache", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        if self._thread is None:
            return
        self._stop.set()
        self._thread.join(timeout=5.0)
        self._thread = None
        self._sample()

    def _loop(self) -> None:
        while not self._stop.wait(self.interval_s):
            self._sample()

    def _sample(self) -> None:
        if len(self.samples["t_ns"]) >= MAX_SAMPLES:
            self.truncated = True
            return
        try:
            mem = meminfo(self.proc)
            vm = vmstat(self.proc, ("nr_dirty_threshold", "nr_dirty_background_threshold"))
        except Exception:  # noqa: BLE001
            log.exception("pagecache.sample_failed")
            return
        if "Dirty" not in mem or "Writeback" not in mem:
            return
        threshold = vm.get("nr_dirty_threshold")
        background = vm.get("nr_dirty_background_threshold")
        self.samples["t_ns"].append(time.monotonic_ns() - self._t0)
        self.samples["dirty_bytes"].append(mem["Dirty"])
        self.samples["writeback_bytes"].append(mem["Writeback"])
        self.samples["dirty_threshold_bytes"].append(
            threshold * self._page if threshold is not None else None
        )
        self.samples["background_threshold_bytes"].append(
            background * self._page if background is not None else None
        )

    def document(self) -> dict[str, Any]:
        return {
            "source": SOURCE,
            "settings": dict(self.settings),
            "device": self.device,
            "samples": {k: list(v) for k, v in self.samples.items()} if self.buffered else None,
            "truncated": self.truncated,
        }
