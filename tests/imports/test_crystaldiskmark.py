"""CrystalDiskMark 5-9 and KDiskMark 2-3 text exports (issue 26): every field mapped in base
units, exact decimal conversion, IOPS x block size = MB/s within the file's rounding, what the
format lacks named, bad input refused with its line and what was expected."""

from datetime import datetime
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from backend.imports.formats.base import ImportFormatError
from backend.imports.formats.crystaldiskmark import KDM_MB
from tests.imports.other_tools import check_parsed, claims, fuzz_test, importer, sample, samples

CDM = importer("crystaldiskmark")
KDM = importer("kdiskmark")
GiB = 1024**3


def parse(name: str):  # type: ignore[no-untyped-def]
    imp = KDM if name.startswith("kdm") else CDM
    out = imp.parse(name, sample("crystaldiskmark", name))
    check_parsed(out)
    return out


def job(parsed, name):  # type: ignore[no-untyped-def]
    return next(j for j in parsed.runs[0].jobs if j.name == name)


def test_cdm9_nvme_preset_with_mix_every_field():
    p = parse("cdm9_nvme_mix.txt")
    assert (p.format, p.tool, p.version) == ("crystaldiskmark", "CrystalDiskMark", "9.0.1")
    run = p.runs[0]
    assert [j.name for j in run.jobs] == [
        "SEQ1M Q8T1 read", "SEQ128K Q32T1 read", "RND4K Q32T16 read", "RND4K Q1T1 read",
        "SEQ1M Q8T1 write", "SEQ128K Q32T1 write", "RND4K Q32T16 write", "RND4K Q1T1 write",
        "MIX SEQ1M Q8T1", "MIX SEQ128K Q32T1", "MIX RND4K Q32T16", "MIX RND4K Q1T1",
    ]  # fmt: skip
    j = job(p, "SEQ1M Q8T1 read")
    assert j.settings == {
        "rw": "read",
        "bs": 1048576,
        "iodepth": 8,
        "numjobs": 1,
        "size": GiB,
        "passes": 5,
        "runtime_s": 5.0,
        "interval_s": 5.0,
    }
    assert j.read.bw_bytes == 7012384000.0  # 7012.384 MB/s x 10^6, exactly
    assert j.read.iops == 6687.5
    assert j.read.lat.mean_ns == 1194310.0  # 1194.31 us
    assert j.write is None and j.group == "Default"
    w = job(p, "RND4K Q32T16 write")
    assert w.settings["rw"] == "randwrite" and w.settings["numjobs"] == 16 and w.settings["bs"] == 4096
    assert w.write.bw_bytes == 3601250000.0 and w.read is None
    m = job(p, "MIX RND4K Q1T1")
    assert m.settings["rw"] == "randrw" and m.settings["rwmixread"] == 70
    assert m.read is None and m.write is None
    assert m.metrics == {"bw_bytes": 110221000.0, "iops": 26909.4, "lat_mean_ns": 37050.0}
    assert job(p, "MIX SEQ128K Q32T1").settings["rw"] == "rw"
    assert run.device == {
        "target": "C:",
        "used_pct": "24",
        "used_bytes": str(56 * GiB),
        "size_bytes": str(237 * GiB),
    }
    assert run.host["os"] == "Windows 11 Pro 24H2 [10.0 Build 26100] (x64)"
    assert run.host["admin"] == "true" and run.host["edition"] == "x64"
    assert run.started_at == datetime(2025, 7, 14, 9, 5, 31)
    assert "comment: Samsung 990 PRO 2TB, PCIe 4.0 x4" in run.notes
    assert any("read/write split of the Mix" in a for a in run.absent)
    assert any("time zone" in a for a in run.absent)
    assert any("percentiles" in a for a in run.absent)


def test_cdm8_default_and_peak_profiles():
    p = parse("cdm8_default.txt")
    assert p.version == "8.0.4" and len(p.runs[0].jobs) == 8
    j = job(p, "RND4K Q1T1 write")
    assert j.write.bw_bytes == 140116000.0 and j.write.lat.mean_ns == 28910.0
    assert j.settings["zero_buffers"] is True  # <0Fill>
    assert p.runs[0].device["target"] == "D:"
    assert not any("Mix" in a for a in p.runs[0].absent)
    peak = parse("cdm8_peak_mix.txt")
    jobs = peak.runs[0].jobs
    assert [j.name for j in jobs] == [
        "SEQ1M Q8T1 read",
        "RND4K Q32T16 read",
        "SEQ1M Q8T1 write",
        "RND4K Q32T16 write",
        "MIX SEQ1M Q8T1",
        "MIX RND4K Q32T16",
    ]
    assert jobs[0].group == "Peak" and jobs[0].settings["size"] == 8 * GiB and jobs[0].settings["passes"] == 3
    assert jobs[0].settings["runtime_s"] == 10.0
    assert jobs[-1].settings["rwmixread"] == 80


