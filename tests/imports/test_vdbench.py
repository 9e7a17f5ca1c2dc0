"""vdbench 5.x output files (issue 26): summary.html, totals.html and flatfile.html, raw (sd/wd)
and file-system (fsd/fwd) runs, per interval and the averages line; several files of one output
directory merged; what a file lacks named."""

from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from backend.imports.formats import vdbench
from backend.imports.formats.base import ImportFormatError
from tests.imports.other_tools import (
    FUZZ,
    TOKENS,
    check_parsed,
    claims,
    fuzz_test,
    importer,
    mutate,
    sample,
    samples,
)

SUMMARY = importer("vdbench-summary")
FLAT = importer("vdbench-flatfile")
MiB = 2**20


def test_raw_summary_two_for_loop_runs():
    p = SUMMARY.parse("summary.html", sample("vdbench", "summary_raw_50407.html"))
    check_parsed(p)
    assert (p.format, p.tool, p.version) == ("vdbench-summary", "vdbench", "5.04.07")
    run = p.runs[0]
    assert [j.name for j in run.jobs] == ["rd1 xfersize=4k threads=8", "rd1 xfersize=64k threads=8"]
    small, big = run.jobs
    assert small.settings == {"runtime_s": 6.0, "ramp_time_s": 2.0, "bs": 4096, "iodepth": 8}
    assert big.settings["bs"] == 65536 and small.group == "rd1"
    # the averages line: 45229.50 i/o per s, 70.04% reads, 176.68 MB/s (1024**2)
    assert small.read.iops == pytest.approx(45229.50 * 0.7004) and small.write.iops == pytest.approx(
        45229.50 * 0.2996
    )
    assert small.read.bw_bytes is None and small.metrics["bw_bytes"] == 176.68 * MiB
    assert small.read.lat.mean_ns == 175000.0 and small.write.lat.mean_ns == 238000.0
    assert small.metrics["iops"] == 45229.5 and small.metrics["lat_mean_ns"] == 194000.0
    assert small.metrics["lat_max_ns"] == 11000000.0 and small.metrics["lat_stddev_ns"] == 145000.0
    assert (
        small.metrics["queue_depth"] == 7.9
        and small.metrics["cpu_pct"] == 22.4
        and small.metrics["bytes_per_io"] == 4096.0
    )
    assert small.metrics["avg_from_interval"] == 3.0
    assert [i.index for i in small.intervals] == [1, 2, 3, 4, 5, 6]
    assert small.intervals[0].metrics["iops"] == 45100.0 and small.intervals[0].read.lat.mean_ns == 171000.0
    assert any("bandwidth per direction" in a for a in run.absent) and any(
        "start date" in a for a in run.absent
    )
    assert "raw (sd/wd) run" in run.notes


def test_old_raw_summary_header():
    p = SUMMARY.parse("summary.html", sample("vdbench", "summary_raw_50302.html"))
    check_parsed(p)
    assert p.version == "5.03.02"
    j = p.runs[0].jobs[0]
    assert j.metrics["lat_mean_ns"] == 194000.0 and j.metrics["cpu_pct"] == 22.4
    assert j.read.lat is None and "queue_depth" not in j.metrics  # 5.03 prints neither
    assert j.read.iops == pytest.approx(45229.50 * 0.7004)


def test_totals_have_averages_only():
    p = SUMMARY.parse("totals.html", sample("vdbench", "totals_raw_50407.html"))
    check_parsed(p)
    assert p.version is None
    run = p.runs[0]
    assert [len(j.intervals) for j in run.jobs] == [0, 0]
    assert run.jobs[1].metrics["bw_bytes"] == pytest.approx(614.91 * MiB)
    assert any("per-interval" in a for a in run.absent) and any("version" in a for a in run.absent)


def test_raw_flatfile_settings_dates_and_loops():
    p = FLAT.parse("flatfile.html", sample("vdbench", "flatfile_raw_50407.html"))
    check_parsed(p)
    assert (p.format, p.version) == ("vdbench-flatfile", "5.04.07")
    run = p.runs[0]
    assert run.started_at == datetime(2019, 3, 4, 10, 9, 27, tzinfo=UTC)
    assert [j.name for j in run.jobs] == [
        "rd1 bs=4096 iodepth=8 rwmixread=70.0",
        "rd1 bs=65536 iodepth=8 rwmixread=70.0",
    ]
    j = run.jobs[0]
    assert j.settings == {"bs": 4096, "iodepth": 8, "rwmixread": 70.0, "rw": "randrw"}
    assert j.metrics["iops"] == 45229.5 and j.metrics["bw_bytes"] == pytest.approx(45229.5 * 4096)
    assert (
        j.read.lat.mean_ns == 174500.0 and j.metrics["lunsize_gib"] == 20.0
    )  # 0.1745 ms, 4 decimals and j.metrics["cpu_pct"] == 22.4
    assert len(j.intervals) == 6


