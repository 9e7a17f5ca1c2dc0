"""Fake instruments served on loopback that speak the real protocols: a PTDaemon text-protocol
TCP server, SCPI analyzers on a raw TCP socket, JSON-over-HTTP devices (Redfish, Shelly, Tasmota),
an SNMP v2c agent on UDP, sysfs trees (hwmon, powercap) and small programs (a watts printer, a
fake `ipmitool`). The drivers under test talk to them exactly as they would to the real thing."""

from __future__ import annotations

import json
import socket
import socketserver
import sys
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit


class Cycle:
    """Values handed out in order, the last one repeated forever."""

    def __init__(self, values: list[Any]) -> None:
        self.values = list(values)
        self.i = 0
        self.lock = threading.Lock()

    def next(self) -> Any:
        with self.lock:
            value = self.values[min(self.i, len(self.values) - 1)]
            self.i += 1
            return value


class LineServer:
    """A TCP server answering one line per command line; `answer(line)` returns the reply (or
    None for commands without one, as SCPI set commands)."""

    def __init__(self, answer: Callable[[str], str | None], *, eol: str = "\r\n") -> None:
        self.commands: list[str] = []
        self.connections = 0
        outer = self

        class Handler(socketserver.StreamRequestHandler):
            def handle(self) -> None:
                outer.connections += 1
                for raw in self.rfile:
                    line = raw.decode("ascii").strip()
                    outer.commands.append(line)
                    reply = answer(line)
                    if reply is not None:
                        self.wfile.write((reply + eol).encode("ascii"))
                        self.wfile.flush()

        class Server(socketserver.ThreadingTCPServer):
            allow_reuse_address = True
            daemon_threads = True

        self.server = Server(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def ptdaemon(
    watts: list[float | str],
    *,
    identify: str = "WT310E,C2PH1234,F1.03 (fake)",
    period_s: float = 0.05,
    rl: bool = True,
) -> LineServer:
    """PTDaemon's text protocol (energy.md §1.1): Hello, Identify, SR, Go, RL, Watts, Stop,
    Uncertainty. After Go the analyzer takes a sample every `period_s` (1 s on real hardware);
    RL hands over the ones not read yet, Watts the latest."""
    import time
    from datetime import datetime, timedelta

    values = Cycle(watts)
    state: dict[str, Any] = {"go": None, "read": 0, "samples": [], "mark": ""}
    clock0 = datetime(2026, 11, 21, 23, 59, 59, 500000)  # the analyzer host's clock: crosses midnight

    def produce() -> None:
        if state["go"] is None:
            return
        due = int((time.monotonic() - state["go"]) / period_s)
        while len(state["samples"]) < due:
            n = len(state["samples"]) + 1
            at = clock0 + timedelta(seconds=n * period_s)
            w = values.next()
            state["samples"].append(
                f"Time,{at:%m-%d-%Y %H:%M:%S}.{at.microsecond // 1000:03d},Watts,{w},Volts,229.9,"
                f"Amps,0.3,PF,0.95,Mark,{state['mark']}"
            )

    def answer(line: str) -> str:
        cmd = line.split(",")
        if line == "Hello":
            return "Hello, PTDaemon here!"
        if line == "Identify":
            return identify
        if cmd[0] == "SR" and len(cmd) == 3:
            return f"Range {cmd[1]} changed"
        if cmd[0] == "Go":
            state["go"], state["mark"] = time.monotonic(), cmd[3]
            return "Starting untimed measurement, maximum 500000 samples at 1000ms with 0 rampup samples"
        if line == "RL" and rl:
            produce()
            new = state["samples"][state["read"] :]
            state["read"] = len(state["samples"])
            return "\r\n".join([f"Last {len(new)} samples", *new])
        if line == "Watts":
            if state["go"] is None:
                return "Error: no measurement running"
            return f"Watts,{values.next()}"
        if line == "Stop":
            state["go"] = None
            return "Stopping untimed measurement"
        if line == "Uncertainty":
            return "Uncertainty,0.42%"
        return f"Unknown command: {line}"

    return LineServer(answer)


def scpi_wt310(watts: list[str]) -> LineServer:
    values = Cycle(watts)

    def answer(line: str) -> str | None:
        if line == "*IDN?":
            return "YOKOGAWA,WT310E,C2XX00001,F1.03"
        if line == ":SYSTem:ERRor?":
            return '0,"No error"'
        if line == ":NUMeric:NORMal:VALue?":
            return values.next()
        return None  # set commands answer nothing

    return LineServer(answer, eol="\n")


def scpi_pw3335(watts: list[str]) -> LineServer:
    values = Cycle(watts)

    def answer(line: str) -> str | None:
        if line == "*IDN?":
            return "HIOKI,PW3335,170812345,V1.02"
        if line == ":MEASure? P":
            return f"P {values.next()}"
        return None

    return LineServer(answer, eol="\n")


Route = Callable[[dict[str, str], dict[str, str]], tuple[int, Any]]


class JsonHttpServer:
    """Routes: path -> fn(query, headers) -> (status, JSON body). Records every request."""

    def __init__(self, routes: dict[str, Route]) -> None:
        self.routes = routes
        self.requests: list[tuple[str, dict[str, str], dict[str, str]]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                parts = urlsplit(self.path)
                query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
                headers = {k.lower(): v for k, v in self.headers.items()}
                outer.requests.append((parts.path, query, headers))
                route = outer.routes.get(parts.path)
                status, body = route(query, headers) if route else (404, {"error": "not found"})
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                if status == 401:
                    self.send_header("WWW-Authenticate", 'Basic realm="fake"')
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def netloc(self) -> str:
        return f"127.0.0.1:{self.port}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def redfish_environment(watts: list[float], energy_j: list[float] | None = None) -> JsonHttpServer:
    values = Cycle(watts)
    joules = Cycle(energy_j or [0.0])
    return JsonHttpServer(
        {
            "/redfish/v1/Chassis/1": lambda q, h: (
                200,
                {"@odata.id": "/redfish/v1/Chassis/1", "Manufacturer": "Fake", "Model": "R1"},
            ),
            "/redfish/v1/Chassis/1/EnvironmentMetrics": lambda q, h: (
                200,
                {
                    "PowerWatts": {
                        "Reading": values.next(),
                        "DataSourceUri": "/redfish/v1/Chassis/1/Sensors/P",
                    },
                    "EnergyJoules": {"Reading": joules.next()},
                },
            ),
        }
    )


def redfish_legacy(watts: list[float], *, user: str = "monitor", password: str = "pw") -> JsonHttpServer:
    """A BMC with only the deprecated Power resource, behind basic auth."""
    import base64

    values = Cycle(watts)
    expected = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()

    def guarded(body: Callable[[], Any]) -> Route:
        def route(q: dict[str, str], h: dict[str, str]) -> tuple[int, Any]:
            if h.get("authorization") != expected:
                return 401, {"error": {"code": "Base.1.0.NoValidSession"}}
            return 200, body()

        return route

    return JsonHttpServer(
        {
            "/redfish/v1/Chassis/1": guarded(lambda: {"Manufacturer": "Legacy", "Model": "L2"}),
            "/redfish/v1/Chassis/1/Power": guarded(
                lambda: {"PowerControl": [{"PowerConsumedWatts": values.next(), "PowerMetrics": {}}]}
            ),
        }
    )


def shelly_gen2(watts: list[float], *, wh_per_read: float = 0.01) -> JsonHttpServer:
    """Gen2 RPC: `apower` from `watts`; `aenergy.total` (Wh) advancing `wh_per_read` per request."""
    values = Cycle(watts)
    energy = {"wh": 1000.0}

    def gen2_status(apower: float) -> dict[str, Any]:
        energy["wh"] += wh_per_read
        return {
            "id": 0,
            "output": True,
            "apower": apower,
            "voltage": 230.1,
            "aenergy": {"total": round(energy["wh"], 3), "by_minute": [0, 0, 0], "minute_ts": 1795300000},
        }

    return JsonHttpServer(
        {
            "/rpc/Switch.GetStatus": lambda q, h: (
                (200, gen2_status(values.next()))
                if q.get("id") == "0"
                else (400, {"code": -105, "message": "Argument 'id', value 1 not found!"})
            ),
            "/rpc/Shelly.GetDeviceInfo": lambda q, h: (200, {"model": "SNPL-00112EU", "gen": 2}),
        }
    )


def shelly_gen1(watts: list[float], total_wmin: list[int] | None = None) -> JsonHttpServer:
    """Gen1 /status: `meters[0].power` (W) and `meters[0].total` (watt-minutes)."""
    values = Cycle(watts)
    minutes = Cycle(total_wmin or [1234])
    return JsonHttpServer(
        {
            "/status": lambda q, h: (
                200,
                {
                    "meters": [{"power": values.next(), "is_valid": True, "total": minutes.next()}],
                    "relays": [{"ison": True}],
                },
            ),
            "/settings": lambda q, h: (200, {"device": {"type": "SHPLG-S"}}),
        }
    )


def tasmota(watts: list[float]) -> JsonHttpServer:
    values = Cycle(watts)

    def cm(q: dict[str, str], h: dict[str, str]) -> tuple[int, Any]:
        if q.get("cmnd") == "Status 10":
            return 200, {
                "StatusSNS": {
                    "Time": "2026-11-21T10:00:00",
                    "ENERGY": {"Total": 1.234, "Power": values.next(), "Voltage": 229, "Current": 0.3},
                }
            }
        if q.get("cmnd") == "Status 0":
            return 200, {"Status": {"DeviceName": "Lab plug", "FriendlyName": ["Lab plug"]}}
        return 200, {"Command": "Unknown"}

    return JsonHttpServer({"/cm": cm})


class SnmpAgent:
    """A v2c SNMP agent on UDP loopback answering GET for one OID (pysnmp's message codecs)."""

    def __init__(self, oid: str, values: list[int], *, community: str = "public") -> None:
        from pyasn1.codec.ber import decoder, encoder
        from pysnmp.proto import api

        self.values = Cycle(values)
        self.requests = 0
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.stop = threading.Event()
        p_mod = api.PROTOCOL_MODULES[api.SNMP_VERSION_2C]

        def serve() -> None:
            while not self.stop.is_set():
                try:
                    data, peer = self.sock.recvfrom(65535)
                except (TimeoutError, OSError):
                    continue
                message, _ = decoder.decode(data, asn1Spec=p_mod.Message())
                if str(p_mod.apiMessage.get_community(message)) != community:
                    continue  # wrong community: real agents stay silent
                request = p_mod.apiMessage.get_pdu(message)
                response = p_mod.apiPDU.get_response(request)
                binds = []
                for name, _val in p_mod.apiPDU.get_varbinds(request):
                    if str(name) == oid.lstrip("."):
                        binds.append((name, p_mod.Integer(self.values.next())))
                    else:
                        binds.append((name, p_mod.Null("")))
                p_mod.apiPDU.set_varbinds(response, binds)
                p_mod.apiMessage.set_pdu(message, response)
                self.requests += 1
                self.sock.sendto(encoder.encode(message), peer)

        threading.Thread(target=serve, daemon=True).start()

    def close(self) -> None:
        self.stop.set()
        self.sock.close()


# --- sysfs trees -----------------------------------------------------------------------------------


class SysfsValue:
    """A sysfs file whose content a background thread advances, like the kernel would."""

    def __init__(self, path: Path, values: Iterator[int] | list[int], period_s: float = 0.02) -> None:
        self.path = path
        self.values = iter(values)
        self.period_s = period_s
        self.stop = threading.Event()
        self.path.write_text(f"{next(self.values)}\n")
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.stop.wait(self.period_s):
            try:
                value = next(self.values)
            except StopIteration:
                return
            tmp = self.path.with_name(f".{self.path.name}.tmp")
            tmp.write_text(f"{value}\n")
            tmp.replace(self.path)

    def close(self) -> None:
        self.stop.set()
        self.thread.join(timeout=2)


def counter_values(start: int, step: int, max_range: int, count: int) -> list[int]:
    """A counter advancing by `step` that wraps at `max_range` (RAPL semantics)."""
    return [(start + i * step) % max_range for i in range(count)]


# --- programs --------------------------------------------------------------------------------------


def write_program(path: Path, body: str) -> Path:
    path.write_text(f"#!{sys.executable}\n{body}")
    path.chmod(0o755)
    return path


IPMITOOL_OUTPUT = """
    Instantaneous power reading:                   {watts} Watts
    Minimum during sampling period:                 250 Watts
    Maximum during sampling period:                 330 Watts
    Average power reading over sample period:       314 Watts
    IPMI timestamp:                           06/17/2025 02:50:26 PM UTC
    Sampling period:                          00001178 Seconds.
    Power reading state is:                   {state}
"""


def fake_ipmitool(directory: Path, *, watts: int = 314, state: str = "activated", rc: int = 0) -> Path:
    """An `ipmitool` printing what a real BMC's `dcmi power reading` prints, and recording argv/env."""
    record = directory / "ipmitool-calls.jsonl"
    body = f"""
import json, os, sys
with open({str(record)!r}, "a") as f:
    f.write(json.dumps({{"argv": sys.argv[1:], "password": os.environ.get("IPMI_PASSWORD")}}) + "\\n")
if {rc} != 0:
    print("Error: Unable to establish IPMI v2 / RMCP+ session", file=sys.stderr)
    sys.exit({rc})
print({IPMITOOL_OUTPUT.format(watts=watts, state=state)!r})
"""
    write_program(directory / "ipmitool", body)
    return record
