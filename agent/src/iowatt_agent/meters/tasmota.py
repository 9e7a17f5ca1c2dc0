"""Tasmota smart plugs over HTTP (docs/energy.md §1.8). Tier `plug`: informative.

    tasmota://HOST[:PORT][?user=U&password=P]

`GET /cm?cmnd=Status 10` → `StatusSNS.ENERGY.Power` (W); credentials go as the `user` and
`password` parameters Tasmota's web API expects. About 1 s refresh; ±2 % ± 0.5 W assumed.
"""

from __future__ import annotations

from ._http import JsonHttp, number
from .base import Meter, MeterError, ParsedSpec


class TasmotaMeter(Meter):
    scheme = "tasmota"
    driver = "tasmota"
    tier = "plug"
    quantity = "power"
    native_interval_s = 1.0
    summary = "Tasmota smart plug with an energy sensor (Status 10 → StatusSNS.ENERGY.Power)"
    needs = "the plug reachable over HTTP on your network"
    example = "tasmota://192.168.1.41"

    def __init__(self, spec: ParsedSpec, *, interval_s: float | None = None) -> None:
        super().__init__(spec, interval_s=interval_s)
        host = spec.need_host()
        netloc = f"{host}:{spec.port}" if spec.port else host
        self.params = {"cmnd": "Status 10"}
        if "user" in spec.query:
            self.params["user"] = spec.query["user"]
        if "password" in spec.query:
            self.params["password"] = spec.query["password"]
        self.client = JsonHttp(f"http://{netloc}", timeout_s=max(3.0, 2 * self.interval_s))

    def open(self) -> None:
        self.read()
        status = self.client.get("/cm", {**self.params, "cmnd": "Status 0"}, missing_ok=True)
        module = (status or {}).get("Status", {}) if isinstance(status, dict) else {}
        self.model = "Tasmota " + str(
            module.get("DeviceName") or module.get("FriendlyName", [""])[0] or "plug"
        )

    def read(self) -> float:
        doc = self.client.get("/cm", self.params)
        energy = ((doc or {}).get("StatusSNS") or {}).get("ENERGY") if isinstance(doc, dict) else None
        if not isinstance(energy, dict):
            warning = (doc or {}).get("WARNING") if isinstance(doc, dict) else None
            raise MeterError(
                f"Tasmota: no StatusSNS.ENERGY in the answer{f' ({warning})' if warning else ''}"
            )
        return number(energy.get("Power"), "Tasmota StatusSNS.ENERGY.Power")

    def close(self) -> None:
        self.client.close()
