"""PostMark (the kind `postmark`): the engine's --postmark=FILE with the lease's commands, in a
run directory of the directory target. Its progress names creation, transactions and deletion,
each with its own percent: weighed here by the files and transactions of its facts."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import filework
from ..filework import FileRun
from .base import Runner

if TYPE_CHECKING:
    from ..runner import Phases


class PostmarkRunner(Runner):
    kind = "postmark"
    text_key = "commands"
    refusal_key = "commands"

    def arguments(self, run: FileRun) -> list[str]:
        return filework.mode_args(
            "postmark", run.text_file, run.run_dir, beneath=run.target, scale=None, elapsed=None
        )

    def phases(self, run: FileRun) -> Phases:
        """Creation and deletion as many operations as files, the transactions as many as asked."""
        return phases_of(run.facts)

    def scaled_job(
        self, engine: Path | str, engine_job: dict[str, Any], scale: float, *, scratch: Path
    ) -> dict[str, Any]:
        """`bench --scale`: files and transactions multiplied (rounded, at least 1), the commands
        rendered again from the engine's own reading of them (its --parse-only `parameters`),
        never read here. `scratch` is a private directory for the text."""
        text_file = scratch / "unscaled.postmark"
        filework.write_text(text_file, str(engine_job["commands"]))
        try:
            doc = filework.parse_only(
                engine,
                filework.mode_args(
                    "postmark", text_file, scratch / "d", beneath=None, scale=None, elapsed=None
                ),
            )
        finally:
            text_file.unlink(missing_ok=True)
        postmark = doc.get("postmark")
        params = postmark.get("parameters") if isinstance(postmark, dict) else None
        if not isinstance(params, dict):
            raise filework.FileJobRefused("the engine's --parse-only gave no PostMark parameters to scale")
        return {"mode": "postmark", "commands": commands(params, scale)}


def phases_of(doc: dict[str, Any]) -> Phases:
    """Progress weights of PostMark's phases (start %, span %) from its facts: creation and
    deletion as many operations as files, the transactions as many as asked."""
    postmark = doc.get("postmark")
    params = postmark.get("parameters") if isinstance(postmark, dict) else None
    params = params if isinstance(params, dict) else {}
    bounds = doc.get("bounds")
    bounds = bounds if isinstance(bounds, dict) else {}
    files = _positive(params.get("number"), _positive(bounds.get("files"), 1.0))
    transactions = _positive(params.get("transactions"), files)
    total = 2 * files + transactions
    return {
        "creation": (0.0, 100.0 * files / total),
        "transactions": (100.0 * files / total, 100.0 * transactions / total),
        "deletion": (100.0 * (files + transactions) / total, 100.0 * files / total),
    }


def _positive(value: object, default: float) -> float:
    if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
        return float(value)
    return default


def commands(params: dict[str, Any], scale: float = 1.0) -> str:
    """PostMark's commands for the engine's resolved `parameters`, files and transactions scaled."""

    def num(key: str) -> int:
        value = params.get(key)
        if isinstance(value, bool) or not isinstance(value, int):
            raise filework.FileJobRefused(f"the engine's PostMark parameters lack {key}")
        return value

    def flag(key: str) -> str:
        return "true" if params.get(key) else "false"

    lines = [
        f"set size {num('size_low_bytes')} {num('size_high_bytes')}",
        f"set number {max(1, round(num('number') * scale))}",
        f"set subdirectories {num('subdirectories')}",
        f"set read {num('read_block_bytes')}",
        f"set write {num('write_block_bytes')}",
        f"set transactions {max(1, round(num('transactions') * scale))}",
        f"set bias read {num('bias_read')}",
        f"set bias create {num('bias_create')}",
        f"set buffering {flag('buffering')}",
        f"set seed {num('seed')}",
        *(["set fsync true"] if params.get("fsync") else []),
        "run",
        "quit",
    ]
    return "\n".join(lines) + "\n"
