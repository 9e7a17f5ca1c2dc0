"""libs/policy's reading of the engine's parse of a fio job file (ADR 0029): any document is read
or refused with ParseUnreadable (never another exception), the block job made of it never carries
the job file's filename or directory, and a parse read back the same is the same."""

from __future__ import annotations

import contextlib
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from iowatt_policy import (
    JOBFILE_SCHEMA,
    REPLACED_OPTIONS,
    ParseUnreadable,
    block_job,
    parsed_jobs,
    replaced_options,
    same_jobs,
)

names = st.sampled_from(["rw", "bs", "size", "filename", "directory", "numjobs", "name", "x"])
texts = st.text(max_size=20)
options = st.dictionaries(names, texts, max_size=6)
jobs = st.lists(
    st.fixed_dictionaries(
        {"name": st.text(min_size=1, max_size=10), "group": st.integers(0, 5), "options": options}
    ),
    min_size=1,
    max_size=5,
)
documents = st.fixed_dictionaries(
    {"schema": st.just(JOBFILE_SCHEMA), "global": options, "jobs": jobs, "refused": st.just([])}
)
anything = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)


@given(documents)
@settings(max_examples=200, deadline=None)
def test_a_parse_becomes_a_block_job_without_the_job_files_paths(doc: dict[str, Any]) -> None:
    job = block_job(doc)
    assert [j["name"] for j in job["jobs"]] == [j["name"] for j in doc["jobs"]]
    for section in (job["global"], *job["jobs"]):
        assert not set(section) & set(REPLACED_OPTIONS)
    assert same_jobs(doc, doc) is None
    glob = doc["global"]
    assert len(replaced_options(doc)) == sum(k in glob for k in REPLACED_OPTIONS) + sum(
        k in j["options"] and j["options"][k] != glob.get(k) for j in doc["jobs"] for k in REPLACED_OPTIONS
    )


@given(anything | documents.map(lambda d: {**d, "jobs": d["jobs"] + [42]}))
@settings(max_examples=300, deadline=None)
def test_any_other_document_is_unreadable_never_an_error(doc: object) -> None:
    with contextlib.suppress(ParseUnreadable):
        parsed_jobs(doc)


def test_what_makes_a_parse_unreadable() -> None:
    good = {"schema": JOBFILE_SCHEMA, "global": {}, "jobs": [{"name": "a", "group": 0, "options": {}}]}
    assert parsed_jobs(good) == ({}, [("a", 0, {})])
    for bad in (
        {**good, "schema": "iowatt-jobfile/2"},
        {**good, "jobs": []},
        {**good, "refused": ["verify_async: not supported"]},
        {**good, "jobs": [{"name": "a", "group": -1, "options": {}}]},
        {**good, "jobs": [{"name": "a", "group": True, "options": {}}]},
        {**good, "global": {"bs": 4096}},
        {**good, "jobs": [{"name": "", "group": 0, "options": {}}]},
    ):
        with pytest.raises(ParseUnreadable):
            parsed_jobs(bad)
    other = {**good, "jobs": [{"name": "a", "group": 1, "options": {}}]}
    assert same_jobs(good, other) == "job 'a' (group 0) against 'a' (group 1)"
    moved = {**good, "global": {"bs": "8k"}}
    assert same_jobs(good, moved) == "job 'a': bs=8k"
    # the target's replacements differ freely: they are dropped on both sides
    assert same_jobs(good, {**good, "global": {"filename": "/dev/sdz"}}) is None


def test_check_run_judges_a_job_files_parse_as_its_block_job() -> None:
    from iowatt_policy import Limits, Policy, ReportedPolicy, Target, check_run

    target = Target.directory("/srv/bench")
    policy = Policy(targets=(target,), limits=Limits(max_threads=4))
    reported = ReportedPolicy.from_policy(
        policy, meters=[], default_meter=None, targets=[target], mem_total_bytes=8 << 30
    )
    lease = {"mode": "jobfile", "text": "[a]\n"}

    def parse(**options: str) -> dict[str, Any]:
        opts = {"rw": "read", "size": "1m", **options}
        return {"schema": JOBFILE_SCHEMA, "global": {}, "jobs": [{"name": "a", "group": 0, "options": opts}]}

    def rules(**options: str) -> list[str]:
        found = check_run(
            reported, target_path="/srv/bench", engine_job=lease, meter=None, destructive=False,
            file_facts=parse(**options),
        )  # fmt: skip
        assert all(v.field == "workload.jobfile.text" for v in found)
        return [v.rule for v in found]

    assert rules() == []
    assert rules(description="a storage engineer's words", filename="/dev/sda", directory="/mnt") == []
    assert rules(numjobs="5") == ["limit.threads"]
    assert rules(write_bw_log="/etc/cron.d/x") == ["option.not_allowed"]
    assert rules(beneath="/") == ["option.not_allowed"]
    unreadable = check_run(
        reported, target_path="/srv/bench", engine_job=lease, meter=None, destructive=False,
        file_facts={"schema": "something else"},
    )  # fmt: skip
    assert [v.rule for v in unreadable] == ["option.not_allowed"] and "cannot be checked" in unreadable[
        0
    ].message
    # without a parse (a caller that has none): the target and the meter only, never the text's options
    assert (
        check_run(reported, target_path="/srv/bench", engine_job=lease, meter=None, destructive=False) == []
    )
    assert [v.rule for v in check_run(
        reported, target_path="/etc", engine_job=lease, meter=None, destructive=False
    )] == ["target.not_allowed"]  # fmt: skip
    too_big = {"mode": "jobfile", "text": "#" * (64 * 1024 + 1)}
    assert [v.rule for v in check_run(
        reported, target_path="/srv/bench", engine_job=too_big, meter=None, destructive=False
    )] == ["option.not_allowed"]  # fmt: skip
