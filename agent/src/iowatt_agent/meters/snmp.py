"""PDU outlet or inlet power over SNMP v2c/v1 (docs/energy.md §1.9), with pysnmp (pure Python).

    snmp://PDU[:161]?oid=OID[&community=public&scale=1&version=2c]

`value × scale` is the reading in W. Common OIDs:
- APC rPDU2 device power `.1.3.6.1.4.1.318.1.1.26.4.3.1.5.<pdu>` is in hundredths of kW: scale=10;
- APC rPDU2 outlet power `.1.3.6.1.4.1.318.1.1.26.9.4.3.1.7.<outlet>` is in W: scale=1;
- Raritan PX2/PX3 outlet active power `.1.3.6.1.4.1.13742.6.5.4.3.1.4.<pdu>.<outlet>.5` is in W
  (apply the sensor's decimal digits with scale when it has any).
Energy OIDs of PDUs count 0.1 kWh (360 kJ): useless for minutes-long runs, so power is polled.
PDUs refresh every 1–10 s: 1 s native rate, tier `pdu`, ±5 % assumed.
"""

from __future__ import annotations

import contextlib
import re
from typing import TYPE_CHECKING

from .base import Meter, MeterError, ParsedSpec

if TYPE_CHECKING:  # asyncio is imported when a meter opens: every `iowatt-agent` command imports the drivers
    import asyncio

OID_RE = re.compile(r"\.?\d+(?:\.\d+)+")


class SnmpMeter(Meter):
    scheme = "snmp"
    driver = "snmp"
    tier = "pdu"
    quantity = "power"
    native_interval_s = 1.0
    summary = "PDU outlet/inlet power over SNMP v1/v2c (any OID giving watts × scale)"
    needs = "the PDU's SNMP agent reachable over UDP (port 161), a read community, the OID"
    example = "snmp://pdu1?oid=.1.3.6.1.4.1.318.1.1.26.9.4.3.1.7.5&community=public"

    def __init__(self, spec: ParsedSpec, *, interval_s: float | None = None) -> None:
        super().__init__(spec, interval_s=interval_s)
        self.host = spec.need_host()
        self.port = spec.port or 161
        oid = spec.query.get("oid", "")
        if not OID_RE.fullmatch(oid):
            raise MeterError(f"meter spec {spec.spec!r}: oid= must be a numeric OID like .1.3.6.1.4.1.318...")
        self.oid = oid.lstrip(".")
        self.community = spec.query.get("community", "public")
        self.scale = spec.float_opt("scale", 1.0) or 1.0
        version = spec.query.get("version", "2c")
        if version not in ("1", "2c"):
            raise MeterError(f"meter spec {spec.spec!r}: version must be 1 or 2c")
        self.mp_model = 0 if version == "1" else 1
        self.timeout_s = max(1.0, min(3.0, 2 * self.interval_s))
        self.loop: asyncio.AbstractEventLoop | None = None
        self.engine: object | None = None

    def open(self) -> None:
        try:
            from pysnmp.hlapi.v3arch import asyncio as hlapi  # noqa: F401
        except ImportError:
            raise MeterError("snmp:// needs the Python package pysnmp (pip install pysnmp)") from None
        import asyncio

        self.loop = asyncio.new_event_loop()
        self.model = f"SNMP {self.host} {self.oid}"
        self.read()

    async def _get(self) -> float:
        from pysnmp.hlapi.v3arch import asyncio as hlapi

        if self.engine is None:
            self.engine = hlapi.SnmpEngine()
        try:
            target = await hlapi.UdpTransportTarget.create(
                (self.host, self.port), timeout=self.timeout_s, retries=0
            )
        except Exception as exc:  # noqa: BLE001 - name resolution and socket errors
            raise MeterError(f"SNMP {self.host}:{self.port}: {exc}") from None
        error_indication, error_status, error_index, var_binds = await hlapi.get_cmd(
            self.engine,
            hlapi.CommunityData(self.community, mpModel=self.mp_model),
            target,
            hlapi.ContextData(),
            hlapi.ObjectType(hlapi.ObjectIdentity(self.oid)),
        )
        if error_indication:
            raise MeterError(f"SNMP {self.host}:{self.port}: {error_indication}")
        if error_status:
            raise MeterError(f"SNMP {self.host}:{self.port}: {error_status.prettyPrint()} at {self.oid}")
        [(_, value)] = var_binds
        try:
            return float(value) * self.scale
        except (TypeError, ValueError):
            raise MeterError(f"SNMP {self.oid}: not a number: {value.prettyPrint()!r}") from None

    def read(self) -> float:
        assert self.loop is not None
        return self.loop.run_until_complete(self._get())

    def close(self) -> None:
        if self.loop is not None:
            import asyncio

            if self.engine is not None:
                with contextlib.suppress(Exception):
                    self.engine.close_dispatcher()  # type: ignore[attr-defined]
            pending = asyncio.all_tasks(self.loop)
            for task in pending:
                task.cancel()
            with contextlib.suppress(Exception):
                self.loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
            self.loop.close()
            self.loop = None
