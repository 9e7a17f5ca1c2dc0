"""What an NVMe controller can erase and how far its sanitize is, read from nvme-cli's JSON output
(`-o json`), for the PTS purge (pts.py, docs/pts.md § Purge).

- `nvme id-ctrl DEV -o json`: Identify Controller's SANICAP (bit 0 crypto erase, 1 block erase,
  2 overwrite), OACS (bit 1: Format NVM), FNA (bit 0: a format applies to every namespace,
  bit 1: so does its secure erase) and CMIC (bit 1: the subsystem may have two or more
  controllers, as a dual-port drive has). nvme-cli prints them as JSON numbers.
- `nvme sanitize-log DEV -o json`: the Sanitize Status log (log page 81h), printed under the
  device's name: `{"nvme0": {"sprog": N, "sstat": {"status": "(S) text", "no_cmplted_passes": P,
  "global_erased": G, ...}, "cdw10_info": C, ...}}`. SPROG is the progress in 65,536ths; SSTAT
  bits 2:0 the status (0 never sanitized, 1 completed, 2 in progress, 3 failed, 4 completed with
  no-deallocate asked), bits 7:3 the overwrite passes completed, bit 8 Global Data Erased (GDE,
  `global_erased`: nothing in the subsystem written since it was made or since the last sanitize
  that completed); SCDW10 (`cdw10_info`) the last sanitize command's dword 10, its bits 2:0 the
  action. Some nvme-cli versions print the status under another key than "status" or SSTAT as a
  plain number: both are read.

Outside text: anything that is not such a document is NvmeOutputError (a ValueError), never
another exception (tests/agent/test_nvme.py fuzzes both parsers)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

MAX_OUTPUT_CHARS = 1 << 20  # id-ctrl's JSON is ~10 KB; vendor-specific dumps stay far below
U32 = 1 << 32
SPROG_FULL = 65536


class NvmeOutputError(ValueError):
    """nvme-cli's output is not the document expected: the message says what is wrong."""


@dataclass(frozen=True)
class SanitizeAction:
    name: str  # the purge method's suffix: nvme-sanitize-<name>
    label: str
    sanicap_bit: int
    sanact: int  # Sanitize's dword 10 bits 2:0 (nvme-cli --sanact)


# preferred first (issue 29): a crypto erase changes the media key, a block erase resets every
# block, an overwrite writes each block (one pass of zeros here) and takes the longest
SANITIZE_ACTIONS = (
    SanitizeAction("crypto", "crypto erase", 0, 4),
    SanitizeAction("block", "block erase", 1, 2),
    SanitizeAction("overwrite", "overwrite, 1 pass of zeros", 2, 3),
)
SANACT_EXIT_FAILURE = 1


@dataclass(frozen=True)
class Controller:
    sanicap: int
    oacs: int
    fna: int
    cmic: int

    @property
    def other_controllers(self) -> bool:
        """CMIC bit 1: the subsystem may hold controllers (and namespaces) this host does not see."""
        return bool(self.cmic >> 1 & 1)

    @property
    def sanitize_actions(self) -> list[SanitizeAction]:
        return [a for a in SANITIZE_ACTIONS if self.sanicap >> a.sanicap_bit & 1]

    @property
    def format_nvm(self) -> bool:
        return bool(self.oacs >> 1 & 1)

    @property
    def format_erases_every_namespace(self) -> bool:
        """FNA bit 0 (a format applies to all namespaces) or bit 1 (its secure erase does)."""
        return bool(self.fna & 0b11)


@dataclass(frozen=True)
class SanitizeStatus:
    status: int  # SSTAT bits 2:0
    progress: float  # 0..1, meaningful while in progress
    sanact: int | None  # the last sanitize command's action (SCDW10 bits 2:0), when printed
    passes: int | None  # overwrite passes completed
    global_erased: bool | None = None  # SSTAT bit 8 (GDE), when printed

    @property
    def in_progress(self) -> bool:
        return self.status == 2

    @property
    def succeeded(self) -> bool:
        return self.status in (1, 4)

    @property
    def failed(self) -> bool:
        return self.status == 3


