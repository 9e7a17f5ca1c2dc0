"""DiskSpd's XML (-Rxml) and text reports, 2.0.x and 2.2 (issue 26): per-target jobs summing the
threads (each thread's bytes and I/Os kept), latency buckets and percentile tables in ns, settings
under fio's names, the command line kept; bad input refused with its line."""

from datetime import UTC, datetime

import pytest

from backend.imports.formats.base import ImportFormatError
from tests.imports.other_tools import check_parsed, claims, fuzz_test, importer, sample, samples

XML = importer("diskspd-xml")
TEXT = importer("diskspd-text")


def test_xml_22_two_threads_one_target():
    p = XML.parse("r.xml", sample("diskspd", "diskspd22_randrw.xml"))
    check_parsed(p)
    assert (p.format, p.tool, p.version) == ("diskspd-xml", "DiskSpd", "2.2")
    run = p.runs[0]
    assert run.host == {"hostname": "LAB-SQL01", "cpu_count": "8"}
    assert run.started_at == datetime(2024, 9, 12, 14, 3, 27, tzinfo=UTC)
    assert run.device == {"target": "D:\\iotest.dat", "size_bytes": "21474836480"}
    assert run.command_line is None and any("command line" in a for a in run.absent)
    [j] = run.jobs
    assert j.name == "D:\\iotest.dat"
    assert j.settings == {
        "bs": 8192, "rw": "randrw", "rwmixread": 70, "numjobs": 2, "iodepth": 32, "size": 21474836480,
        "direct": True, "sync": True, "runtime_s": 30.0, "ramp_time_s": 5.0, "cooldown_s": 0.0,
    }  # fmt: skip
    reads = 1201331 + 1199870
    assert j.read.total_ios == reads and j.read.io_bytes == reads * 8192
    assert j.read.runtime_ms == 30010.0
    assert j.read.iops == reads / 30.01 and j.read.bw_bytes == reads * 8192 / 30.01
    assert j.write.total_ios == 514854 + 515120
    assert j.metrics["thread0_read_bytes"] == 1201331 * 8192 and j.metrics["thread1_write_ios"] == 515120
    # the mean over both threads weighted by their I/Os: 0.497 ms and 0.499 ms
    assert j.read.lat.mean_ns == pytest.approx((0.497e6 * 1201331 + 0.499e6 * 1199870) / reads)
    # the whole run's buckets land on the single target: 0 = min, 100 = max, the rest in between
    assert j.read.lat.min_ns == 61000.0 and j.read.lat.max_ns == 25114000.0
    assert j.write.lat.max_ns == 31902000.0
    pct = j.read.lat.percentiles_ns
    assert len(pct) == 106 and pct[50.0] == 405000.0  # 0.405 ms
    assert 99.9999999 in pct and list(pct) == sorted(pct)
    assert [i.end_s for i in j.intervals] == [1.0, 2.0, 3.0]
    assert j.intervals[0].read.iops == 40001 + 40002 and j.intervals[0].write.iops == 17151 * 2
    assert "CPU usage 41.20% (user 3.10%, kernel 38.10%)" in run.notes


def test_xml_2017_disable_all_cache_sequential_read():
    p = XML.parse("s.xml", sample("diskspd", "diskspd2017_seqread.xml"))
    check_parsed(p)
    assert p.version == "2.0.17"
    j = p.runs[0].jobs[0]
    assert j.settings["rw"] == "read" and j.settings["direct"] is True and j.settings["sync"] is True
    assert j.settings["iodepth"] == 8 and j.settings["numjobs"] == 1 and j.settings["bs"] == 65536
    assert j.write is None
    assert j.read.io_bytes == 31805472768 and j.read.total_ios == 485313
    assert j.read.lat.mean_ns == 989000.0 and j.read.lat.stddev_ns == pytest.approx(302000.0)
    assert j.read.lat.percentiles_ns == {50.0: 950000.0, 99.0: 2113000.0, 99.9: 4870000.0}
    assert j.read.lat.max_ns == 18004000.0 and j.intervals == []


