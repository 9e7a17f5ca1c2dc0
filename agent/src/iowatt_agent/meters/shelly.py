"""Shelly smart plugs over HTTP (docs/energy.md §1.8). Tier `plug`: informative.

    shelly://HOST[:PORT][?channel=0&user=U&password=P&read=power|energy]

Gen2/Gen3 (RPC): `GET /rpc/Switch.GetStatus?id=<channel>` → `apower` (W, instantaneous), with
digest auth when a password is set. Gen1: `GET /status` → `meters[<channel>].power` (W), basic
auth. The generation is detected at open (the RPC path answers 404 on Gen1). Readings refresh
about once a second; ±2 % ± 0.5 W assumed.

`read=energy` reads the plug's own energy counter instead (`aenergy.total` in Wh on Gen2+,
`meters[].total` in watt-minutes on Gen1, both turned into joules: quantity `energy_counter`),
which integrates continuously inside the plug rather than sampling `apower` once a second
(docs/energy.md §2.3 prefers counters). The counter restarts when the plug reboots; cleaning drops the
readings after such a drop.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._http import JsonHttp, number
from .base import Meter, MeterError, ParsedSpec, Quantity

if TYPE_CHECKING:  # httpx is imported where a meter connects: every `iowatt-agent` command
    import httpx  # imports the drivers, most never read one (tests/agent/test_startup_imports.py)


class ShellyMeter(Meter):
    scheme = "shelly"
    driver = "shelly"
    tier = "plug"
    quantity: Quantity = "power"
    native_interval_s = 1.0
    summary = "Shelly smart plug / relay with metering (Gen1 /status, Gen2+ RPC Switch.GetStatus)"
    needs = "the plug reachable over HTTP on your network"
    example = "shelly://192.168.1.40"

    def __init__(self, spec: ParsedSpec, *, interval_s: float | None = None) -> None:
        super().__init__(spec, interval_s=interval_s)
        host = spec.need_host()
        netloc = f"{host}:{spec.port}" if spec.port else host
        self.base_url = f"http://{netloc}"
        try:
            self.channel = int(spec.query.get("channel", "0"))
        except ValueError:
            raise MeterError(f"meter spec {spec.spec!r}: channel must be an integer") from None
        self.user = spec.query.get("user", "admin")
        read = spec.query.get("read", "power")
        if read not in ("power", "energy"):
            raise MeterError(f"meter spec {spec.spec!r}: read must be power or energy")
        self.energy = read == "energy"
        self.quantity = "energy_counter" if self.energy else "power"
        self.password = spec.query.get("password")
        self.generation = 0
        self.client: JsonHttp | None = None

    def _client(self, auth: httpx.Auth | None) -> JsonHttp:
        return JsonHttp(self.base_url, timeout_s=max(3.0, 2 * self.interval_s), auth=auth)

    def open(self) -> None:
        import httpx

        digest = httpx.DigestAuth(self.user, self.password) if self.password else None
        client = self._client(digest)
        doc = client.get("/rpc/Switch.GetStatus", {"id": str(self.channel)}, missing_ok=True)
        if doc is not None:
            self.generation, self.client = 2, client
            self._gen2_value(doc)
            info = client.get("/rpc/Shelly.GetDeviceInfo", missing_ok=True) or {}
            self.model = f"Shelly {info.get('model') or info.get('app') or 'Gen2'}"
        else:
            client.close()
            basic = httpx.BasicAuth(self.user, self.password) if self.password else None
            self.client = self._client(basic)
            self.generation = 1
            status = self.client.get("/status")
            self._gen1_value(status)
            settings = self.client.get("/settings", missing_ok=True) or {}
            device = settings.get("device") if isinstance(settings, dict) else None
            self.model = f"Shelly {(device or {}).get('type') or 'Gen1'}"

    def _gen2_value(self, doc: Any) -> float:
        if not isinstance(doc, dict):
            raise MeterError("Shelly Switch.GetStatus: not a JSON object")
        if self.energy:
            aenergy = doc.get("aenergy")
            total = aenergy.get("total") if isinstance(aenergy, dict) else None
            return number(total, f"Shelly Switch.GetStatus?id={self.channel} aenergy.total") * 3600.0
        return number(doc.get("apower"), f"Shelly Switch.GetStatus?id={self.channel} apower (no metering?)")

    def _gen1_value(self, doc: Any) -> float:
        meters = doc.get("meters") if isinstance(doc, dict) else None
        if (
            not isinstance(meters, list)
            or len(meters) <= self.channel
            or not isinstance(meters[self.channel], dict)
        ):
            raise MeterError(f"Shelly {self.base_url}/status has no meters[{self.channel}]")
        if self.energy:
            return number(meters[self.channel].get("total"), f"Shelly meters[{self.channel}].total") * 60.0
        return number(meters[self.channel].get("power"), f"Shelly meters[{self.channel}].power")

    def read(self) -> float:
        assert self.client is not None
        if self.generation == 2:
            return self._gen2_value(self.client.get("/rpc/Switch.GetStatus", {"id": str(self.channel)}))
        return self._gen1_value(self.client.get("/status"))

    def close(self) -> None:
        if self.client is not None:
            self.client.close()
