"""fio's reporting options in the engine (src/output.c, src/terse.c, src/normal.c, src/logs.c), each
run beside Debian's fio 3.33 on the same small job: terse v3 field for field, the log files' names
and columns, the percentile keys, normal output's lines; and every value checked against the
engine's own JSON document. Timings are never compared, only shapes and counts."""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .conftest import FIO_CLOCK, made_once, run_engine

FIO = shutil.which("fio")
needs_fio = pytest.mark.skipif(FIO is None, reason="Debian's fio is not installed")


def fio(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    assert FIO
    p = subprocess.run([FIO, FIO_CLOCK, *args], cwd=cwd, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    return p


def engine(binary: Path, cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    p = subprocess.run([str(binary), *args], cwd=cwd, capture_output=True, text=True, timeout=120)
    if check:
        assert p.returncode == 0, p.stderr
    return p


def job(data: Path, *extra: str) -> list[str]:
    return ["--name=t", f"--filename={data}", "--size=1m", "--bs=4k", *extra]


def timed(data: Path, *extra: str) -> list[str]:
    """A job long enough for runtimes in ms, bandwidth samples and log windows."""
    return job(data, "--runtime=300ms", "--time_based=1", *extra)


def kind(field: str) -> str:
    """What a terse field looks like: what must agree between fio and the engine."""
    if re.fullmatch(r"\d+(\.\d+)?%=\d+", field) or field == "0%=0":
        return "pct=value"
    if re.fullmatch(r"\d+\.\d+%", field):
        return "percent"
    if re.fullmatch(r"-?\d+\.\d{6}", field):
        return "float"
    if re.fullmatch(r"-?\d+", field):
        return "int"
    return "text"


# ---- terse ----------------------------------------------------------------------------------------


@needs_fio
@pytest.mark.parametrize(
    "extra",
    [
        ["--rw=randread"],
        ["--rw=randrw", "--ioengine=libaio", "--iodepth=4"],
        ["--rw=write", "--lat_percentiles=1", "--percentile_list=50:99:99.9"],
    ],
)
def test_terse_v3_has_fios_fields_in_fios_order(engine_bin: Path, scratch: Path, extra: list[str]) -> None:
    data = scratch / "d"
    theirs = fio(scratch, *job(data, *extra), "--minimal").stdout.splitlines()[-1].split(";")
    r = engine(engine_bin, scratch, *job(data, *extra), "--output-format=terse,json")
    line, _, doc_text = r.stdout.partition("\n")
    ours = line.split(";")
    assert len(ours) == len(theirs) == 121  # tmpfs: no disk fields, as fio
    assert [kind(f) for f in ours] == [kind(f) for f in theirs]
    # the percentile fields name the same percentiles (their values are latencies)
    assert [f.split("=")[0] for f in ours if "%=" in f] == [f.split("=")[0] for f in theirs if "%=" in f]
    assert ours[0] == "3" and ours[2] == "t"
    # the same bytes in KiB (read + write: a mixed job splits them by its own draws), the same depths
    assert int(ours[5]) + int(ours[46]) == int(theirs[5]) + int(theirs[46]) == 1024
    if "--iodepth=4" not in extra:
        assert ours[92:99] == theirs[92:99] == ["100.0%"] + ["0.0%"] * 6
    # ... and hold our JSON's numbers
    doc = json.loads(doc_text)
    j = doc["jobs"][0]
    assert ours[1] == doc["fio version"]
    for base, d in ((5, j["read"]), (46, j["write"])):
        assert int(ours[base]) == d["io_kbytes"]
        assert int(ours[base + 1]) == d["bw"]
        assert int(ours[base + 3]) == d["runtime"]
        assert int(ours[base + 8]) == d["clat_ns"]["min"] // 1000
        assert int(ours[base + 9]) == d["clat_ns"]["max"] // 1000
        assert float(ours[base + 10]) == pytest.approx(d["clat_ns"]["mean"] / 1000, abs=1e-5)
        src = "lat_ns" if "--lat_percentiles=1" in extra else "clat_ns"
        pct = d[src].get("percentile", {})
        got = [f for f in ours[base + 12 : base + 32] if f != "0%=0"]
        if d["total_ios"]:
            assert got == [f"{k}%={v // 1000}" for k, v in pct.items()]
        else:  # no I/O this way: fio still names the percentiles, each 0
            assert got == [f"{p:f}%=0" for p in j["iowatt"]["options"]["percentile_list"]]
    assert float(ours[87].rstrip("%")) == pytest.approx(j["usr_cpu"], abs=1e-5)
    # latencies: the us buckets hold the ns ones in their first field, and all add up to 100 %
    lat = [float(f.rstrip("%")) for f in ours[99:121]]
    assert sum(lat) == pytest.approx(100, abs=0.5)


@needs_fio
def test_terse_versions_4_and_5_add_trim_and_sample_fields(engine_bin: Path, scratch: Path) -> None:
    data = scratch / "d"
    for v in ("4", "5"):
        theirs = fio(scratch, *job(data, "--rw=randread"), "--minimal", f"--terse-version={v}").stdout
        ours = engine(
            engine_bin, scratch, *job(data, "--rw=randread"), "--minimal", f"--terse-version={v}"
        ).stdout
        t, o = theirs.splitlines()[-1].split(";"), ours.strip().split(";")
        assert o[0] == v and len(o) == len(t)
        assert [kind(f) for f in o] == [kind(f) for f in t]
    r = run_engine(engine_bin, *job(scratch / "d"), "--terse-version=2", check=False)
    assert r.rc == 2 and r.stderr.startswith("iowatt-engine: terse-version: ")


def test_output_format_lists_print_in_fios_order(engine_bin: Path, scratch: Path) -> None:
    data = scratch / "d"
    out = engine(engine_bin, scratch, *job(data), "--output-format=normal,json,terse").stdout
    terse_at, json_at, normal_at = out.index("3;"), out.index("{\n"), out.index("Run status group 0")
    assert terse_at < json_at < normal_at  # fio: terse, json, normal whatever the list's order
    minimal = engine(engine_bin, scratch, *job(data), "--minimal").stdout
    assert minimal.count("\n") == 1 and minimal.startswith("3;")
    plus = json.loads(engine(engine_bin, scratch, *job(data), "--output-format=json+").stdout)
    assert "bins" in plus["jobs"][0]["read"]["clat_ns"]
    for bad in ("xml", "json,", "terse,,json", "terse,bogus", ""):
        r = run_engine(engine_bin, *job(data), f"--output-format={bad}", check=False)
        assert r.rc == 2 and r.stderr.startswith("iowatt-engine: output-format: "), (bad, r.stderr)


# ---- normal ---------------------------------------------------------------------------------------


@needs_fio
def test_normal_output_has_fios_lines(engine_bin: Path, scratch: Path) -> None:
    data = scratch / "d"
    args = [*timed(data, "--rw=randrw", "--ioengine=libaio", "--iodepth=4"), "--name=u", f"--filename={data}",
            "--size=1m", "--rw=write", "--bs=64k", "--runtime=300ms", "--time_based=1"]  # fmt: skip
    theirs = fio(scratch, *args, "--output-format=normal").stdout
    ours = engine(engine_bin, scratch, *args, "--output-format=normal").stdout

    def shape(text: str) -> list[str]:
        keep = []
        for line in text.splitlines():
            m = re.match(r"^(\s*[A-Za-z|][A-Za-z0-9 /|()]*?)\s*[:=(]", line)
            if m and not line.startswith(("Jobs:", "Starting", "fio-", "iowatt-", "t: Laying", "u: Laying")):
                keep.append(m[1].strip())
        return keep

    t, o = shape(theirs), shape(ours)
    for must in ("t", "read", "write", "clat", "lat", "cpu", "IO depths", "submit", "complete", "issued rwts",
                 "latency", "Run status group 0", "READ", "WRITE"):  # fmt: skip
        assert must in t and must in o, must
    assert re.search(r"^t: \(groupid=0, jobs=1\): err= 0: pid=\d+: ", ours, re.M)
    assert re.search(
        r"^  read: IOPS=[\d.]+k?, BW=[\d.]+[KMG]iB/s \([\d.]+[kMG]B/s\)\([\d.]+[KM]iB/\d+msec\)$", ours, re.M
    )
    assert re.search(
        r"^   READ: bw=\S+ \(\S+\), \S+-\S+ \(\S+-\S+\), io=\S+ \(\S+\), run=\d+-\d+msec$", ours, re.M
    )
    assert re.search(r"^  WRITE: .* io=\d+(\.\d+)?[KMG]iB", ours, re.M)


def test_num2str_like_fio(engine_bin: Path, scratch: Path) -> None:
    """fio's units: 8 MiB read in a run prints as 8192KiB and 8389kB."""
    ours = engine(engine_bin, scratch, *job(scratch / "d", "--size=8m", "--bs=64k", "--ioengine=libaio",
                                            "--direct=0", "--iodepth=1", "--rate_iops=1000"),
                  "--output-format=normal").stdout  # fmt: skip
    assert re.search(r"io=8192KiB \(8389kB\)", ours), ours


# ---- percentiles ------------------------------------------------------------------------------------


PERCENTILE_OPTIONS = [
    [],
    ["--lat_percentiles=1"],
    ["--clat_percentiles=0", "--lat_percentiles=0"],
    ["--slat_percentiles=1"],
    ["--percentile_list=99.99:50:1"],
    ["--percentile_list=25:75", "--lat_percentiles=1", "--slat_percentiles=1"],
]


def percentile_job(data: Path, extra: list[str]) -> list[str]:
    return job(data, "--rw=randread", "--ioengine=libaio", "--iodepth=2", *extra)


@pytest.fixture(scope="module")
def fio_percentile_jobs() -> Iterator[list[dict[str, Any]]]:
    """fio's read statistics of each percentile case, all in one fio run, once for the run (each
    its own job and file; the percentile options are a job's own in fio's report): fio's start-up
    paid once instead of six times."""

    def make(d: Path) -> None:
        args = [x for i, extra in enumerate(PERCENTILE_OPTIONS) for x in percentile_job(d / f"d{i}", extra)]
        doc = json.loads(fio(d, "--output-format=json", *args).stdout)
        assert [j["job options"]["filename"] for j in doc["jobs"]] == [
            str(d / f"d{i}") for i in range(len(PERCENTILE_OPTIONS))
        ]
        (d / "doc.json").write_text(json.dumps(doc))

    for d in made_once("reporting-percentiles", make):
        yield [j["read"] for j in json.loads((d / "doc.json").read_text())["jobs"]]


@needs_fio
@pytest.mark.parametrize(
    "case", range(len(PERCENTILE_OPTIONS)), ids=lambda i: " ".join(PERCENTILE_OPTIONS[i])
)
def test_percentile_keys_as_fio(
    engine_bin: Path, scratch: Path, case: int, fio_percentile_jobs: list[dict[str, Any]]
) -> None:
    extra = PERCENTILE_OPTIONS[case]
    args = [*percentile_job(scratch / "d", extra), "--output-format=json"]
    theirs = fio_percentile_jobs[case]
    ours = json.loads(engine(engine_bin, scratch, *args).stdout)["jobs"][0]["read"]
    for key in ("slat_ns", "clat_ns"):
        assert list(ours[key].get("percentile", {})) == list(theirs[key].get("percentile", {})), key
    # lat_ns: fio's keys whenever fio has them (the engine also keeps them by default, as before)
    if "percentile" in theirs["lat_ns"]:
        assert list(ours["lat_ns"]["percentile"]) == list(theirs["lat_ns"]["percentile"])
    if "--clat_percentiles=0" in extra:
        assert "percentile" not in ours["lat_ns"]
    for key in ("slat_ns", "clat_ns", "lat_ns"):
        p = list(ours[key].get("percentile", {}).values())
        assert p == sorted(p)
        if p:
            assert ours[key]["min"] * 0.99 <= p[0] and p[-1] <= ours[key]["max"] * 1.01


@pytest.mark.parametrize("bad", ["0", "101", "50:abc", ":".join(["1"] * 21), ""])
def test_percentile_list_refusals(engine_bin: Path, scratch: Path, bad: str) -> None:
    r = run_engine(engine_bin, *job(scratch / "d"), f"--percentile_list={bad}", check=False)
    assert r.rc == 2 and r.stderr.startswith("iowatt-engine: percentile_list: "), r.stderr


# ---- logs -------------------------------------------------------------------------------------------


def read_log(path: Path) -> list[list[int]]:
    """fio's log format (HOWTO "Log File Formats"): time, value, direction, block size[, offset],
    priority -- comma and blank separated integers, one I/O or window per line."""
    rows = []
    for line in path.read_text().splitlines():
        rows.append([int(x) for x in line.split(", ")])
    return rows


@needs_fio
def test_log_files_names_and_columns_as_fio(engine_bin: Path, scratch: Path) -> None:
    data = scratch / "d"
    logs = ["--write_bw_log=x", "--write_lat_log=x", "--write_iops_log=x"]
    clones = ["--numjobs=2", "--group_reporting"]  # one jobs[] entry for both clones
    args = [*job(data, "--rw=randrw", *clones, "--log_offset=1"), *logs, "--minimal"]
    fdir, odir = scratch / "fio", scratch / "ours"
    fdir.mkdir()
    odir.mkdir()
    fio(fdir, *args)
    r = engine(engine_bin, odir, *[a for a in args if a != "--minimal"])
    doc = json.loads(r.stdout)
    names = sorted(p.name for p in fdir.glob("x_*.log"))
    assert names == sorted(p.name for p in odir.glob("x_*.log"))
    assert "x_clat.2.log" in names and "x_bw.1.log" in names
    for name in names:
        f, o = read_log(fdir / name), read_log(odir / name)
        if f and o:
            assert {len(row) for row in o} == {len(row) for row in f} == {6}, name
    # per-I/O logs: one line per I/O; values agree with the JSON totals
    j = doc["jobs"][0]
    total = j["read"]["total_ios"] + j["write"]["total_ios"]
    iops = read_log(odir / "x_iops.1.log") + read_log(odir / "x_iops.2.log")
    assert len(iops) == total and sum(r[1] for r in iops) == total
    assert sum(1 for r in iops if r[2] == 0) == j["read"]["total_ios"]
    assert all(r[3] == 4096 and r[4] % 4096 == 0 and r[4] < 1 << 20 for r in iops)
    clat = read_log(odir / "x_clat.1.log") + read_log(odir / "x_clat.2.log")
    reads = [r[1] for r in clat if r[2] == 0]
    assert len(reads) == j["read"]["clat_ns"]["N"]
    assert min(reads) == j["read"]["clat_ns"]["min"] and max(reads) == j["read"]["clat_ns"]["max"]
    assert sum(reads) / len(reads) == pytest.approx(j["read"]["clat_ns"]["mean"], rel=1e-9)
    bw = read_log(odir / "x_bw.1.log")
    clat1 = read_log(odir / "x_clat.1.log")
    assert [r[1] for r in bw] == [r[3] * 10**6 // c[1] for r, c in zip(bw, clat1, strict=True)]
    times = [r[0] for r in clat1]
    assert times == sorted(times) and times[-1] <= j["job_runtime"] + 1


@needs_fio
def test_averaged_logs_as_fio(engine_bin: Path, scratch: Path) -> None:
    data = scratch / "d"
    logs = ["--write_lat_log=a", "--write_iops_log=a", "--write_bw_log=a", "--log_avg_msec=50"]
    # (paced: the windows are the clock's, so 2000 reads a second fill them as a tmpfs read at full
    # speed did, which kept a core busy in each of the three runs)
    args = [
        *job(data, "--rw=randread", "--size=8m", "--runtime=300ms", "--time_based=1", "--rate_iops=2000"),
        *logs,
    ]
    fdir, odir = scratch / "fio", scratch / "ours"
    fdir.mkdir()
    odir.mkdir()
    fio(fdir, *args, "--minimal")
    j = json.loads(engine(engine_bin, odir, *args).stdout)["jobs"][0]
    for name in ("a_clat.1.log", "a_lat.1.log", "a_iops.1.log", "a_bw.1.log"):
        o = read_log(odir / name)
        assert o, name
        assert {len(r) for r in o} == {5}
        assert all(r[3] == 0 for r in o)  # windows carry no block size, as fio's
        f = read_log(fdir / name)
        assert not f or {len(r) for r in f} == {5}
        times = [r[0] for r in o]
        assert times == sorted(times) and len(o) >= 4
    clat = read_log(odir / "a_clat.1.log")
    assert all(j["read"]["clat_ns"]["min"] <= r[1] <= j["read"]["clat_ns"]["max"] for r in clat)
    # windows of >= 50 ms: IOPS x window adds up to the I/Os done
    iops = read_log(odir / "a_iops.1.log")
    prev, done = 0, 0.0
    for r in iops:
        done += r[1] * (r[0] - prev) / 1000
        prev = r[0] - r[0] % 50
    assert done == pytest.approx(j["read"]["total_ios"], rel=0.2)
    mx = engine(engine_bin, odir, *[a.replace("=a", "=m") for a in args], "--log_max_value=1")
    jm = json.loads(mx.stdout)["jobs"][0]
    assert max(r[1] for r in read_log(odir / "m_clat.1.log")) == jm["read"]["clat_ns"]["max"]


@needs_fio
@pytest.mark.parametrize("coarse", [0, 3])
def test_hist_log_as_fio(engine_bin: Path, scratch: Path, coarse: int) -> None:
    data = scratch / "d"
    # (paced, as the averaged logs above: the histograms' shape is checked, not how many reads)
    args = [*timed(data, "--rw=randread", "--size=4m", "--rate_iops=2000"), "--write_hist_log=h",
            "--log_hist_msec=20", f"--log_hist_coarseness={coarse}"]  # fmt: skip
    fdir, odir = scratch / "fio", scratch / "ours"
    fdir.mkdir()
    odir.mkdir()
    fio(fdir, *args, "--minimal")
    j = json.loads(engine(engine_bin, odir, *args).stdout)["jobs"][0]
    o, f = read_log(odir / "h_clat_hist.1.log"), read_log(fdir / "h_clat_hist.1.log")
    width = 3 + 1856 // (1 << coarse)
    assert {len(r) for r in o} == {len(r) for r in f} == {width}
    assert sum(sum(r[3:]) for r in o) == j["read"]["total_ios"]


@needs_fio
def test_fiologparser_reads_our_logs_as_it_reads_fios(engine_bin: Path, scratch: Path) -> None:
    """Debian's fiologparser.py (shipped as documentation) predates fio 3.33's priority column:
    it unpacks four columns and fails on fio's own logs. It must do with ours exactly what it
    does with fio's; with the priority column cut off (its format), it reads ours."""
    src = Path("/usr/share/doc/fio/fiologparser.py.gz")
    if not src.exists():
        pytest.skip("fio's fiologparser.py (Debian package fio) not installed")
    tool = scratch / "fiologparser.py"
    tool.write_bytes(gzip.decompress(src.read_bytes()))
    args = [  # (paced: the parser reads the windows, whatever their counts)
        *timed(scratch / "d", "--rw=randread", "--size=4m", "--rate_iops=2000"),
        "--write_iops_log=p",
        "--log_avg_msec=20",
    ]
    (scratch / "fio").mkdir()
    fio(scratch / "fio", *args, "--minimal")
    j = json.loads(engine(engine_bin, scratch, *args).stdout)["jobs"][0]

    def parse(log: Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, str(tool), "-s", "-i", "100", str(log)],
                              capture_output=True, text=True, timeout=60)  # fmt: skip

    theirs, ours = parse(scratch / "fio" / "p_iops.1.log"), parse(scratch / "p_iops.1.log")
    assert ours.returncode == theirs.returncode
    assert ours.stderr.splitlines()[-1:] == theirs.stderr.splitlines()[-1:]
    four = scratch / "p4.log"
    four.write_text(
        "".join(", ".join(line.split(", ")[:4]) + "\n" for line in (scratch / "p_iops.1.log").open())
    )
    p = parse(four)
    assert p.returncode == 0, p.stderr
    rows = [line.split(", ") for line in p.stdout.splitlines() if line.strip()]
    assert rows and all(len(r) == 2 for r in rows)
    # the parser's per-interval sums over 100 ms windows of IOPS samples: the job's IOPS
    mean = sum(float(r[1]) for r in rows) / len(rows)
    assert mean == pytest.approx(j["read"]["iops"], rel=0.5)


# ---- output paths -----------------------------------------------------------------------------------


def test_log_and_output_files_are_new_files_only(engine_bin: Path, scratch: Path) -> None:
    data = scratch / "d"
    (scratch / "x_bw.1.log").write_text("keep\n")
    r = engine(engine_bin, scratch, *job(data), "--write_bw_log=x", check=False)
    # fio truncates an existing log; the engine never replaces a file
    assert r.returncode == 2 and r.stderr.startswith("iowatt-engine: write_bw_log: ") and "exists" in r.stderr
    assert (scratch / "x_bw.1.log").read_text() == "keep\n"
    os.symlink("/etc/passwd", scratch / "y_iops.1.log")
    r = engine(engine_bin, scratch, *job(data), "--write_iops_log=y", check=False)
    assert r.returncode == 2 and "write_iops_log" in r.stderr
    out = scratch / "o.txt"
    engine(engine_bin, scratch, *job(data), f"--output={out}", "--minimal")
    assert out.read_text().startswith("3;") and oct(out.stat().st_mode & 0o777) == "0o600"
    r = engine(engine_bin, scratch, *job(data), f"--output={out}", check=False)
    assert r.returncode == 2 and r.stderr.startswith("iowatt-engine: output: ")
    assert r.stdout == ""


def test_paths_stay_beneath(engine_bin: Path, scratch: Path) -> None:
    root = scratch / "root"
    root.mkdir()
    (scratch / "outside").mkdir()
    base = ["--name=t", f"--beneath={root}", "--filename=d", "--size=256k"]
    engine(engine_bin, scratch, *base, "--write_lat_log=sub_lat", "--output=o.json")
    assert (root / "sub_lat_clat.1.log").exists() and (root / "o.json").exists()
    assert not (scratch / "sub_lat_clat.1.log").exists()
    for opt in (
        f"--write_bw_log={scratch}/outside/x",
        "--write_bw_log=../x",
        f"--output={scratch}/outside/o",
    ):
        r = engine(engine_bin, scratch, *base, opt, check=False)
        assert r.returncode == 2 and r.stderr.startswith("iowatt-engine: beneath: "), (opt, r.stderr)
    os.symlink(scratch / "outside", root / "link")
    r = engine(engine_bin, scratch, *base, "--write_bw_log=link/x", check=False)
    assert r.returncode == 2 and not list((scratch / "outside").iterdir())


def test_refused_reporting_options(engine_bin: Path, scratch: Path) -> None:
    for opt in ("--log_compression=1", "--log_store_compressed=1", "--status-interval=1", "--eta=sometimes",
                "--eta-newline=0", "--log_hist_coarseness=7"):  # fmt: skip
        r = run_engine(engine_bin, *job(scratch / "d"), opt, check=False)
        name = opt[2:].split("=")[0]
        assert r.rc == 2 and r.stderr.startswith(f"iowatt-engine: {name}: "), (opt, r.stderr)
    run_engine(engine_bin, *job(scratch / "d"), "--log_compression=0", "--log_entries=4096")


def test_eta_line_on_stderr(engine_bin: Path, scratch: Path) -> None:
    # paced (the line is once a second at any rate: no core burnt for 1.5 s, twice)
    args = job(scratch / "d", "--runtime=1500ms", "--time_based=1", "--rate_iops=1000")
    r = run_engine(engine_bin, *args, "--eta=always", "--eta-newline=1")
    assert re.search(
        r"Jobs: 1 \(f=1\): \[[\d.]+%\]\[r=\S+,w=\S+\]\[r=\S+,w=\S+ IOPS\]\[eta \d\dm:\d\ds\]", r.stderr
    )
    json.loads(r.stdout)
    r = run_engine(engine_bin, *args, "--eta=never")
    assert "Jobs:" not in r.stderr


@needs_fio
def test_per_job_logs_0_shares_one_file_as_fio(engine_bin: Path, scratch: Path) -> None:
    args = [*job(scratch / "d", "--numjobs=2", "--per_job_logs=0"), "--write_iops_log=x"]
    (scratch / "fio").mkdir()
    (scratch / "ours").mkdir()
    fio(scratch / "fio", *args, "--minimal")
    engine(engine_bin, scratch / "ours", *args)
    assert (
        [p.name for p in (scratch / "fio").glob("x*")]
        == [p.name for p in (scratch / "ours").glob("x*")]
        == ["x_iops.log"]
    )
    theirs, ours = read_log(scratch / "fio" / "x_iops.log"), read_log(scratch / "ours" / "x_iops.log")
    assert len(ours) == len(theirs) == 2 * 256  # both clones' I/Os in the one file
