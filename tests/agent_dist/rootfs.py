"""A host with no compiler and no Python: a minimal Debian root file system (mmdebstrap, the
`essential` variant plus curl for the install line and passwd for its useradd), cached as a tar
outside the clone, and a way to run commands in it (chroot inside a mount + pid namespace of its
own: nothing it mounts is seen outside, nothing it starts outlives it).

Cost (CPU seconds of the cgroup, docs/testing.md § Session 21): building the tar ~17 CPU-s and
1.5 min of wall (apt's download ~1 CPU-s; unpacking 90 packages twice, as mmdebstrap extracts the
Essential ones before dpkg installs them, and their maintainer scripts, the rest); warm, unpacking
it for a test ~0.3 s. The tar is keyed by its recipe, so changing the recipe builds a new one.
"""

import fcntl
import hashlib
import os
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

SUITE = "bookworm"
# the oldest Debian on the archive (glibc 2.31): the old-glibc bundle's check (test_old_glibc)
OLD_SUITE = "bullseye"
VARIANT = "essential"  # Essential: yes packages only: no apt, no python, no compiler, no make
INCLUDE = ("curl", "passwd")  # the install line's downloader; useradd for the service user


def recipe(suite: str = SUITE) -> tuple[str, ...]:
    """mmdebstrap's command line for a bare host of that Debian release (less the output tar).
    bullseye's without the merged-usr hook, whose essential00.sh fails there: its /bin and /usr/bin
    stay apart (bullseye installs without usrmerge too)."""
    if suite == SUITE:
        return RECIPE
    return (*(a for a in RECIPE[:-1] if "hooks/merged-usr" not in a), suite)


RECIPE = (
    "mmdebstrap",
    f"--variant={VARIANT}",
    f"--include={','.join(INCLUDE)}",
    # merged /usr by directory symlinks, as debootstrap and Debian's installer make it, instead of
    # the usrmerge package (init-system-helpers' dependency), which brought perl (~48 MB installed)
    "--hook-dir=/usr/share/mmdebstrap/hooks/merged-usr",
    # dpkg without an fsync per file: the root file system is thrown away if the build stops
    "--dpkgopt=force-unsafe-io",
    # no documentation, manual pages or translations: a smaller tar to unpack for every test.
    # Removed at the end, not excluded with dpkg's path-exclude: mmdebstrap then pipes every
    # Essential package through its Python tar filter while extracting (~9 of its ~26 CPU-s)
    '--customize-hook=rm -rf "$1"/usr/share/doc/* "$1"/usr/share/man/* "$1"/usr/share/locale/*',
    "--mode=root",
    "--quiet",
    SUITE,
)
# what a bare host must not have (the point of the test)
ABSENT = ("gcc", "cc", "make", "python3", "python", "python3.11", "pip", "pip3", "clang", "ld")


def cache_dir() -> Path:
    """Outside the clone, kept between clones and sessions (beside the bundle's build tools)."""
    explicit = os.environ.get("IOWATT_ROOTFS_CACHE")
    if explicit:
        return Path(explicit)
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "iowatt-agent-dist"


def cached_tar(suite: str = SUITE) -> Path:
    key = hashlib.sha256("\0".join(recipe(suite)).encode()).hexdigest()[:12]
    return cache_dir() / f"rootfs-debian-{suite}-{VARIANT}-{key}.tar"


def missing_tools() -> list[str]:
    missing = [t for t in ("unshare", "chroot", "mount") if not shutil.which(t)]
    if os.geteuid() != 0:
        missing.append("root (chroot, mount)")
    return missing


