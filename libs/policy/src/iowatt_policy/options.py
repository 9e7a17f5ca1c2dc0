"""Which engine options a server's job may carry: the engine's own facts (ADR 0030), never a list
written here. `iowatt-engine --limits` gives every row of its option table with `server`:
`allowed` (a server's job may carry it; check_run judges its value against the host's limits),
`host` (set by the agent alone from the host's policy: ADR 0009 §5) or `path` (names or makes
files on the host). The agent builds one from the engine it runs, the server from the engine it
parses job files with (`backend/workload/engine_limits.py`); both have one.

Without the engine's facts (a caller that has no engine, or an engine older than ADR 0030)
`builtin()` allows the options vetted by hand before ADR 0030 (`FROZEN_OPTIONS`, ADRs 0009 and
0029: the platform's structured block jobs use only these) and nothing newer: that list is frozen,
an option the engine gains is sendable only where the engine's facts say so.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

ServerClass = Literal["allowed", "host", "path"]
SERVER_CLASSES: tuple[ServerClass, ...] = ("allowed", "host", "path")
MAX_OPTIONS = 4096  # rows of an engine's table read here (the engine has about 150)
MAX_NAME_CHARS = 64

# The options whose values check_run's rules read (threads, iodepth, block sizes, bytes written,
# run time, memory, files, writes), by the engine's row name, with the aliases the engine gives them.
# These are the rules' inputs, not an allow-list: with the engine's facts, any option the engine
# marks `allowed` may be sent; these are judged.
HOST_RULE_OPTIONS: dict[str, tuple[str, ...]] = {
    "name": (),
    "description": (),
    "rw": ("readwrite",),
    "bs": ("blocksize",),
    "bssplit": (),
    "bsrange": ("blocksize_range",),
    "size": (),
    "offset": (),
    "offset_increment": (),
    "offset_align": (),
    "io_size": ("io_limit",),
    "number_ios": (),
    "numjobs": (),
    "runtime": (),
    "time_based": (),
    "ramp_time": (),
    "iodepth": (),
    "stonewall": ("wait_for_previous",),
    "loops": (),
    "norandommap": (),
    "kb_base": (),
    "rate": (),
    "rate_iops": (),
    "thinktime": (),
    "thinktime_blocks": (),
    "startdelay": (),
    "wait_for": (),
    "io_submit_mode": (),
    "nrfiles": ("nr_files",),
    "filesize": (),
}


# ADR 0030: the hand-written allow-list of ADRs 0009/0029, frozen: what a caller without the engine's
# facts may send. Never extended (a new option is judged by the engine's `server` class).
FROZEN_OPTIONS = frozenset(
    {
        "name", "rw", "readwrite", "rwmixread", "rwmixwrite", "bs", "blocksize", "bssplit", "size",
        "offset", "direct", "buffered", "numjobs", "runtime", "time_based", "ramp_time", "ioengine",
        "iodepth", "stonewall", "wait_for_previous", "loops", "fsync", "fdatasync", "end_fsync", "sync",
        "invalidate", "fadvise_hint", "random_distribution", "norandommap", "randseed", "zero_buffers",
        "buffer_compress_percentage", "refill_buffers", "rate_iops", "thread", "group_reporting",
        "randrepeat", "clocksource", "iodepth_batch_submit", "iodepth_batch", "force_async", "kb_base",
        "io_size", "io_limit", "description",
    }
)  # fmt: skip


@dataclass(frozen=True)
class EngineOptions:
    """The engine's option rows as a server's job is judged by them: every accepted name (aliases
    too) -> the row's name, and each row's `server` class. `source` says where they came from."""

    rows: dict[str, ServerClass]
    names: dict[str, str]
    source: str

    def canonical(self, name: str) -> str | None:
        """The row an option name means (an alias gives its row), None when the engine has none."""
        return self.names.get(name)

    def server_class(self, name: str) -> ServerClass | None:
        row = self.names.get(name)
        return self.rows[row] if row is not None else None

    @classmethod
    def from_limits(cls, doc: object) -> EngineOptions:
        """From an `iowatt-engine --limits` document; ValueError when it gives no `server` class
        (an engine older than ADR 0030: its facts cannot say what a server may send)."""
        block = doc.get("block") if isinstance(doc, dict) else None
        options = block.get("options") if isinstance(block, dict) else None
        if not isinstance(options, dict) or not options or len(options) > MAX_OPTIONS:
            raise ValueError("the engine's --limits has no block options")
        rows: dict[str, ServerClass] = {}
        names: dict[str, str] = {}
        for name, row in options.items():
            if not isinstance(name, str) or not 0 < len(name) <= MAX_NAME_CHARS or not isinstance(row, dict):
                raise ValueError(f"the engine's --limits has a bad option row {str(name)[:40]!r}")
            server = row.get("server")
            if server not in SERVER_CLASSES:
                raise ValueError(
                    f"the engine's --limits does not say who may send {name!r} (an engine older than "
                    "ADR 0030: rebuild it)"
                )
            rows[name] = server
            names[name] = name
            alias = row.get("alias")
            if isinstance(alias, str) and 0 < len(alias) <= MAX_NAME_CHARS:
                names.setdefault(alias, name)
        return cls(rows=rows, names=names, source="engine")

    @classmethod
    def builtin(cls) -> EngineOptions:
        """Without the engine's facts: FROZEN_OPTIONS, and the agent's own as the host's."""
        aliases = {a: row for row, names in HOST_RULE_OPTIONS.items() for a in names}
        aliases["iodepth_batch"] = "iodepth_batch_submit"
        rows: dict[str, ServerClass] = {}
        names: dict[str, str] = {}
        for name in FROZEN_OPTIONS:
            row = aliases.get(name, name)
            rows[row], names[name] = "allowed", row
        for name in ("beneath", "create_new", "unlink", "keep_existing", "readonly", "destructive"):
            rows[name], names[name] = "host", name
        for name in ("filename", "directory"):
            rows[name], names[name] = "path", name
        return cls(rows=rows, names=names, source="builtin")


def engine_options(limits: dict[str, Any] | None) -> EngineOptions:
    """EngineOptions of a --limits document, or builtin() when there is none."""
    return EngineOptions.builtin() if limits is None else EngineOptions.from_limits(limits)
