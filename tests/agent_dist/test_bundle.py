"""The bundle `make agent-dist` builds (dist/agent/), as a host without the repository gets it.

- its engine: linked against the glibc baseline (no symbol newer than GLIBC_2.28: RHEL 8), liburing and
  libaio inside it, not needed from the host;
- on the shared stack: the server's install script downloads the tarball the server serves, checks
  its SHA-256, installs it where its options say, enrols it with a token file, and the installed
  agent runs a benchmark with the bundle's engine (found next to it) through io_uring — with a PATH
  that holds no virtualenv, no pyenv and no compiler of the repository's. The same benchmark queued
  through the server and run by the installed agent is test_bare_host's (the same bundle, install
  script and job, on a host with no compiler or Python at all); it runs here too only where that
  test cannot (no root, no namespaces or no Debian root file system).

The bundle is this tree's, in dist/agent: conftest.agent_bundle runs `make agent-dist`'s script
with AGENT_DIST_REUSE=1 (a build of the same inputs is copied from the tools' cache); the tests
skip only when the build tools are absent and no bundle is there.
"""

import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import uuid
from pathlib import Path

import pytest

from backend.agent_dist import service
from tests.agent_dist import rootfs
from tests.agent_dist.conftest import BUILD_ENV, DIST, REPO, bundle_check
from tests.stack import Stack, enrollment_token, http
from tests.waiting import wait_until

BARE_PATH = "/usr/sbin:/usr/bin:/sbin:/bin"
# the session's first test may build the bundle (conftest.agent_bundle): minutes on a cold cache,
# mostly downloading the build tools
pytestmark = pytest.mark.timeout(1500)

# the engine's newest glibc symbol version: ADR 0036's baseline, RHEL 8's glibc (gettid and
# sem_clockwait, 2.30, come from agent/packaging/glibc-compat.c)
ENGINE_GLIBC_MAX = (2, 28)
# the frozen agent's, as the suite builds it (AGENT_DIST_ROOT=host): the build host's libpython3.11
# and libgcc_s (Debian 12) need GLIBC_2.35. `make agent-dist`'s (frozen in Debian 11, its symbols
# held to 2.28) is held to its floor by build.sh and by test_old_glibc (make agent-dist-check).
AGENT_GLIBC_MAX = (2, 35)


@pytest.mark.slow
def test_the_engine_needs_glibc_2_28_at_most_and_no_async_io_library(
    agent_bundle: tuple[Path, str], tmp_path: Path
) -> None:
    tarball, top = agent_bundle
    subprocess.run(["tar", "-xzf", str(tarball), "-C", str(tmp_path)], check=True)
    engine = tmp_path / top / "iowatt-engine"
    needed = subprocess.run(["objdump", "-p", str(engine)], capture_output=True, text=True, check=True).stdout
    libs = set(re.findall(r"NEEDED\s+(\S+)", needed))
    assert not {lib for lib in libs if "uring" in lib or "aio" in lib}, libs
    system = {"libc.so.6", "libm.so.6", "libpthread.so.0", "ld-linux-x86-64.so.2", "ld-linux-aarch64.so.1"}
    assert libs <= system, libs
    # every ELF file of the bundle (the agent, libpython, each library and extension module, both
    # engines): the floors ADR 0036 and docs/operations.md state, no library search path outside
    # the bundle (the build host's pyenv prefix was in libpython's and every module's RUNPATH), no
    # library that is neither in the bundle nor glibc's
    elves = bundle_check.inspect(tmp_path / top)
    assert len(elves) > 20 and {e.path.name for e in elves} >= {"iowatt-agent", "iowatt-engine"}
    assert any(e.path.name.startswith("libpython3.11.so") for e in elves)
    assert all(e.newest for e in elves if e.path.name in ("iowatt-agent", "iowatt-engine"))  # (versions read)
    bad = bundle_check.findings(tmp_path / top, elves, glibc=AGENT_GLIBC_MAX, engine_glibc=ENGINE_GLIBC_MAX)
    assert bad == []
    # MANIFEST.json, the one record of the glibc the bundle needs: what the check finds in its files,
    # and what the server reads from the head of the tarball it serves (the install script's floor)
    record = json.loads((tmp_path / top / bundle_check.MANIFEST).read_text())
    assert record == bundle_check.manifest(elves) and record["glibc"] == bundle_check.dotted(
        max(e.newest for e in elves if e.newest)
    )
    st = tarball.stat()
    assert service._glibc_floor(str(tarball), top, st.st_size, st.st_mtime_ns) == record["glibc"]
    # built under umask 077 (conftest, as make up runs it): every file readable by all, every
    # directory and program 0755, the published files 0644 (the server serves them; root installs
    # them). The unpacked tree's modes (tar -x keeps them; reading the members' headers again would
    # decompress the whole tarball, ~0.15 CPU-s)
    unreadable = [
        p for p in (tmp_path / top).rglob("*") if not p.is_symlink() and p.stat().st_mode & 0o444 != 0o444
    ]
    assert unreadable == []
    assert {(tmp_path / top / n).stat().st_mode & 0o777 for n in ("", "iowatt-agent", "iowatt-engine")} == {
        0o755
    }
    assert tarball.stat().st_mode & 0o777 == 0o644
    # built with both asynchronous engines (they are linked in, not probed on the host)
    help_text = subprocess.run([str(engine), "--help"], capture_output=True, text=True, check=True).stdout
    assert "io_uring" in help_text and "libaio" in help_text
    # the kinds whose work runs in a child of the agent (PTS, TPC-H, InnoDB flushing) start
    # sys.executable -m iowatt_agent.X: in the bundle, the frozen agent (agent_main.run_module);
    # it said "No such option: -m" before, so no PTS run could start on a host with the bundle
    child = subprocess.run(
        [str(tmp_path / top / "iowatt-agent"), "-m", "iowatt_agent.pts", f"--job={tmp_path}/missing.json"],
        capture_output=True,
        text=True,
    )
    assert (child.returncode, child.stderr.strip()) == (
        1,
        f"pts: [Errno 2] No such file or directory: '{tmp_path}/missing.json'",
    )


