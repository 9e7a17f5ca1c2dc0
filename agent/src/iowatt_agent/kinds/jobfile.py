"""fio job files (the kind `jobfile`, ADR 0029): the lease carries the job file's text; the agent
has the engine parse it here (`--untrusted --parse-only FILE`, an empty environment: include and
${VAR} are refused, so no file or secret of this host reaches it), judges that parse as a block job
by the host's rules (libs/policy's check_run: options, limits, memory), and runs the engine's JSON
form of the same jobs, the job file's `filename` and `directory` replaced by the run's target as
for every block job (`policy.engine_job_for`). The JSON form is parsed again and must read the same
jobs, groups and options as the text, or the run is refused: what runs is what was checked."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

from iowatt_policy import ParseUnreadable, block_job, same_jobs

from .. import filework
from ..filework import FileJobRefused, FileRun
from .base import Runner

# the engine's whole environment when it reads a job file from the server: nothing of the agent's
UNTRUSTED_ENV = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL": "C"}
# what the engine is always given for a job file from the server (contracts: --untrusted)
UNTRUSTED_ARGS = ("--untrusted",)


class JobfileRunner(Runner):
    kind = "jobfile"
    text_key = "text"
    refusal_key = "text"
    # planned as a block job (plan._plan_jobfile_run): the engine's JSON job file on the target
    block_job: ClassVar[bool] = True

    def prepare(
        self, engine: Path | str, engine_job: dict[str, Any], *, text_file: Path, target: str, run_key: str
    ) -> FileRun:
        raise ValueError("a job file is planned as a block job (plan._plan_jobfile_run)")

    def arguments(self, run: FileRun) -> list[str]:
        raise ValueError("a job file runs as the engine's JSON job file")

    def engine_args(self) -> list[str]:
        """Given before the job file on every run of a server's job file (as a block job's)."""
        return list(UNTRUSTED_ARGS)

    def parse(
        self, engine: Path | str, text: str, *, text_file: Path, untrusted: bool = True
    ) -> dict[str, Any]:
        """The engine's iowatt-jobfile/1 parse of `text`, written to `text_file` (0600) and removed
        again. `untrusted`: a server's job file (--untrusted, an empty environment); bench's own
        files are read as fio reads them. Raises FileJobRefused with the engine's words."""
        filework.write_text(text_file, text)
        try:
            return filework.parse_only(
                engine,
                list(UNTRUSTED_ARGS) if untrusted else [],
                file=text_file,
                env=dict(UNTRUSTED_ENV) if untrusted else None,
            )
        except FileJobRefused as exc:  # "FILE:LINE: OPTION: reason" -> "line LINE: OPTION: reason"
            reason = exc.reason.removeprefix("iowatt-engine: ")
            reason = reason.replace(f"{text_file}:", "line ").replace(str(text_file), "the job file")
            raise FileJobRefused(reason) from None
        finally:
            text_file.unlink(missing_ok=True)

    def checked_job(
        self, engine: Path | str, parse: dict[str, Any], *, text_file: Path, untrusted: bool = True
    ) -> dict[str, Any]:
        """The engine's JSON job file of `parse` (libs/policy's block_job: filename and directory
        dropped), once the engine has read it back as the same jobs. Raises FileJobRefused."""
        try:
            job = block_job(parse)
        except ParseUnreadable as exc:
            raise FileJobRefused(
                f"the job file cannot be checked: {exc} (update iowatt-engine on the host)", str(exc)
            ) from None
        again = self.parse(engine, json.dumps(job, indent=1) + "\n", text_file=text_file, untrusted=untrusted)
        try:
            differs = same_jobs(parse, again)
        except ParseUnreadable as exc:
            differs = str(exc)
        if differs is not None:
            raise FileJobRefused(
                "the engine reads the job file's JSON form differently from the job file "
                f"({differs}): nothing was run; report it with the job file",
                differs,
            )
        return job
