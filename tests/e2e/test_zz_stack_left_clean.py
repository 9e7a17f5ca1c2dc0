"""The shared stack after its group's tests (tests/conftest.py moves these after every other test;
xdist runs a group in that order in one process): as it was when its agent came online. Each
test's `live` handle puts back what the test changed; a test that changes the stack some other way
(the session's `shared_stack` itself, a kind of state the handle does not know) fails here."""

import os
import tempfile

import pytest

from tests.stack import STACK_GROUPS, Stack, State
from tests.waiting import wait_until

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("group", [pytest.param(g, marks=pytest.mark.xdist_group(g)) for g in STACK_GROUPS])
@pytest.mark.after_stack_tests
def test_the_shared_stack_is_as_it_started(shared_stack: Stack, group: str) -> None:
    assert shared_stack.initial is not None
    assert shared_stack.differences(shared_stack.initial) == []
    # the symptom of the leak this guards against: a meter left behind becomes the host's default,
    # and every later run waits 2 × 30 s of idle baseline
    assert shared_stack.initial.policy is not None
    assert (
        shared_stack.initial.policy["meters"] == [] and shared_stack.initial.policy["default_meter"] is None
    )


@pytest.mark.xdist_group(STACK_GROUPS[0])
def test_what_a_test_leaves_behind_is_found_and_put_back(shared_stack: Stack) -> None:
    """The check above can fail: a meter, a target, DBMS consent and an environment left on the
    stack are all differences, and restore() puts each back."""
    s = shared_stack
    before = s.state()
    target = tempfile.mkdtemp(prefix="iowatt-left-", dir="/dev/shm")
    try:
        _leave_and_restore(s, before, target)
    finally:
        os.rmdir(target)  # empty: only allowed, never written (each run left one behind before)


def _leave_and_restore(s: Stack, before: State, target: str) -> None:
    state = str(s.workdir / "agent-state")
    s.allow(target)
    s.agent_cli("meters", "set", "left-behind", "estimate:5,9.5")
    s.agent_cli("targets", "allow-dbms", "mariadb")
    with s.api() as api:
        team = api.get("/auth/me").json()["teams"][0]["id"]
        r = api.post("/environments", json={"team_id": team, "name": "left behind", "kind": "local"})
        assert r.status_code == 201, r.text

    def seen() -> list[str]:
        found = s.differences(before)
        policy = "\n".join(found)
        return found if "left-behind" in policy and "mariadb" in policy else []

    found = wait_until(seen, timeout=30, interval=0.3, message="the server gets the changed policy")
    text = "\n".join(found)
    assert f"{state}/policy.json: changed" in text and f"{state}/meters.json" in text
    assert "environments added" in text
    assert s.restore(before)
    assert s.differences(before) == []