@pytest.mark.slow
def test_the_reuse_key_holds_the_gzip_level(agent_bundle: tuple[Path, str]) -> None:
    """AGENT_DIST_REUSE's key (`build.sh --reuse-key`, the same function the build keys its cache with)
    differs with the gzip level: a bundle built at level 1 (the tests') is never copied for a build
    asked for level 6 (`make agent-dist`'s default). Before, the level was not in the key (issue
    27). ~0.45 CPU-s a key (dpkg-query, the inputs' hashes); after the fixture, whose build made the
    tools' virtualenv the key lists."""

    def key(level: str) -> str:
        r = subprocess.run(
            ["bash", str(REPO / "agent/packaging/build.sh"), "--reuse-key"],
            env={**os.environ, **BUILD_ENV, "AGENT_DIST_GZIP_LEVEL": level}, capture_output=True, text=True,
        )  # fmt: skip
        assert r.returncode == 0 and re.fullmatch(r"[0-9a-f]{40}\n", r.stdout), r.stderr
        return r.stdout

    assert key(BUILD_ENV["AGENT_DIST_GZIP_LEVEL"]) != key("6")


OBJDUMP = """
/x/_internal/lib.so:     file format elf64-x86-64

Dynamic Section:
  NEEDED               libfoo.so.1
  NEEDED               libc.so.6
  RUNPATH              /root/.pyenv/versions/3.11.7/lib:$ORIGIN/../libs

Version References:
  required from libc.so.6:
    0x06969194 0x00 05 GLIBC_2.14
    0x0d696914 0x00 04 GLIBC_2.4
    0x069691b3 0x00 03 GLIBC_2.33
    0x0963cf85 0x00 02 GLIBC_PRIVATE
  required from libfoo.so.1:
    0x0d696913 0x00 06 FOO_1.0
"""


