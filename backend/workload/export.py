"""Export the built-in presets for the agent's offline `bench --preset` (one source of truth: the
server's definitions). `python -m backend.workload.export > agent/src/iowatt_agent/presets.json`;
a test fails when the exported file drifts from the definitions."""

import json
import sys
from typing import Any

from backend.workload.builtin import BUILTINS


def presets() -> dict[str, Any]:
    return {
        name: {
            "description": description,
            "passes": spec.passes,
            "discard_passes": spec.discard_passes,
            "engine_job": spec.engine_job(),
            "timeout_s": spec.timeout_s(),
        }
        for name, (description, spec) in BUILTINS.items()
    }


if __name__ == "__main__":
    json.dump(presets(), sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")
