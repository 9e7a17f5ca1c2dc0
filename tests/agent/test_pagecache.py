"""The page cache around a run (issue 29, seed 004): the kernel's write-back settings and the target
device's queue from /proc and /sys (fake trees, exact values), Dirty/Writeback sampled for buffered
I/O only, and a real engine run whose document carries it all (agent/src/iowatt_agent/pagecache.py)."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest
from iowatt_agent.measured import run_measured
from iowatt_agent.pagecache import PageCacheProbe, device_settings, is_buffered, vm_settings
from iowatt_agent.runner import EngineProcess

from tests.stack import ENGINE


def fake_proc(root: Path, *, dirty_kb: int = 2048, writeback_kb: int = 512) -> Path:
    vm = root / "sys/vm"
    vm.mkdir(parents=True)
    for name, value in {
        "dirty_ratio": 20,
        "dirty_background_ratio": 10,
        "dirty_bytes": 0,
        "dirty_background_bytes": 0,
        "dirty_expire_centisecs": 3000,
        "dirty_writeback_centisecs": 500,
    }.items():
        (vm / name).write_text(f"{value}\n")
    (root / "meminfo").write_text(
        f"MemTotal:       8000000 kB\nDirty:          {dirty_kb} kB\nWriteback:      {writeback_kb} kB\n"
        "HugePages_Total:       0\n"
    )
    (root / "vmstat").write_text("nr_dirty 512\nnr_dirty_threshold 1000\nnr_dirty_background_threshold 500\n")
    return root


def test_the_settings_in_base_units(tmp_path: Path) -> None:
    s = vm_settings(fake_proc(tmp_path / "proc"))
    assert s == {
        "dirty_ratio_pct": 20,
        "dirty_background_ratio_pct": 10,
        "dirty_bytes": 0,
        "dirty_background_bytes": 0,
        "dirty_expire_ns": 30_000_000_000,
        "dirty_writeback_ns": 5_000_000_000,
        "mem_total_bytes": 8_000_000 * 1024,
    }
    assert vm_settings(tmp_path / "nothing")["dirty_ratio_pct"] is None  # unreadable: null, no error


def test_the_target_devices_queue_settings_from_its_disk(tmp_path: Path) -> None:
    """A file on a partition: the partition's st_dev leads to its disk's queue (fake sysfs)."""
    target = tmp_path / "data"
    target.mkdir()
    dev = os.stat(target).st_dev
    sys = tmp_path / "sys"
    disk = sys / "devices/virtual/block/vdz"
    part = disk / "vdz1"
    (disk / "queue").mkdir(parents=True)
    part.mkdir()
    (part / "partition").write_text("1\n")
    (disk / "queue/read_ahead_kb").write_text("128\n")
    (disk / "queue/scheduler").write_text("none [mq-deadline] kyber\n")
    (disk / "queue/write_cache").write_text("write back\n")
    (sys / "dev/block").mkdir(parents=True)
    (sys / "dev/block" / f"{os.major(dev)}:{os.minor(dev)}").symlink_to(part)
    found = device_settings(str(target / "file-not-made-yet"), sys)
    assert found == {
        "name": "vdz",
        "read_ahead_bytes": 128 * 1024,
        "scheduler": "mq-deadline",
        "write_cache": "write back",
    }
    assert device_settings(str(target), tmp_path / "empty-sys") is None  # no block device: none


def test_buffered_is_any_job_without_direct() -> None:
    assert is_buffered({"global": {}, "jobs": [{"direct": "1"}, {"direct": "0"}]})
    assert not is_buffered({"global": {"direct": "1"}, "jobs": [{"rw": "read"}, {"direct": "1"}]})
    assert is_buffered({"global": {}, "jobs": [{"rw": "write"}]})  # fio's default: buffered
    assert is_buffered({"mode": "postmark", "text": "..."})


def test_samples_only_for_buffered_io(tmp_path: Path) -> None:
    proc = fake_proc(tmp_path / "proc")
    probe = PageCacheProbe(None, buffered=True, interval_s=0.01, proc=proc, sys=tmp_path)
    probe.start()
    probe.stop()
    doc = probe.document()
    page = os.sysconf("SC_PAGE_SIZE")
    s = doc["samples"]
    assert len(s["t_ns"]) >= 2 and s["t_ns"] == sorted(s["t_ns"])
    assert set(s["dirty_bytes"]) == {2048 * 1024} and set(s["writeback_bytes"]) == {512 * 1024}
    assert set(s["dirty_threshold_bytes"]) == {1000 * page}
    assert set(s["background_threshold_bytes"]) == {500 * page}
    direct = PageCacheProbe(None, buffered=False, proc=proc, sys=tmp_path)
    direct.start()
    direct.stop()
    assert direct.document()["samples"] is None and direct.document()["settings"]["dirty_ratio_pct"] == 20


@pytest.mark.skipif(not os.access(ENGINE, os.X_OK), reason="needs the built engine")
def test_a_buffered_run_carries_its_page_cache_in_its_document(tmp_path: Path) -> None:
    data = tmp_path / "data.bin"
    job = {
        "global": {"filename": str(data)},
        "jobs": [{"name": "w", "rw": "write", "bs": "1m", "size": "16m", "direct": "0", "end_fsync": "1"}],
    }
    proc = EngineProcess(ENGINE, job, job_file=tmp_path / "job.json")
    probe = PageCacheProbe(str(tmp_path), buffered=is_buffered(job), interval_s=0.05)
    measured = run_measured(proc, None, stop=threading.Event(), data_file=data, page_cache=probe)
    assert measured.outcome is not None and measured.outcome.ok, measured.outcome
    pc = measured.outcome.result["page_cache"]
    assert pc["source"] == "iowatt-agent"
    expected = int(Path("/proc/sys/vm/dirty_ratio").read_text())
    assert pc["settings"]["dirty_ratio_pct"] == expected
    assert len(pc["samples"]["t_ns"]) >= 2
    assert all(v is not None and v >= 0 for v in pc["samples"]["dirty_bytes"])