def test_the_bundle_check_finds_each_broken_promise(tmp_path: Path) -> None:
    """agent/packaging/bundle_check.py (build.sh's check of every bundle), each rule fed a violation:
    a newer glibc, GLIBC_PRIVATE, a search path outside the bundle (absolute, or $ORIGIN climbing out),
    a library from neither the bundle nor glibc."""
    versions, private, needed, paths = bundle_check.parse_objdump(OBJDUMP)
    assert versions == {(2, 14), (2, 4), (2, 33)} and private
    assert needed == ["libfoo.so.1", "libc.so.6"]
    assert paths == ["/root/.pyenv/versions/3.11.7/lib", "$ORIGIN/../libs"]
    elf = bundle_check.Elf
    top = tmp_path / "bundle"
    good = [
        elf(Path("iowatt-agent"), {(2, 14)}, False, ["libc.so.6", "libz.so.1"], ["$ORIGIN/_internal"]),
        elf(Path("_internal/libz.so.1"), {(2, 31)}, False, ["libc.so.6"], []),
        elf(Path("iowatt-engine"), {(2, 28)}, False, ["libc.so.6", "libm.so.6"], []),
    ]
    assert bundle_check.findings(top, good, glibc=(2, 31), engine_glibc=(2, 28)) == []
    lib = elf(Path("_internal/lib.so"), versions, private, needed, paths)
    climbs = elf(Path("_internal/up.so"), {(2, 17)}, False, [], ["$ORIGIN/../.."])
    engine = elf(Path("iowatt-engine"), {(2, 30)}, False, ["libc.so.6"], [])
    bad = bundle_check.findings(top, [*good[:2], lib, climbs, engine], glibc=(2, 31), engine_glibc=(2, 28))
    assert bad == [
        "_internal/lib.so: needs GLIBC_2.33 (at most GLIBC_2.31)",
        "_internal/lib.so: needs GLIBC_PRIVATE",
        "_internal/lib.so: library search path '/root/.pyenv/versions/3.11.7/lib' outside the bundle",
        "_internal/lib.so: needs libfoo.so.1, which is neither in the bundle nor glibc's",
        "_internal/up.so: library search path '$ORIGIN/../..' outside the bundle",
        "iowatt-engine: needs GLIBC_2.30 (at most GLIBC_2.28)",
    ]


# the job both the local benchmark and the queued one run: 1,024 random 4 KiB reads through io_uring
JOB = {"rw": "randread", "bs_bytes": 4096, "size_bytes": 4 << 20, "ioengine": "io_uring", "iodepth": 4}


def bare_host_runs_the_queued_benchmark() -> bool:
    """test_bare_host's install-and-benchmark can run here (its bare_tar fixture's conditions)."""
    return not rootfs.missing_tools() and (rootfs.cached_tar().is_file() or bool(shutil.which("mmdebstrap")))


