"""iowatt-engine --postmark=FILE --directory=DIR (issue 14, PostMark half): counts and invariants
on tmpfs and on ext4 on a loop device, the same operation sequence as Debian's postmark for the
same seed (per file, in order, observed with strace), bad parameters (exit 2 naming the
parameter, nothing written), ENOSPC on a size-limited tmpfs (exit 1, clean stop, nothing left
behind), --keep, fsync, SIGINT."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.strace import STRACE, straced

from .conftest import run_engine
from .filemode import listing, signal_after_progress

CONFIG = """\
# a small PostMark configuration
set location /ignored
set number {number}
set transactions {transactions}
set size {low} {high}
set subdirectories {subdirs}
set seed {seed}
{extra}
run
quit
"""


def command_file(
    path: Path,
    *,
    number: int = 300,
    transactions: int = 2000,
    low: int = 500,
    high: int = 9000,
    subdirs: int = 7,
    seed: int = 11,
    extra: str = "",
) -> Path:
    path.write_text(
        CONFIG.format(
            number=number,
            transactions=transactions,
            low=low,
            high=high,
            subdirs=subdirs,
            seed=seed,
            extra=extra,
        )
    )
    return path


def pm(engine: Path, cmd: Path, directory: Path, *more: str, check: bool = True, timeout: float = 120) -> Any:
    r = run_engine(
        engine, f"--postmark={cmd}", f"--directory={directory}", *more, check=check, timeout=timeout
    )
    return r


def check_invariants(p: dict[str, Any], *, number: int, transactions: int, low: int, high: int) -> None:
    assert p["error"] is None
    assert p["out_of_files"] is False
    assert p["transactions"] == transactions
    assert p["files_created_alone"] == number
    assert p["files_created"] == p["files_created_alone"] + p["files_created_mixed"]
    # every file created is deleted: in transactions or in the deletion phase
    assert p["files_deleted"] == p["files_created"]
    assert p["files_deleted"] == p["files_deleted_alone"] + p["files_deleted_mixed"]
    # a transaction is one read-or-append and one create-or-delete (an append to a file already
    # at the high bound, or a create into a full table, does nothing, as in PostMark)
    assert 0 < p["files_read"] + p["files_appended"] <= transactions
    assert 0 < p["files_created_mixed"] + p["files_deleted_mixed"] <= transactions
    # the per-operation histograms count exactly the operations
    ops = p["ops"]
    assert ops["create"]["ops"] == p["files_created"]
    assert ops["read"]["ops"] == p["files_read"]
    assert ops["append"]["ops"] == p["files_appended"]
    assert ops["delete"]["ops"] == p["files_deleted"]
    for name, op in ops.items():
        lat = op["lat_ns"]
        assert lat["N"] == op["ops"], name
        if op["ops"]:
            pct = [lat["percentile"][k] for k in sorted(lat["percentile"], key=float)]
            assert pct == sorted(pct), name
            assert 0 < lat["min"] <= lat["mean"] <= lat["max"], name
    # bytes: each file starts between low and high, reads read whole files of at most high bytes
    assert p["bytes_written"] >= p["files_created"] * low
    assert p["files_read"] * low <= p["bytes_read"] <= p["files_read"] * high
    phases = p["phases"]
    assert p["elapsed_ns"] == phases["creation_ns"] + phases["transactions_ns"] + phases["deletion_ns"]
    assert phases["creation_ns"] > 0 and phases["transactions_ns"] > 0 and phases["deletion_ns"] > 0


@pytest.mark.parametrize("where", ["tmpfs", "loop-ext4"])
def test_counts_and_invariants(
    engine_bin: Path, scratch: Path, where: str, request: pytest.FixtureRequest
) -> None:
    base = scratch if where == "tmpfs" else request.getfixturevalue("loop_ext4")
    d = base / "pm"
    d.mkdir()
    (d / "canary").write_bytes(b"x" * 1234)  # someone else's file: must stay as it is
    (d / "s3").mkdir()  # an existing subdirectory the run uses but must not remove
    before = listing(d)
    cmd = command_file(scratch / "pm.cfg")
    r = pm(engine_bin, cmd, d)
    doc = r.doc
    p = doc["postmark"]
    check_invariants(p, number=300, transactions=2000, low=500, high=9000)
    assert listing(d) == before
    # fio's top level as block jobs have it, with the byte totals in read/write
    assert doc["fio version"].startswith("iowatt-engine-")
    job = doc["jobs"][0]
    assert job["jobname"] == "postmark" and job["error"] == 0
    assert job["read"]["io_bytes"] == p["bytes_read"]
    assert job["write"]["io_bytes"] == p["bytes_written"]
    assert job["write"]["total_ios"] == p["syscalls"]["write"] >= p["files_created"] + p["files_appended"]
    assert doc["iowatt"]["mode"] == "postmark" and doc["iowatt"]["interrupted"] is False
    assert p["parameters"]["location_given"] == "/ignored"
    assert p["parameters"]["subdirectories"] == 7
    if where == "loop-ext4":
        assert [u["name"] for u in doc["disk_util"]] and doc["disk_util"][0]["name"].startswith("loop")


def test_read_only_bias_gives_exact_counts(engine_bin: Path, scratch: Path) -> None:
    """bias read 10 and bias create -1: every transaction is a read, no create or delete."""
    cmd = command_file(
        scratch / "pm.cfg",
        number=50,
        transactions=400,
        subdirs=1,
        extra="set bias read 10\nset bias create -1",
    )
    p = pm(engine_bin, cmd, scratch).doc["postmark"]
    assert p["files_read"] == 400 and p["files_appended"] == 0
    assert p["files_created"] == 50 and p["files_created_mixed"] == 0
    assert p["files_deleted_mixed"] == 0 and p["files_deleted_alone"] == 50
    assert list(scratch.iterdir()) == [scratch / "pm.cfg"]


def test_same_seed_same_run_and_another_seed_differs(engine_bin: Path, scratch: Path) -> None:
    keys = (
        "files_created",
        "files_read",
        "files_appended",
        "files_deleted_alone",
        "bytes_read",
        "bytes_written",
    )
    a = pm(engine_bin, command_file(scratch / "a.cfg", seed=5), scratch).doc["postmark"]
    b = pm(engine_bin, command_file(scratch / "b.cfg", seed=5), scratch).doc["postmark"]
    c = pm(engine_bin, command_file(scratch / "c.cfg", seed=6), scratch).doc["postmark"]
    assert [a[k] for k in keys] == [b[k] for k in keys]
    assert [a[k] for k in keys] != [c[k] for k in keys]


# ---- the same sequence as Debian's postmark ----

# lines of `strace -ff -y` (tests/strace.py: a call and its result on one line)
_OPEN = re.compile(r'^openat\(.*?, "[^"]*", ([A-Z_|]+)(?:, \d+)?\) = \d+<([^>]*)>')
_UNLINK_ABS = re.compile(r'^unlink\("([^"]+)"\) = 0')
_UNLINKAT = re.compile(r'^unlinkat\(\d+<([^>]*)>, "([^"]+)", 0\) = 0')
TRACE = ("-y", "-e", "trace=openat,unlink,unlinkat")


def file_ops(trace: list[str], directory: Path) -> list[tuple[str, str]]:
    """(create|read|append|delete, path relative to the directory) in the order they happened."""
    prefix = str(directory) + "/"
    ops: list[tuple[str, str]] = []
    for line in trace:
        m = _OPEN.match(line)
        if m:
            flags, path = m.group(1), m.group(2)
            if not path.startswith(prefix) or "O_DIRECTORY" in flags:
                continue
            kind = "append" if "O_APPEND" in flags else "create" if "O_CREAT" in flags else "read"
            ops.append((kind, path[len(prefix) :]))
            continue
        m = _UNLINK_ABS.match(line)
        if m and m.group(1).startswith(prefix):
            ops.append(("delete", m.group(1)[len(prefix) :]))
            continue
        m = _UNLINKAT.match(line)
        if m and m.group(1).startswith(str(directory)):
            rel = (
                (m.group(1) + "/" + m.group(2))[len(prefix) :] if m.group(1) != str(directory) else m.group(2)
            )
            ops.append(("delete", rel))
    return ops


def postmark_report(text: str) -> dict[str, Any]:
    def num(pattern: str) -> int:
        m = re.search(pattern, text)
        assert m, f"{pattern!r} not in postmark's report:\n{text}"
        return int(m.group(1))

    data = re.findall(r"\t([\d.]+ (?:megabytes|kilobytes|bytes)) (read|written) ", text)
    return {
        "files_created": num(r"\t(\d+) created"),
        "files_created_alone": num(r"Creation alone: (\d+) files"),
        "files_read": num(r"\t(\d+) read \("),
        "files_appended": num(r"\t(\d+) appended"),
        "files_deleted_alone": num(r"Deletion alone: (\d+) files"),
        "files_deleted_mixed": num(r"Deletion alone: .*\n\t\tMixed with transactions: (\d+) files"),
        "data": {kind: amount for amount, kind in data},
    }


def scalef(v: float) -> str:
    """PostMark's scalef() formatting of a byte count."""
    if v / 1048576 > 1:
        return f"{v / 1048576:.2f} megabytes"
    if v / 1024:
        return f"{v / 1024:.2f} kilobytes"
    return f"{v:f} bytes"


