"""The heartbeat thread: the agent's state to the server every `heartbeat_interval_s`, the
token rotated when the server says it is due (docs/adr/0011), and between beats a look at the
policy files every POLICY_WATCH_S, so a target added on the host reaches the server within
seconds (the inventory is re-sent), not at the next empty long-poll.

It reads and writes the agent's `status.AgentStatus`, which the worker thread (`loop.py`) keeps;
the loop hands it its clients and the inventory sender, so it imports nothing of the loop's."""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from . import __version__, clock
from .client import ApiClient, ApiError, Forbidden, NotFound, Unauthorized
from .config import ConfigError
from .credentials import save_config
from .policy import METERS_FILE, POLICY_FILE
from .schemas import HeartbeatRequest, HeartbeatResponse
from .status import AgentStatus

log = logging.getLogger("iowatt_agent.loop")

POLICY_WATCH_S = 2.0  # how often the heartbeat thread looks for a changed policy or meters file
# rotate the token when less than half its lifetime is left; this much when the server does not
# say the lifetime (docs/adr/0011)
ROTATE_LEFT_S = 7 * 24 * 3600.0

FileSignature = tuple[tuple[int, int, int] | None, ...]


class Heartbeat:
    """Heartbeats of one agent, with its own `client`. Each carries the status's boot id (once
    per agent process) and the lease the worker holds, so the server tells a restarted agent
    from the one that started a run. A rotated token is stored in `state_dir`'s agent.json and
    given to every client of `token_users`; `send_inventory(client)` re-sends the inventory
    when the policy files change."""

    def __init__(
        self,
        status: AgentStatus,
        *,
        client: ApiClient,
        state_dir: Path,
        token_users: Sequence[ApiClient],
        send_inventory: Callable[[ApiClient], None],
    ) -> None:
        self.status = status
        self.client = client
        self.state_dir = state_dir
        self.token_users = tuple(token_users)
        self.send_inventory = send_inventory

    def once(self, client: ApiClient | None = None) -> None:
        """One heartbeat (with `client`: another thread's, a group member's clock burst). Each is
        also a clock exchange: its sample goes to the status's filter (clock.py)."""
        status = self.status
        sent_at = clock.now()
        request = HeartbeatRequest(
            state=status.state,
            current_run_id=status.current_run_id,
            current_lease_id=status.current_lease_id,
            boot_id=status.boot_id,
            agent_version=__version__,
            sent_at=sent_at,
        )
        answer = (client or self.client).heartbeat(status.config.agent_id, request)
        if answer.received_at is not None:
            status.clock.add(clock.sample(sent_at, answer.received_at, answer.server_time, clock.now()))
        if answer.heartbeat_interval_s > 0:
            status.heartbeat_interval_s = answer.heartbeat_interval_s
        if token_due(answer):
            self.rotate_token()

    def safe_once(self) -> None:
        try:
            self.once()
        except ApiError as exc:
            log.warning("heartbeat.failed error=%s", exc)

    def rotate_token(self) -> bool:
        """Get a new token, write it to agent.json (atomically) and only then use it. Any failure
        keeps the current token, which the server still accepts, and the next heartbeat tries
        again. A refusal (401/403/404) is raised: the server no longer accepts this agent."""
        status = self.status
        with status.token_lock:
            try:
                answer = self.client.rotate_token(status.config.agent_id)
            except (Unauthorized, Forbidden, NotFound):
                raise
            except ApiError as exc:
                log.warning("token.rotate_failed error=%s: will retry at the next heartbeat", exc)
                return False
            rotated = status.config.model_copy(
                update={"agent_token": answer.agent_token, "token_expires_at": answer.token_expires_at}
            )
            try:
                save_config(self.state_dir, rotated)
            except (OSError, ConfigError) as exc:
                log.error(
                    "token.save_failed error=%s: keeping the current token; will rotate again at the "
                    "next heartbeat",
                    exc,
                )
                return False
            status.config = rotated
            for client in self.token_users:
                client.set_token(answer.agent_token)
            log.info("token.rotated expires_at=%s", answer.token_expires_at.isoformat(timespec="seconds"))
            return True

    def run(self) -> None:
        """The thread's body, until `status.stopping`; a refusal makes the agent fatal."""
        status = self.status
        next_beat = time.monotonic() + status.heartbeat_interval_s
        signature: FileSignature | None = policy_files_signature(self.state_dir)
        while not status.stopping.wait(min(POLICY_WATCH_S, max(0.0, next_beat - time.monotonic()))):
            now_sig = policy_files_signature(self.state_dir)
            if now_sig != signature:
                signature = now_sig
                try:
                    self.send_inventory(self.client)
                except ApiError as exc:
                    log.warning("inventory.failed error=%s: will retry", exc)
                    signature = None  # retry at the next look
            if time.monotonic() < next_beat:
                continue
            next_beat = time.monotonic() + status.heartbeat_interval_s
            try:
                self.once()
            except (Unauthorized, Forbidden, NotFound) as exc:
                status.set_fatal(f"heartbeat refused: {exc}")
            except ApiError as exc:
                log.warning("heartbeat.failed error=%s", exc)


def policy_files_signature(state_dir: Path) -> FileSignature:
    """(inode, size, mtime) of the policy and meters files: cheap to read every few seconds."""
    sig: list[tuple[int, int, int] | None] = []
    for name in (POLICY_FILE, METERS_FILE):
        try:
            st = os.stat(state_dir / name)
        except OSError:
            sig.append(None)
            continue
        sig.append((st.st_ino, st.st_size, st.st_mtime_ns))
    return tuple(sig)


def token_due(answer: HeartbeatResponse) -> bool:
    """Whether the token the heartbeat came with should be rotated now: less than half its
    lifetime left (7 days when the server does not say the lifetime), measured on the server's
    clock so a skewed host clock does not matter."""
    if answer.token_expires_at is None:
        return False
    left_s = (answer.token_expires_at - answer.server_time).total_seconds()
    threshold_s = answer.token_ttl_s / 2 if answer.token_ttl_s else ROTATE_LEFT_S
    return left_s < threshold_s
