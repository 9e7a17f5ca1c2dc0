"""Redfish chassis power over HTTPS (docs/energy.md §1.4).

    redfish://BMC/redfish/v1/Chassis/1[?user=U&password=P&insecure=1&read=power|energy]
    redfish+http://HOST:PORT/redfish/v1/Chassis/1       (plain HTTP, e.g. a BMC proxy)

At open the driver finds where the chassis reports power, in DMTF's order of preference:
`<chassis>/EnvironmentMetrics` → `PowerWatts.Reading`, else the deprecated `<chassis>/Power` →
`PowerControl[0].PowerConsumedWatts`; then it polls that one resource. Basic auth when `user` is
given; `insecure=1` skips TLS verification (BMCs often have self-signed certificates). BMCs
rate-limit and refresh slowly: 1 s native rate, tier `bmc`, ±5 % assumed.

`read=energy` polls the chassis energy counter instead, `EnvironmentMetrics.EnergyJoules.Reading`
(or `EnergykWh.Reading` × 3.6e6): quantity `energy_counter`. Check the resolution first: a
counter in whole kWh is useless for runs of minutes.
"""

from __future__ import annotations

from typing import Any

from .base import Meter, MeterError, ParsedSpec, Quantity

# httpx is imported where a meter connects: every `iowatt-agent` command imports the drivers,
# most never read one (tests/agent/test_startup_imports.py)


def environment_watts(doc: dict[str, Any]) -> float | None:
    reading = (
        (doc.get("PowerWatts") or {}).get("Reading") if isinstance(doc.get("PowerWatts"), dict) else None
    )
    return None if reading is None else float(reading)


def environment_joules(doc: dict[str, Any]) -> float | None:
    for key, scale in (("EnergyJoules", 1.0), ("EnergykWh", 3.6e6)):
        block = doc.get(key)
        if isinstance(block, dict) and block.get("Reading") is not None:
            return float(block["Reading"]) * scale
    return None


def legacy_watts(doc: dict[str, Any]) -> float | None:
    controls = doc.get("PowerControl")
    if not isinstance(controls, list) or not controls or not isinstance(controls[0], dict):
        return None
    value = controls[0].get("PowerConsumedWatts")
    return None if value is None else float(value)


class RedfishMeter(Meter):
    scheme = "redfish"
    driver = "redfish"
    tier = "bmc"
    quantity: Quantity = "power"
    native_interval_s = 1.0
    summary = "BMC chassis power via Redfish (EnvironmentMetrics, or legacy Power)"
    needs = "the BMC's Redfish service reachable over HTTPS; a read-only account"
    example = "redfish://10.0.0.9/redfish/v1/Chassis/1?user=monitor&password=secret&insecure=1"

    def __init__(self, spec: ParsedSpec, *, interval_s: float | None = None) -> None:
        super().__init__(spec, interval_s=interval_s)
        host = spec.need_host()
        scheme = "http" if spec.scheme == "redfish+http" else "https"
        netloc = f"{host}:{spec.port}" if spec.port else host
        path = spec.path.rstrip("/") or "/redfish/v1/Chassis/1"
        if not path.startswith("/redfish/v1/"):
            raise MeterError(
                f"meter spec {spec.spec!r}: the path must be a Redfish chassis, /redfish/v1/Chassis/ID"
            )
        self.chassis_url = f"{scheme}://{netloc}{path}"
        import httpx

        user = spec.query.get("user")
        auth = httpx.BasicAuth(user, spec.query.get("password", "")) if user else None
        verify = spec.query.get("insecure", "0") not in ("1", "true", "yes")
        self.http = httpx.Client(auth=auth, verify=verify, timeout=max(3.0, 2 * self.interval_s))
        self.url: str | None = None
        self.extract = environment_watts
        read = spec.query.get("read", "power")
        if read not in ("power", "energy"):
            raise MeterError(f"meter spec {spec.spec!r}: read must be power or energy")
        self.energy = read == "energy"
        self.quantity = "energy_counter" if self.energy else "power"

    def _get(self, url: str) -> dict[str, Any] | None:
        import httpx

        try:
            response = self.http.get(url, headers={"Accept": "application/json"})
        except httpx.HTTPError as exc:
            raise MeterError(f"Redfish {url}: {exc or type(exc).__name__}") from None
        if response.status_code == 404:
            return None
        if response.status_code in (401, 403):
            raise MeterError(f"Redfish {url}: {response.status_code}, check user= and password=")
        if response.status_code >= 400:
            raise MeterError(f"Redfish {url}: HTTP {response.status_code}")
        try:
            doc = response.json()
        except ValueError:
            raise MeterError(f"Redfish {url}: the answer is not JSON") from None
        if not isinstance(doc, dict):
            raise MeterError(f"Redfish {url}: the answer is not a JSON object")
        return doc

    def open(self) -> None:
        chassis = self._get(self.chassis_url)
        if chassis is None:
            raise MeterError(f"Redfish chassis {self.chassis_url} not found (404)")
        self.model = " ".join(str(chassis.get(k) or "") for k in ("Manufacturer", "Model")).strip() or None
        if self.energy:
            doc = self._get(self.chassis_url + "/EnvironmentMetrics")
            if doc is None or environment_joules(doc) is None:
                raise MeterError(
                    f"Redfish chassis {self.chassis_url} has no EnvironmentMetrics.EnergyJoules or EnergykWh "
                    "(read=energy); use read=power"
                )
            self.url, self.extract = self.chassis_url + "/EnvironmentMetrics", environment_joules
            return
        for suffix, extract in (("/EnvironmentMetrics", environment_watts), ("/Power", legacy_watts)):
            doc = self._get(self.chassis_url + suffix)
            if doc is not None and extract(doc) is not None:
                self.url, self.extract = self.chassis_url + suffix, extract
                return
        raise MeterError(
            f"Redfish chassis {self.chassis_url} reports no power: neither EnvironmentMetrics.PowerWatts "
            "nor Power.PowerControl[0].PowerConsumedWatts"
        )

    def read(self) -> float:
        assert self.url is not None
        doc = self._get(self.url)
        value = self.extract(doc) if doc is not None else None
        if value is None:
            raise MeterError(
                f"Redfish {self.url}: no {'energy' if self.energy else 'power'} reading in the answer"
            )
        return value

    def close(self) -> None:
        self.http.close()
