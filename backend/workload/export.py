"""Export the built-in presets for the agent's offline `bench --preset` (one source of truth: the
server's definitions). `python -m backend.workload.export > agent/src/iowatt_agent/presets.json`;
a test fails when the exported file drifts from the definitions. File presets' timeouts come from
the engine's facts (--parse-only), so the export needs the built engine (make -C agent/engine)."""

import json
import sys
from typing import Any

from backend.workload.builtin import BUILTINS
from backend.workload.facts import with_facts

# kinds the agent's bench runs with its own presets (`bench --preset tpch --dbms ...`, `bench --preset
# heap-btree`), not from a job file: their server presets are not exported
AGENT_OWN_PRESETS = ("tpch", "heap_btree")


def presets() -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, (description, defined) in BUILTINS.items():
        if defined.kind in AGENT_OWN_PRESETS:
            continue
        spec = with_facts(defined)
        out[name] = {
            "description": description,
            "passes": spec.passes,
            "discard_passes": spec.discard_passes,
            "engine_job": spec.engine_job(),
            "timeout_s": spec.timeout_s(),
        }
        if spec.is_file:  # the engine's bounds as the server computed them (the agent checks its own)
            out[name]["facts"] = spec.facts.model_dump(mode="json") if spec.facts is not None else None
    return out


if __name__ == "__main__":
    json.dump(presets(), sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")