def test_cdm7_has_no_measure_time():
    p = parse("cdm7_default.txt")
    assert p.version == "7.0.0"
    j = job(p, "RND4K Q32T16 read")
    assert j.read.bw_bytes == 402556000.0 and j.read.iops == 98280.3
    assert "runtime_s" not in j.settings and j.settings["interval_s"] == 5.0
    assert any("measure time" in a for a in p.runs[0].absent)
    assert "default affinity disabled" in p.runs[0].notes


def test_cdm6_utf16_old_lines():
    p = parse("cdm6_utf16.txt")
    assert p.version == "6.0.2"
    run = p.runs[0]
    assert len(run.jobs) == 8
    seq = job(p, "SEQ128K Q32T1 read")
    assert seq.settings["bs"] == 131072 and seq.read.bw_bytes == 559294000.0
    assert seq.read.iops is None and seq.read.lat is None
    rnd = job(p, "RND4K Q8T8 write")
    assert rnd.write.iops == 89505.1 and rnd.settings["numjobs"] == 8
    assert run.device["size_bytes"] == str(int(Decimal("237.4") * GiB))
    assert run.started_at == datetime(2018, 5, 1, 10, 10, 10)
    assert "comment: Crucial MX500 500GB" in run.notes
    assert any("latency" in a and "5 and 6" in a for a in run.absent)
    assert any("block size" in n for n in run.notes)


def test_cdm5_sequential_without_queue_is_1mib_q1():
    p = parse("cdm5_utf16.txt")
    assert p.version == "5.2.1"
    j = job(p, "SEQ1M Q1T1 write")
    assert j.settings == {
        "rw": "write",
        "bs": 1048576,
        "iodepth": 1,
        "numjobs": 1,
        "size": GiB,
        "passes": 5,
        "interval_s": 5.0,
    }
    assert j.write.bw_bytes == 495011000.0
    assert job(p, "SEQ128K Q32T1 read").read.bw_bytes == 539574000.0
    assert p.runs[0].started_at == datetime(2017, 1, 1, 0, 0, 0)


def test_kdiskmark3_units_are_1000_kib():
    p = parse("kdm3_default.txt")
    assert (p.format, p.tool, p.version) == ("kdiskmark", "KDiskMark", "3.1.4")
    run = p.runs[0]
    j = job(p, "SEQ1M Q8T1 read")
    assert j.read.bw_bytes == 508897 * 1024.0  # 508.897 "MB/s" = 508897 KiB/s
    assert j.read.iops == 497.0 and j.read.lat.mean_ns == 13840050.0 and j.read.clat is None  # lat before 3.2
    assert run.host == {
        "fio_version": "3.36",
        "os": "opensuse-tumbleweed 20240307",
        "kernel": "linux 6.7.7-1-default",
    }
    assert run.device == {"target": "/home (/dev/nvme0n1p2)", "model": "WD Blue SN570 1TB"}
    assert run.started_at == datetime(2024, 3, 9, 16, 10, 33)
    assert j.settings["runtime_s"] == 5.0


def test_kdiskmark2_peak_mix():
    p = parse("kdm2_peak_mix.txt")
    assert p.version == "2.3.0"
    jobs = p.runs[0].jobs
    assert [j.name for j in jobs] == [
        "SEQ1M Q8T1 read",
        "RND4K Q32T16 read",
        "SEQ1M Q8T1 write",
        "RND4K Q32T16 write",
        "MIX SEQ1M Q8T1",
        "MIX RND4K Q32T16",
    ]
    assert jobs[0].group == "Peak Performance" and jobs[0].settings["size"] == 4 * GiB
    assert jobs[-1].metrics["bw_bytes"] == 520780 * 1024.0 and jobs[-1].settings["rwmixread"] == 70
    assert any("drive model" in a for a in p.runs[0].absent)


def test_kdiskmark32_latency_is_clat():
    data = sample("crystaldiskmark", "kdm3_default.txt").replace(b"KDiskMark (3.1.4)", b"KDiskMark (3.2.0)")
    j = KDM.parse("k.txt", data).runs[0].jobs[0]
    assert j.read.lat is None and j.read.clat.mean_ns == 13840050.0


@pytest.mark.parametrize("name", [n for n, _ in samples("crystaldiskmark")])
def test_iops_times_block_size_is_the_bandwidth(name):
    """Each sample's IOPS x block size equals its MB/s within the printed rounding (MB/s to 0.001,
    IOPS to 0.1; KDiskMark's MB/s is KiB/s / 1000)."""
    p = parse(name)
    for j in p.runs[0].jobs:
        bs = j.settings["bs"]
        for d in (j.read, j.write):
            if d is None or d.iops is None:
                continue
            unit = KDM_MB if p.format == "kdiskmark" else 10**6
            assert abs(d.iops * bs - d.bw_bytes) <= 0.0005 * unit + 0.05 * bs + 1e-9 * d.bw_bytes, (
                name,
                j.name,
            )