@pytest.mark.parametrize(
    "extra",
    [
        "",
        "set bias read 3\nset bias create 7\nset buffering false\nset read 1024\nset write 300",
        # RND(0) draws nothing (fixed size); appends to a file at the high bound do nothing
        "set size 2000\nset subdirectories 1\nset bias read 2",
        # the table (2 x number slots) fills up: creates become no-ops, as in PostMark
        "set number 20\nset bias create 9\nset bias read -1",
    ],
    ids=["defaults", "biased-unbuffered", "fixed-size-no-subdirs", "full-table"],
)
def test_sequence_equals_debian_postmark(engine_bin: Path, scratch: Path, extra: str) -> None:
    postmark = shutil.which("postmark")
    if not postmark:
        pytest.skip(
            "Debian's postmark is not installed (apt-get install postmark; scripts/install-system-deps.sh)"
        )
    ours_dir, theirs_dir = scratch / "ours", scratch / "theirs"
    ours_dir.mkdir()
    theirs_dir.mkdir()
    params = dict(number=120, transactions=600, low=300, high=5000, subdirs=4, seed=1234, extra=extra)
    theirs_cfg = command_file(scratch / "theirs.cfg", **params)  # type: ignore[arg-type]
    theirs_cfg.write_text(theirs_cfg.read_text().replace("/ignored", str(theirs_dir)))
    ours_cfg = command_file(scratch / "ours.cfg", **params)  # type: ignore[arg-type]

    def run(cmd: list[str], name: str, **kw: Any) -> tuple[subprocess.CompletedProcess[str], list[str]]:
        if not STRACE:
            return subprocess.run(cmd, capture_output=True, text=True, timeout=120, **kw), []
        return straced(cmd, scratch / name, *TRACE, timeout=120, **kw)

    t, theirs_trace = run([postmark, str(theirs_cfg)], "theirs.trace", cwd=theirs_dir)
    assert t.returncode == 0, t.stderr
    o, ours_trace = run([str(engine_bin), f"--postmark={ours_cfg}", f"--directory={ours_dir}"], "ours.trace")
    assert o.returncode == 0, o.stderr
    theirs = postmark_report(t.stdout)
    ours = json.loads(o.stdout)["postmark"]
    for k in ("files_created", "files_created_alone", "files_read", "files_appended"):
        assert ours[k] == theirs[k], k
    assert ours["files_deleted_alone"] == theirs["files_deleted_alone"]
    assert ours["files_deleted_mixed"] == theirs["files_deleted_mixed"]
    # PostMark keeps byte counts in a float and prints them with scalef(): the same text
    assert scalef(ours["bytes_read"]) == theirs["data"]["read"]
    assert scalef(ours["bytes_written"]) == theirs["data"]["written"]
    if STRACE:
        seq_theirs = file_ops(theirs_trace, theirs_dir)
        seq_ours = file_ops(ours_trace, ours_dir)
        assert (
            len(seq_ours)
            == ours["files_created"]
            + ours["files_read"]
            + ours["files_appended"]
            + ours["files_deleted_alone"]
            + ours["files_deleted_mixed"]
        )
        assert seq_ours == seq_theirs  # the same operation on the same file, in the same order
    assert list(ours_dir.iterdir()) == []


