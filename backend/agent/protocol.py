"""The agent <-> server wire protocol's version (docs/adr/0036-agent-bundles.md § Protocol; the
agent's side is agent/src/iowatt_agent/protocol.py, the same numbers).

A server speaking PROTOCOL serves agents speaking PROTOCOL-1..PROTOCOL+1: within one step either
side may be upgraded first. An agent says its version in `Iowatt-Agent-Protocol` (none: protocol
1, the releases before the header); the server answers agent requests with `Iowatt-Protocol`.
Outside the range: 403 agent_protocol_unsupported, naming the range and the upgrade.
"""

from fastapi import Request, Response

from backend.errors import Forbidden

PROTOCOL = 2
AGENT_HEADER = "Iowatt-Agent-Protocol"
SERVER_HEADER = "Iowatt-Protocol"


def agent_protocol(request: Request) -> int | None:
    """The version the calling agent speaks (1 without the header), or None when unreadable."""
    raw = request.headers.get(AGENT_HEADER)
    if raw is None:
        return 1
    raw = raw.strip()
    return int(raw) if raw.isascii() and raw.isdigit() and len(raw) <= 6 else None


def check(request: Request, response: Response) -> None:
    """Dependency of every route an agent calls: refuse a version more than one step away."""
    spoken = agent_protocol(request)
    response.headers[SERVER_HEADER] = str(PROTOCOL)
    if spoken is None or abs(spoken - PROTOCOL) > 1:
        said = request.headers.get(AGENT_HEADER, "")[:20]
        raise Forbidden(
            f"this server speaks agent protocols {PROTOCOL - 1} to {PROTOCOL + 1}, the agent {said!r}: "
            "upgrade the agent by running the install line of the server's Agents page again "
            "(or upgrade the server when the agent is the newer)",
            code="agent_protocol_unsupported",
            detail={"server_protocol": PROTOCOL, "accepted": [PROTOCOL - 1, PROTOCOL + 1]},
            headers={SERVER_HEADER: str(PROTOCOL)},
        )