LINE = "  {kind} {size:>4}{unit} (Q={q:>3}, T={t:>2}): {mbs:>9} MB/s [{iops:>9} IOPS] <{lat:>9} us>"


@settings(max_examples=60, derandomize=True, deadline=None, database=None)
@given(
    st.sampled_from(
        [("SEQ", 1, "MiB"), ("SEQ", 128, "KiB"), ("RND", 4, "KiB"), ("RND", 16, "KiB"), ("SEQ", 8, "MiB")]
    ),
    st.integers(0, 99_999_999),
    st.integers(1, 512),
    st.integers(1, 64),
    st.integers(0, 9_999_999),
)
def test_conversion_is_exact_for_any_printed_value(test, milli_mbs, q, t, centi_us):
    kind, size, unit = test
    bs = size * (1048576 if unit == "MiB" else 1024)
    mbs = Decimal(milli_mbs) / 1000
    iops = f"{float(mbs) * 1e6 / bs:.1f}"  # CrystalDiskMark's own: score x 10^6 / bytes
    lat = Decimal(centi_us) / 100
    text = "\r\n".join([
        "------------------------------------------------------------------------------",
        "CrystalDiskMark 8.0.4 x64 (C) 2007-2021 hiyohiyo",
        "* MB/s = 1,000,000 bytes/s [SATA/600 = 600,000,000 bytes/s]",
        "",
        "[Read]",
        LINE.format(kind=kind, size=size, unit=unit, q=q, t=t, mbs=f"{mbs:.3f}", iops=iops, lat=f"{lat:.2f}"),
        "",
        "Profile: Default",
        "   Test: 1 GiB (x5) [C: 1% (1/100GiB)]",
    ])  # fmt: skip
    j = CDM.parse("x.txt", text.encode()).runs[0].jobs[0]
    assert j.read.bw_bytes == float(mbs * 10**6) == int(mbs * 10**6)
    assert j.read.lat.mean_ns == float(lat * 1000)
    assert (j.settings["bs"], j.settings["iodepth"], j.settings["numjobs"]) == (bs, q, t)
    assert j.settings["rw"] == ("read" if kind == "SEQ" else "randread")
    assert abs(j.read.iops * bs - j.read.bw_bytes) <= 500 + 0.05 * bs + 1e-9 * j.read.bw_bytes


def test_each_sample_is_claimed_by_its_importer_only():
    for name, data in samples("crystaldiskmark"):
        assert claims(name, data) == ["kdiskmark" if name.startswith("kdm") else "crystaldiskmark"], name


def test_truncated_file_names_the_missing_footer():
    data = sample("crystaldiskmark", "cdm8_default.txt")
    cut = data[: data.index(b"Profile:")]
    with pytest.raises(ImportFormatError) as e:
        CDM.parse("cut.txt", cut)
    assert e.value.format == "crystaldiskmark" and "Test:" in (e.value.expected or "")
    assert e.value.line is not None


def test_wrong_tool_and_unknown_version():
    with pytest.raises(ImportFormatError) as e:
        CDM.parse("k.txt", sample("crystaldiskmark", "kdm3_default.txt"))
    assert e.value.line == 1 and "CrystalDiskMark" in e.value.expected
    with pytest.raises(ImportFormatError) as e:
        CDM.parse("d.txt", sample("diskspd", "diskspd2017_mix.txt"))
    assert e.value.format == "crystaldiskmark"
    old = sample("crystaldiskmark", "cdm8_default.txt").replace(
        b"CrystalDiskMark 8.0.4", b"CrystalDiskMark 4.0.3"
    )
    with pytest.raises(ImportFormatError) as e:
        CDM.parse("old.txt", old)
    assert e.value.line == 2 and "5, 6, 7, 8, 9" in e.value.expected and "4.0.3" in str(e.value)
    with pytest.raises(ImportFormatError) as e:
        KDM.parse(
            "k.txt",
            sample("crystaldiskmark", "kdm3_default.txt").replace(b"KDiskMark (3.1.4)", b"KDiskMark (1.6.2)"),
        )
    assert "KDiskMark 2, 3" in e.value.expected


def test_a_garbled_test_line_is_named_by_its_line():
    data = sample("crystaldiskmark", "cdm9_nvme_mix.txt").replace(
        b"MB/s [ 979681.6 IOPS]", b"MB/s [ 979x81.6 IOPS]"
    )
    with pytest.raises(ImportFormatError) as e:
        CDM.parse("g.txt", data)
    assert e.value.line == 11 and "SEQ 1MiB" in e.value.expected
    no_units = sample("crystaldiskmark", "cdm8_default.txt").replace(
        b"* MB/s = 1,000,000 bytes/s", b"* MB/s = 1,048,576 bytes/s"
    )
    with pytest.raises(ImportFormatError) as e:
        CDM.parse("u.txt", no_units)
    assert "1,000,000" in e.value.expected


test_fuzz_crystaldiskmark = fuzz_test("crystaldiskmark", ["crystaldiskmark", "kdiskmark"])