# ---- bad parameters: exit 2 naming the parameter, nothing written ----


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("set number x", "postmark: set number: must be a positive integer"),
        ("set number 0", "postmark: set number: must be a positive integer"),
        ("set transactions -5", "postmark: set transactions: must be a positive integer"),
        ("set size 100 50", "postmark: set size: high bound 50 is below low bound 100"),
        ("set size big", "postmark: set size: must be a positive integer"),
        ("set bias read 11", "postmark: set bias read: must be an integer from -1 (off) to 10"),
        ("set bias create x", "postmark: set bias create: must be an integer from -1"),
        ("set buffering maybe", "postmark: set buffering: must be true or false"),
        ("set subdirectories", "postmark: set subdirectories: missing value"),
        ("set report loud", "postmark: set report: must be verbose or terse"),
        ("set location +/tmp/other 2", "postmark: set location: several locations"),
        ("frobnicate 3", "postmark: line 2: unknown command 'frobnicate 3'"),
        ("!rm -rf /", "postmark: line 2: shell escapes"),
        ("load other.cfg", "postmark: load: line 2: nested command files"),
        ("run\nrun", "postmark: run: line 3: only one run per command file"),
    ],
)
def test_bad_parameter_exits_2(engine_bin: Path, scratch: Path, line: str, message: str) -> None:
    d = scratch / "dir"
    d.mkdir()
    cmd = scratch / "bad.cfg"
    cmd.write_text(f"set number 10\n{line}\nrun\n")
    r = pm(engine_bin, cmd, d, check=False)
    assert r.rc == 2, r.stderr
    assert message in r.stderr
    assert r.stdout == ""
    assert list(d.iterdir()) == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "directory: --directory=DIR is required"),
        (["--directory=/nonexistent/pm"], "directory: cannot open directory '/nonexistent/pm'"),
        (["--directory={d}", "--output-format=xml"], "output-format: must be json, json+ or normal"),
        (["--directory={d}", "--bs=4k"], "postmark: option 'bs' does not apply to --postmark"),
        (["--directory={d}", "--beneath={s}/elsewhere"], "beneath: directory '{d}' is not beneath"),
        (["--directory={s}/link", "--beneath={s}"], "beneath: directory '{s}/link' beneath '{s}'"),
    ],
)
def test_bad_flags_exit_2(engine_bin: Path, scratch: Path, args: list[str], message: str) -> None:
    d = scratch / "dir"
    d.mkdir()
    (scratch / "elsewhere").mkdir()
    (scratch / "link").symlink_to(d)
    cmd = command_file(scratch / "pm.cfg", number=10, transactions=10)
    argv = [a.format(d=d, s=scratch) for a in args]
    r = run_engine(engine_bin, f"--postmark={cmd}", *argv, check=False)
    assert r.rc == 2, r.stderr
    assert message.format(d=d, s=scratch) in r.stderr
    assert list(d.iterdir()) == []


