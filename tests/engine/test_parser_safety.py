"""Issue 22's engine findings, as regressions: the vdbench statement splitter's stack overflow
(High 3), fsd names that escaped --directory (Medium 1), and the limits the parsers' audit added
(over-long tokens are held in full or refused, never cut; counts are checked before each store;
NUL bytes in PostMark command files, 4096-member JSON containers and 256-job files refused).
Bad input exits 2 with one line naming the parameter and the line; the sanitizer build must
stay silent."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from .conftest import run_engine
from .filemode import listing

SAN = ("Sanitizer", "runtime error")


def vdb(where: Path, text: str) -> Path:
    f = where / "params.vdb"
    f.write_text(text)
    return f


def assert_usage(r, *needles: str) -> None:
    assert r.rc == 2, (r.rc, r.stderr)
    assert not any(s in r.stderr for s in SAN), r.stderr
    assert r.stderr.startswith("iowatt-engine: ") and len(r.stderr.strip().splitlines()) == 1, r.stderr
    for n in needles:
        assert n in r.stderr, r.stderr


REST = "fwd=w,fsd=a,operation=read\nrd=r,fwd=w,elapsed=1\n"


@pytest.mark.parametrize("parse_only", [True, False], ids=["parse-only", "run"])
def test_vdbench_64_tokens_then_a_long_one(engine_asan: Path, scratch: Path, parse_only: bool) -> None:
    """The issue's reproduction: fsd=a, 63 x depth=1 and a 500-byte token wrote past the 64th
    row of `char tok[64][512]` before the bound check (ASan: stack-buffer-overflow)."""
    first = "fsd=a,anchor=/x,size=4k," + ",".join(["depth=1"] * 63) + "," + "x" * 500
    pf = vdb(scratch, first + "\n" + REST)
    d = scratch / "d"
    d.mkdir()
    r = run_engine(
        engine_asan,
        f"--vdbench={pf}",
        f"--directory={d}",
        *(["--parse-only"] if parse_only else []),
        check=False,
    )
    assert_usage(r, "vdbench: line 1: expected keyword=value")
    assert not any(d.iterdir())


def test_vdbench_too_many_parameters_names_the_line(engine_asan: Path, scratch: Path) -> None:
    pf = vdb(scratch, "* a comment\nfsd=a,anchor=/x,size=4k," + ",".join(["depth=1"] * 300) + "\n" + REST)
    r = run_engine(engine_asan, f"--vdbench={pf}", f"--directory={scratch}", "--parse-only", check=False)
    assert_usage(r, "line 2: more than 256 parameters in one statement")


def test_vdbench_long_values_are_held_whole(engine_asan: Path, scratch: Path) -> None:
    """No token length limit of the splitter's own: a 4000-byte anchor and a 16-pair size list
    parse (the anchor is replaced by --directory), where 512 bytes used to be the most; an anchor
    longer than a path can be is refused, not cut."""
    sizes = ",".join(f"{4 * (k + 1)}k,{100 / 16}" for k in range(16))
    pf = vdb(scratch, f"fsd=a,anchor=/{'y' * 4000},size=({sizes}),files=16\n" + REST)
    r = run_engine(
        engine_asan, f"--vdbench={pf}", f"--directory={scratch / 'd'}", "--parse-only", check=False
    )
    assert r.rc == 0 and not any(s in r.stderr for s in SAN), r.stderr
    fsd = json.loads(r.stdout)["fsd"][0]
    assert fsd["anchor"] == "/" + "y" * 4000 and len(fsd["size"]) == 16
    pf = vdb(scratch, f"fsd=a,anchor=/{'y' * 100_000},size=4k\n" + REST)
    r = run_engine(
        engine_asan, f"--vdbench={pf}", f"--directory={scratch / 'd'}", "--parse-only", check=False
    )
    assert_usage(r, "anchor: line 1: fsd: longer than 4095 characters")


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        (f"fsd={'n' * 64},anchor=/x,size=4k\nfwd=w,fsd=a\nrd=r,fwd=w\n", "line 1: the name 'nnn"),
        (f"fsd=a,anchor=/x,size=4k\nfwd=w,fsd={'a' * 64}\nrd=r,fwd=w\n", "line 2: the name 'aaa"),
        (f"fsd=a,anchor=/x,size=4k\nfwd=w,fsd=a\nrd=r,fwd=({'w,' * 16}w)\n", "rd: fwd= names at most 16"),
        ("fsd=a,anchor=/x,size=(4k,50\nfwd=w,fsd=a\nrd=r,fwd=w\n", "line 1: unbalanced parentheses"),
    ],
    ids=["fsd-name", "fsd-reference", "fwd-list", "unbalanced"],
)
def test_vdbench_limits_exit_2(engine_asan: Path, scratch: Path, text: str, needle: str) -> None:
    r = run_engine(
        engine_asan, f"--vdbench={vdb(scratch, text)}", f"--directory={scratch}", "--parse-only", check=False
    )
    assert_usage(r, needle)


ESCAPES = ["../../outside/X", "../escape", "/iowatt-escape-test", ".", "..", "a/b", "x/../../y"]


@pytest.mark.parametrize("name", ESCAPES)
@pytest.mark.parametrize("parse_only", [True, False], ids=["parse-only", "run"])
def test_fsd_names_stay_inside_directory(
    engine_asan: Path, scratch: Path, name: str, parse_only: bool
) -> None:
    """Medium 1: with several fsds each gets DIR/<name>; a name with '/', '.' or '..' made root
    mkdirat outside DIR and left it there. Now refused at parse time: exit 2, nothing created
    anywhere (the run is as root here when the suite runs as root)."""
    base = scratch / "outside"
    d = base / "in" / "dir"
    d.mkdir(parents=True)
    (d / "canary").write_text("x")
    pf = vdb(
        base,
        f"fsd={name},anchor=/x,size=4k\nfsd=b,anchor=/y,size=4k\n"
        "fwd=w,fsd=b,operation=read\nrd=r,fwd=w,elapsed=1\n",
    )
    before = listing(scratch)
    r = run_engine(
        engine_asan,
        f"--vdbench={pf}",
        f"--directory={d}",
        *(["--parse-only"] if parse_only else []),
        check=False,
    )
    assert_usage(r, "fsd")
    assert "plain directory name" in r.stderr
    assert listing(scratch) == before
    assert not Path("/iowatt-escape-test").exists()


def test_several_fsds_create_and_remove_only_their_roots(engine_asan: Path, scratch: Path) -> None:
    d = scratch / "dir"
    d.mkdir()
    (d / "canary").write_text("x")
    pf = vdb(
        scratch,
        "fsd=one,anchor=/x,size=4k,files=3\nfsd=two,anchor=/y,size=4k,files=3\n"
        "fwd=w,fsd=one,operation=read\nrd=r,fwd=w,format=yes,elapsed=1\n",
    )
    before = listing(scratch)
    r = run_engine(engine_asan, f"--vdbench={pf}", f"--directory={d}", timeout=120, check=False)
    assert r.rc == 0 and not any(s in r.stderr for s in SAN), r.stderr
    assert sorted(p.name for p in d.iterdir()) == ["canary"]
    assert listing(scratch) == before


def pm(where: Path, data: bytes) -> Path:
    f = where / "pm.txt"
    f.write_bytes(data)
    return f


@pytest.mark.parametrize(
    ("data", "needle"),
    [
        (b"set number 10\x00 0\nrun\n", "line 1:"),
        (b"set number 10\nset location " + b"l" * 1100 + b"\nrun\n", "line 2: longer than 1022 characters"),
        (b"set size 1 " + b"0" * 80 + b"1\nrun\n", "set size: must be LOW [HIGH] in bytes"),
    ],
    ids=["nul", "long-line", "long-size"],
)
def test_postmark_bad_lines_exit_2(engine_asan: Path, scratch: Path, data: bytes, needle: str) -> None:
    r = run_engine(
        engine_asan, f"--postmark={pm(scratch, data)}", f"--directory={scratch}", "--parse-only", check=False
    )
    assert_usage(r, needle)


def test_postmark_line_of_1022_characters_is_accepted(engine_asan: Path, scratch: Path) -> None:
    line = b"set location /" + b"l" * (1022 - len(b"set location /"))
    cmd = pm(scratch, line + b"\nrun\n")
    r = run_engine(
        engine_asan,
        f"--postmark={cmd}",
        f"--directory={scratch}",
        "--parse-only",
        check=False,
    )
    assert r.rc == 0, r.stderr


def job_file(where: Path, doc: object) -> Path:
    f = where / "jobs.json"
    f.write_text(json.dumps(doc))
    return f


def test_job_file_more_than_256_jobs_exit_2(engine_asan: Path, scratch: Path) -> None:
    jf = job_file(scratch, {"global": {"filename": str(scratch / "f"), "size": "1m"}, "jobs": [{}] * 257})
    assert_usage(run_engine(engine_asan, str(jf), check=False), "jobfile: more than 256 jobs")


def test_job_file_huge_container_exit_2(engine_asan: Path, scratch: Path) -> None:
    """The duplicate-key check is quadratic: 10^5 keys were ~10^10 comparisons."""
    keys = {f"k{i}": 1 for i in range(5000)}
    jf = job_file(scratch, {"global": keys, "jobs": [{}]})
    assert_usage(run_engine(engine_asan, str(jf), check=False), "more than 4096 members in an object")


def test_bs_value_is_refused_not_cut(engine_asan: Path, scratch: Path) -> None:
    """--bs=4k,<140 chars> read the first 127 characters as the value (a different value)."""
    r = run_engine(
        engine_asan, f"--filename={scratch / 'f'}", "--size=1m", "--bs=4k," + "0" * 140 + "8k", check=False
    )
    assert_usage(r, "bs: value too long")


@pytest.mark.skipif(os.geteuid() != 0, reason="the escape needed root only to matter; checked as any user")
def test_runs_as_root_here() -> None:
    """The confinement tests above ran as root (mkdirat as root was the finding)."""
    assert os.geteuid() == 0
