"""The fio importers (backend/imports/formats/fio_*.py) on fio's own output, two versions per format:
- fio 3.33 (Debian's): JSON, json+, terse v2/v3/v5 and normal output of small jobs run by
  tests/imports/samples/fio/make_samples.sh (the files are committed; the script says how);
- fio 2.2.10: JSON, normal and terse written by hand from fio 2.x's documented key names and layout
  (`clat`/`lat` in µs, `io_bytes` in KiB and `bw` in KiB/s, no `bw_bytes`; `read : io=..KB,
  bw=..KB/s, iops=.., runt=..msec`; `issued : total=r=/w=/d=`): fio 2.x is not packaged here.
Units convert exactly: KiB = 1024 B, µs = 1000 ns, IOPS x runtime = I/Os."""

import io
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from backend.imports.formats import fio_json, fio_normal, fio_terse, registry
from backend.imports.formats.base import ImportFormatError

SAMPLES = Path(__file__).parent / "samples" / "fio"


def sample(name: str) -> bytes:
    return (SAMPLES / name).read_bytes()


# --- fio 2.x (hand-written from the documented 2.x names) --------------------------------------


def test_fio2_json_reads_kib_and_microseconds_as_bytes_and_ns() -> None:
    p = registry.parse("fio-2.2.10.json", sample("fio-2.2.10.json"))
    assert (p.format, p.tool, p.version) == ("fio-json", "fio", "2.2.10")
    run = p.runs[0]
    rr, sw = run.jobs
    assert (rr.name, rr.group, sw.group) == ("randread-4k", "0", "1")
    assert rr.settings["bs"] == 4096 and rr.settings["iodepth"] == 32 and rr.settings["direct"] is True
    assert rr.settings["rw"] == "randread" and rr.settings["runtime_s"] == 10.0  # the global option
    assert rr.read is not None and rr.write is None and rr.trim is None
    assert rr.read.io_bytes == 65536 * 1024 and rr.read.bw_bytes == 6553 * 1024
    assert rr.read.total_ios == 16384 and rr.read.runtime_ms == 10000
    assert rr.read.clat is not None and rr.read.clat.mean_ns == pytest.approx(19520.33 * 1000)
    assert rr.read.clat.percentiles_ns[99.0] == 30848 * 1000 and 0.0 not in rr.read.clat.percentiles_ns
    assert rr.read.lat is not None and rr.read.lat.max_ns == 98010 * 1000
    assert sw.write is not None and sw.write.io_bytes == 2**30 and sw.settings["bs"] == 2**20
    assert run.device["name"] == "sdb" and any("util=99.81" in n for n in run.notes)
    assert run.finished_at is not None and run.finished_at.year == 2015


def test_fio2_normal_reads_the_same_job_as_its_json() -> None:
    p = registry.parse("fio-2.2.10.normal", sample("fio-2.2.10.normal"))
    assert (p.format, p.version) == ("fio-normal", "2.2.10")
    j = {x.name: x for x in p.runs[0].jobs}
    rr, sw = j["randread-4k"], j["seqwrite-1m"]
    assert rr.settings == {"rw": "randread", "bs": 4096, "ioengine": "libaio", "iodepth": 32}
    assert rr.read is not None and rr.read.total_ios == 16384 and rr.read.runtime_ms == 10000
    assert rr.read.io_bytes == 16384 * 4096  # exact: I/Os x the fixed block size
    assert rr.read.iops == pytest.approx(1638.4)  # I/Os / runtime, as fio computes it
    assert rr.read.clat is not None and rr.read.clat.percentiles_ns[99.99] == 60160 * 1000
    assert sw.write is not None and sw.write.io_bytes == 1024 * 2**20
    assert sw.write.clat is not None and sw.write.clat.mean_ns == pytest.approx(31.2e6)  # msec
    assert sw.write.clat.percentiles_ns[99.0] == 37e6
    assert p.runs[0].device["name"] == "sdb"


# --- fio 3.33 (Debian's, run by make_samples.sh) -------------------------------------------------