def _document(text: str) -> dict[str, Any]:
    if not isinstance(text, str):
        raise NvmeOutputError("no output")
    if len(text) > MAX_OUTPUT_CHARS:
        raise NvmeOutputError(f"output longer than {MAX_OUTPUT_CHARS} characters")
    start = text.find("{")  # nvme-cli 1.x printed a warning line before the JSON on some paths
    if start < 0:
        raise NvmeOutputError("no JSON object in the output")
    try:
        doc = json.loads(text[start:])
    except (ValueError, RecursionError) as exc:
        raise NvmeOutputError(f"not JSON: {str(exc)[:120]}") from None
    if not isinstance(doc, dict):
        raise NvmeOutputError("the JSON is not an object")
    return doc


def _u32(doc: dict[str, Any], key: str) -> int:
    if key not in doc:
        raise NvmeOutputError(f"no {key!r}")
    value: object = doc[key]
    if isinstance(value, str) and re.fullmatch(r"\s*[0-9]{1,12}\s*", value):
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < U32:
        raise NvmeOutputError(f"{key!r} is not a 32-bit unsigned number: {str(value)[:40]!r}")
    return value


def parse_id_ctrl(text: str) -> Controller:
    """`nvme id-ctrl DEV -o json` -> its SANICAP, OACS, FNA and CMIC."""
    doc = _document(text)
    return Controller(
        sanicap=_u32(doc, "sanicap"), oacs=_u32(doc, "oacs"), fna=_u32(doc, "fna"), cmic=_u32(doc, "cmic")
    )


_STATUS_TEXT = re.compile(r"\s*\((\d{1,3})\)")


def _status(sstat: Any) -> tuple[int, int | None, bool | None]:
    """SSTAT as nvme-cli prints it -> (status, overwrite passes completed or None, GDE or None)."""
    if isinstance(sstat, int) and not isinstance(sstat, bool):
        if not 0 <= sstat < 1 << 16:
            raise NvmeOutputError(f"'sstat' out of range: {sstat}")
        return sstat & 0b111, sstat >> 3 & 0b11111, bool(sstat >> 8 & 1)
    if not isinstance(sstat, dict):
        raise NvmeOutputError("'sstat' is neither a number nor an object")
    texts = [sstat.get("status")] + [v for k, v in sstat.items() if k != "status"]
    for value in texts:
        m = _STATUS_TEXT.match(value) if isinstance(value, str) else None
        if m:
            passes: object = sstat.get("no_cmplted_passes")
            if isinstance(passes, bool) or not isinstance(passes, int) or not 0 <= passes < 32:
                passes = None
            erased: object = sstat.get("global_erased")
            gde = bool(erased) if erased in (0, 1) and not isinstance(erased, float) else None
            return int(m.group(1)) & 0b111, passes, gde
    raise NvmeOutputError("'sstat' has no status \"(N) ...\"")


def parse_sanitize_log(text: str) -> SanitizeStatus:
    """`nvme sanitize-log DEV -o json` -> the status, progress and last action."""
    doc = _document(text)
    if "sprog" not in doc:  # printed under the device's name
        inner = [v for v in doc.values() if isinstance(v, dict) and "sprog" in v]
        if len(inner) != 1:
            raise NvmeOutputError("no sanitize status log ('sprog') in the output")
        doc = inner[0]
    sprog = _u32(doc, "sprog")
    if sprog >= SPROG_FULL:
        raise NvmeOutputError(f"'sprog' out of range: {sprog}")
    if "sstat" not in doc:
        raise NvmeOutputError("no 'sstat'")
    status, passes, gde = _status(doc["sstat"])
    sanact = _u32(doc, "cdw10_info") & 0b111 if "cdw10_info" in doc else None
    return SanitizeStatus(
        status=status, progress=sprog / SPROG_FULL, sanact=sanact, passes=passes, global_erased=gde
    )