def test_missing_run_and_missing_file_exit_2(engine_bin: Path, scratch: Path) -> None:
    cmd = scratch / "norun.cfg"
    cmd.write_text("set number 10\nquit\nrun\n")  # 'run' after 'quit' is never read, as in PostMark
    r = pm(engine_bin, cmd, scratch, check=False)
    assert r.rc == 2 and "has no 'run' command" in r.stderr
    r = pm(engine_bin, scratch / "absent.cfg", scratch, check=False)
    assert r.rc == 2 and "cannot read command file" in r.stderr


def test_beneath_accepts_a_directory_inside(engine_bin: Path, scratch: Path) -> None:
    d = scratch / "a" / "b"
    d.mkdir(parents=True)
    cmd = command_file(scratch / "pm.cfg", number=20, transactions=50)
    r = pm(engine_bin, cmd, d, f"--beneath={scratch}")
    assert r.doc["postmark"]["beneath"] == str(scratch)
    assert r.doc["postmark"]["files_created"] >= 20
    assert list(d.iterdir()) == []


def test_an_existing_file_is_never_overwritten(engine_bin: Path, scratch: Path) -> None:
    """A file in DIR with the name PostMark would create stops the run (exit 1): O_EXCL, and
    the run removes only what it created."""
    (scratch / "5").write_text("not yours")
    cmd = command_file(scratch / "pm.cfg", number=20, transactions=50, subdirs=1)
    r = pm(engine_bin, cmd, scratch, check=False)
    assert r.rc == 1
    assert "create '5': File exists" in r.stderr
    p = r.doc["postmark"]
    assert p["files_created"] == 4 and p["files_deleted"] == 4
    assert (scratch / "5").read_text() == "not yours"
    assert sorted(x.name for x in scratch.iterdir()) == ["5", "pm.cfg"]


