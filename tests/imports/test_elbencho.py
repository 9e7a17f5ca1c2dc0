"""elbencho text results and --csvfile CSV (issue 26): one job per phase, LAST DONE as the figures
and FIRST DONE kept, MiB/s or (--base10) MB/s converted exactly, older CSV columns missing named."""

from datetime import UTC, datetime, timedelta, timezone

import pytest

from backend.imports.formats.base import ImportFormatError
from tests.imports.other_tools import check_parsed, claims, fuzz_test, importer, sample, samples

TEXT = importer("elbencho-text")
CSV = importer("elbencho-csv")
MiB = 2**20


def test_resfile_with_header_and_latency_percentiles():
    p = TEXT.parse("r.txt", sample("elbencho", "elbencho-3.0_resfile.txt"))
    check_parsed(p)
    assert (p.format, p.tool, p.version) == ("elbencho-text", "elbencho", None)
    run = p.runs[0]
    assert run.started_at == datetime(2025, 5, 6, 10, 20, 30, tzinfo=timezone(timedelta(hours=2)))
    assert run.command_line.startswith('"elbencho" "-w" "-r" "-t" "16"')
    assert "label nvme-array-a" in run.notes and run.name == "elbencho nvme-array-a"
    w, r = run.jobs
    assert (w.name, r.name) == ("WRITE", "READ")
    assert w.settings == {
        "numjobs": 16,
        "bs": MiB,
        "size": 4 * 1024**3,
        "direct": True,
        "iodepth": 8,
        "rw": "write",
    }
    assert r.settings["rw"] == "read" and r.write is None and w.read is None
    assert w.write.iops == 8146.0 and w.write.bw_bytes == 8146 * MiB and w.write.io_bytes == 65536 * MiB
    assert w.write.runtime_ms == 8044.0
    assert w.metrics == {
        "elapsed_ms_first": 7812.0,
        "iops_first": 7920.0,
        "bw_bytes_first": 7920.0 * MiB,
        "io_bytes_first": 61878.0 * MiB,
    }
    assert (
        w.write.lat.min_ns == 148000.0
        and w.write.lat.mean_ns == 1950000.0
        and w.write.lat.max_ns == 21400000.0
    )
    assert w.write.lat.percentiles_ns == {
        1.0: 600000.0,
        50.0: 1700000.0,
        75.0: 2300000.0,
        99.0: 6200000.0,
        99.9: 11000000.0,
    }
    assert r.read.lat.max_ns == 9870000.0


def test_console_base10_dirs_files_and_rwmix():
    p = TEXT.parse("c.txt", sample("elbencho", "elbencho-3.1.7_console_base10.txt"))
    check_parsed(p)
    run = p.runs[0]
    assert [j.name for j in run.jobs] == ["MKDIRS", "WRITE", "WRITE", "RMFILES"]
    mk, w, mix, rm = run.jobs
    assert mk.read is None and mk.write is None
    assert mk.metrics == {
        "elapsed_ms_first": 2.0,
        "dirs_per_s": 5263.0,
        "dirs_per_s_first": 7142.0,
        "dirs": 16.0,
    }
    assert w.write.bw_bytes == 1582 * 10**6  # --base10: MB/s
    assert w.write.io_bytes == 1600 * MiB  # totals stay MiB
    assert w.write.runtime_ms == 1060.0 and w.metrics["files_per_s"] == 1509.0
    assert "rw" not in w.settings and any("settings" in a for a in run.absent)
    assert mix.write.iops == 4880.0 and mix.read.iops == 11390.0
    assert mix.write.bw_bytes == 319 * 10**6 and mix.read.bw_bytes == 746 * 10**6
    assert mix.read.io_bytes == 88500 * MiB and mix.write.runtime_ms == 122004.0  # 2m2.004s
    assert mix.write.lat.mean_ns == 3220000.0 and mix.read.lat.min_ns == 95000.0
    assert mix.metrics["files_per_s_write"] == 305.0
    assert rm.metrics["files"] == 1600.0 and rm.write is None


