"""Schemathesis hooks for the long run, loaded by `schemathesis run` through SCHEMATHESIS_HOOKS.

run.py passes team A's ids in IOWATT_FUZZ_IDS (tests/security/fuzzing.py `known_ids`); the hooks
are the short run's (tests/security/test_fuzz.py), from the same module.
"""

import json
import os
from typing import Any

import schemathesis

from tests.security import fuzzing

_IDS: dict[str, dict[str, list[str]]] = json.loads(os.environ.get("IOWATT_FUZZ_IDS", "{}"))


@schemathesis.hook
def flatmap_path_parameters(context: Any, path_parameters: dict[str, Any] | None) -> Any:
    return fuzzing.path_parameters(_IDS, context.operation, path_parameters)


@schemathesis.hook
def flatmap_query(context: Any, query: Any) -> Any:
    return fuzzing.query(_IDS, query)


@schemathesis.hook
def flatmap_body(context: Any, body: Any) -> Any:
    if fuzzing.destructive(context.operation.method, context.operation.path):
        return fuzzing.body({}, body)  # as generated (fuzzing.destructive says why)
    return fuzzing.body(_IDS, body)


@schemathesis.hook
def before_call(context: Any, case: Any, kwargs: dict[str, Any]) -> None:
    fuzzing.swap_in_coverage_case(_IDS, case)
    fuzzing.short_long_polls(case)
