"""Test doubles for the agent: a fake server API (usable through httpx.MockTransport or a real
stdlib HTTP server thread) and a fake engine script."""

from __future__ import annotations

import json
import re
import ssl
import sys
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx

AGENT_TOKEN = "agent-token-123"
ENROLL_TOKEN = "enroll-ok"


@dataclass
class Reply:
    status: int
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)


def error(status: int, code: str, message: str, headers: dict[str, str] | None = None) -> Reply:
    return Reply(status, {"error": code, "message": message, "detail": None}, headers or {})


class FakeApi:
    """A small in-memory model of the server's agent API (contract §2).

    `script` maps "METHOD /path-pattern" to a list of Replies (or callables) served first, in
    order, before the default behaviour — to inject 5xx bursts, 429s, lost answers, etc.
    """

    def __init__(self) -> None:
        self.agent_id = uuid.uuid4()
        self.team_id = uuid.uuid4()
        self.names: set[str] = {"taken"}
        self.calls: list[tuple[str, str, Any]] = []
        self.leases: list[dict[str, Any]] = []
        self.results: dict[str, dict[str, Any]] = {}  # upload_id -> body
        self.results_by_run: dict[str, str] = {}
        self.failures: dict[str, dict[str, Any]] = {}
        self.progress: list[dict[str, Any]] = []
        self.heartbeats: list[dict[str, Any]] = []
        self.cancel_runs: set[str] = set()
        self.started: list[str] = []
        self.inventories: list[dict[str, Any]] = []
        self.script: dict[str, list[Reply | Callable[[], Reply] | Exception]] = {}
        self.on_request: Callable[[str, str, Any], None] | None = None
        self.lock = threading.Lock()
        self.lease_wait_s = 0.05
        # each lease request's query and timeout as the agent sent them (the MockTransport's)
        self.lease_requests: list[tuple[dict[str, str], float | None]] = []

    def add_lease(
        self, engine_job: dict[str, Any], target_path: str, timeout_s: float = 30.0, **fields: Any
    ) -> dict[str, Any]:
        """Queue a lease; `fields` adds lease fields (meter, idle_s, destructive, or anything a
        hostile server might send)."""
        lease = {
            "run_id": str(uuid.uuid4()),
            "lease_id": str(uuid.uuid4()),
            "lease_expires_at": (datetime.now(UTC) + timedelta(minutes=5)).isoformat(),
            "target_path": target_path,
            "engine_job": engine_job,
            "timeout_s": timeout_s,
            **fields,
        }
        self.leases.append(lease)
        return lease

    def calls_to(self, pattern: str) -> list[tuple[str, str, Any]]:
        return [c for c in self.calls if re.fullmatch(pattern, f"{c[0]} {c[1]}")]

    # --- dispatch ------------------------------------------------------------------------------

    def handle(self, method: str, path: str, headers: dict[str, str], body: Any) -> Reply | Exception:
        with self.lock:
            self.calls.append((method, path, body))
        if self.on_request:
            self.on_request(method, path, body)
        for key, queue in self.script.items():
            m, _, pattern = key.partition(" ")
            if m == method and re.fullmatch(pattern, path) and queue:
                item = queue.pop(0)
                if isinstance(item, Exception):
                    return item
                return item() if callable(item) else item
        return self.default(method, path, headers, body)

    def default(self, method: str, path: str, headers: dict[str, str], body: Any) -> Reply:
        if path == "/api/v1/agents/enroll" and method == "POST":
            if body.get("enrollment_token") != ENROLL_TOKEN:
                return error(401, "invalid_token", "unknown or revoked enrollment token")
            if body["name"] in self.names and not body.get("replace"):
                return error(409, "agent_name_taken", f"agent {body['name']} exists")
            self.names.add(body["name"])
            return Reply(
                201,
                {
                    "agent_id": str(self.agent_id),
                    "agent_token": AGENT_TOKEN,
                    "team_id": str(self.team_id),
                    "heartbeat_interval_s": 5,
                },
            )
        if headers.get("authorization") != f"Bearer {AGENT_TOKEN}":
            return error(401, "invalid_token", "bad agent token")
        agent = f"/api/v1/agents/{self.agent_id}"
        if path == f"{agent}/heartbeat":
            self.heartbeats.append(body)
            return Reply(200, {"server_time": datetime.now(UTC).isoformat(), "heartbeat_interval_s": 0.2})
        if path == f"{agent}/inventory":
            self.inventories.append(body)
            return Reply(200, {})
        if path == f"{agent}/lease":
            with self.lock:
                lease = self.leases.pop(0) if self.leases else None
            if lease is None:
                threading.Event().wait(self.lease_wait_s)
            return Reply(200, {"lease": lease})
        m = re.fullmatch(r"/api/v1/runs/([0-9a-f-]+)/(start|progress|result|failure)", path)
        if m:
            run_id, verb = m.groups()
            if verb == "start":
                self.started.append(run_id)
                return Reply(200, {"id": run_id, "status": "running"})
            if verb == "progress":
                self.progress.append(body)
                return Reply(
                    200,
                    {
                        "cancel_requested": run_id in self.cancel_runs,
                        "lease_expires_at": datetime.now(UTC).isoformat(),
                    },
                )
            if verb == "result":
                with self.lock:
                    if body["upload_id"] in self.results:
                        return Reply(200, {"stored": False})
                    if run_id in self.results_by_run:
                        return error(409, "result_exists", "another result exists")
                    self.results[body["upload_id"]] = body
                    self.results_by_run[run_id] = body["upload_id"]
                return Reply(201, {"stored": True})
            if verb == "failure":
                self.failures[body["upload_id"]] = {**body, "run_id": run_id}
                return Reply(200, {})
        return error(404, "not_found", f"{method} {path}")

    # --- transports ----------------------------------------------------------------------------

    def transport(self) -> httpx.MockTransport:
        def handler(request: httpx.Request) -> httpx.Response:
            body = json.loads(request.content) if request.content else None
            if request.url.path.endswith("/lease"):
                timeout = request.extensions.get("timeout", {}).get("read")
                self.lease_requests.append((dict(request.url.params), timeout))
            reply = self.handle(request.method, request.url.path, dict(request.headers), body)
            if isinstance(reply, Exception):
                raise reply
            return httpx.Response(reply.status, json=reply.body, headers=reply.headers)

        return httpx.MockTransport(handler)

    def serve(self, tls: ssl.SSLContext | None = None) -> tuple[ThreadingHTTPServer, str]:
        """Serve on 127.0.0.1 in a thread: plain HTTP, or HTTPS with a server-side `tls` context."""
        api = self

        class Handler(BaseHTTPRequestHandler):
            def _do(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                body = json.loads(raw) if raw else None
                path = self.path.split("?")[0]
                headers = {k.lower(): v for k, v in self.headers.items()}
                reply = api.handle(self.command, path, headers, body)
                if isinstance(reply, Exception):
                    self.close_connection = True
                    return
                data = json.dumps(reply.body).encode()
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in reply.headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PUT = _do

            def log_message(self, *args: Any) -> None:
                pass

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        if tls is not None:
            server.socket = tls.wrap_socket(server.socket, server_side=True)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        scheme = "https" if tls is not None else "http"
        return server, f"{scheme}://127.0.0.1:{server.server_address[1]}"


FAKE_ENGINE = r"""
import json, os, signal, subprocess, sys, time

args = sys.argv[1:]
positional = [a for a in args if not a.startswith("--")]
job = json.load(open(positional[-1]))
g = dict(job.get("global") or {})
g.update(job["jobs"][0])
# directives for leases, whose jobs the host policy checks (no fake_* options there)
g.update(json.loads(os.environ.get("IOWATT_FAKE_ENGINE") or "{}"))
mode = g.get("fake_mode", "ok")
duration = float(g.get("fake_duration_s", 0.3))
if g.get("fake_record"):
    with open(g["fake_record"], "w") as f:
        json.dump({"argv": sys.argv, "job": job, "pgid": os.getpgrp(), "pid": os.getpid(),
                   "sid": os.getsid(0)}, f)
if mode == "silent":  # e.g. laying out a huge file: no progress lines for a while
    time.sleep(duration)
    duration = 0.0
if mode == "usage":
    print("iowatt-engine: --bs: invalid value 'zz' (expected a size like 4k)", file=sys.stderr)
    sys.exit(2)
if mode == "child":
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(1000)"])
    with open(g["fake_pidfile"], "w") as f:
        f.write(f"{os.getpid()} {child.pid}")
if mode in ("hang", "child"):
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # only SIGKILL stops it
open(g["filename"], "ab").close()
print("iowatt-engine: laying out file", file=sys.stderr, flush=True)
t0 = time.monotonic()
steps = 0
while True:
    elapsed = time.monotonic() - t0
    if mode not in ("hang", "child") and elapsed >= duration:
        break
    time.sleep(0.05)
    steps += 1
    pct = min(100.0, 100.0 * (time.monotonic() - t0) / duration)
    print(json.dumps({"event": "progress", "job": job["jobs"][0]["name"], "job_index": 0,
                      "elapsed_ns": int((time.monotonic() - t0) * 1e9), "planned_ns": int(duration * 1e9),
                      "percent": pct, "read_iops": 1000.0 + steps, "read_bw_bytes": 4096000.0,
                      "write_iops": 0.0, "write_bw_bytes": 0.0}), file=sys.stderr, flush=True)
if mode == "garbage":
    print("this is not json")
    sys.exit(0)
if mode == "fail":
    print("iowatt-engine: pwrite: No space left on device", file=sys.stderr)
    sys.exit(1)
d = {"io_bytes": 4096 * 250, "io_kbytes": 1000, "bw_bytes": 4096000, "bw": 4000, "iops": 1000.0,
     "runtime": 250, "total_ios": 250, "short_ios": 0, "drop_ios": 0,
     "lat_ns": {"min": 1000, "max": 90000, "mean": 12345.6, "stddev": 10.0, "N": 250},
     "clat_ns": {"min": 900, "max": 89000, "mean": 12000.0, "stddev": 9.0, "N": 250,
                 "percentile": {"50.000000": 11264, "99.000000": 50176}}}
empty = {k: 0 for k in ("io_bytes", "io_kbytes", "bw_bytes", "bw", "iops", "runtime", "total_ios")}
doc = {"fio version": "iowatt-engine-fake", "timestamp": int(time.time()),
       "jobs": [{"jobname": j["name"],
                 "job options": {"rw": g.get("rw", "randread"), "bs": g.get("bs", "4k")},
                 "read": d, "write": empty, "usr_cpu": 1.5, "sys_cpu": 2.5} for j in job["jobs"]],
       "iowatt": {"schema": "iowatt-engine/1"}}
print(json.dumps(doc))
"""


def write_fake_engine(directory: Path) -> Path:
    path = directory / "fake-engine"
    path.write_text(f"#!{sys.executable}\n{FAKE_ENGINE}")
    path.chmod(0o755)
    return path


# --- the host policy of a test agent --------------------------------------------------------------


def allow_targets(state_dir: Path, *directories: Path, limits: dict[str, Any] | None = None) -> None:
    """Write the state dir's policy.json: these directories as targets (ADR 0009)."""
    from iowatt_agent.policy import save_policy
    from iowatt_policy import Limits, Policy, Target

    targets = tuple(Target.directory(str(d)) for d in directories)
    save_policy(state_dir, Policy(targets=targets, limits=Limits(**(limits or {}))))


def set_meters(
    state_dir: Path, meters: dict[str, str], default: str | None = None, idle_s: float | None = None
) -> None:
    """Write the state dir's meters.json: NAME -> spec."""
    from iowatt_agent.policy import MeterEntry, Meters, save_meters

    save_meters(state_dir, Meters({n: MeterEntry(s, idle_s) for n, s in meters.items()}, default))


def fake_lease_job(**options: Any) -> dict[str, Any]:
    """A lease's engine job. fake_* directives go to the fake engine through its environment
    (IOWATT_FAKE_ENGINE, restore it with monkeypatch): a lease carrying them would be refused by
    the host policy (option.not_allowed)."""
    import os

    fake = {k: v for k, v in options.items() if k.startswith("fake_")}
    if fake:
        os.environ["IOWATT_FAKE_ENGINE"] = json.dumps(fake)
    rest = {k: v for k, v in options.items() if not k.startswith("fake_")}
    return {
        "global": {"rw": "randread", "size": "1m", **rest},
        "jobs": [{"name": "a", "bs": "4k", "stonewall": 1}],
    }
