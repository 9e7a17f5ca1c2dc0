"""One list of workload kinds (libs/workload's WORKLOAD_KINDS, vectors kinds.json; ADR 0027) and
every tier's registry of them: the server's `backend/workload/kinds`, the agent's
`iowatt_agent.kinds` and libs/policy's lease job modes list exactly those kinds, each once, with
the same lease job mode. frontend/src/lib/workload.kinds.test.ts holds the OpenAPI and the UI to
the same vectors."""

from __future__ import annotations

import json
import typing
from pathlib import Path
from typing import Any

from iowatt_workload import KIND_MODES, WORKLOAD_KINDS, kind_of_mode

VECTORS: dict[str, Any] = json.loads(
    (Path(__file__).resolve().parents[2] / "libs" / "workload" / "testdata" / "kinds.json").read_text()
)
KINDS = [entry["kind"] for entry in VECTORS["kinds"]]
MODES = {entry["kind"]: entry["mode"] for entry in VECTORS["kinds"]}


def test_the_library_holds_the_vectors_kinds_each_once() -> None:
    assert len(set(KINDS)) == len(KINDS) == 8
    assert list(WORKLOAD_KINDS) == KINDS
    assert KIND_MODES == MODES
    modes = [m for m in MODES.values()]
    assert len(set(modes)) == len(modes)  # a lease job's mode names one kind
    for kind, mode in MODES.items():
        assert kind_of_mode(mode) == kind
    assert kind_of_mode("fio") is None


def test_the_server_registers_every_kind_once_with_its_mode() -> None:
    from backend.workload.kinds import KINDS as SERVER
    from backend.workload.kinds import PARAMETER_KINDS
    from backend.workload.schemas import WorkloadSpec

    assert list(SERVER) == KINDS
    assert [k.name for k in SERVER.values()] == KINDS  # each class under its own name
    assert len({type(k) for k in SERVER.values()}) == len(KINDS)
    assert {name: k.mode for name, k in SERVER.items()} == MODES
    # the wire's kind field and a parameters field per kind that has parameters
    assert list(typing.get_args(WorkloadSpec.model_fields["kind"].annotation)) == KINDS
    assert [name for name in KINDS if name in WorkloadSpec.model_fields] == list(PARAMETER_KINDS)
    assert [name for name, k in SERVER.items() if k.parameters_model is None] == ["block"]


def test_the_agent_registers_every_kind_once_with_its_mode() -> None:
    from iowatt_agent.kinds import RUNNERS, runner_for_job, runner_for_mode

    assert list(RUNNERS) == KINDS
    assert [r.kind for r in RUNNERS.values()] == KINDS
    assert len({type(r) for r in RUNNERS.values()}) == len(KINDS)
    assert {name: r.mode for name, r in RUNNERS.items()} == MODES
    for name, runner in RUNNERS.items():
        assert runner_for_mode(MODES[name]) is runner
    assert runner_for_job({"global": {}, "jobs": []}) is RUNNERS["block"]
    assert runner_for_mode("fio") is None


def test_libs_policy_allows_the_lease_modes_of_every_kind_and_no_other() -> None:
    from iowatt_policy import FILE_JOB_KEYS, JOB_MODES
    from iowatt_policy.modes import MODES as POLICY

    modes = sorted(m for m in MODES.values() if m is not None)
    assert sorted(JOB_MODES) == sorted(POLICY) == modes
    assert sorted(FILE_JOB_KEYS) == modes
    assert {rules.kind: mode for mode, rules in POLICY.items()} == {k: m for k, m in MODES.items() if m}
    # the fields a job's violations name are its kind's parameters on the server's WorkloadSpec
    for rules in POLICY.values():
        fields = [f for f, _ in rules.keys.values()] + list(rules.limit_fields)
        assert all(f.split(".")[1] == rules.kind for f in fields), rules.mode


def test_the_server_and_the_agent_agree_on_each_kinds_sizing_and_place() -> None:
    """The kinds the server scales (not shortens) are the ones the agent runs in a run directory of
    a directory target: every kind but block and the fio job file (ADR 0029), which both run on
    any target as a block job file; a job file is neither shortened nor scaled. A SNIA PTS run is
    scaled and runs block jobs on a raw device only, by the agent's child (ADR 0046)."""
    from iowatt_agent.kinds import RUNNERS
    from iowatt_policy.modes import MODES as POLICY

    from backend.workload.kinds import KINDS as SERVER

    for name in KINDS:
        server, agent = SERVER[name], RUNNERS[name]
        if name == "pts":  # block jobs made by the agent's child on a raw device (ADR 0046)
            assert server.family == "block" and server.sizing == "scale" and server.targets == ("device",)
            assert agent.mode == "pts" and not agent.block_job and not agent.runs_engine
            assert not POLICY["pts"].block and not POLICY["pts"].engine
            continue
        block_file = server.family == "block"  # planned as the engine's block job file
        assert block_file == (name in ("block", "jobfile")) == (agent.mode is None or agent.block_job)
        assert server.is_file == (agent.mode is not None) == (server.parameters_model is not None)
        assert (server.sizing == "scale") == (server.is_file and not block_file)
        assert (server.sizing == "none") == (server.is_file and block_file)
        assert (server.targets == ("directory",)) == (not block_file)
        if agent.mode is not None:
            assert POLICY[agent.mode].block == block_file
