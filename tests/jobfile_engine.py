"""A stand-in for the engine's job-file side (docs/contracts.md: `--parse-only FILE`, `--untrusted`)
for the platform's tests of fio job files (ADR 0029), written as a script into a test's directory:
it reads INI job files and the engine's JSON job files as the contract says the engine does and
prints the iowatt-jobfile/1 document, refuses include and ${VAR} under --untrusted (exit 2,
`iowatt-engine: FILE:LINE: OPTION: reason`), and hands anything else (a run) to the real engine
with --untrusted removed. It records each call's argv and environment in `calls.jsonl` beside it.

The tests that need the engine's own reading of job files use the real engine once it has them
(`real_engine_reads_job_files()`); this stand-in keeps the platform's tests about the platform."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
# the repository's build, or the server's setting when a test run names another engine
REAL_ENGINE = Path(
    os.environ.get("IOWATT_ENGINE_PATH") or REPO / "agent" / "engine" / "build" / "iowatt-engine"
)

SCRIPT = r"""#!PYTHON
import json, os, re, sys
HERE = os.path.dirname(os.path.abspath(__file__))
REAL = REAL_PATH
KNOWN = set(KNOWN_OPTIONS)
with open(os.path.join(HERE, "calls.jsonl"), "a") as log:
    log.write(json.dumps({"argv": sys.argv[1:], "env": dict(os.environ)}) + "\n")
args = sys.argv[1:]
untrusted = "--untrusted" in args
if "--parse-only" not in args or not args or args[-1].startswith("-"):
    os.execv(REAL, [REAL] + [a for a in args if a != "--untrusted"])
path = args[-1]
def die(line, opt, why):
    sys.stderr.write("iowatt-engine: %s:%d: %s: %s\n" % (path, line, opt, why))
    sys.exit(2)
text = open(path, encoding="utf-8").read()
BUILTIN = {"ncpus": "2", "pagesize": "4096", "mb_memory": "1024"}
def expand(value, line, opt):
    def one(m):
        name = m.group(1)
        if name in BUILTIN:
            return BUILTIN[name]
        if untrusted:
            die(line, opt, "${%s}: environment expansion is refused with --untrusted" % name)
        return os.environ.get(name, "")
    return re.sub(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}", one, value)
glob, jobs, section, group = {}, [], None, 0
if text.lstrip().startswith("{"):
    doc = json.loads(text)
    glob = {k: str(v) for k, v in doc.get("global", {}).items()}
    for j in doc["jobs"]:
        opts = {k: str(v) for k, v in j.items() if k != "name"}
        if jobs and (opts.get("stonewall") not in (None, "0") or "new_group" in opts):
            group += 1
        jobs.append({"name": j["name"], "options": opts, "group": group})
else:
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line[0] in ";#":
            continue
        if line.startswith("[") and line.endswith("]"):
            name = line[1:-1].strip()
            if name == "global":
                section = glob
            else:
                section = {}
                jobs.append({"name": name, "options": section, "group": 0})
            continue
        key, eq, value = line.partition("=")
        key, value = key.strip(), value.strip()
        if line.split()[0] == "include":
            if untrusted:
                die(n, "include", "include is refused with --untrusted")
            die(n, "include", "not supported by this stand-in")
        if key not in KNOWN:
            die(n, key, "unknown option")
        if section is None:
            die(n, key, "option outside a section")
        section[key] = expand(value, n, key) if eq else ""
    for i, j in enumerate(jobs):
        o = j["options"]
        if i and (o.get("stonewall") not in (None, "0") or "new_group" in o):
            group += 1
        j["group"] = group
if not jobs:
    sys.stderr.write("iowatt-engine: %s: no jobs\n" % path)
    sys.exit(2)
print(json.dumps({"schema": "iowatt-jobfile/1", "global": glob, "jobs": jobs, "refused": []}))
"""

KNOWN_OPTIONS = [
    "name",
    "rw",
    "readwrite",
    "rwmixread",
    "bs",
    "blocksize",
    "bssplit",
    "size",
    "offset",
    "direct",
    "buffered",
    "numjobs",
    "runtime",
    "time_based",
    "ramp_time",
    "ioengine",
    "iodepth",
    "stonewall",
    "new_group",
    "loops",
    "fsync",
    "end_fsync",
    "sync",
    "invalidate",
    "random_distribution",
    "norandommap",
    "randseed",
    "thread",
    "group_reporting",
    "randrepeat",
    "io_size",
    "filename",
    "directory",
    "verify",
    "nrfiles",
    "filesize",
    "startdelay",
    "description",
    "beneath",
    "destructive",
    "readonly",
    "unlink",
    "create_new",
    "keep_existing",
    "write_bw_log",
]


def write_jobfile_engine(directory: Path) -> Path:
    """The stand-in engine as an executable script in `directory` (its calls in calls.jsonl)."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "iowatt-engine"
    body = (
        SCRIPT.replace("PYTHON", sys.executable)
        .replace("REAL_PATH", repr(str(REAL_ENGINE)))
        .replace("KNOWN_OPTIONS", repr(KNOWN_OPTIONS))
    )
    path.write_text(body)
    path.chmod(0o755)
    return path


def calls(engine: Path) -> list[dict[str, Any]]:
    import json

    log = engine.parent / "calls.jsonl"
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def real_engine_reads_job_files() -> bool:
    """The real engine has `--untrusted --parse-only FILE` for INI job files (docs/contracts.md)."""
    if not os.access(REAL_ENGINE, os.X_OK):
        return False
    job = Path(os.environ.get("TMPDIR", "/tmp")) / f"iowatt-probe-{os.getpid()}.fio"
    job.write_text("[probe]\nrw=read\nsize=4k\n")
    try:
        done = subprocess.run(
            [str(REAL_ENGINE), "--untrusted", "--parse-only", str(job)], capture_output=True, check=False
        )
    finally:
        job.unlink(missing_ok=True)
    return done.returncode == 0 and b"iowatt-jobfile/1" in done.stdout


def engine_knows(engine: Path, option: str, value: str = "1") -> bool:
    """`engine` takes `option` in a job file (--untrusted --parse-only does not call it unknown)."""
    job = Path(os.environ.get("TMPDIR", "/tmp")) / f"iowatt-probe-{os.getpid()}-{option}.fio"
    job.write_text(f"[probe]\nrw=read\nsize=4k\n{option}={value}\n")
    try:
        done = subprocess.run(
            [str(engine), "--untrusted", "--parse-only", str(job)], capture_output=True, check=False
        )
    finally:
        job.unlink(missing_ok=True)
    return b"unknown option" not in done.stderr
