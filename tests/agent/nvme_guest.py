"""An emulated NVMe device to purge for real: QEMU's NVMe controller in a virtual machine that boots
Debian's cloud kernel (its NVMe driver built in) with an initramfs made here: busybox, nvme-cli,
blkdiscard, this machine's Python 3.11, the agent's own packages (agent/src, libs/*/src) and the
engine (agent/engine/build), whose /init runs a program the test gives and powers off. What the
guest prints on its serial console comes back to the test.

Used by tests/agent/test_nvme_guest.py (`make nvme-purge-check`, ADR 0055). The Debian packages
(the kernel, nvme-cli, libnvme1, busybox-static) come from `apt-get download` into a cache outside
the clone, once; QEMU is Debian's qemu-system-x86. The guest runs under TCG, QEMU's own CPU
emulation: this machine's /dev/kvm is PVM (kvm_pvm), which runs only kernels built as PVM guests;
a stock kernel under it was still decompressing itself after 120 s. Under TCG the guest boots
and runs nvme-cli in ~13 s of wall, ~7 CPU-s.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import shutil
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
# the guest's kernel: Debian's cloud flavour has NVMe built in (no modules to load), ~8 MB
KERNEL_META = "linux-image-cloud-amd64"
PACKAGES = ("nvme-cli", "libnvme1", "busybox-static")
QEMU = "qemu-system-x86_64"
PYTHON = Path("/usr/bin/python3.11")
ENGINE = REPO / "agent/engine/build/iowatt-engine"  # make engine
STDLIB = Path("/usr/lib/python3.11")
# stdlib directories the agent's purge never imports (the guest's initramfs stays ~12 MB)
STDLIB_SKIP = {
    "test", "idlelib", "tkinter", "lib2to3", "ensurepip", "pydoc_data", "distutils", "__pycache__",
    "site-packages", "dist-packages", "unittest", "asyncio", "email", "xml", "multiprocessing",
    "sqlite3", "curses", "turtledemo", "venv", "xmlrpc", "http", "wsgiref", "html",
    "ctypes", "dbm",
}  # fmt: skip
PACKAGE_DIRS = (
    REPO / "agent/src/iowatt_agent",
    REPO / "libs/workload/src/iowatt_workload",
    REPO / "libs/policy/src/iowatt_policy",
    REPO / "libs/energy/src/iowatt_energy",
)
MARK = "IOWATT-GUEST "


def cache_dir() -> Path:
    explicit = os.environ.get("IOWATT_NVME_GUEST_CACHE")
    if explicit:
        return Path(explicit)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "iowatt-nvme-guest"


def missing_tools() -> list[str]:
    missing = [t for t in (QEMU, "apt-get", "apt-cache", "dpkg", "blkdiscard") if not shutil.which(t)]
    if not PYTHON.exists():
        missing.append(str(PYTHON))
    if not ENGINE.exists():
        missing.append(f"{ENGINE.relative_to(REPO)} (make engine)")
    return missing


def _kernel_package() -> str:
    out = subprocess.run(["apt-cache", "depends", KERNEL_META], capture_output=True, text=True, check=True)
    for line in out.stdout.splitlines():
        m = re.match(r"\s*Depends:\s*(linux-image-\S+)", line)
        if m:
            return m.group(1)
    raise RuntimeError(f"apt-cache depends {KERNEL_META} names no kernel: {out.stdout[-300:]}")


def packages() -> Path:
    """The Debian packages unpacked (dpkg -x) into one directory of the cache, once (under a lock)."""
    cache = cache_dir()
    cache.mkdir(parents=True, exist_ok=True)
    names = (_kernel_package(), *PACKAGES)
    root = cache / ("root-" + hashlib.sha256("\0".join(names).encode()).hexdigest()[:12])
    with open(cache / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (root / ".complete").exists():
            return root
        debs = cache / "debs"
        debs.mkdir(exist_ok=True)
        subprocess.run(["apt-get", "download", *names], cwd=debs, check=True, capture_output=True)
        shutil.rmtree(root, ignore_errors=True)
        root.mkdir()
        for name in names:
            (deb,) = sorted(debs.glob(f"{name}_*.deb"))[-1:]
            subprocess.run(["dpkg", "-x", str(deb), str(root)], check=True)
        (root / ".complete").write_text("\n".join(names) + "\n")
    return root


def kernel(root: Path) -> Path:
    (found,) = sorted((root / "boot").glob("vmlinuz-*"))[-1:]
    return found


def _libraries(binary: Path, extra_path: list[Path]) -> set[Path]:
    env = dict(os.environ, LD_LIBRARY_PATH=":".join(str(p) for p in extra_path))
    out = subprocess.run(["ldd", str(binary)], capture_output=True, text=True, env=env, check=True).stdout
    found = set()
    for line in out.splitlines():
        m = re.search(r"(?:=>\s*)?(/\S+)\s+\(0x", line)
        if m:
            found.add(Path(m.group(1)))
    return found


def _files(root: Path, program: str, init: str) -> Iterator[tuple[str, Path | bytes, int]]:
    """(path in the guest, its content: a host file or bytes, mode) for every file of the initramfs."""
    libdir = root / "usr/lib/x86_64-linux-gnu"
    nvme_cli = root / "usr/sbin/nvme"
    blkdiscard = Path(shutil.which("blkdiscard") or "/usr/sbin/blkdiscard")
    yield "bin/busybox", root / "bin/busybox", 0o755
    yield "usr/sbin/nvme", nvme_cli, 0o755
    yield "usr/sbin/blkdiscard", blkdiscard, 0o755
    yield "usr/bin/python3.11", PYTHON, 0o755
    yield "usr/bin/iowatt-engine", ENGINE, 0o755
    libs: set[Path] = set()
    for binary in (nvme_cli, blkdiscard, PYTHON, ENGINE):
        libs |= _libraries(binary, [libdir])
    for lib in sorted(libs):
        guest = f"lib/x86_64-linux-gnu/{lib.name}"
        if lib.name.startswith("ld-linux"):
            guest = "lib64/ld-linux-x86-64.so.2"
        yield guest, lib.resolve(), 0o755
    for path in sorted(STDLIB.rglob("*")):
        rel = path.relative_to(STDLIB)
        if rel.parts[0] in STDLIB_SKIP or "__pycache__" in rel.parts or not path.is_file():
            continue
        if path.suffix == ".py" or (rel.parts[0] == "lib-dynload" and path.suffix == ".so"):
            yield f"usr/lib/python3.11/{rel}", path, 0o644
    for pkg in PACKAGE_DIRS:
        for path in sorted(pkg.rglob("*.py")):
            yield f"iowatt/{path.relative_to(pkg.parent)}", path, 0o644
    yield "check.py", program.encode(), 0o644
    yield "init", init.encode(), 0o755


def _newc(name: str, mode: int, data: bytes, ino: int) -> bytes:
    """One entry of a cpio archive in the "newc" format the kernel unpacks."""
    fields = (ino, mode, 0, 0, 1, 0, len(data), 0, 0, 0, 0, len(name) + 1, 0)
    head = b"070701" + b"".join(f"{v:08x}".encode() for v in fields) + name.encode() + b"\0"
    head += b"\0" * (-len(head) % 4)
    return head + data + b"\0" * (-len(data) % 4)


def initramfs(root: Path, program: str, out: Path) -> Path:
    """An uncompressed initramfs (the guest's kernel copies it; TCG would emulate gunzip) whose
    /init mounts /proc, /sys and /dev, runs `python3.11 /check.py` and powers off."""
    init = (
        "#!/bin/busybox sh\n"
        "/bin/busybox --install -s /bin\n"
        "mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev\n"
        "mount -t tmpfs tmp /tmp\n"
        "export PATH=/usr/sbin:/usr/bin:/sbin:/bin PYTHONPATH=/iowatt PYTHONDONTWRITEBYTECODE=1\n"
        f'/usr/bin/python3.11 /check.py 2>&1; echo "{MARK}exit $?"\n'
        "poweroff -f\n"
    )
    dirs: set[str] = {"dev", "proc", "sys", "tmp", "usr/bin", "sbin"}
    entries: list[tuple[str, Path | bytes, int]] = list(_files(root, program, init))
    for guest, _, _ in entries:
        parts = guest.split("/")[:-1]
        dirs |= {"/".join(parts[: i + 1]) for i in range(len(parts))}
    ino = 1
    with open(out, "wb") as f:
        for d in sorted(dirs):
            f.write(_newc(d, stat.S_IFDIR | 0o755, b"", ino))
            ino += 1
        for guest, content, mode in entries:
            data = content if isinstance(content, bytes) else content.read_bytes()
            f.write(_newc(guest, stat.S_IFREG | mode, data, ino))
            ino += 1
        f.write(_newc("TRAILER!!!", 0, b"", 0))
    return out


SERIAL, SOLO_SERIAL = "iowatt-29", "iowatt-29-solo"


def boot(
    root: Path, image: Path, namespaces: list[Path], *, solo: Path | None = None, timeout_s: float = 300
) -> subprocess.CompletedProcess[str]:
    """Boot the guest with one NVMe controller (serial SERIAL) whose namespaces 1..n are the raw
    files given, and, with `solo`, a second controller (SOLO_SERIAL) with that one namespace (the
    guest names the controllers in its probe order: find them by serial); its serial console is
    the result's stdout. The drives pass discards on (discard=unmap: QEMU's default ignores them,
    and a deallocated block then still reads as what was written)."""
    accel = os.environ.get("IOWATT_NVME_GUEST_ACCEL", "tcg")
    argv = [QEMU, "-accel", accel, "-m", "512", "-smp", "1", "-display", "none", "-serial", "stdio",
            "-monitor", "none", "-no-reboot", "-nodefaults", "-kernel", str(kernel(root)),
            "-initrd", str(image), "-append", "console=ttyS0 quiet panic=-1",
            "-device", f"nvme,id=nvme0,serial={SERIAL}"]  # fmt: skip
    for i, disk in enumerate(namespaces, start=1):
        argv += ["-drive", f"file={disk},if=none,id=ns{i},format=raw,cache=unsafe,discard=unmap"]
        argv += ["-device", f"nvme-ns,drive=ns{i},bus=nvme0,nsid={i}"]
    if solo is not None:
        argv += ["-device", f"nvme,id=nvme1,serial={SOLO_SERIAL}"]
        argv += ["-drive", f"file={solo},if=none,id=solo,format=raw,cache=unsafe,discard=unmap"]
        argv += ["-device", "nvme-ns,drive=solo,bus=nvme1,nsid=1"]
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s, stdin=subprocess.DEVNULL)


def lines(console: str) -> list[tuple[str, str]]:
    """(tag, rest) of every line the guest's program marked."""
    found = []
    for line in console.splitlines():
        at = line.find(MARK)
        if at >= 0:
            tag, _, rest = line[at + len(MARK) :].strip().partition(" ")
            found.append((tag, rest))
    return found


if __name__ == "__main__":  # a look by hand: python -m tests.agent.nvme_guest
    base = packages()
    print(kernel(base), file=sys.stderr)
