"""README.md "Measuring another host": the install lines between its `other-host-install` markers,
run as written on a clean copy of the repository, give a working `iowatt-agent` and engine.

What differs from a real host, and why:
- `/opt/iowatt-agent` and `/usr/local/bin` become directories under tmp_path (the test is not
  root on someone's machine); the test checks that both paths are in the README, so the
  substitution cannot silently do nothing.
- The copy holds the repository's tracked and untracked (not ignored) files of `agent/` and
  `libs/`: no `build/`, no `*.egg-info` left by the repo's editable install.
- No network: pip gets `--no-index` and `--find-links` to a wheelhouse packed from the
  distributions installed in the repo's venv (the same pinned versions `make deps` installed,
  including the build backend flit_core, a build dependency for this reason), so pip builds the
  local projects in its usual isolated build environment as on a real host. Anything the README
  forgets to install is missing here as on a clean machine: pip fails to resolve it.
- `python3` is the interpreter this test runs under (its base, not the venv), so the wheels'
  tags match.
- Cheaper than a real host, proving the same: the packed wheels are stored, not deflated (a wheel
  is a zip either way); pip compiles no bytecode (`PIP_COMPILE=0`, its own setting, as the other
  `PIP_*` above: the README's line runs as written); and when the repository's engine build is up
  to date (`make -q`), its object files are put beside the copy's sources, newer than them, so
  the README's `make` links the engine from them instead of compiling the same sources with the
  same flags again. A source file missing from the copy still fails that link (its object is not
  linked), and the engine built is run below.
"""

from __future__ import annotations

import base64
import csv
import fnmatch
import hashlib
import importlib.metadata as md
import io
import os
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]  # a venv, ~25 wheels, an engine build: ~1 min

REPO = Path(__file__).resolve().parents[1]
BEGIN = "<!-- other-host-install:begin"
END = "<!-- other-host-install:end -->"
VENV, BIN = "/opt/iowatt-agent", "/usr/local/bin"
# what the repo's venv has installed from local paths (never packed: the README must install them)
LOCAL = re.compile(r"^iowatt[-_]")


def readme_install_lines() -> list[str]:
    text = (REPO / "README.md").read_text()
    assert text.count(BEGIN) == 1 and text.count(END) == 1, "README.md: one other-host-install block"
    block = text.split(BEGIN, 1)[1].split(END, 1)[0]
    body = block.split("```sh\n", 1)[1].split("```", 1)[0]
    return [line for line in body.splitlines() if line.strip() and not line.lstrip().startswith("#")]


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _closure(roots: list[str]) -> list[md.Distribution]:
    """The installed distributions `roots` need (extras off), iowatt's own left out."""
    seen: dict[str, md.Distribution] = {}
    todo = list(roots)
    while todo:
        name = todo.pop()
        if _norm(name) in seen:
            continue
        dist = md.distribution(name)
        seen[_norm(name)] = dist
        for spec in dist.requires or []:
            req = Requirement(spec)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(req.name)
    return [d for k, d in seen.items() if not LOCAL.match(k)]


def _pack_wheel(dist: md.Distribution, out: Path) -> Path:
    """A wheel of an installed distribution: its files under site-packages (scripts are made
    again from entry_points.txt), a fresh RECORD, no INSTALLER/direct_url.json."""
    wheel_meta = dist.read_text("WHEEL") or ""
    tags = [
        line.split(":", 1)[1].strip().split("-")
        for line in wheel_meta.splitlines()
        if line.startswith("Tag:")
    ]
    # every Tag: line (py2-none-any and py3-none-any -> py2.py3-none-any)
    tag = "-".join(".".join(dict.fromkeys(t[i] for t in tags)) for i in range(3))
    name = re.sub(r"[-_.]+", "_", dist.metadata["Name"])
    path = out / f"{name}-{dist.version}-{tag}.whl"
    record = io.StringIO()
    writer = csv.writer(record, lineterminator="\n")
    base = Path(str(dist.locate_file("")))
    dist_info = ""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as zf:  # deflating ~25 wheels: CPU for nothing
        for f in dist.files or []:
            rel = f.as_posix()
            if rel.startswith("..") or "__pycache__" in f.parts:
                continue
            if len(f.parts) == 2 and f.parts[0].endswith(".dist-info"):  # not a vendored one
                dist_info = f.parts[0]
                if f.name in ("RECORD", "INSTALLER", "REQUESTED", "direct_url.json"):
                    continue
            data = (base / f).read_bytes()
            zf.writestr(rel, data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            writer.writerow([rel, f"sha256={digest}", len(data)])
        writer.writerow([f"{dist_info}/RECORD", "", ""])
        zf.writestr(f"{dist_info}/RECORD", record.getvalue())
    return path


@pytest.fixture(scope="module")
def wheelhouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheelhouse")
    for dist in _closure(["iowatt-agent", "flit-core"]):
        _pack_wheel(dist, out)
    return out


def _clean_copy(dest: Path) -> None:
    files = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", "agent", "libs"],
        cwd=REPO,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    for rel in filter(None, (f.decode() for f in files)):
        src = REPO / rel
        if src.is_file():  # a tracked file someone deleted in the working tree is not copied
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)


