"""PostMark 1.5x verbose reports (issue 26): one run per report, files and transactions in the
metrics, data in bytes (a megabyte is 1024 x 1024 since 1.5), what PostMark lacks named."""

import pytest

from backend.imports.formats.base import ImportFormatError
from tests.imports.other_tools import check_parsed, claims, fuzz_test, importer, sample, samples

PM = importer("postmark")


def test_session_with_show_and_run():
    p = PM.parse("s.txt", sample("postmark", "postmark-1.51_session.txt"))
    check_parsed(p)
    assert (p.format, p.tool, p.version) == ("postmark", "PostMark", "1.51")
    [run] = p.runs
    [j] = run.jobs
    assert j.settings == {
        "nrfiles": 20000, "transactions": 50000, "filesize": "500-10004", "subdirectories": 10,
        "bs": "4096,4096", "bias_read": 5, "bias_create": 5, "buffered": True, "randseed": 42,
    }  # fmt: skip
    assert j.read.io_bytes == round(137.01 * 2**20) and j.write.io_bytes == round(246.58 * 2**20)
    assert j.read.bw_bytes == pytest.approx(3.34 * 2**20, rel=1e-12) and j.write.bw_bytes == pytest.approx(
        6.01 * 2**20, rel=1e-12
    )
    assert j.read.runtime_ms == 41000.0 and j.read.iops is None and j.read.lat is None
    m = j.metrics
    assert (
        m["seconds_total"] == 41.0 and m["seconds_transactions"] == 33.0 and m["transactions_per_s"] == 1515.0
    )
    assert m["files_created"] == 45065.0 and m["files_created_per_s"] == 1099.0
    assert m["files_created_alone"] == 20000.0 and m["files_created_mixed_per_s"] == 759.0
    assert m["files_read"] == 24946.0 and m["files_appended_per_s"] == 759.0
    assert m["files_deleted_alone"] == 20130.0 and m["files_deleted_mixed"] == 24935.0
    assert any("latency" in a for a in run.absent) and any("IOPS" in a for a in run.absent)
    assert any("rounded" in w for w in p.warnings)


def test_report_written_by_run_file_has_no_banner():
    p = PM.parse("r.txt", sample("postmark", "postmark-run-to-file.txt"))
    check_parsed(p)
    assert p.version is None and any("version is unknown" in w for w in p.warnings)
    j = p.runs[0].jobs[0]
    assert j.read.bw_bytes == pytest.approx(116.05 * 1024, rel=1e-12) and j.write.bw_bytes == pytest.approx(
        379.73 * 1024, rel=1e-12
    )
    assert j.read.io_bytes == round(1.36 * 2**20)
    assert any("configuration" in a for a in p.runs[0].absent)


def test_two_runs_under_the_1_5_banner():
    p = PM.parse("t.txt", sample("postmark", "postmark-1.5_two_runs.txt"))
    check_parsed(p)
    assert p.version == "1.5" and [r.name for r in p.runs] == ["PostMark run 1", "PostMark run 2"]
    assert p.runs[0].jobs[0].write.bw_bytes == pytest.approx(1.48 * 2**20, rel=1e-12)
    assert p.runs[1].jobs[0].metrics["transactions_per_s"] == 166.0


def test_each_sample_is_claimed_by_its_importer_only():
    for name, data in samples("postmark"):
        assert claims(name, data) == ["postmark"], name


def test_truncated_old_version_terse_and_wrong_tool():
    data = sample("postmark", "postmark-1.51_session.txt")
    with pytest.raises(ImportFormatError) as e:
        PM.parse("cut.txt", data[: data.index(b"Data:")])
    assert "Data" in str(e.value) and e.value.line is not None
    with pytest.raises(ImportFormatError) as e:
        PM.parse("old.txt", data.replace(b"PostMark v1.51", b"PostMark v1.14"))
    assert e.value.line == 1 and "1.5x" in e.value.expected
    with pytest.raises(ImportFormatError) as e:
        PM.parse(
            "terse.txt",
            b"PostMark v1.51 : 8/14/01\n"
            b"12 10 50.00 63.67 250.00 26.40 24.30 25.70 63.67 528.00 23.60 116053.33 379733.33\n",
        )
    assert e.value.line == 2 and "verbose" in e.value.expected
    with pytest.raises(ImportFormatError) as e:
        PM.parse("x.txt", sample("sysbench", "sysbench-0.4.12_seqwr.txt"))
    assert "Time:" in e.value.expected


def test_a_bad_line_in_a_report_is_named():
    data = sample("postmark", "postmark-run-to-file.txt").replace(
        b"243 read (24 per second)", b"243 read (24 per minute)"
    )
    with pytest.raises(ImportFormatError) as e:
        PM.parse("b.txt", data)
    assert e.value.line == 9


test_fuzz_postmark = fuzz_test("postmark", ["postmark"])
