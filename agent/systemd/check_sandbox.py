#!/usr/bin/env python3
"""Check iowatt-agent.service's sandbox on this machine, also where PID 1 is not systemd.

1. `systemd-analyze security --offline=yes` on the unit: the exposure score.
2. System calls: strace the engine (psync, libaio, io_uring; O_DIRECT), the agent (a pinned
   HTTPS request, the inventory, `bench`) and a TPC-H run (SF 0.01 on PostgreSQL, when installed),
   and compare every call made with the unit's SystemCallFilter= (@system-service minus
   @privileged and @resources plus @setuid and fchown, as systemd expands and applies them in
   order).
3. Privileges: run the same under what the unit imposes that a plain process can impose on
   itself: the unit's capability bounding set (CAP_CHOWN, CAP_SETUID, CAP_SETGID), no_new_privs
   (setpriv) and PR_SET_MDWE, the kernel's MemoryDenyWriteExecute (Linux >= 6.3); with --device,
   also on a loop device (raw, O_DIRECT, read and destructive write).

Usage (as root, from the repository): python3 agent/systemd/check_sandbox.py [--device]
Exit 0 when every check passed; prints one line per check.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
UNIT = REPO / "agent" / "systemd" / "iowatt-agent.service"
ENGINE = Path(os.environ.get("IOWATT_ENGINE", REPO / "agent" / "engine" / "build" / "iowatt-engine"))
AGENT = Path(os.environ.get("IOWATT_AGENT", REPO / ".venv" / "bin" / "iowatt-agent"))
PYTHON = AGENT.parent / "python"
SETPRIV_REST = ["--inh-caps=-all", "--ambient-caps=-all", "--no-new-privs"]
PR_SET_MDWE, PR_MDWE_REFUSE_EXEC_GAIN = 65, 1

# The agent's network side, in-process: pin a local TLS server's certificate and talk to it.
AGENT_CLIENT = r"""
import json, ssl, subprocess, sys, tempfile, threading, uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from iowatt_agent.client import ApiClient
from iowatt_agent.inventory import collect
from iowatt_agent.schemas import HeartbeatRequest
from iowatt_agent.transport import fetch_server_certificate, pinned_context

class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("content-length") or 0))
        body = json.dumps({"server_time": "2026-01-01T00:00:00Z", "heartbeat_interval_s": 5}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass

d = tempfile.mkdtemp()
subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                "-nodes", "-keyout", d + "/k.pem", "-out", d + "/c.pem", "-days", "1",
                "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1"],
               check=True, capture_output=True)
context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(d + "/c.pem", d + "/k.pem")
server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.socket = context.wrap_socket(server.socket, server_side=True)
threading.Thread(target=server.serve_forever, daemon=True).start()
url = f"https://127.0.0.1:{server.server_address[1]}"
pinned = pinned_context(ssl.DER_cert_to_PEM_cert(fetch_server_certificate(url)))
with ApiClient(url, "token", verify=pinned) as client:
    client.heartbeat(uuid.uuid4(), HeartbeatRequest(state="idle", current_run_id=None, agent_version="t"))
collect()
server.shutdown()
print("ok")
"""


def run(cmd: list[str], **kw: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, capture_output=True, text=True, **kw)  # type: ignore[call-overload, no-any-return]


def expand(group: str) -> set[str]:
    out = run(["systemd-analyze", "syscall-filter", group]).stdout
    names: set[str] = set()
    for line in out.splitlines()[1:]:
        word = line.strip()
        if not word or word.startswith("#"):
            continue
        names |= expand(word) if word.startswith("@") else {word}
    return names


def unit_filter() -> tuple[set[str], set[str]]:
    """(allowed, refused) as systemd applies the unit's SystemCallFilter= lines: the first (an
    allow list) sets what is allowed, each later line removes (~) or adds calls in order.
    `refused` is every call a ~ line named and no later line gave back."""
    allow: set[str] = set()
    deny: set[str] = set()
    for line in UNIT.read_text().splitlines():
        if line.startswith("SystemCallFilter="):
            value = line.split("=", 1)[1]
            names: set[str] = set()
            for item in value.lstrip("~").split():
                names |= expand(item) if item.startswith("@") else {item}
            if value.startswith("~"):
                allow -= names
                deny |= names
            else:
                allow |= names
                deny -= names
    return allow, deny


def unit_capabilities() -> list[str]:
    """The unit's CapabilityBoundingSet=, as names (CAP_CHOWN, ...)."""
    caps: list[str] = []
    for line in UNIT.read_text().splitlines():
        if line.startswith("CapabilityBoundingSet="):
            caps = line.split("=", 1)[1].split() or []
    return caps


def setpriv(caps: list[str] | None = None) -> list[str]:
    """setpriv with the unit's bounding set (or `caps`), no inheritable/ambient caps, NNP."""
    wanted = unit_capabilities() if caps is None else caps
    spec = ",".join(["-all", *(f"+{c.removeprefix('CAP_').lower()}" for c in wanted)])
    return ["setpriv", f"--bounding-set={spec}", *SETPRIV_REST]