# ---- ENOSPC, --keep, fsync, SIGINT, normal output ----


def test_enospc_stops_cleanly_and_cleans_up(engine_bin: Path, scratch: Path, small_tmpfs: Path) -> None:
    cmd = command_file(scratch / "pm.cfg", number=400, transactions=1000, low=4000, high=20000, subdirs=3)
    r = pm(engine_bin, cmd, small_tmpfs, check=False)
    assert r.rc == 1, r.stderr
    assert "No space left on device" in r.stderr
    assert "the run stopped and removed what it created" in r.stderr
    doc = r.doc  # the JSON is still printed
    p = doc["postmark"]
    assert "No space left on device" in p["error"]
    assert doc["jobs"][0]["error"] == 28  # ENOSPC
    assert 0 < p["files_created"] < 400
    assert p["files_deleted"] == p["files_created"]
    assert list(small_tmpfs.iterdir()) == []


def test_keep_leaves_the_files(engine_bin: Path, scratch: Path) -> None:
    d = scratch / "kept"
    d.mkdir()
    cmd = command_file(scratch / "pm.cfg", number=40, transactions=100, subdirs=3)
    p = pm(engine_bin, cmd, d, "--keep").doc["postmark"]
    assert p["kept"] is True and p["files_deleted_alone"] == 0
    files = [x for x in d.rglob("*") if x.is_file()]
    assert len(files) == p["files_created"] - p["files_deleted"] > 0
    assert sorted(x.name for x in d.iterdir()) == ["s0", "s1", "s2"]


def test_fsync_marked_not_in_postmark(engine_bin: Path, scratch: Path) -> None:
    cmd = command_file(scratch / "pm.cfg", number=30, transactions=100, subdirs=1, extra="set fsync true")
    p = pm(engine_bin, cmd, scratch).doc["postmark"]
    assert p["parameters"]["fsync"] is True
    assert "not in PostMark" in p["parameters"]["fsync_note"]
    assert p["syscalls"]["fsync"] == p["files_created"] + p["files_appended"]
    text = pm(engine_bin, cmd, scratch, "--output-format=normal").stdout
    assert "(not in PostMark)" in text


def test_normal_output_has_postmarks_report_lines(engine_bin: Path, scratch: Path) -> None:
    cmd = command_file(scratch / "pm.cfg", number=60, transactions=300, low=300, high=3000)
    text = pm(engine_bin, cmd, scratch, "--output-format=normal").stdout
    for line in (
        "seconds total",
        "seconds of transactions",
        "created (",
        "Creation alone: 60 files",
        "Mixed with transactions:",
        " read (",
        " appended (",
        " deleted (",
        "Deletion alone:",
        "kilobytes read",
        "written (",
        "Latency per operation",
    ):
        assert line in text, line
    terse = command_file(scratch / "t.cfg", number=60, transactions=300, extra="set report terse")
    first = pm(engine_bin, terse, scratch, "--output-format=normal").stdout.splitlines()[1]
    assert len(first.split()) == 13  # PostMark's terse line: 13 numbers


