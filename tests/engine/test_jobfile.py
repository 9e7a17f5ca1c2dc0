"""fio's INI job files as engine input (agent/engine/README.md § Job files): `iowatt-engine FILE`,
`--parse-only`, `--untrusted`, `--showcmd`, `--showjob`. The same job written as JSON, as flags and
as INI makes the same jobs; fio's own rules for comments, sections, `[global]` (a later one applies
to the jobs after it), include, ${VAR}, $ncpus/$pagesize/$mb_memory and arithmetic; errors name
FILE:LINE and the option; hostile files are refused quickly and within the stated bounds. Where
fio's behaviour is the reference, Debian's fio runs the same file beside ours."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from .conftest import FIO_CLOCK, run_engine

FIO = shutil.which("fio")


def parse_only(engine: Path, *args: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    p = subprocess.run(
        [str(engine), "--parse-only", *args], capture_output=True, text=True, timeout=30, env=env
    )
    assert p.returncode == 0, p.stderr
    doc: dict[str, Any] = json.loads(p.stdout)
    return doc


def refused(engine: Path, *args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> str:
    p = subprocess.run([str(engine), *args], capture_output=True, text=True, timeout=30, env=env, cwd=cwd)
    assert p.returncode == 2, (p.returncode, p.stdout[-500:], p.stderr)
    assert p.stdout == ""
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("iowatt-engine: "), p.stderr
    return lines[0]


def jobs_of(doc: dict[str, Any]) -> list[tuple[str, dict[str, str], int]]:
    return [(j["name"], j["options"], j["group"]) for j in doc["jobs"]]


def run_fio(jobfile: Path, cwd: Path) -> dict[str, Any]:
    assert FIO
    p = subprocess.run(
        [FIO, FIO_CLOCK, "--output-format=json", str(jobfile)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=cwd,
    )
    assert p.returncode == 0, p.stderr
    doc: dict[str, Any] = json.loads(p.stdout[p.stdout.index("{") :])
    return doc


def counts(doc: dict[str, Any]) -> dict[str, tuple[int, ...]]:
    """(read ios, read bytes, write ios, write bytes) per job name, numjobs clones summed."""
    out: dict[str, tuple[int, ...]] = {}
    for j in doc["jobs"]:
        c = (j["read"]["total_ios"], j["read"]["io_bytes"], j["write"]["total_ios"], j["write"]["io_bytes"])
        out[j["jobname"]] = tuple(a + b for a, b in zip(out.get(j["jobname"], (0, 0, 0, 0)), c, strict=True))
    return out


# ---- the same job three ways ----


def test_json_flags_and_ini_make_the_same_jobs(engine_bin: Path, scratch: Path) -> None:
    f = scratch / "t.dat"
    flags = [
        "--ioengine=null", f"--filename={f}", "--size=256k", "--bs=4k",
        "--name=w", "--rw=write", "--bs=8k",
        "--name=r", "--rw=randread", "--stonewall", "--numjobs=2",
    ]  # fmt: skip
    (scratch / "j.json").write_text(
        json.dumps(
            {
                "global": {"ioengine": "null", "filename": str(f), "size": "256k", "bs": "4k"},
                "jobs": [
                    {"name": "w", "rw": "write", "bs": "8k"},
                    {"name": "r", "rw": "randread", "stonewall": "1", "numjobs": "2"},
                ],
            }
        )
    )
    (scratch / "j.fio").write_text(
        f"; the same job\n[global]\nioengine=null\nfilename={f}\nsize=256k\nbs=4k\n\n"
        "[w]\nrw=write\nbs=8k\n[r]\nrw=randread\nstonewall\nnumjobs=2\n"
    )
    a = parse_only(engine_bin, *flags)
    b = parse_only(engine_bin, str(scratch / "j.fio"))
    c = parse_only(engine_bin, str(scratch / "j.json"))
    assert jobs_of(a) == jobs_of(b)
    assert a["global"] == b["global"] == c["global"]
    assert jobs_of(c) == jobs_of(a)  # a job's name is its "name", not one of its options
    assert jobs_of(a)[0] == (
        "w",
        {"ioengine": "null", "filename": str(f), "size": "256k", "bs": "8k", "rw": "write"},
        0,
    )
    assert jobs_of(a)[1][2] == 1  # stonewall: a new group
    assert b["jobs"][0]["file"] == str(scratch / "j.fio") and b["jobs"][0]["line"] == 8
    runs = [run_engine(engine_bin, *flags), run_engine(engine_bin, str(scratch / "j.fio"))]
    runs.append(run_engine(engine_bin, str(scratch / "j.json")))
    got = [counts(r.doc) for r in runs]
    assert got[0] == got[1] == got[2] == {"w": (0, 0, 32, 256 << 10), "r": (128, 512 << 10, 0, 0)}
    assert runs[1].doc["global options"] == runs[0].doc["global options"]
    assert runs[1].doc["jobs"][0]["job options"] == {"name": "w", "rw": "write", "bs": "8k"}


def test_command_line_overrides_every_job_of_an_ini_file(engine_bin: Path, scratch: Path) -> None:
    (scratch / "j.fio").write_text("[global]\nsize=64k\n[a]\nbs=8k\nsize=128k\n[b]\n")
    doc = parse_only(
        engine_bin, "--size=32k", "--ioengine=null", f"--filename={scratch}/t", str(scratch / "j.fio")
    )
    assert [j["options"]["size"] for j in doc["jobs"]] == ["32k", "32k"]
    assert doc["global"]["size"] == "32k"
    msg = refused(engine_bin, "--name=x", str(scratch / "j.fio"))
    assert "name: --name cannot be combined with a job file" in msg


# ---- fio's syntax ----


def test_comments_blanks_and_bare_flags(engine_bin: Path, scratch: Path) -> None:
    (scratch / "j.fio").write_text(
        "# comment\n  ; indented comment\n\n[global]\r\n"
        "  bs = 8k   ; trailing comment\n"
        "rw=write#another\n"
        "description = a  job ; cut here\n"
        "[ spaced name ]\n"
        "time_based\nruntime=1\n"
        "filename=/tmp/x;y\n"
    )
    doc = parse_only(engine_bin, str(scratch / "j.fio"))
    (job,) = doc["jobs"]
    assert job["name"] == " spaced name "
    assert job["options"] == {
        "bs": "8k", "rw": "write", "description": "a  job", "time_based": "1", "runtime": "1",
        "filename": "/tmp/x",
    }  # fmt: skip


def test_a_later_global_applies_to_the_jobs_after_it(engine_bin: Path, scratch: Path) -> None:
    (scratch / "j.fio").write_text(
        "[global]\nioengine=null\nsize=64k\n[a]\n[globalish]\nbs=16k\n[b]\n[c]\nbs=8k\n"
    )
    doc = parse_only(engine_bin, f"--filename={scratch}/t", str(scratch / "j.fio"))
    assert [(j["name"], j["options"].get("bs")) for j in doc["jobs"]] == [
        ("a", None),
        ("b", "16k"),
        ("c", "8k"),
    ]


@pytest.mark.skipif(FIO is None, reason="Debian's fio is not installed")
def test_later_global_and_description_beside_fio(engine_bin: Path, scratch: Path) -> None:
    f = scratch / "t.dat"
    f.write_bytes(b"\1" * (256 << 10))
    text = (
        f"[global]\nfilename={f}\nsize=256k\nrw=read\nbs=4k\n"
        "[a]\ndescription=first job\n[global]\nbs=16k\nrw=write\n[b]\nstonewall\n[c]\nbs=64k\n"
        "name=renamed\n"
    )
    (scratch / "j.fio").write_text(text)
    ours = run_engine(engine_bin, str(scratch / "j.fio")).doc
    theirs = run_fio(scratch / "j.fio", scratch)
    assert counts(ours) == counts(theirs)
    assert counts(ours)["b"] == (0, 0, 16, 256 << 10) and "renamed" in counts(ours)
    assert ours["jobs"][0]["desc"] == theirs["jobs"][0]["desc"] == "first job"
    assert "desc" not in ours["jobs"][1] and "desc" not in theirs["jobs"][1]


@pytest.mark.skipif(FIO is None, reason="Debian's fio is not installed")
def test_keywords_and_arithmetic_as_fio(engine_bin: Path, scratch: Path) -> None:
    f = scratch / "t.dat"
    text = f"[j]\nfilename={f}\nsize=16*$pagesize\nbs=$pagesize\nnumjobs=$ncpus+1-$ncpus\nrw=write\n"
    (scratch / "j.fio").write_text(text)
    doc = parse_only(engine_bin, str(scratch / "j.fio"))
    page = os.sysconf("SC_PAGESIZE")
    assert doc["jobs"][0]["options"]["size"] == str(16 * page)
    assert doc["jobs"][0]["options"]["numjobs"] == "1"
    ours = run_engine(engine_bin, str(scratch / "j.fio")).doc
    f.unlink()
    theirs = run_fio(scratch / "j.fio", scratch)
    assert counts(ours) == counts(theirs) == {"j": (0, 0, 16, 16 * page)}
    (scratch / "bad.fio").write_text("[j]\nsize=$mb_memory/0\n")
    assert "bad.fio:2: size: cannot compute '" in refused(
        engine_bin, "--parse-only", str(scratch / "bad.fio")
    )


def test_environment_variables(engine_bin: Path, scratch: Path) -> None:
    (scratch / "j.fio").write_text("[j]\nbs=${IOWATT_T_BS}\nname=a${IOWATT_T_UNSET}b\nsize=1${}m\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("IOWATT_T_")} | {"IOWATT_T_BS": "16k"}
    doc = parse_only(engine_bin, str(scratch / "j.fio"), env=env)
    assert doc["jobs"][0]["options"] == {"bs": "16k", "size": "1m"}
    assert doc["jobs"][0]["name"] == "ab"
    (scratch / "j.fio").write_text("[j]\nbs=${IOWATT_T_BS}\n\n\nsize=${IOWATT_T_BS}0\n")
    msg = refused(engine_bin, "--parse-only", str(scratch / "j.fio"), env=env)
    assert msg.endswith("size: invalid size '16k0'") and "j.fio:5:" in msg


def test_errors_name_file_line_and_option(engine_bin: Path, scratch: Path) -> None:
    cases = {
        "[j]\nbs=4k\nrw=sideways\n": "j.fio:3: rw: unknown mode 'sideways'",
        "[j]\n\n\nno_such_option=1\n": "j.fio:4: no_such_option: unknown option",
        "size=1m\n[j]\n": "j.fio:1: size: outside of a [section]",
        "[global]\nsize=1m\n": "no job section",
        "[j\nsize=1m\n": "j.fio:1: jobfile: section header '[j' does not end with ']'",
        "[j]\nnumjobs\n": "j.fio:2: numjobs: missing value (use numjobs=VALUE)",
        "[j]\nioengine=rdma\n": "j.fio:2: ioengine: 'rdma' is refused: needs RDMA hardware",
        "[j]\nzonemode=zbd\n": "j.fio:2: zonemode: refused: fio's zone modes",
        "[j]\nfilename=-\n": "j.fio:2: filename: '-' (fio's stdin/stdout) is not supported",
        # a job's own checks name its section's line
        "[j]\nbs=64k\nsize=4k\n": "j.fio:1: bs: block size 65536 is larger than size 4096",
    }
    for text, needle in cases.items():
        (scratch / "j.fio").write_text(text)
        msg = refused(engine_bin, str(scratch / "j.fio"), cwd=scratch)
        assert needle in msg, (text, msg)


# ---- include ----


def test_include_relative_nested_and_refused_forms(engine_bin: Path, scratch: Path) -> None:
    inc = scratch / "inc"
    inc.mkdir()
    (inc / "common.fio").write_text("; shared\nioengine=null\ninclude deeper/more.fio\n")
    (inc / "deeper").mkdir()
    (inc / "deeper" / "more.fio").write_text("bs=8k\n")
    (inc / "job.fio").write_text(
        "[global]\ninclude common.fio\nsize=64k\n[a]\ninclude deeper/more.fio\nrw=write\n"
    )
    other = scratch / "elsewhere"
    other.mkdir()
    doc = parse_only(engine_bin, f"--filename={scratch}/t", str(inc / "job.fio"))
    assert doc["global"] == {"ioengine": "null", "bs": "8k", "size": "64k", "filename": f"{scratch}/t"}
    assert doc["jobs"][0]["options"]["rw"] == "write"
    # relative to the including file, not to the working directory
    p = subprocess.run(
        [str(engine_bin), "--parse-only", str(inc / "job.fio")], cwd=other, capture_output=True
    )
    assert p.returncode == 0, p.stderr
    (inc / "sect.fio").write_text("bs=4k\n[oops]\n")
    (inc / "bad.fio").write_text("[a]\ninclude sect.fio\n")
    assert "sect.fio:2: include: an included file cannot start a section" in refused(
        engine_bin, str(inc / "bad.fio")
    )
    (inc / "early.fio").write_text("include common.fio\n[a]\n")
    assert "early.fio:1: include: outside of a [section]" in refused(engine_bin, str(inc / "early.fio"))
    (inc / "missing.fio").write_text("[a]\ninclude nothere.fio\n")
    assert "missing.fio:2: include: cannot open" in refused(engine_bin, str(inc / "missing.fio"))
    (inc / "dev.fio").write_text("[a]\ninclude /dev/zero\n")
    assert "include: '/dev/zero' is not a regular file" in refused(engine_bin, str(inc / "dev.fio"))


def test_include_cycles_and_depth_are_refused(engine_bin: Path, scratch: Path) -> None:
    (scratch / "self.fio").write_text("[a]\ninclude self.fio\n")
    assert "self.fio:2: include: " in (m := refused(engine_bin, str(scratch / "self.fio")))
    assert "an include cycle" in m
    (scratch / "x.fio").write_text("bs=4k\ninclude y.fio\n")
    (scratch / "y.fio").write_text("include x.fio\n")
    (scratch / "top.fio").write_text("[a]\ninclude x.fio\n")
    m = refused(engine_bin, str(scratch / "top.fio"))
    assert "y.fio:1: include: " in m and "an include cycle" in m
    # a link to the same file is the same file
    (scratch / "link.fio").symlink_to(scratch / "x.fio")
    (scratch / "y.fio").write_text("include link.fio\n")
    assert "an include cycle" in refused(engine_bin, str(scratch / "top.fio"))
    # a chain deeper than 8
    for k in range(10):
        (scratch / f"d{k}.fio").write_text(f"include d{k + 1}.fio\n" if k < 9 else "bs=4k\n")
    (scratch / "deep.fio").write_text("[a]\ninclude d0.fio\n")
    assert "nested more than 8 deep" in refused(engine_bin, str(scratch / "deep.fio"))
    # fan-out: 2 includes of a file that includes 2 ... counted in total
    for k in range(8):
        (scratch / f"f{k}.fio").write_text(
            f"include f{k + 1}.fio\ninclude f{k + 1}.fio\n" if k < 7 else "bs=4k\n"
        )
    (scratch / "fan.fio").write_text("[a]\ninclude f0.fio\n")
    assert "more than 64 includes" in refused(engine_bin, str(scratch / "fan.fio"))


# ---- --untrusted ----


def test_untrusted_refuses_include_and_environment_but_keeps_keywords(
    engine_bin: Path, scratch: Path
) -> None:
    (scratch / "inc.fio").write_text("bs=4k\n")
    (scratch / "a.fio").write_text("[a]\ninclude inc.fio\n")
    m = refused(engine_bin, "--untrusted", "--parse-only", str(scratch / "a.fio"))
    assert "a.fio:2: include: refused in a job file from --untrusted" in m
    (scratch / "b.fio").write_text("[a]\nsize=1m\nbs=${HOME}\n")
    m = refused(engine_bin, "--untrusted", "--parse-only", str(scratch / "b.fio"))
    assert "b.fio:3: bs: ${HOME}: environment variables are refused" in m
    (scratch / "c.fio").write_text("[a]\nsize=4*$pagesize\nnumjobs=$ncpus\n")
    doc = parse_only(engine_bin, "--untrusted", str(scratch / "c.fio"))
    assert doc["jobs"][0]["options"]["size"] == str(4 * os.sysconf("SC_PAGESIZE"))


def test_untrusted_paths_must_be_beneath(engine_bin: Path, scratch: Path) -> None:
    root = scratch / "root"
    root.mkdir()
    (scratch / "a.fio").write_text(f"[a]\nsize=64k\nfilename={root}/sub/t.dat\n")
    doc = parse_only(engine_bin, "--untrusted", f"--beneath={root}", str(scratch / "a.fio"))
    assert doc["jobs"][0]["options"]["beneath"] == str(root)
    # without beneath nothing confines a run: the server's parse (the target replaces the path)
    doc = parse_only(engine_bin, "--untrusted", str(scratch / "a.fio"))
    assert doc["jobs"][0]["options"]["filename"] == f"{root}/sub/t.dat"
    for bad, why in [
        ("/etc/passwd", "is not beneath"),
        (f"{root}/../x", "climbs out"),
        ("rel/../../x", "climbs out"),
        (f"{root}/ok:/etc/shadow", "'/etc/shadow' is not beneath"),
    ]:
        (scratch / "b.fio").write_text(f"[a]\nsize=64k\nfilename={bad}\n")
        m = refused(engine_bin, "--untrusted", f"--beneath={root}", "--parse-only", str(scratch / "b.fio"))
        assert "b.fio:3: filename: " in m and why in m, (bad, m)
    # the command line's beneath (the host's) wins over the file's
    (scratch / "c.fio").write_text("[a]\nsize=64k\nfilename=/etc/passwd\nbeneath=/\n")
    m = refused(engine_bin, "--untrusted", f"--beneath={root}", "--parse-only", str(scratch / "c.fio"))
    assert "c.fio:3: filename: '/etc/passwd' is not beneath" in m
    # and it runs, confined
    (scratch / "d.fio").write_text("[a]\nsize=64k\nfilename=t.dat\nrw=write\n")
    r = run_engine(engine_bin, "--untrusted", f"--beneath={root}", str(scratch / "d.fio"))
    assert r.job["write"]["io_bytes"] == 64 << 10 and (root / "t.dat").stat().st_size == 64 << 10


def test_hostile_files_are_refused_quickly(engine_bin: Path, scratch: Path) -> None:
    limits = json.loads(run_engine(engine_bin, "--limits").stdout)["block"]["jobfile"]
    assert limits["max_file_bytes"] == 1 << 20 and limits["max_line_bytes"] == 8192
    assert limits["max_include_depth"] == 8 and limits["max_sections"] == 512
    assert "filename" in limits["path_options"] and "rdma" in limits["refused_ioengines"]
    cases: dict[str, tuple[bytes, str]] = {
        "big": (b"[a]\n" + b"; filler\n" * 150_000, "is larger than 1048576 bytes"),
        "line": (b"[a]\nbs=" + b"4" * 9000 + b"\n", "a.fio:2: jobfile: line longer than 8192 bytes"),
        "nul": (b"[a]\nbs=4k\0\n", "contains a NUL byte"),
        "sections": (b"[s]\n" * 600, "a.fio:513: jobfile: more than 512 sections"),
        "jobs": (b"[s]\n" * 300, "more than 256 jobs"),
        "options": (b"[a]\n" + b"bs=4k\n" * 1100, "a.fio:1026: bs: more than 1024 options in the section"),
        "expansion": (
            b"[a]\nbs=" + b"$ncpus" * 1300 + b"\n",
            "bs: value longer than 4096 bytes after expansion",
        ),
        "name": (b"[" + b"n" * 200 + b"]\n", "name: section name longer than 127 bytes"),
        "binary": (bytes(range(1, 128)) * 4, "a.fio:2: "),
    }
    for what, (data, needle) in cases.items():
        (scratch / "a.fio").write_bytes(data)
        t0 = time.monotonic()
        m = refused(engine_bin, "--untrusted", f"--beneath={scratch}", "--parse-only", str(scratch / "a.fio"))
        assert needle in m, (what, m)
        assert time.monotonic() - t0 < 10
    # a job file that never ends is read only up to the bound
    t0 = time.monotonic()
    assert "larger than 1048576 bytes" in refused(engine_bin, "--untrusted", "--parse-only", "/dev/zero")
    assert time.monotonic() - t0 < 10


# ---- --showcmd / --showjob ----


def test_showcmd_and_showjob_round_trip(engine_bin: Path, scratch: Path) -> None:
    (scratch / "j.fio").write_text(
        '[global]\nioengine=null\nsize=64k\n[first job]\nrw=write\ndescription=it\'s a "test"\n'
        "[globalx]\nbs=8k\n[b]\nname=renamed\ntime_based\nruntime=1\n"
    )
    base = parse_only(engine_bin, f"--filename={scratch}/t", str(scratch / "j.fio"))
    cmd = subprocess.run(
        [str(engine_bin), "--showcmd", str(scratch / "j.fio")], capture_output=True, text=True, check=True
    ).stdout
    assert cmd.count("\n") == 1 and "'--name=first job'" in cmd and "--name=renamed" in cmd
    argv = subprocess.run(
        ["sh", "-c", f"printf '%s\\n' {cmd}"], capture_output=True, text=True
    ).stdout.splitlines()
    via_cmd = parse_only(engine_bin, f"--filename={scratch}/t", *argv[:0], *argv)
    assert [(j["name"], j["options"], j["group"]) for j in via_cmd["jobs"]] == [
        (j["name"], {k: v for k, v in j["options"].items() if k != "name"}, j["group"]) for j in base["jobs"]
    ]
    ini = subprocess.run(
        [str(engine_bin), "--showjob", f"--filename={scratch}/t", *argv],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert ini.startswith("[global]\n")
    (scratch / "back.fio").write_text(ini)
    via_ini = parse_only(engine_bin, str(scratch / "back.fio"))
    assert jobs_of(via_ini) == jobs_of(via_cmd)
    # a value an INI line cannot hold is refused, not cut
    m = refused(engine_bin, "--showjob", "--name=a", "--description=x;y")
    assert "description: value 'x;y' cannot be written in a job file" in m