def engine_jobs(target: str, device: bool) -> list[list[str]]:
    jobs = []
    for engine in ("psync", "libaio", "io_uring"):
        for rw in ("randread", "randwrite"):
            job = [str(ENGINE), f"--name={rw}", f"--filename={target}", f"--rw={rw}", "--bs=4k", "--size=16m"]
            job += ["--runtime=1", "--time_based=1", "--direct=1", f"--ioengine={engine}", "--iodepth=8"]
            jobs.append(job + (["--destructive=1"] if device and rw == "randwrite" else []))
    return jobs


def agent_commands(directory: str) -> list[list[str]]:
    bench = [str(AGENT), "bench", "--target", directory, "--rw", "randread", "--size", "8m", "--runtime", "1"]
    return [[str(PYTHON), "-c", AGENT_CLIENT], [*bench, "--json"]]


def tpch_command(directory: str) -> list[str]:
    """A small TPC-H run on PostgreSQL in `directory` (made reachable for the TPC-H user)."""
    Path(directory).mkdir(mode=0o755, exist_ok=True)
    Path(directory).chmod(0o755)
    return [str(AGENT), "bench", "--preset", "tpch", "--target", directory, "--dbms", "postgresql"] + [
        "--scale-factor", "0.01", "--streams", "1", "--json",
    ]  # fmt: skip


def tpch_available() -> bool:
    have_pg = bool(
        run([str(PYTHON), "-c", "from iowatt_agent.tpch.dbms import pg_bindir; pg_bindir()"]).returncode == 0
    )
    have_gen = run([str(PYTHON), "-c", "from iowatt_agent.tpch.data import extension_path; extension_path()"])
    return have_pg and have_gen.returncode == 0


def traced_calls(commands: list[list[str]]) -> set[str]:
    calls: set[str] = set()
    with tempfile.TemporaryDirectory() as tmp:
        for i, cmd in enumerate(commands):
            out = f"{tmp}/trace.{i}"
            result = run(["strace", "-f", "-qq", "-o", out, *cmd])
            if result.returncode != 0:
                raise SystemExit(
                    f"FAIL {' '.join(cmd[:3])}...: exit {result.returncode}: {result.stderr[-400:]}"
                )
            calls |= set(re.findall(r"^\d+\s+([a-z0-9_]+)\(", Path(out).read_text(), re.M))
    return calls


def sandboxed(cmd: list[str], caps: list[str] | None = None) -> subprocess.CompletedProcess[str]:
    """`cmd` under the unit's capability bounding set (or `caps`), no_new_privs and MDWE."""

    def mdwe() -> None:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(PR_SET_MDWE, PR_MDWE_REFUSE_EXEC_GAIN, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "PR_SET_MDWE")

    return subprocess.run([*setpriv(caps), *cmd], capture_output=True, text=True, preexec_fn=mdwe)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--device", action="store_true", help="also a loop device (root, losetup)")
    args = parser.parse_args()
    failed = 0

    score = run(["systemd-analyze", "security", "--offline=yes", str(UNIT)]).stdout.strip().splitlines()
    print(f"systemd-analyze: {score[-1] if score else 'not available'}")

    work = tempfile.mkdtemp(prefix="iowatt-sandbox-")
    tpch_dir = tempfile.mkdtemp(prefix="iowatt-sandbox-tpch-")
    targets = [(f"{work}/data", False)]
    loop = None
    if args.device:
        image = f"{work}/loop.img"
        with open(image, "wb") as f:
            f.truncate(64 << 20)
        loop = run(["losetup", "-f", "--show", image]).stdout.strip()
        targets.append((loop, True))
    try:
        commands = [job for t, dev in targets for job in engine_jobs(t, dev)] + agent_commands(work)
        if tpch_available():  # beside `work` (0700): the TPC-H user must reach its target
            os.chmod(tpch_dir, 0o755)
            commands.append(tpch_command(f"{tpch_dir}/tpch"))
        if shutil.which("strace"):
            allow, deny = unit_filter()
            calls = traced_calls(commands)
            refused = sorted(c for c in calls if c not in allow or c in deny)
            failed += bool(refused)
            print(f"system calls: {len(calls)} used, refused by SystemCallFilter=: {refused or 'none'}")
        else:
            print("system calls: strace not installed, skipped")
        probe = sandboxed([sys.executable, "-c", "import mmap; mmap.mmap(-1, 4096, prot=7)"])
        mdwe_on = probe.returncode != 0 and "Permission denied" in probe.stderr
        print(f"sandbox: W+X mapping refused: {mdwe_on}")
        failed += not mdwe_on
        for cmd in commands:
            result = sandboxed(cmd)
            name = " ".join(
                a
                for a in cmd[1:]
                if a.startswith(("--filename", "--rw=", "--ioengine", "bench", "--preset", "tpch"))
            )
            name = name or "agent: pinned https, inventory"
            ok = result.returncode == 0
            failed += not ok
            caps = " ".join(unit_capabilities()) or "no capabilities"
            print(f"  {caps}, no_new_privs, MDWE: {name}: {'ok' if ok else result.stderr[-300:]}")
    finally:
        if loop:
            run(["losetup", "-d", loop])
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(tpch_dir, ignore_errors=True)
    print("PASS" if not failed else f"FAIL ({failed})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