def test_text_22_two_targets_with_their_own_percentiles():
    p = TEXT.parse("t.txt", sample("diskspd", "diskspd22_two_targets.txt"))
    check_parsed(p)
    assert (p.format, p.version) == ("diskspd-text", None)
    run = p.runs[0]
    assert run.command_line == "diskspd.exe -b4K -d20 -W5 -o16 -t2 -r -w0 -Sh -L -c1G C:\\t1.dat D:\\t2.dat"
    assert run.host == {"hostname": "LAB-FS02", "cpu_count": "8"}
    assert run.started_at == datetime(2024, 10, 1, 8, 30, tzinfo=UTC)
    assert [j.name for j in run.jobs] == ["C:\\t1.dat", "D:\\t2.dat"]
    c, d = run.jobs
    assert c.settings == {
        "runtime_s": 20.0,
        "ramp_time_s": 5.0,
        "cooldown_s": 0.0,
        "direct": True,
        "sync": True,
        "bs": 4096,
        "iodepth": 16,
        "numjobs": 2,
        "rw": "randread",
        "size": 1024**3,
    }
    assert c.read.total_ios == 998765 + 1001234 and c.read.io_bytes == (998765 + 1001234) * 4096
    assert c.write is None and d.write is None
    assert c.read.bw_bytes == pytest.approx(
        (998765 + 1001234) * 4096 / 20, rel=1e-4
    )  # the rows' MiB/s x 2**20
    assert c.metrics["thread1_read_ios"] == 1001234 and d.metrics["thread2_read_ios"] == 601234
    # per-target tables, not the total one: C:'s read median 0.255 ms, D:'s 0.425 ms
    assert c.read.lat.percentiles_ns[50.0] == 255000.0 and d.read.lat.percentiles_ns[50.0] == 425000.0
    assert c.read.lat.percentiles_ns[99.9] == 630000.0 and 99.9999999 in c.read.lat.percentiles_ns
    assert c.read.lat.min_ns == 60000.0 and c.read.lat.max_ns == 2700000.0
    assert "CPU usage 53.35% (user 4.00%, kernel 49.35%)" in run.notes


def test_text_2017_mix_mb_label_and_no_system_section():
    p = TEXT.parse("m.txt", sample("diskspd", "diskspd2017_mix.txt"))
    check_parsed(p)
    run = p.runs[0]
    assert run.host == {} and run.started_at is None
    [j] = run.jobs
    assert j.settings == {
        "runtime_s": 60.0,
        "ramp_time_s": 5.0,
        "cooldown_s": 0.0,
        "direct": True,
        "sync": True,
        "rw": "randrw",
        "rwmixread": 70,
        "bs": 8192,
        "iodepth": 4,
        "numjobs": 2,
        "size": 20 * 1024**3,
    }
    assert j.read.total_ios == 905112 + 903877 and j.write.total_ios == 387901 + 388410
    assert j.read.bw_bytes == (117.83 + 117.67) * 2**20
    assert j.write.lat.mean_ns == pytest.approx((1.502e6 * 387901 + 1.498e6 * 388410) / (387901 + 388410))
    assert j.read.lat.percentiles_ns[25.0] == 600000.0 and j.write.lat.percentiles_ns[99.0] == 2775000.0
    assert j.read.lat.min_ns == 200000.0 and j.write.lat.max_ns == 13500000.0


def test_each_sample_is_claimed_by_its_importer_only():
    for name, data in samples("diskspd"):
        assert claims(name, data) == ["diskspd-xml" if name.endswith(".xml") else "diskspd-text"], name


def test_xml_with_a_dtd_is_refused_before_expansion():
    bomb = (
        b'<?xml version="1.0"?><!DOCTYPE r [<!ENTITY a "aaaaaaaaaa">'
        b'<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;">]><Results>&b;</Results>'
    )
    with pytest.raises(ImportFormatError) as e:
        XML.parse("bomb.xml", bomb)
    assert "DTD" in str(e.value) and e.value.line == 1


def test_truncated_xml_and_text_name_the_line():
    data = sample("diskspd", "diskspd2017_seqread.xml")
    with pytest.raises(ImportFormatError) as e:
        XML.parse("cut.xml", data[: data.index(b"<Thread>") + 20])
    assert e.value.format == "diskspd-xml" and e.value.line is not None and "complete" in e.value.expected
    text = sample("diskspd", "diskspd2017_mix.txt")
    with pytest.raises(ImportFormatError) as e:
        TEXT.parse("cut.txt", text[: text.index(b"Write IO")])
    assert "Write IO" in str(e.value) and e.value.line is not None
    with pytest.raises(ImportFormatError) as e:
        TEXT.parse("cut.txt", text[: text.index(b"    max |")])
    assert "max" in e.value.expected


def test_wrong_tool_and_unknown_version():
    with pytest.raises(ImportFormatError) as e:
        XML.parse("x.xml", b"<testsuite><case/></testsuite>")
    assert "<Results>" in e.value.expected
    with pytest.raises(ImportFormatError) as e:
        TEXT.parse("c.txt", sample("crystaldiskmark", "cdm8_default.txt"))
    assert "Command Line" in e.value.expected
    v3 = sample("diskspd", "diskspd2017_seqread.xml").replace(
        b"<Version>2.0.17</Version>", b"<Version>3.0.1</Version>"
    )
    with pytest.raises(ImportFormatError) as e:
        XML.parse("v3.xml", v3)
    assert e.value.expected == "DiskSpd 2.x" and e.value.line == 4


def test_a_bad_row_is_named_by_its_line():
    text = sample("diskspd", "diskspd2017_mix.txt").replace(b"|       905112 |", b"|       9O5112 |")
    with pytest.raises(ImportFormatError) as e:
        TEXT.parse("bad.txt", text)
    lines = text.split(b"\r\n")
    assert lines[e.value.line - 1].startswith(b"     0 |      7414677504")
    assert e.value.expected == "I/Os"


test_fuzz_diskspd = fuzz_test("diskspd", ["diskspd-xml", "diskspd-text"])
