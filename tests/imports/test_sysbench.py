"""sysbench fileio console output, 0.4, 0.5, 1.0 and 1.1 (issue 26): prepare and run, every field
mapped (binary units as sysbench prints them), intervals, what it lacks named, bad input refused."""

import pytest

from backend.imports.formats.base import ImportFormatError
from tests.imports.other_tools import check_parsed, claims, fuzz_test, importer, sample, samples

SB = importer("sysbench-fileio")
MiB = 2**20


def parse(name):  # type: ignore[no-untyped-def]
    out = SB.parse(name, sample("sysbench", name))
    check_parsed(out)
    return out


def test_1_0_prepare_then_random_rw_with_intervals():
    p = parse("sysbench-1.0.20_rndrw.txt")
    assert (p.format, p.tool, p.version) == ("sysbench-fileio", "sysbench", "1.0.20")
    prep, run = p.runs[0].jobs
    assert prep.name == "prepare" and prep.settings == {
        "nrfiles": 128,
        "filesize": 16 * MiB,
        "size": 2048 * MiB,
        "rw": "write",
    }
    assert prep.write.io_bytes == 2147483648 and prep.write.runtime_ms == 6590.0
    assert prep.write.bw_bytes == 310.82 * MiB
    assert run.settings == {
        "numjobs": 4, "direct": True, "nrfiles": 128, "filesize": 16 * MiB, "size": 2 * 1024**3, "bs": 16384,
        "fsync": 100, "end_fsync": True, "ioengine": "psync", "rw": "randrw", "rwmixread": 60.0,
    }  # fmt: skip
    assert run.read.iops == 1234.56 and run.read.bw_bytes == 19.29 * MiB
    assert run.write.iops == 823.04 and run.write.bw_bytes == 12.86 * MiB
    assert run.read.runtime_ms == 3009.9
    assert run.read.lat is None  # r/w events are timed together: in the metrics
    assert run.metrics == {
        "fsyncs_per_s": 2634.5, "events": 14110.0, "lat_mean_ns": 210000.0, "lat_min_ns": 0.0,
        "lat_max_ns": 12310000.0, "lat_p95_ns": 740000.0,
    }  # fmt: skip
    assert [(i.index, i.end_s) for i in run.intervals] == [(1, 1.0), (2, 2.0), (3, 3.0)]
    assert run.intervals[1].read.bw_bytes == 19.52 * MiB and run.intervals[1].metrics == {
        "fsyncs_per_s": 2661.0,
        "lat_p95_ns": 733000.0,
    }
    absent = p.runs[0].absent
    assert any("latency per direction" in a for a in absent) and any("rates only" in a for a in absent)


def test_1_1_throughput_lines():
    p = parse("sysbench-1.1_rndrd.txt")
    assert p.version == "1.1.0-2ca9e3f"
    [j] = p.runs[0].jobs
    assert (
        j.settings["rw"] == "randread" and j.settings["ioengine"] == "libaio" and j.settings["numjobs"] == 16
    )
    assert j.settings["size"] == 4 * 1024**3 and j.settings["bs"] == 4096 and j.settings["direct"] is True
    assert j.read.iops == 85012.33 and j.read.bw_bytes == 332.08 * MiB and j.write is None
    assert (
        j.read.lat.mean_ns == 190000.0
        and j.read.lat.percentiles_ns == {95.0: 360000.0}
        and j.read.lat.max_ns == 9870000.0
    )
    assert j.read.runtime_ms == 10002.1


def test_0_4_sequential_write_counts_and_binary_mb():
    p = parse("sysbench-0.4.12_seqwr.txt")
    assert p.version == "0.4.12"
    [j] = p.runs[0].jobs
    assert (
        j.settings["rw"] == "write" and j.settings["direct"] is False and j.settings["filesize"] == 16 * MiB
    )
    assert j.write.total_ios == 131072 and j.write.io_bytes == 2 * 1024**3
    assert j.write.bw_bytes == pytest.approx(2 * 1024**3 / 30) and j.write.iops == pytest.approx(131072 / 30)
    assert j.read is None
    assert (
        j.write.lat.mean_ns == 220000.0
        and j.write.lat.percentiles_ns == {95.0: 450000.0}
        and j.write.lat.min_ns == 10000.0
    )
    assert j.metrics["fsyncs"] == 128.0
    assert any("fsync" in n for n in p.runs[0].notes)


def test_0_5_random_read_response_time():
    p = parse("sysbench-0.5_rndrd.txt")
    [j] = p.runs[0].jobs
    assert "direct" not in j.settings  # 0.5 prints its flags as a number: unknown, not False
    assert j.settings["ioengine"] == "libaio" and j.settings["nrfiles"] == 8
    assert j.read.total_ios == 602112 and j.read.io_bytes == int(2.2969 * 1024**3)
    assert j.read.lat.mean_ns == 800000.0 and j.read.lat.percentiles_ns == {95.0: 2110000.0}
    assert any("16384" in n for n in p.runs[0].notes)


@pytest.mark.parametrize("name", [n for n, _ in samples("sysbench")])
def test_iops_times_block_size_is_the_bandwidth(name):
    """sysbench 1.x prints both: reads/s x block size = MiB/s within its 0.01 MiB rounding."""
    for j in parse(name).runs[0].jobs:
        bs = j.settings.get("bs")
        for d in (j.read, j.write):
            if bs and d is not None and d.iops is not None and d.bw_bytes:
                assert abs(d.iops * bs - d.bw_bytes) <= 0.005 * MiB + 0.005 * bs + 1e-6 * d.bw_bytes, (
                    name,
                    j.name,
                )


def test_each_sample_is_claimed_by_its_importer_only():
    for name, data in samples("sysbench"):
        assert claims(name, data) == ["sysbench-fileio"], name


def test_truncated_run_and_wrong_input():
    data = sample("sysbench", "sysbench-1.0.20_rndrw.txt")
    with pytest.raises(ImportFormatError) as e:
        SB.parse("cut.txt", data[: data.index(b"General statistics")])
    assert "total time" in e.value.expected and e.value.line is not None
    with pytest.raises(ImportFormatError) as e:
        SB.parse("x.txt", sample("postmark", "postmark-1.51_session.txt"))
    assert e.value.line == 1 and "sysbench" in e.value.expected
    oltp = b"sysbench 1.0.20 (using bundled LuaJIT 2.1.0-beta2)\n\nSQL statistics:\n    queries performed:\n"
    with pytest.raises(ImportFormatError) as e:
        SB.parse("oltp.txt", oltp)
    assert "Doing" in e.value.expected


def test_unknown_version_and_mode():
    data = sample("sysbench", "sysbench-1.1_rndrd.txt").replace(b"sysbench 1.1.0-2ca9e3f", b"sysbench 2.0.0")
    with pytest.raises(ImportFormatError) as e:
        SB.parse("v.txt", data)
    assert e.value.line == 1 and "1.0 or 1.1" in e.value.expected
    data = sample("sysbench", "sysbench-1.1_rndrd.txt").replace(
        b"Doing random read test", b"Doing sideways test"
    )
    with pytest.raises(ImportFormatError) as e:
        SB.parse("m.txt", data)
    assert e.value.line == 16 and "random r/w" in e.value.expected


test_fuzz_sysbench = fuzz_test("sysbench", ["sysbench-fileio"])