def ensure_tar(suite: str = SUITE) -> Path:
    """The cached tar, built once (under a lock: xdist's workers share it)."""
    tar = cached_tar(suite)
    if tar.is_file():
        return tar
    tar.parent.mkdir(parents=True, exist_ok=True)
    with open(tar.parent / ".rootfs.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if tar.is_file():
            return tar
        if not shutil.which("mmdebstrap"):
            raise FileNotFoundError("mmdebstrap (Debian's package; `make deps-system` installs it)")
        tmp = tar.with_suffix(".tmp.tar")
        r = subprocess.run([*recipe(suite), str(tmp)], capture_output=True, text=True, timeout=1200)
        if r.returncode != 0:
            tmp.unlink(missing_ok=True)
            raise RuntimeError(f"mmdebstrap failed ({r.returncode}):\n{r.stderr[-3000:]}")
        tmp.rename(tar)
    return tar


def unpack(tar: Path, root: Path) -> Path:
    root.mkdir(parents=True)
    subprocess.run(["tar", "-xf", str(tar), "-C", str(root)], check=True)
    return root


# The namespace's first process: /proc of its own pid namespace, the host's /dev and a read-only
# /sys (the agent's inventory reads block devices there), then chroot. Mounts are private to the
# namespace (unshare's default propagation) and vanish with it.
ENTER = """set -e
r=$1; shift
mount --rbind /dev "$r/dev"
mount -t proc proc "$r/proc"
mount --bind /sys "$r/sys" && mount -o remount,bind,ro "$r/sys"
exec chroot "$r" "$@"
"""
# inside: no repository, no virtualenv; what a root shell on a minimal host has
ENV = {
    "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    "LANG": "C.UTF-8",
    "HOME": "/root",
}


def command(root: Path, argv: Sequence[str]) -> list[str]:
    """argv run as root inside `root`, in a mount and pid namespace of its own."""
    namespace = ["unshare", "--mount", "--pid", "--fork", "--kill-child"]
    return [*namespace, "sh", "-c", ENTER, "enter", str(root), *argv]


def run(root: Path, argv: Sequence[str], **kwargs: object) -> "subprocess.CompletedProcess[str]":
    return subprocess.run(  # type: ignore[call-overload, no-any-return]
        command(root, argv), env=ENV, capture_output=True, text=True, **kwargs
    )


def remove(root: Path) -> None:
    """rm -rf, after checking that nothing is still mounted beneath it (it never is: the mounts were
    the namespace's), so the host's /dev can never be what is removed."""
    prefix = str(root.resolve()) + "/"
    with open("/proc/self/mountinfo") as f:
        mounted = [line.split()[4] for line in f if line.split()[4].startswith(prefix)]
    if mounted:
        raise RuntimeError(f"still mounted beneath {root}: {mounted}")
    shutil.rmtree(root, ignore_errors=True)


def install_deb(root: Path, deb: Path) -> None:
    """Install the agent's .deb on a bare host and check what its postinst makes: the service
    user, the root-only state directory, the unit where systemd looks, a working `--version`."""
    (root / "tmp" / deb.name).write_bytes(deb.read_bytes())
    r = run(root, ["dpkg", "-i", f"/tmp/{deb.name}"], timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "\niowatt-tpch:" in "\n" + (root / "etc/passwd").read_text()
    state = root / "var/lib/iowatt-agent"
    assert state.stat().st_mode & 0o777 == 0o700 and state.stat().st_uid == 0
    assert (root / "lib/systemd/system/iowatt-agent.service").is_file()
    version = run(root, ["iowatt-agent", "--version"], timeout=60)
    assert version.returncode == 0 and version.stdout.startswith("iowatt-agent "), version.stderr


def purge_deb(root: Path) -> None:
    """Purge the agent's package: its files, its state (the credentials) and its user go."""
    r = run(root, ["dpkg", "--purge", "iowatt-agent"], timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert not (root / "opt/iowatt-agent").exists() and not (root / "var/lib/iowatt-agent").exists()
    assert "\niowatt-tpch:" not in "\n" + (root / "etc/passwd").read_text()


def rpm(root: Path, *args: str, timeout: float = 120) -> "subprocess.CompletedProcess[str]":
    """This machine's rpm (Debian's `rpm` package) acting on the bare host as an RPM distribution's
    own would: `--root` installs into it and runs the package's scriptlets chrooted there (with the
    root's /bin/sh, useradd and install); `--dbpath /var/lib/rpm` keeps the package database where
    RHEL keeps it, inside the root (Debian's rpm defaults to ~/.rpmdb, its build user's)."""
    return subprocess.run(
        ["rpm", "--root", str(root), "--dbpath", "/var/lib/rpm", *args],
        capture_output=True, text=True, timeout=timeout,
    )  # fmt: skip


# rpm's database in the Debian root holds no package: glibc there is dpkg's, so rpm cannot see
# that the .rpm's `glibc >= X` holds and refuses it. `--nodeps` installs it anyway; the test checks
# that dependency itself, against the root's glibc (what an RPM host's own database would answer).
RPM_NODEPS = "--nodeps"


def install_rpm(root: Path, package: Path, *, upgrade: bool = False) -> None:
    """Install (or, with upgrade, reinstall over itself as an upgrade: `rpm -U --replacepkgs`, the
    scriptlets called with an upgrade's arguments) the agent's .rpm on a bare host and check what
    it makes: the tree, the unit where systemd looks, the service user, the root-only state
    directory, a working `--version` run from there (on the first install: an upgrade's files are
    checked by their presence, ~0.5 CPU-s less)."""
    args = ["-U", "--replacepkgs"] if upgrade else ["-i"]
    r = rpm(root, *args, RPM_NODEPS, str(package), timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    installed = rpm(root, "-q", "iowatt-agent")
    assert installed.returncode == 0 and len(installed.stdout.split()) == 1, installed.stdout  # one instance
    assert "\niowatt-tpch:" in "\n" + (root / "etc/passwd").read_text()
    state = root / "var/lib/iowatt-agent"
    assert state.stat().st_mode & 0o777 == 0o700 and state.stat().st_uid == 0
    unit = (root / "usr/lib/systemd/system/iowatt-agent.service").read_text()
    assert "\nExecStart=/opt/iowatt-agent/iowatt-agent run --state-dir /var/lib/iowatt-agent " in unit
    assert os.readlink(root / "usr/bin/iowatt-agent") == "/opt/iowatt-agent/iowatt-agent"
    if upgrade:
        assert (root / "opt/iowatt-agent/iowatt-agent").is_file()
        return
    version = run(root, ["iowatt-agent", "--version"], timeout=60)
    assert version.returncode == 0 and version.stdout.startswith("iowatt-agent "), version.stderr
