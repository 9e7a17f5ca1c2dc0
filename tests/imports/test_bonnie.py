"""Bonnie++ CSV lines, formats 1.96 and 1.98 (issue 26): one run per line, one job per test,
K/sec as KiB/s, the largest latency per test, '+++++' (too fast to measure) absent, not zero."""

import pytest

from backend.imports.formats.base import ImportFormatError
from tests.imports.other_tools import check_parsed, claims, fuzz_test, importer, sample, samples

BON = importer("bonnie-csv")
KiB = 1024


def test_1_98_two_runs_every_field():
    p = BON.parse("b.csv", sample("bonnie", "bonnie-1.98_two_runs.csv"))
    check_parsed(p)
    assert (p.format, p.tool, p.version) == ("bonnie-csv", "Bonnie++", "2.00a")
    first, second = p.runs
    assert first.host == {"hostname": "db01"} and "seed 1695123456" in first.notes
    assert [j.name for j in first.jobs] == [
        "putc",
        "put_block",
        "rewrite",
        "getc",
        "get_block",
        "seeks",
        "files",
    ]
    putc, block, rewrite, getc, get_block, seeks, files = first.jobs
    assert putc.settings == {"size": 62 * 1024**3, "numjobs": 1, "bs": 1, "rw": "write"}
    assert putc.write.bw_bytes == 8192 * KiB and putc.metrics == {"cpu_pct": 5.0}
    assert putc.write.lat.max_ns == 3045000.0 and putc.write.lat.mean_ns is None
    assert block.write.bw_bytes == 1087591 * KiB and "bs" not in block.settings
    assert rewrite.read.bw_bytes == rewrite.write.bw_bytes == 490367 * KiB and rewrite.settings["rw"] == "rw"
    assert get_block.read.bw_bytes == 1145413 * KiB and get_block.read.lat.max_ns == 115000000.0
    assert (
        seeks.read.iops == 9812.0 and seeks.settings["rw"] == "randread" and seeks.metrics["cpu_pct"] == 180.0
    )
    assert getc.read.lat.max_ns == 9135000.0
    # the file tests were too fast: their rates are absent, their latencies and the count kept
    assert files.metrics == {
        "files": 16 * 1024.0, "seq_create_lat_max_ns": 238000.0, "seq_stat_lat_max_ns": 504000.0,
        "seq_del_lat_max_ns": 582000.0, "ran_create_lat_max_ns": 117000.0, "ran_stat_lat_max_ns": 30000.0,
        "ran_del_lat_max_ns": 84000.0,
    }  # fmt: skip
    assert any("too fast to measure" in a and "seq_create" in a for a in first.absent)
    assert any("chunk size" in a for a in first.absent)
    assert [j.name for j in second.jobs] == ["put_block", "rewrite", "get_block", "seeks", "files"]
    assert second.jobs[0].settings == {"size": 4 * 1024**3, "numjobs": 4, "bs": 16 * KiB, "rw": "write"}
    assert second.jobs[0].write.lat.max_ns == 12000000.0
    f = second.jobs[-1].metrics
    assert f["files"] == 128 * 1024.0 and f["seq_create_per_s"] == 21234.0 and f["ran_stat_per_s"] == 98120.0
    assert "seq_stat_per_s" not in f and "seq_stat_cpu_pct" not in f  # +++++ and +++: too fast
    assert not any("chunk size" in a for a in second.absent)


def test_1_96_line_without_header():
    p = BON.parse("o.csv", sample("bonnie", "bonnie-1.96_line.csv"))
    check_parsed(p)
    [run] = p.runs
    assert p.version == "1.96" and run.host == {"hostname": "oldbox"} and run.notes == []
    seeks = next(j for j in run.jobs if j.name == "seeks")
    assert seeks.read.iops == 231.4 and seeks.settings == {"size": 2 * 1024**3, "rw": "randread"}
    assert next(j for j in run.jobs if j.name == "putc").write.bw_bytes == 45231 * KiB
    assert run.jobs[-1].metrics["seq_create_per_s"] == 8765.0 and "seq_stat_per_s" not in run.jobs[-1].metrics


def test_each_sample_is_claimed_by_its_importer_only():
    for name, data in samples("bonnie"):
        assert claims(name, data) == ["bonnie-csv"], name


def test_bad_lines_are_named():
    data = sample("bonnie", "bonnie-1.98_two_runs.csv")
    with pytest.raises(ImportFormatError) as e:
        BON.parse("cut.csv", data[:-60])
    assert e.value.line == 3 and "48 fields" in e.value.expected
    with pytest.raises(ImportFormatError) as e:
        BON.parse("v.csv", data.replace(b"\n1.98,1.98,db01", b"\n1.03,1.03,db01"))
    assert e.value.line == 2 and "1.93-2.x" in e.value.expected
    with pytest.raises(ImportFormatError) as e:
        BON.parse("l.csv", data.replace(b"186ms", b"186 weeks"))
    assert e.value.line == 2 and "ms" in e.value.expected
    with pytest.raises(ImportFormatError) as e:
        BON.parse("x.csv", sample("elbencho", "elbencho-3.0.25_randrw.csv"))
    assert e.value.line == 1


test_fuzz_bonnie = fuzz_test("bonnie", ["bonnie-csv"])