@pytest.mark.slow
@pytest.mark.xdist_group("stack-c")
def test_installed_by_the_served_line_it_enrols_and_runs_a_benchmark(
    agent_bundle: tuple[Path, str], live: Stack, tmp_path: Path
) -> None:
    tarball, top = agent_bundle
    with http(timeout=30) as c:
        script = c.get(f"{live.url}/api/v1/agent-dist/install.sh")
    assert script.status_code == 200
    (tmp_path / "install.sh").write_text(script.text)
    token_file = tmp_path / "token"
    fd = os.open(token_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(enrollment_token(live.url, live.token))
    opt, state, name = tmp_path / "opt" / "iowatt-agent", tmp_path / "state", f"bundle-{uuid.uuid4().hex[:8]}"
    env = {
        "PATH": BARE_PATH,
        "LANG": "C.UTF-8",
        "HOME": str(tmp_path),
        "TMPDIR": str(tmp_path),
        "IOWATT_AGENT_SYSTEMD_DROPIN_DIR": str(tmp_path / "dropin"),
    }
    r = subprocess.run(
        ["sh", str(tmp_path / "install.sh"), "--server", live.url, "--token-file", str(token_file),
         "--name", name, "--prefix", str(opt), "--bin-dir", str(tmp_path / "bin"),
         "--state-dir", str(state), "--no-service"],
        env=env, capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert f"downloading {tarball.name}" in r.stderr and "SHA-256 ok" in r.stderr
    agent = opt / "iowatt-agent"
    version = subprocess.run([agent, "--version"], env=env, capture_output=True, text=True, check=True).stdout
    assert version.startswith("iowatt-agent ") and version.split()[1] in top
    helped = subprocess.run([agent, "--help"], env=env, capture_output=True, text=True, check=True).stdout
    assert "enroll" in helped and "run" in helped
    # its data files are in the bundle: `bench --preset` reads presets.json (an unknown name lists
    # the shipped ones; a bundle without the file failed every --preset with FileNotFoundError)
    unknown = subprocess.run(
        [agent, "bench", "--preset", "no-such-preset", "--target", str(tmp_path)],
        env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert unknown.returncode == 2 and "known: crystaldiskmark," in unknown.stderr, unknown.stderr[-2000:]
    with live.api() as api:  # enrolled: the server lists it
        me = next(a for a in api.get("/agents").json()["items"] if a["name"] == name)

    target = tempfile.mkdtemp(prefix="iowatt-bundle-", dir="/var/tmp")
    try:
        subprocess.run([agent, "targets", "add", target, "--state-dir", str(state)], env=env, check=True)
        # the installed agent finds the bundle's engine next to itself (no IOWATT_ENGINE, no PATH to it)
        bench = subprocess.run(
            [agent, "bench", "--target", target, "--rw", JOB["rw"], "--bs", "4k", "--size", "4m",
             "--ioengine", JOB["ioengine"], "--iodepth", str(JOB["iodepth"]), "--direct", "0", "--json"],
            env=env, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert bench.returncode == 0, bench.stderr[-2000:]
        (j,) = json.loads(bench.stdout)["jobs"]
        assert j["read"]["io_bytes"] == 4 * 1024 * 1024 and j["read"]["total_ios"] == 1024
        assert j["job options"]["ioengine"] == "io_uring"
        assert os.listdir(target) == []  # its data file removed
        if not bare_host_runs_the_queued_benchmark():
            _queued_benchmark(live, agent, env, state, me["id"], target, tmp_path)
    finally:
        subprocess.run(["rm", "-rf", target], check=False)


def _queued_benchmark(
    live: Stack, agent: Path, env: dict[str, str], state: Path, agent_id: str, target: str, tmp_path: Path
) -> None:
    """The installed agent, started, runs the same job queued through the server (test_bare_host's
    check, made here where the bare host cannot run)."""
    log = (tmp_path / "agent.log").open("wb")
    proc = subprocess.Popen(
        [agent, "run", "--state-dir", str(state), "--lease-wait", "2", "--drain-timeout", "30"],
        env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip
    try:
        with live.api() as api:
            job = {"name": "bundle", **JOB, "direct": False}
            body = {"agent_id": agent_id, "target_path": target, "workload": {"jobs": [job]}, "idle_s": 0}

            def reported() -> bool:  # the policy arrives with the agent's first inventory
                policy = api.get(f"/agents/{agent_id}").json().get("policy") or {}
                return target in {t["path"] for t in policy.get("targets", [])}

            wait_until(reported, timeout=60, interval=0.3, message="the bundle's agent reports its target")
            created = api.post("/runs", json=body)
            assert created.status_code == 201, created.text
        run = live.wait(created.json()["id"])
        assert run["status"] == "succeeded", (run["error"], (tmp_path / "agent.log").read_text()[-2000:])
        (j,) = run["jobs"]
        assert j["read"]["io_bytes"] == 4 * 1024 * 1024 and j["read"]["total_ios"] == 1024
        with live.api() as api:
            result = api.get(f"/runs/{run['id']}/result").json()["engine_result"]
        assert result["jobs"][0]["job options"]["ioengine"] == "io_uring"
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=60)


@pytest.mark.slow
def test_the_deb_installs_the_tree_the_unit_and_makes_the_user_and_state_directory(
    agent_bundle: tuple[Path, str], tmp_path: Path
) -> None:
    debs = sorted(DIST.glob("iowatt-agent_*_*.deb"))
    if not debs:
        pytest.skip(f"no .deb in {DIST}: `make agent-dist` builds it (ADR 0036)")
    deb = debs[-1]
    listing = subprocess.run(["dpkg-deb", "-c", str(deb)], capture_output=True, text=True, check=True).stdout
    paths = {line.split()[5] for line in listing.splitlines()}
    assert {
        "./opt/iowatt-agent/iowatt-agent",
        "./opt/iowatt-agent/iowatt-engine",
        "./lib/systemd/system/iowatt-agent.service",
        "./usr/bin/iowatt-agent",
    } <= paths
    subprocess.run(["dpkg-deb", "-e", str(debs[-1]), str(tmp_path / "control")], check=True)
    postinst = (tmp_path / "control" / "postinst").read_text()
    assert "useradd --system" in postinst and "iowatt-tpch" in postinst
    assert "install -d -m 0700 -o root -g root /var/lib/iowatt-agent" in postinst
    subprocess.run(["dpkg-deb", "-x", str(debs[-1]), str(tmp_path / "root")], check=True)
    unit = (tmp_path / "root" / "lib/systemd/system/iowatt-agent.service").read_text()
    assert "\nExecStart=/opt/iowatt-agent/iowatt-agent run --state-dir /var/lib/iowatt-agent " in unit
    assert "\nEnvironment=IOWATT_ENGINE=/opt/iowatt-agent/iowatt-engine\n" in unit
    assert "\nMemoryDenyWriteExecute=yes\n" in unit  # the sandbox is the source unit's, unchanged
    out = subprocess.run(
        [tmp_path / "root/opt/iowatt-agent/iowatt-agent", "--version"],
        env={"PATH": BARE_PATH}, capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert out.stdout.startswith("iowatt-agent ")