def test_fio3_json_jobs_groups_and_ns_latencies() -> None:
    data = sample("fio-3.33.json")
    doc = json.loads(data[data.index(b"{") :])
    p = registry.parse("fio-3.33.json", data)
    assert (p.format, p.version) == ("fio-json", "3.33")
    jobs = p.runs[0].jobs
    assert [j.name for j in jobs] == [j["jobname"] for j in doc["jobs"]]
    assert len({j.group for j in jobs}) >= 2  # stonewall'd groups
    for j, raw in zip(jobs, doc["jobs"], strict=True):
        for side in ("read", "write"):
            d, r = getattr(j, side), raw[side]
            if r["total_ios"] == 0:
                assert d is None
                continue
            assert (
                d.io_bytes == r["io_bytes"] and d.bw_bytes == r["bw_bytes"] and d.total_ios == r["total_ios"]
            )
            assert d.iops == r["iops"] and d.runtime_ms == r["runtime"]
            assert d.clat.mean_ns == r["clat_ns"]["mean"] and d.lat.max_ns == r["lat_ns"]["max"]
            pct = {float(k): v for k, v in r["clat_ns"]["percentile"].items()}
            assert d.clat.percentiles_ns == pct


def test_fio3_json_plus_is_detected_and_its_bins_kept() -> None:
    p = registry.parse("fio-3.33.jsonplus", sample("fio-3.33.jsonplus"))
    assert p.format == "fio-json+" and p.version == "3.33"
    assert not any("histograms" in a for a in p.runs[0].absent)
    doc = json.loads(sample("fio-3.33.jsonplus"))
    kept = 0
    for j, raw in zip(p.runs[0].jobs, doc["jobs"], strict=True):
        for d, r in ((j.read, raw["read"]), (j.write, raw["write"])):
            if d is None:
                continue
            bins = r["clat_ns"]["bins"]
            assert d.clat is not None and d.clat.bins == {int(k): v for k, v in bins.items()}
            assert sum(d.clat.bins.values()) == r["clat_ns"]["N"]  # every I/O in a bucket
            kept += 1
    assert kept >= 2


def test_fio2_json_plus_bins_in_us_and_too_many_not_kept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    doc = json.loads(sample("fio-2.2.10.json"))
    job = next(j for j in doc["jobs"] if j["read"]["io_bytes"])
    job["read"]["clat"]["bins"] = {"100": 5, "250": 3, "0": 0}  # fio 2.x: µs buckets
    p = registry.parse("j", json.dumps(doc).encode())
    [d] = [j.read for j in p.runs[0].jobs if j.name == job["jobname"]]
    assert d is not None and d.clat is not None and d.clat.bins == {100_000: 5, 250_000: 3}
    assert p.format == "fio-json+"
    monkeypatch.setattr(fio_json, "MAX_BINS", 1)
    p = registry.parse("j", json.dumps(doc).encode())
    assert all(x.clat is None or x.clat.bins is None for j in p.runs[0].jobs for x in (j.read, j.write) if x)
    assert any("more than 1 in the file" in a for a in p.runs[0].absent)
    job["read"]["clat"]["bins"] = {"100": "many"}  # not fio's histogram: no bins, the rest is read
    monkeypatch.setattr(fio_json, "MAX_BINS", 500_000)
    p = registry.parse("j", json.dumps(doc).encode())
    assert all(x.clat is None or x.clat.bins is None for j in p.runs[0].jobs for x in (j.read, j.write) if x)


