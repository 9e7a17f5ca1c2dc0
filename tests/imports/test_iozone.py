"""iozone 3.x report tables (issue 26): values matched to their columns by right edge (tests not
run leave blanks), kB/s as KiB/s, OPS mode as IOPS, the options it prints as settings."""

import pytest

from backend.imports.formats.base import ImportFormatError
from tests.imports.other_tools import check_parsed, claims, fuzz_test, importer, sample, samples

IOZ = importer("iozone")
KiB = 1024


def test_3_492_auto_mode_six_columns():
    p = IOZ.parse("a.txt", sample("iozone", "iozone-3.492_auto_sd.txt"))
    check_parsed(p)
    assert (p.format, p.tool, p.version) == ("iozone", "iozone", "3.492")
    [run] = p.runs
    assert run.command_line.startswith("iozone -e -I -a -s 100M")
    assert len(run.jobs) == 5 * 6
    first = run.jobs[0]
    assert first.name == "write 102400k/4k" and first.group == "write"
    assert first.settings == {
        "direct": True,
        "end_fsync": True,
        "rw": "write",
        "bs": 4 * KiB,
        "size": 100 * 1024**2,
    }
    assert first.write.bw_bytes == 2689 * KiB and first.read is None
    by = {j.name: j for j in run.jobs}
    assert by["read 102400k/4k"].read.bw_bytes == 9640 * KiB  # one column right of its header
    assert by["random read 102400k/16384k"].read.bw_bytes == 43036 * KiB
    assert by["random read 102400k/16384k"].settings["rw"] == "randread"
    assert by["random write 102400k/512k"].write.bw_bytes == 21988 * KiB
    assert "bkwd read 102400k/4k" not in by
    assert any("IOPS" in a for a in run.absent) and any("latency" in a for a in run.absent)


def test_3_279_all_thirteen_tests_old_spelling():
    p = IOZ.parse("b.txt", sample("iozone", "iozone-3.279_all_tests.txt"))
    check_parsed(p)
    assert p.version == "3.279"
    jobs = p.runs[0].jobs
    assert len(jobs) == 5 * 13
    row = [j for j in jobs if j.name.endswith(" 64k/16k")]
    assert [j.group for j in row] == [
        "write", "rewrite", "read", "reread", "random read", "random write", "bkwd read", "record rewrite",
        "stride read", "fwrite", "frewrite", "fread", "freread",
    ]  # fmt: skip
    assert row[0].write.bw_bytes == 653289 * KiB and row[0].settings["direct"] is False
    assert row[7].write.bw_bytes == 1562436 * KiB and row[12].read.bw_bytes == 3406295 * KiB


def test_ops_mode_is_iops():
    p = IOZ.parse("c.txt", sample("iozone", "iozone-3.492_ops_mode.txt"))
    jobs = p.runs[0].jobs
    assert [j.name for j in jobs] == [
        "write 4194304k/128k",
        "rewrite 4194304k/128k",
        "read 4194304k/128k",
        "reread 4194304k/128k",
    ]
    assert jobs[0].write.iops == 12544.0 and jobs[0].write.bw_bytes is None and jobs[2].read.iops == 21987.0
    assert any("bandwidth" in a for a in p.runs[0].absent)


def test_each_sample_is_claimed_by_its_importer_only():
    for name, data in samples("iozone"):
        assert claims(name, data) == ["iozone"], name


def test_bad_input_is_named():
    data = sample("iozone", "iozone-3.492_auto_sd.txt")
    with pytest.raises(ImportFormatError) as e:
        IOZ.parse("cut.txt", data[: data.index(b"              kB  reclen")])
    assert "kB  reclen" in e.value.expected
    shifted = data.replace(b"     4     2689", b"     4        2689")
    with pytest.raises(ImportFormatError) as e:
        IOZ.parse("s.txt", shifted)
    assert e.value.line == 28 and "right-aligned" in e.value.expected
    with pytest.raises(ImportFormatError) as e:
        IOZ.parse("v.txt", data.replace(b"$Revision: 3.492 $", b"$Revision: 4.100 $"))
    assert e.value.line == 2 and "3.x" in e.value.expected
    with pytest.raises(ImportFormatError) as e:
        IOZ.parse(
            "t.txt",
            data.replace(
                b"iozone test complete.", b"Children see throughput for  1 initial writers  =  2689.00 kB/sec"
            ),
        )
    assert "-t" in str(e.value)


test_fuzz_iozone = fuzz_test("iozone", ["iozone"])
