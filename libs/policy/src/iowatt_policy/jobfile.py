"""A fio job file as a block job (ADR 0029): the engine's own parse of the text
(`iowatt-engine --untrusted --parse-only FILE`, schema iowatt-jobfile/1) turned into the engine's
JSON job file, which the host's rules judge like any block job and the agent runs. One
implementation for the server (its early answer) and the agent (authoritative, from its own parse).

The text is never read here: only the engine parses it. What this module does to the parse is
all the platform does to a job file: the job file's own `filename` and `directory` are dropped
(the run's target replaces them: the agent adds its own filename, beneath and the target's
options, as for every block job); every other option stays, so the host's option list, limits
and memory bound refuse what the host did not allow.
"""

from __future__ import annotations

from typing import Any

JOBFILE_SCHEMA = "iowatt-jobfile/1"
# the job file's options the run's target replaces (never followed, never refused: ADR 0029)
REPLACED_OPTIONS = ("filename", "directory")
MAX_JOBFILE_CHARS = 64 * 1024  # the text's bound: the server's, the lease check's, bench's
MAX_PARSED_JOBS = 4096  # a parse with more jobs than this is not read (the engine's max_jobs is lower)
MAX_PARSED_OPTIONS = 1024  # options per section


class ParseUnreadable(ValueError):
    """The engine's parse document is not the iowatt-jobfile/1 shape (an older or foreign engine)."""


def _options(value: object, where: str) -> dict[str, str]:
    if not isinstance(value, dict) or len(value) > MAX_PARSED_OPTIONS:
        raise ParseUnreadable(f"{where} is not an object of at most {MAX_PARSED_OPTIONS} options")
    out: dict[str, str] = {}
    for name, text in value.items():
        if not isinstance(name, str) or not isinstance(text, str):
            raise ParseUnreadable(f"{where}: option {str(name)[:40]!r} is not text = text")
        out[name] = text
    return out


def parsed_jobs(parse: object) -> tuple[dict[str, str], list[tuple[str, int, dict[str, str]]]]:
    """(global options, [(job name, group, its own options)]) of an iowatt-jobfile/1 document, as
    the engine printed them. ParseUnreadable for any other shape, or a parse that refused options."""
    if not isinstance(parse, dict) or parse.get("schema") != JOBFILE_SCHEMA:
        raise ParseUnreadable(f"the engine's --parse-only printed no {JOBFILE_SCHEMA} document")
    glob = _options(parse.get("global") or {}, "global")
    refused = parse.get("refused") or []
    if not isinstance(refused, list):
        raise ParseUnreadable("refused is not a list")
    if refused:
        shown = ", ".join(str(r)[:60] for r in refused[:5])
        raise ParseUnreadable(f"the engine refused part of the job file: {shown}")
    raw = parse.get("jobs")
    if not isinstance(raw, list) or not raw or len(raw) > MAX_PARSED_JOBS:
        raise ParseUnreadable(f"the job file makes no jobs (or more than {MAX_PARSED_JOBS})")
    jobs: list[tuple[str, int, dict[str, str]]] = []
    for index, job in enumerate(raw):
        if not isinstance(job, dict):
            raise ParseUnreadable(f"job {index} is not an object")
        name, group = job.get("name"), job.get("group", 0)
        if not isinstance(name, str) or not name:
            raise ParseUnreadable(f"job {index} has no name")
        if not isinstance(group, int) or isinstance(group, bool) or group < 0:
            raise ParseUnreadable(f"job {index} ({name[:40]}) has no group number")
        jobs.append((name, group, _options(job.get("options") or {}, f"job {index} ({name[:40]})")))
    return glob, jobs


def replaced_options(parse: object) -> list[str]:
    """What the run's target replaces, as "SECTION: option=value" (for the run's record and the UI);
    a job's value that is [global]'s (the engine lists a job's options with [global]'s merged in) is
    named once, under global."""
    glob, jobs = parsed_jobs(parse)
    found = [f"global: {k}={glob[k]}" for k in REPLACED_OPTIONS if k in glob]
    for name, _, options in jobs:
        found += [
            f"{name}: {k}={options[k]}"
            for k in REPLACED_OPTIONS
            if k in options and options[k] != glob.get(k)
        ]
    return found


# options that make a job lay out files of its own (the engine's multi-file jobs, src/multifile.c)
MULTI_FILE_OPTIONS = ("nrfiles", "nr_files", "filesize", "openfiles", "file_service_type", "create_on_open")


def multi_file(parse: object) -> bool:
    """Whether the job file's jobs make files of their own (nrfiles, filesize, ... or a `directory`
    without a `filename`: fio's generated names): such a run gets a directory of its own beneath a
    directory target instead of the run's one data file (the agent's plan), so it runs as written.
    ParseUnreadable when `parse` is not an iowatt-jobfile/1 document."""
    glob, jobs = parsed_jobs(parse)
    for _, _, own in jobs:
        options = {**glob, **own}
        if any(k in options for k in MULTI_FILE_OPTIONS):
            return True
        if "directory" in options and "filename" not in options:
            return True
    return False


def block_job(parse: object) -> dict[str, Any]:
    """The engine's JSON job file of a parsed job file, its `filename` and `directory` dropped (the
    run's target replaces them): {"global": {...}, "jobs": [{"name": ..., ...}]}, every value the
    engine's text. ParseUnreadable when `parse` is not an iowatt-jobfile/1 document."""
    glob, jobs = parsed_jobs(parse)
    keep = {k: v for k, v in glob.items() if k not in REPLACED_OPTIONS}
    out = []
    for name, _, options in jobs:
        own = {k: v for k, v in options.items() if k not in REPLACED_OPTIONS and k != "name"}
        out.append({"name": name, **own})
    return {"global": keep, "jobs": out}


def same_jobs(a: object, b: object) -> str | None:
    """Where two parses of one workload differ (the job file's and its JSON form's): None when the
    jobs, their groups and every option read the same; else the first difference, in words."""
    ga, ja = parsed_jobs(a)
    gb, jb = parsed_jobs(b)
    if len(ja) != len(jb):
        return f"{len(ja)} jobs against {len(jb)}"
    for (na, pa, oa), (nb, pb, ob) in zip(ja, jb, strict=True):
        if na != nb or pa != pb:
            return f"job {na!r} (group {pa}) against {nb!r} (group {pb})"
        merged_a = {**{k: v for k, v in ga.items() if k not in REPLACED_OPTIONS}, **oa}
        merged_b = {**{k: v for k, v in gb.items() if k not in REPLACED_OPTIONS}, **ob}
        for k in REPLACED_OPTIONS:
            merged_a.pop(k, None)
            merged_b.pop(k, None)
        if merged_a != merged_b:
            diff = sorted(set(merged_a.items()) ^ set(merged_b.items()))[:3]
            return f"job {na!r}: " + ", ".join(f"{k}={v}" for k, v in diff)
    return None