def test_sigint_stops_and_cleans_up(engine_bin: Path, scratch: Path) -> None:
    d = scratch / "big"
    d.mkdir()
    cmd = command_file(
        scratch / "pm.cfg", number=20000, transactions=10_000_000, low=100, high=2000, subdirs=10
    )
    # stopped in the transaction phase (or at least after a progress line: the machine may be loaded)
    argv = [str(engine_bin), f"--postmark={cmd}", f"--directory={d}", "--progress=jsonl"]
    rc, out, seen = signal_after_progress(argv, "transactions")
    assert '"event":"progress"' in seen
    assert rc == 0
    doc = json.loads(out)
    assert doc["iowatt"]["interrupted"] is True and doc["iowatt"]["signal"] == "SIGINT"
    p = doc["postmark"]
    assert 0 < p["transactions"] < 10_000_000
    assert p["files_deleted"] == p["files_created"]
    assert list(d.iterdir()) == []


def test_out_of_files_same_sequence_as_debian_postmark(engine_bin: Path, scratch: Path) -> None:
    """Deletes outrun creates: both tools stop at the same transaction ("out of files!")."""
    postmark = shutil.which("postmark")
    if not postmark or not STRACE:
        pytest.skip("needs Debian's postmark and strace (scripts/install-system-deps.sh)")
    ours_dir, theirs_dir = scratch / "ours", scratch / "theirs"
    ours_dir.mkdir()
    theirs_dir.mkdir()
    params: dict[str, Any] = dict(number=30, transactions=500, low=100, high=900, subdirs=3, seed=99)
    params["extra"] = "set bias create 2"
    theirs_cfg = command_file(scratch / "theirs.cfg", **params)
    theirs_cfg.write_text(theirs_cfg.read_text().replace("/ignored", str(theirs_dir)))
    ours_cfg = command_file(scratch / "ours.cfg", **params)
    t, theirs_trace = straced(
        [postmark, str(theirs_cfg)], scratch / "theirs.trace", *TRACE, timeout=120, cwd=theirs_dir
    )
    assert "out of files!" in t.stdout
    o, ours_trace = straced(
        [str(engine_bin), f"--postmark={ours_cfg}", f"--directory={ours_dir}"],
        scratch / "ours.trace",
        *TRACE,
        timeout=120,
    )
    assert o.returncode == 0, o.stderr
    assert "out of files after" in o.stderr
    p = json.loads(o.stdout)["postmark"]
    assert p["out_of_files"] is True and 0 < p["transactions"] < 500
    assert p["files_deleted"] == p["files_created"] and p["files_deleted_alone"] == 0
    assert file_ops(ours_trace, ours_dir) == file_ops(theirs_trace, theirs_dir)
    assert list(ours_dir.iterdir()) == []


def test_a_linked_subdirectory_is_refused(engine_bin: Path, scratch: Path) -> None:
    """s1 as a symbolic link to a directory elsewhere: never followed (exit 1 before any file)."""
    d, elsewhere = scratch / "dir", scratch / "elsewhere"
    d.mkdir()
    elsewhere.mkdir()
    (d / "s1").symlink_to(elsewhere)
    cmd = command_file(scratch / "pm.cfg", number=20, transactions=50, subdirs=3)
    r = pm(engine_bin, cmd, d, check=False)
    assert r.rc == 1
    assert "open subdirectory 's1'" in r.stderr and "refused" in r.stderr
    p = r.doc["postmark"]
    assert p["files_created"] == 0
    assert list(elsewhere.iterdir()) == []
    assert sorted(x.name for x in d.iterdir()) == ["s1"]  # s0, made by the run, removed again
