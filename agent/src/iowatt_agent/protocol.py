"""The agent <-> server wire protocol's version (docs/adr/0036-agent-bundles.md § Protocol).

One integer, raised by one when either side starts sending or needing something the other's
previous release lacks. A server speaking P serves agents speaking P-1, P and P+1, and an agent
speaking P works with servers speaking P-1..P+1, so a fleet and its server upgrade in either order,
one step at a time.

- The agent sends `Iowatt-Agent-Protocol: P` on every request (protocol 1, the releases before the
  header, sent none: a server reads a missing header as 1).
- The server answers agent requests with `Iowatt-Protocol: P`; outside its range it answers 403
  `agent_protocol_unsupported`, naming the range and the upgrade (the install line run again).

Protocol 2 adds the header and, in the inventory's capabilities, the protocol, the engine's version
and the asynchronous ioengines it runs here (io_uring, libaio).

IOWATT_AGENT_WIRE_PROTOCOL makes this agent speak another version (compatibility tests, and a
fleet held back to the previous server's protocol): 1 sends what the previous release sent.
"""

from __future__ import annotations

import logging
import os

PROTOCOL = 2
AGENT_HEADER = "Iowatt-Agent-Protocol"
SERVER_HEADER = "Iowatt-Protocol"
OVERRIDE_ENV = "IOWATT_AGENT_WIRE_PROTOCOL"

log = logging.getLogger("iowatt_agent.protocol")
_warned: set[int] = set()


def wire_protocol() -> int:
    """The version this agent speaks: PROTOCOL, or IOWATT_AGENT_WIRE_PROTOCOL when set."""
    raw = os.environ.get(OVERRIDE_ENV, "").strip()
    if not raw:
        return PROTOCOL
    try:
        value = int(raw)
    except ValueError:
        raise ValueError(f"{OVERRIDE_ENV} must be an integer, got {raw!r}") from None
    if value < 1:
        raise ValueError(f"{OVERRIDE_ENV} must be at least 1, got {value}")
    return value


def headers() -> dict[str, str]:
    """What every request carries: nothing for protocol 1 (as that release sent)."""
    p = wire_protocol()
    return {} if p < 2 else {AGENT_HEADER: str(p)}


def note_server(value: str | None) -> None:
    """The server's `Iowatt-Protocol` answer: a server more than one version away is logged once
    (it may refuse this agent next; the upgrade is the install line run again)."""
    if value is None:
        return  # a server before the header: protocol 1
    try:
        server = int(value)
    except ValueError:
        return
    mine = wire_protocol()
    if abs(server - mine) > 1 and server not in _warned:
        _warned.add(server)
        log.warning(
            "protocol.mismatch server=%d agent=%d: the server speaks protocols %d-%d; upgrade %s "
            "(the server's install line, Agents page)",
            server,
            mine,
            server - 1,
            server + 1,
            "this agent" if server > mine else "the server",
        )