def test_fio3_terse_v3_v5_and_v2_agree_with_json() -> None:
    ref = {j.name: j for j in registry.parse("j", sample("fio-3.33.json")).runs[0].jobs}
    for name, version in (
        ("fio-3.33-v3.terse", "3.33"),
        ("fio-3.33-v5.terse", "3.33"),
        ("fio-3.33-v2.terse", None),
    ):
        p = registry.parse(name, sample(name))
        assert p.format == "fio-terse" and p.version == version, name
        for j in p.runs[0].jobs:
            for side in ("read", "write"):
                d, r = getattr(j, side), getattr(ref[j.name], side)
                assert (d is None) == (r is None), (name, j.name, side)
                if d is None:
                    continue
                assert d.io_bytes == r.io_bytes  # KiB x 1024, exact (size-bound jobs: every run)
                if name != "fio-3.33-v3.terse":
                    continue  # v2 and v5 are runs of their own: other timings
                assert d.runtime_ms == r.runtime_ms
                assert d.iops == pytest.approx(r.iops, abs=1)  # terse prints whole IOPS
                # terse prints µs with 6 decimals: the same mean to the ns
                assert d.clat.mean_ns == pytest.approx(r.clat.mean_ns, abs=1)


def test_fio3_normal_agrees_with_json() -> None:
    ref = {j.name: j for j in registry.parse("j", sample("fio-3.33.json")).runs[0].jobs}
    p = registry.parse("fio-3.33.normal", sample("fio-3.33.normal"))
    assert (p.format, p.version) == ("fio-normal", "3.33")
    assert {j.name for j in p.runs[0].jobs} == set(ref)
    for j in p.runs[0].jobs:
        for side in ("read", "write"):
            d, r = getattr(j, side), getattr(ref[j.name], side)
            assert (d is None) == (r is None), (j.name, side)
            if d is None:
                continue
            assert d.total_ios == r.total_ios and d.runtime_ms == r.runtime_ms
            assert d.io_bytes == r.io_bytes  # I/Os x the fixed bs
            assert d.clat.mean_ns == pytest.approx(r.clat.mean_ns, rel=0.01)


# --- detection, hints, errors -----------------------------------------------------------------


@pytest.mark.parametrize(
    "name, fmt",
    [
        ("fio-2.2.10.json", "fio-json"),
        ("fio-3.33.json", "fio-json"),
        ("fio-3.33.jsonplus", "fio-json"),
        ("fio-3.33-v3.terse", "fio-terse"),
        ("fio-3.33-v2.terse", "fio-terse"),
        ("fio-3.33.normal", "fio-normal"),
        ("fio-2.2.10.normal", "fio-normal"),
    ],
)
def test_each_sample_is_claimed_by_exactly_its_format(name: str, fmt: str) -> None:
    data = sample(name)
    assert registry.candidates(name, data[: registry.HEAD_BYTES]) == [fmt]


def test_a_hint_by_alias_and_an_unknown_hint() -> None:
    assert registry.by_name("json+").format == "fio-json"
    assert registry.by_name("TERSE").format == "fio-terse"
    with pytest.raises(ImportFormatError) as e:
        registry.by_name("lotus-123")
    assert "fio-json" in (e.value.expected or "")


def test_nothing_recognised_names_the_formats() -> None:
    with pytest.raises(ImportFormatError) as e:
        registry.parse("notes.txt", b"hello, this is not a benchmark\n")
    assert e.value.format == "unknown" and "fio-terse" in (e.value.expected or "")


