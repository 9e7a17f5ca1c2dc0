"""What the fuzzers know about team A's world: real ids to put where the OpenAPI only says "uuid".

Schemathesis generates a random UUID for every path parameter and body field it cannot know, so
without help nearly every request ends in 403/404/422 before the routes' logic. Here each path
parameter and each id field of a body is, by Hypothesis' choice, either what Schemathesis generated
or the id of one of team A's real objects, so the same run fuzzes authorization edges and the logic
behind them. Destructive operations only get objects nobody else needs (the revoked agent), so the
principals can be fuzzed in any order. Shared by tests/security/test_fuzz.py (short run) and
bench/fuzz/run.py (long run, through bench/fuzz/fuzz_hooks.py).
"""

import random
import zlib
from typing import Any

import hypothesis.strategies as st

from tests.security.world import PASSWORD, World

# parameter or body field -> which of world.ids it may name ("lease:NAME" a lease of world.leases,
# "raw:NAME" a secret of world.raw, "value:TEXT" the text itself)
PATH_IDS: dict[str, list[str]] = {
    "agent_id": ["agent_x", "agent_y", "agent_revoked"],
    "device_id": ["device"],
    "environment_id": ["environment"],
    "workload_id": ["workload"],
    "run_id": ["run_done", "run_running", "run_assigned"],
    "campaign_id": ["campaign"],
    "token_id": ["member_token", "enrollment_token"],
}
SACRIFICIAL: dict[str, list[str]] = {
    "agent_id": ["agent_revoked"],
    # the deletions of issue 13 (V4): no real object is sacrificed (the world's run, campaign,
    # device, environment, workload and team serve every other operation); tests/backend/
    # test_deletion.py and the authorization matrix (rolled back) exercise their logic
    "run_id": [],
    "campaign_id": [],
    "device_id": [],
    "environment_id": [],
    "workload_id": [],
    "team_id": [],
}
BODY_IDS: dict[str, list[str]] = {
    "team_id": ["team"],
    "agent_id": ["agent_x", "agent_y"],
    "workload_id": ["workload"],
    "environment_id": ["environment"],
    "current_run_id": ["run_running", "run_assigned"],
    "lease_id": ["lease:run_running", "lease:run_assigned"],
    "enrollment_token": ["raw:enrollment_token"],
    # not ids, but values the routes' logic needs to go further than a 422
    "target_path": ["value:/srv/bench", "value:/dev/shm"],
    "meter": ["value:plug", "value:"],
    # a login that can succeed (the member's credentials)
    "email": ["email:member"],
    "password": [f"value:{PASSWORD}"],
}
QUERY_IDS: dict[str, list[str]] = {
    "runs": ["run_done"],
    "baseline": ["run_done"],
    "job": ["value:job0"],
    "agent_id": ["agent_x", "agent_y"],
    "device_id": ["device"],
    "environment_id": ["environment"],
    "workload_id": ["workload"],
    "campaign_id": ["campaign"],
}


def known_ids(w: World) -> dict[str, dict[str, list[str]]]:
    """JSON-able: {"path": {param: ids}, "sacrificial": {...}, "body": {field: ids}, "query": {...}}."""

    def one(name: str) -> str:
        if ":" not in name:
            return w.ids[name]
        kind, _, key = name.partition(":")
        return {"lease": w.leases, "raw": w.raw, "email": w.email, "value": {key: key}}[kind][key]

    def resolve(names: list[str]) -> list[str]:
        return [one(n) for n in names]

    return {
        "path": {k: resolve(v) for k, v in PATH_IDS.items()},
        "sacrificial": {k: resolve(v) for k, v in SACRIFICIAL.items()},
        "body": {k: resolve(v) for k, v in BODY_IDS.items()},
        "query": {k: resolve(v) for k, v in QUERY_IDS.items()},
    }


def destructive(method: str, path: str) -> bool:
    """Operations that destroy what they name. Their bodies keep what was generated: a real password
    would let DELETE /auth/me delete the member the other operations are fuzzed as."""
    return method.upper() == "DELETE" or path.endswith("/revoke")