def test_file_system_summary_and_flatfile():
    p = SUMMARY.parse("summary.html", sample("vdbench", "summary_fs_50406.html"))
    check_parsed(p)
    assert p.version == "5.04.06"
    run = p.runs[0]
    [j] = run.jobs
    assert j.name == "rd_fs" and j.settings == {"runtime_s": 5.0}
    # the averages line (intervals 2-5): reads 2108.5/s at 0.412 ms, writes 901.5/s at 1.023 ms,
    # 16.47 + 7.04 = 23.52 MB/s (1024**2), 8 KiB
    assert j.read.iops == 2108.5 and j.write.iops == 901.5
    assert j.read.lat.mean_ns == 412000.0 and j.write.lat.mean_ns == 1023000.0
    assert j.read.bw_bytes == pytest.approx(16.47 * MiB) and j.write.bw_bytes == pytest.approx(7.04 * MiB)
    assert j.metrics["ops_per_s"] == 3010.0 and j.metrics["ops_resp_ns"] == 595000.0
    assert j.metrics["bw_bytes"] == pytest.approx(23.52 * MiB) and j.metrics["bytes_per_io"] == 8192.0
    assert j.metrics["create_per_s"] == 0.0 and j.metrics["cpu_pct"] == 31.2 and j.metrics["read_pct"] == 70.0
    assert len(j.intervals) == 5
    assert "file-system (fsd/fwd) run" in run.notes
    f = FLAT.parse("flatfile.html", sample("vdbench", "flatfile_fs_50406.html"))
    check_parsed(f)
    [fj] = f.runs[0].jobs
    assert fj.read.iops == 2108.5 and fj.read.bw_bytes == 16.4727 * MiB  # MB_read to 4 decimals
    assert f.runs[0].started_at == datetime(2020, 1, 1, 14, 35, 28)  # CET: local time, no zone applied


def test_parse_set_merges_summary_names_into_the_flatfile():
    files = [
        ("summary.html", sample("vdbench", "summary_raw_50407.html")),
        ("flatfile.html", sample("vdbench", "flatfile_raw_50407.html")),
    ]
    p = vdbench.parse_set(files)
    run = p.runs[0]
    assert [j.name for j in run.jobs] == ["rd1 xfersize=4k threads=8", "rd1 xfersize=64k threads=8"]
    assert run.jobs[0].settings["runtime_s"] == 6.0 and run.jobs[0].settings["rw"] == "randrw"
    assert run.started_at is not None and p.version == "5.04.07"
    with pytest.raises(ImportFormatError):
        vdbench.parse_set([("summary.html", sample("vdbench", "summary_fs_50406.html")), files[1]])


def test_each_sample_is_claimed_by_its_importer_only():
    for name, data in samples("vdbench"):
        assert claims(name, data) == [
            "vdbench-flatfile" if name.startswith("flatfile") else "vdbench-summary"
        ], name


def test_truncated_and_wrong_input():
    data = sample("vdbench", "summary_raw_50407.html")
    with pytest.raises(ImportFormatError) as e:
        SUMMARY.parse("cut.html", data[: data.index(b"avg_3-6")])
    assert "averages" in str(e.value) and e.value.line is not None
    flat = sample("vdbench", "flatfile_raw_50407.html")
    with pytest.raises(ImportFormatError) as e:
        FLAT.parse("cut.html", flat[:-40])
    assert "values" in e.value.expected and e.value.line == flat.count(b"\n")
    with pytest.raises(ImportFormatError) as e:
        SUMMARY.parse("x.html", sample("elbencho", "elbencho-3.0_resfile.txt"))
    assert "Starting RD" in str(e.value)
    with pytest.raises(ImportFormatError) as e:
        FLAT.parse("x.html", b"* a comment\n* another\n")
    assert "truncated" in str(e.value)


def test_unknown_version_and_bad_header():
    data = sample("vdbench", "summary_raw_50407.html").replace(b"vdbench50407", b"vdbench40101")
    with pytest.raises(ImportFormatError) as e:
        SUMMARY.parse("v.html", data)
    assert "5.x" in e.value.expected
    data = sample("vdbench", "summary_raw_50407.html").replace(b"stddev depth", b"stddev")
    with pytest.raises(ImportFormatError) as e:
        SUMMARY.parse("h.html", data)
    assert e.value.line == 14 and "pair" in str(e.value)  # the first header line


test_fuzz_vdbench = fuzz_test("vdbench", ["vdbench-summary", "vdbench-flatfile"])


# the merge of a directory's files (parse_set) is an importer too: its inputs are the samples of
# both kinds mutated, truncated or swapped (another run's file among them)
RAW_SET = [
    ("summary.html", sample("vdbench", "summary_raw_50407.html")),
    ("totals.html", sample("vdbench", "totals_raw_50407.html")),
    ("flatfile.html", sample("vdbench", "flatfile_raw_50407.html")),
]
OTHERS = [d for n, d in samples("vdbench") if n not in {"summary_raw_50407.html", "flatfile_raw_50407.html"}]


@FUZZ
@given(
    st.lists(
        st.tuples(
            st.integers(0, 2),  # which file of the set
            st.lists(
                st.tuples(st.integers(0, 1 << 20), st.integers(0, 200), st.sampled_from(TOKENS)), max_size=4
            ),
            st.one_of(st.none(), st.integers(0, 1 << 20)),  # a cut
            st.one_of(st.none(), st.sampled_from(OTHERS)),  # another run's file instead
        ),
        min_size=1,
        max_size=3,
    )
)
def test_fuzz_parse_set(
    changes: list[tuple[int, list[tuple[int, int, bytes]], int | None, bytes | None]],
) -> None:
    files = list(RAW_SET)
    for which, cuts, cut, other in changes:
        name, data = files[which]
        data = other if other is not None else mutate(data, cuts)
        if cut is not None:
            data = data[: cut % (len(data) + 1)]
        files[which] = (name, data)
    try:
        out = vdbench.parse_set(files)
    except ImportFormatError as e:
        assert str(e).startswith("vdbench"), e
        return
    check_parsed(out)
    assert len(out.runs) == 1
