"""IPMI DCMI "Get Power Reading" through `ipmitool` (docs/energy.md §1.3).

    ipmi://                         in-band, the local BMC (/dev/ipmi0; needs root)
    ipmi://BMC[:623]?user=U&password=P   out-of-band over RMCP+ (lanplus)

Each tick runs `ipmitool [-I lanplus -H BMC -p PORT -U U -E] dcmi power reading` and takes
"Instantaneous power reading: N Watts". The password goes through $IPMI_PASSWORD (`-E`), never
on the command line where `ps` shows it. BMCs refresh about once a second, so that is the native
rate; their accuracy is unspecified and they lag (power-dev #271): tier `bmc`, ±5 % assumed.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess

from .base import Meter, MeterError, ParsedSpec

READING = re.compile(r"Instantaneous power reading:\s*([-+]?\d+(?:\.\d+)?)\s*Watts", re.IGNORECASE)
STATE = re.compile(r"Power reading state is:\s*(\S+)", re.IGNORECASE)


def parse_dcmi_reading(text: str) -> float:
    m = READING.search(text)
    if m is None:
        raise MeterError(f"ipmitool: no 'Instantaneous power reading' in its output: {text.strip()[:160]!r}")
    state = STATE.search(text)
    if state is not None and state.group(1).lower() != "activated":
        raise MeterError(
            "the BMC's DCMI power reading is not activated (try `ipmitool dcmi power activate` "
            "or the BMC's settings)"
        )
    return float(m.group(1))


class IpmiMeter(Meter):
    scheme = "ipmi"
    driver = "ipmi-dcmi"
    tier = "bmc"
    quantity = "power"
    native_interval_s = 1.0
    summary = "BMC power via IPMI DCMI (ipmitool), in-band or over the network"
    needs = "ipmitool (Debian: apt-get install ipmitool); in-band needs root and /dev/ipmi0"
    example = "ipmi://10.0.0.9?user=admin&password=secret"

    def __init__(self, spec: ParsedSpec, *, interval_s: float | None = None) -> None:
        super().__init__(spec, interval_s=interval_s)
        self.host = spec.host
        self.user = spec.query.get("user", "")
        self.password = spec.query.get("password", "")
        self.timeout_s = max(5.0, 2 * self.interval_s)
        self.ipmitool: str | None = None

    def command(self) -> list[str]:
        assert self.ipmitool is not None
        argv = [self.ipmitool]
        if self.host and self.host not in ("localhost", "127.0.0.1", "local"):
            argv += ["-I", "lanplus", "-H", self.host]
            if self.spec.port:
                argv += ["-p", str(self.spec.port)]
            if self.user:
                argv += ["-U", self.user]
            if self.password:
                argv += ["-E"]
        return [*argv, "dcmi", "power", "reading"]

    def open(self) -> None:
        self.ipmitool = shutil.which("ipmitool")
        if self.ipmitool is None:
            raise MeterError(
                "ipmitool is not installed (needed by ipmi://): apt-get install ipmitool, "
                "or use redfish:// if the BMC speaks Redfish"
            )
        self.model = "IPMI DCMI" + (f" BMC {self.host}" if self.host else " local BMC")
        self.read()  # a first reading proves the BMC answers

    def read(self) -> float:
        env = dict(os.environ)
        if self.password:
            env["IPMI_PASSWORD"] = self.password
        try:
            done = subprocess.run(
                self.command(),
                capture_output=True,
                text=True,
                timeout=self.timeout_s,
                env=env,
                stdin=subprocess.DEVNULL,
            )
        except subprocess.TimeoutExpired:
            raise MeterError(f"ipmitool gave no reading within {self.timeout_s:g} s") from None
        except OSError as exc:
            raise MeterError(f"cannot run ipmitool: {exc.strerror or exc}") from None
        if done.returncode != 0:
            message = (done.stderr.strip() or done.stdout.strip()).splitlines()
            raise MeterError(f"ipmitool exited {done.returncode}: {message[-1] if message else 'no message'}")
        return parse_dcmi_reading(done.stdout)