def path_parameters(ids: dict[str, dict[str, list[str]]], op: Any, params: dict[str, Any] | None) -> Any:
    """Strategy for the flatmap_path_parameters hook."""
    if not params or not ids:
        return st.just(params)
    real = ids["sacrificial"] if op is not None and destructive(op.method, op.path) else ids["path"]
    # real ids first: a derandomized short run draws its first example from the front, so each
    # operation's first case reaches past "not found" into its logic; the generated value (a random
    # UUID or a malformed one) comes in the later cases
    return st.fixed_dictionaries(
        {
            name: st.sampled_from([*real.get(name, ids["path"].get(name, [])), value])
            for name, value in params.items()
        }
    )


def _swap(value: Any, ids: dict[str, list[str]], rng: random.Random) -> Any:
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            choices = ids.get(k)
            if choices and isinstance(v, str) and rng.random() < 0.75:
                out[k] = rng.choice(choices)
            else:
                out[k] = _swap(v, ids, rng)
        return out
    if isinstance(value, list):
        return [_swap(v, ids, rng) for v in value]
    return value


def body(ids: dict[str, dict[str, list[str]]], generated: Any) -> Any:
    """Strategy for the flatmap_body hook: id fields (at any depth) become real ids 3 times in 4."""
    if not ids or not isinstance(generated, dict | list):
        return st.just(generated)
    return st.integers(min_value=0, max_value=2**32 - 1).map(
        lambda seed: _swap(generated, ids["body"], random.Random(seed))
    )


def query(ids: dict[str, dict[str, list[str]]], generated: Any) -> Any:
    """Strategy for the flatmap_query hook: known query parameters become real ids 3 times in 4."""
    if not ids or not isinstance(generated, dict) or not generated:
        return st.just(generated)
    return st.integers(min_value=0, max_value=2**32 - 1).map(
        lambda seed: _swap(generated, ids["query"], random.Random(seed))
    )


def swap_in_coverage_case(ids: dict[str, dict[str, list[str]]], case: Any) -> None:
    """For a before_call hook: the coverage phase builds its cases without the flatmap hooks, so
    swap real ids into them here (deterministically: the choice is seeded by the case itself).
    Stateful cases keep the ids their links carry; fuzzing cases went through the hooks above."""
    meta = getattr(case, "meta", None)
    if not ids or meta is None or str(meta.phase.name) != "coverage":
        return
    rng = random.Random(zlib.crc32(repr((case.method, case.path, case.path_parameters, case.body)).encode()))
    if isinstance(case.body, dict | list) and not destructive(case.method, case.path):
        case.body = _swap(case.body, ids["body"], rng)
    if isinstance(case.query, dict) and case.query:
        case.query = _swap(case.query, ids["query"], rng)
    if case.path_parameters:
        real = ids["sacrificial"] if destructive(case.method, case.path) else ids["path"]
        for name, value in list(case.path_parameters.items()):
            choices = real.get(name, ids["path"].get(name, []))
            if choices and isinstance(value, str) and rng.random() < 0.75:
                case.path_parameters[name] = rng.choice(choices)


def short_long_polls(case: Any) -> None:
    """For a before_call hook: the lease long-poll waits up to wait_s (default 25 s) when there is no
    work, which would make a fuzz run mostly sleep; valid waits become 0.1 s (a missing one 0).
    How the long-poll behaves under load is bench/longpoll's subject, not the fuzzer's."""
    if case.method.upper() != "POST" or not case.path.endswith("/lease"):
        return
    query = dict(case.query or {})
    value = query.get("wait_s")
    if value is None:
        query["wait_s"] = 0
    else:
        try:
            number = float(value)
        except (TypeError, ValueError):
            return
        if 0 < number <= 300:  # the route's bound (the server waits up to IOWATT_LONGPOLL_MAX_WAIT_S)
            query["wait_s"] = 0.1
    case.query = query