def _engine_objects(dest: Path) -> int:
    """Put the repository's engine objects into the copy's build directory when that build is up to
    date with its sources, headers and Makefile (`make -q`); copy2 keeps their times, later than
    the sources' (copied with theirs), so the copy's `make` only links. How many were put."""
    engine = REPO / "agent" / "engine"
    fresh = subprocess.run(["make", "-q", "-C", str(engine), "build/iowatt-engine"], capture_output=True)
    if fresh.returncode != 0:
        return 0
    objs = sorted((engine / "build" / "obj").glob("*.o"))
    out = dest / "agent" / "engine" / "build" / "obj"
    out.mkdir(parents=True)
    for o in objs:
        shutil.copy2(o, out / o.name)
    return len(objs)


def test_readme_installs_every_library_the_agent_needs() -> None:
    """Each `libs/` project the agent's pyproject depends on is named (or matched by a glob) on
    the README's pip line that installs the agent."""
    agent = tomllib.loads((REPO / "agent" / "pyproject.toml").read_text())
    needs = {_norm(Requirement(r).name) for r in agent["project"]["dependencies"]}
    pip_line = next(line for line in readme_install_lines() if " install " in line and "./agent" in line)
    found = set()
    for lib in sorted(p for p in (REPO / "libs").iterdir() if (p / "pyproject.toml").is_file()):
        name = _norm(tomllib.loads((lib / "pyproject.toml").read_text())["project"]["name"])
        if name in needs:
            assert any(fnmatch.fnmatch(f"./libs/{lib.name}", arg) for arg in pip_line.split()), (
                name,
                pip_line,
            )
            found.add(name)
    assert {"iowatt-energy", "iowatt-policy"} <= found, found


def test_readme_install_for_another_host_works_on_a_clean_copy(tmp_path: Path, wheelhouse: Path) -> None:
    lines = readme_install_lines()
    script = "\n".join(lines)
    assert VENV in script and BIN in script, script
    checkout, venv, bin_dir, shims = (tmp_path / d for d in ("iowatt", "venv", "bin", "shims"))
    for d in (checkout, bin_dir, shims):
        d.mkdir()
    _clean_copy(checkout)
    reused = _engine_objects(checkout)
    (shims / "python3").symlink_to(Path(getattr(sys, "_base_executable", sys.executable)).resolve())
    env = {
        "PATH": f"{shims}:{os.environ['PATH']}",
        "HOME": str(tmp_path),
        "LANG": "C.UTF-8",
        "PIP_NO_INDEX": "1",
        "PIP_FIND_LINKS": str(wheelhouse),
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        "PIP_NO_CACHE_DIR": "1",
        "PIP_COMPILE": "0",  # pip install --no-compile (PIP_NO_COMPILE=1 would mean --compile)
    }
    # line by line, as a reader pastes them: each must succeed (in one `bash -e` script the first
    # command of an `a && b` line could fail unnoticed)
    for line in lines:
        line = line.replace(VENV, str(venv)).replace(BIN, str(bin_dir))
        p = subprocess.run(
            ["bash", "-o", "pipefail", "-c", line],
            cwd=checkout,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert p.returncode == 0, f"{line}\n{p.stdout[-3000:]}{p.stderr[-3000:]}"
        if line.startswith("make "):
            compiled = len(re.findall(r" -c -o build/obj/", p.stdout))
            print(f"engine: {reused} objects reused, {compiled} compiled")

    agent = bin_dir / "iowatt-agent"
    assert agent.is_symlink() and (venv / "bin" / "iowatt-engine").is_file()
    # nothing of the repository's own venv or source tree is used: only what the README installed
    freeze = subprocess.run(
        [str(venv / "bin" / "pip"), "list", "--format=freeze"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    for lib in ("iowatt-agent", "iowatt-energy", "iowatt-policy"):
        assert re.search(rf"^{lib}==", freeze, re.M | re.I), freeze

    run_env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "LANG": "C.UTF-8"}
    help_ = subprocess.run([str(agent), "--help"], env=run_env, capture_output=True, text=True, timeout=60)
    assert help_.returncode == 0, help_.stderr
    for command in ("enroll", "run", "bench", "inventory", "meters", "targets"):
        assert re.search(rf"^\W*{command}\b", help_.stdout, re.M), (command, help_.stdout)
    version = subprocess.run(
        [str(agent), "--version"], env=run_env, capture_output=True, text=True, timeout=60
    )
    assert version.returncode == 0, version.stderr
    assert version.stdout.strip() == f"iowatt-agent {md.version('iowatt-agent')}"

    # the agent finds the engine installed next to it and runs a job with it, with no server
    target = tmp_path / "target"
    target.mkdir()
    bench = subprocess.run(
        [str(agent), "bench", "--target", str(target), "--rw", "randread", "--bs", "4k", "--size", "4m"]
        + ["--runtime", "200ms", "--json"],
        env=run_env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert bench.returncode == 0, bench.stderr
    assert '"read"' in bench.stdout and list(target.iterdir()) == []