def test_csv_new_columns():
    p = CSV.parse("r.csv", sample("elbencho", "elbencho-3.0.25_randrw.csv"))
    check_parsed(p)
    assert (p.format, p.version) == ("elbencho-csv", "3.0.25")
    run = p.runs[0]
    assert run.command_line.startswith("elbencho -w -r -t 16")
    assert run.started_at == datetime(2025, 3, 1, 9, 0, tzinfo=UTC)
    w, r = run.jobs
    assert w.settings == {
        "numjobs": 16,
        "iodepth": 32,
        "size": 8589934592,
        "bs": 4096,
        "direct": True,
        "rw": "randwrite",
    }
    assert r.settings["rw"] == "randread"
    assert w.write.iops == 398870.0 and w.write.bw_bytes == 1558 * MiB and w.write.io_bytes == 47539 * MiB
    assert (
        w.write.runtime_ms == 30533.0
        and w.write.lat.mean_ns == 1281000.0
        and w.write.lat.max_ns == 30511000.0
    )
    assert (
        w.metrics["cpu_pct"] == 60.0
        and w.metrics["iops_first"] == 402113.0
        and w.metrics["bw_bytes_first"] == 1570 * MiB
    )
    assert r.read.iops == 698002.0 and r.write is None
    assert not any("column" in a for a in run.absent)


def test_csv_old_columns_named_absent():
    p = CSV.parse("o.csv", sample("elbencho", "elbencho-1.9_dirmode_rwmix.csv"))
    check_parsed(p)
    assert p.version is None
    run = p.runs[0]
    mk, mix = run.jobs
    assert mk.metrics["entries"] == 16.0 and mk.metrics["entries_per_s"] == 2666.0 and mk.write is None
    assert mix.settings["rw"] == "rw" and mix.settings["direct"] is False
    assert mix.write.iops == 3866.0 and mix.read.iops == 5136.0 and mix.read.bw_bytes == 642 * MiB
    assert mix.write.lat.mean_ns == 250000.0 and mix.metrics["entry_lat_avg_ns"] == 2011000.0
    for what in ("elbencho's version", "command line", "CPU usage"):
        assert any(a.startswith(what) for a in run.absent), what


def test_each_sample_is_claimed_by_its_importer_only():
    for name, data in samples("elbencho"):
        assert claims(name, data) == ["elbencho-csv" if name.endswith(".csv") else "elbencho-text"], name


def test_truncated_and_wrong_input():
    data = sample("elbencho", "elbencho-3.0.25_randrw.csv")
    with pytest.raises(ImportFormatError) as e:
        CSV.parse("cut.csv", data[:-200])
    assert e.value.line == 3 and "fields" in e.value.expected
    text = sample("elbencho", "elbencho-3.0_resfile.txt")
    with pytest.raises(ImportFormatError) as e:
        TEXT.parse("cut.txt", text[: text.index(b"9.87ms") + 3])
    assert e.value.line == 18 and "]" in e.value.expected
    with pytest.raises(ImportFormatError) as e:
        TEXT.parse("x.txt", sample("sysbench", "sysbench-0.5_rndrd.txt"))
    assert "OPERATION" in e.value.expected
    with pytest.raises(ImportFormatError) as e:
        CSV.parse("x.csv", b"a,b,c\n1,2,3\n")
    assert e.value.line == 1 and "operation" in str(e.value)


def test_unknown_version_and_bad_value():
    data = sample("elbencho", "elbencho-3.0.25_randrw.csv").replace(b",3.0.25,", b",9.1.0,")
    with pytest.raises(ImportFormatError) as e:
        CSV.parse("v.csv", data)
    assert e.value.line == 2 and "3.x" in e.value.expected
    text = sample("elbencho", "elbencho-3.0_resfile.txt").replace(b"   12190", b"   12I90")
    with pytest.raises(ImportFormatError) as e:
        TEXT.parse("b.txt", text)
    assert e.value.line == 15 and e.value.expected == "IOPS"


test_fuzz_elbencho = fuzz_test("elbencho", ["elbencho-text", "elbencho-csv"])