def test_truncated_json_names_the_line() -> None:
    data = sample("fio-3.33.json")
    cut = data[: len(data) // 2]
    with pytest.raises(ImportFormatError) as e:
        fio_json.FioJson().parse("cut.json", cut)
    assert e.value.format == "fio-json" and e.value.line is not None and e.value.line > 10
    assert "truncated" in str(e.value)


def test_json_read_in_small_chunks_is_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    data = sample("fio-3.33.jsonplus")
    whole = fio_json.parse_file("a", io.BytesIO(data))
    monkeypatch.setattr(fio_json, "CHUNK", 97)  # every value split across chunks somewhere
    assert fio_json.parse_file("a", io.BytesIO(data)) == whole


def test_terse_wrong_field_count_and_bad_number() -> None:
    line = sample("fio-3.33-v3.terse").decode().splitlines()[0]
    with pytest.raises(ImportFormatError) as e:
        fio_terse.parse("t", (line.rsplit(";", 60)[0] + "\n").encode())
    assert e.value.line == 1 and "fields" in (e.value.expected or "")
    fields = line.split(";")
    fields[7] = "many"
    with pytest.raises(ImportFormatError) as e:
        fio_terse.parse("t", ("\n" + ";".join(fields)).encode())
    assert e.value.line == 2 and "IOPS" in (e.value.expected or "")


def test_normal_without_results_is_refused() -> None:
    text = (
        b"job: (g=0): rw=read, bs=(R) 4096B-4096B, (W) 4096B-4096B, (T) 4096B-4096B, ioengine=psync\n"
        b"fio-3.33\n"
    )
    with pytest.raises(ImportFormatError) as e:
        fio_normal.parse("n", text)
    assert e.value.format == "fio-normal" and "groupid" in (e.value.expected or "")


def _terse_line(kib: int, bw_kib: int, iops: int, runtime_ms: int, clat_us: float, p99_us: int) -> str:
    """A terse v3 line of the HOWTO's field list: one read direction, no write."""
    read: list[object] = [kib, bw_kib, iops, runtime_ms, 0, 0, 0, 0, 1, p99_us, clat_us, 0.5]
    read += [f"{p:f}%={p99_us if p >= 99 else 1}" for p in (1, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95)]
    read += [f"{p:f}%={p99_us}" for p in (99, 99.5, 99.9, 99.95, 99.99)] + ["0%=0"] * 3
    read += [1, p99_us, clat_us + 0.25, 0.5, bw_kib, bw_kib, "100.000000%", bw_kib, 0]
    write = [0] * 12 + ["0%=0"] * 20 + [0] * 9
    tail = [1.0, 2.0, 10, 0, 5] + ["100.0%"] + ["0.0%"] * 6 + ["0.00%"] * 22
    return ";".join(str(x) for x in ["3", "fio-3.33", "prop", 0, 0, *read, *write, *tail])


@settings(max_examples=40, derandomize=True, deadline=None, database=None)
@given(
    st.integers(0, 2**40),
    st.integers(1, 2**34),
    st.integers(1, 10**7),
    st.integers(1, 10**8),
    st.integers(1, 10**8).map(lambda n: n / 1000),
    st.integers(1, 10**8),
)
def test_terse_units_convert_exactly(kib: int, bw: int, iops: int, rt: int, clat_us: float, p99: int) -> None:
    """KiB and KiB/s are 1024 bytes, µs 1000 ns: exact for every value fio prints."""
    p = fio_terse.parse("t", _terse_line(kib, bw, iops, rt, clat_us, p99).encode())
    d = p.runs[0].jobs[0].read
    assert d is not None and p.runs[0].jobs[0].write is None
    assert d.io_bytes == kib * 1024 and d.bw_bytes == bw * 1024 and d.iops == iops and d.runtime_ms == rt
    assert d.clat is not None and d.clat.mean_ns == pytest.approx(clat_us * 1000, rel=1e-12)
    assert d.clat.percentiles_ns[99.0] == p99 * 1000 and d.clat.max_ns == p99 * 1000


def test_fio3_client_server_stats_name_their_hosts() -> None:
    """fio --client: the jobs under `client_stats`, each with its `hostname`, and an "All clients"
    sum that is not a job (built from the 3.33 sample's jobs, as fio's client writes them)."""
    data = sample("fio-3.33.json")
    doc = json.loads(data[data.index(b"{") :])
    jobs = doc.pop("jobs")
    doc["client_stats"] = [
        {**jobs[0], "hostname": "nodeA", "port": 8765},
        {**jobs[0], "hostname": "nodeB", "port": 8765},
        {**jobs[0], "jobname": "All clients"},
    ]
    p = registry.parse("cs.json", json.dumps(doc).encode(), hint="fio-json")
    run = p.runs[0]
    assert [j.group for j in run.jobs] == ["nodeA:0", "nodeB:0"]
    assert any("2 hosts: nodeA, nodeB" in n for n in run.notes)
