"""What a file workload will do, from the engine's own parser (ADR 0022); a heap/B-tree sweep's
from `iowatt-engine --heap-btree OPTIONS --parse-only`, a TPC-H run's from libs/workload's
tpch_facts (no engine involved).

The server never parses PostMark command files or vdbench parameter files: it writes the text
to a temporary file and runs `iowatt-engine --postmark=F|--vdbench=F --directory=DIR --parse-only`
(no shell, a timeout, nothing touched on disk; DIR need not exist). The engine's exit 2 message
becomes a 422 at the field that holds the text; its `bounds` object becomes the spec's `facts`,
which size the agent's timeout, go to the host policy check and tell the UI the file set's size.
The agent runs the same command itself and trusts only its own answer.
"""

import hashlib
import json
import subprocess
import tempfile
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

from backend.errors import Invalid
from backend.workload.engine_limits import ENGINE_NAME, engine_path
from backend.workload.engine_limits import EngineUnavailable as EngineUnavailable
from backend.workload.kinds import ParseOnly
from backend.workload.schemas import FileFacts, WorkloadSpec

PARSE_TIMEOUT_S = 20.0
# the directory the engine is told about: never created, never opened (--parse-only touches nothing)
PARSE_DIRECTORY = "/nonexistent/iowatt-parse-only"
_CACHE_SIZE = 256


# the OpenAPI answer of every route that saves or queues a workload (workloads, runs, campaigns)
ENGINE_UNAVAILABLE: dict[int | str, dict[str, Any]] = {
    503: {
        "description": "`engine_unavailable`: a file workload (postmark, vdbench) is checked with "
        "iowatt-engine --parse-only and the server has none (IOWATT_ENGINE_PATH)"
    }
}


def _command(spec: WorkloadSpec, engine: Path, path: str) -> tuple[list[str], str, str]:
    """argv, the file's text, and the field a refusal is reported at (the kind's ParseOnly)."""
    how = _parse_only_of(spec)
    return how.parse_command(str(engine), path, PARSE_DIRECTORY), how.text, how.field


# the engine reads nothing of the server's environment (a job file's ${VAR} is refused under
# --untrusted; this keeps the server's secrets out of its reach even if it were not)
PARSE_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LC_ALL": "C"}


def _parse_only_of(spec: WorkloadSpec) -> ParseOnly:
    how = spec.kind_def.parse_only(spec)
    if how is None:
        raise ValueError("not an engine file workload")
    return how


_cache: OrderedDict[str, dict[str, Any]] = OrderedDict()
_cache_lock = threading.Lock()


def parse_only(spec: WorkloadSpec, *, at: str = "spec") -> dict[str, Any]:
    """The engine's --parse-only document for a file workload (cached by what it ran on: a
    campaign of 500 runs asks once). On exit 2, Invalid with the engine's message at `at`.postmark
    or `at`.vdbench.parameters (`at`: the request's field holding the spec); EngineUnavailable
    when there is no engine."""
    engine = engine_path()
    argv, text, field = _command(spec, engine, "FILE")
    key = hashlib.sha256(json.dumps([str(engine), argv[1:], text]).encode()).hexdigest()
    with _cache_lock:
        if key in _cache:
            _cache.move_to_end(key)
            return _cache[key]
    with tempfile.TemporaryDirectory(prefix="iowatt-parse-") as tmp:
        path = Path(tmp) / _parse_only_of(spec).file_name
        path.write_bytes(text.encode())  # byte for byte, whatever the locale
        argv, _, _ = _command(spec, engine, str(path))
        try:
            proc = subprocess.run(
                argv,
                env=PARSE_ENV,
                cwd=tmp,
                capture_output=True,
                text=True,
                timeout=PARSE_TIMEOUT_S,
                check=False,
                stdin=subprocess.DEVNULL,
            )
        except subprocess.TimeoutExpired as exc:  # the text's doing as far as the caller can tell
            raise Invalid(
                f"{at}.{field}", f"the engine took over {PARSE_TIMEOUT_S:g} s to read it: simplify it"
            ) from exc
    where = f"{at}.{field}"
    if proc.returncode == 2:
        message = _engine_message(proc.stderr)
        if message.endswith(": unknown option") and message.split(":")[0] in ("untrusted", "parse-only"):
            raise EngineUnavailable(  # an engine older than job files: not the text's fault
                f"{ENGINE_NAME} is older than fio job files ({message}): rebuild it (make engine)"
            )
        if _parse_only_of(spec).positional:  # "FILE:LINE: OPTION: reason" -> "line LINE: OPTION: reason"
            message = message.replace(f"{path}:", "line ").replace(f"{path}", "the job file")
        raise Invalid(where, message)
    if proc.returncode != 0:
        raise EngineUnavailable(
            f"{ENGINE_NAME} --parse-only failed (exit {proc.returncode}): {_engine_message(proc.stderr)}"
        )
    try:
        doc = json.loads(proc.stdout)
    except json.JSONDecodeError as exc:
        raise EngineUnavailable(f"{ENGINE_NAME} --parse-only printed no JSON: {proc.stdout[:200]!r}") from exc
    if not isinstance(doc, dict):
        raise EngineUnavailable(f"{ENGINE_NAME} --parse-only printed {type(doc).__name__}, not an object")
    with _cache_lock:
        _cache[key] = doc
        while len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    return doc


def _engine_message(stderr: str) -> str:
    """The engine's one-line reason, without its program-name prefix."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    if not lines:
        return "the engine refused the workload (no message)"
    last = lines[-1]
    prefix = f"{ENGINE_NAME}: "
    return (last[len(prefix) :] if last.startswith(prefix) else last)[:1000]


def facts_of(doc: dict[str, Any]) -> FileFacts | None:
    """The `bounds` of a --parse-only document as FileFacts (None from an engine that prints no
    bounds yet); vdbench's fsd openflags say whether every file set is opened O_DIRECT."""
    bounds = doc.get("bounds")
    if not isinstance(bounds, dict):
        return None
    fsds = [f for f in doc.get("fsd") or [] if isinstance(f, dict)]
    o_direct = bool(fsds) and all(bool(f.get("o_direct")) for f in fsds)
    known = {k: v for k, v in bounds.items() if k in FileFacts.model_fields}
    return FileFacts.model_validate({**known, "o_direct": o_direct})


def with_facts(spec: WorkloadSpec, *, at: str = "spec") -> WorkloadSpec:
    """A file workload checked by the engine, its facts set (replacing any sent); a block workload
    as it is (no facts). `at`: as parse_only's."""
    if not spec.is_file:
        return spec if spec.facts is None else spec.model_copy(update={"facts": None})
    known = spec.kind_def.facts(spec)  # TPC-H: libs/workload's one TPC-H bound, not the engine's
    if known is not None:
        return spec.model_copy(update={"facts": known})
    if spec.kind_def.parse_only(spec) is None:  # no facts before it runs (a PTS run: the device's)
        return spec if spec.facts is None else spec.model_copy(update={"facts": None})
    doc = parse_only(spec, at=at)
    kept = spec.kind_def.with_parse(spec, doc)  # a fio job file keeps its jobs
    if kept is not None:
        return kept
    return spec.model_copy(update={"facts": facts_of(doc)})
