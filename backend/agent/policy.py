"""The host's policy as its agent reported it (ADR 0009 §4), read with libs/policy's model."""

from typing import Any

from iowatt_policy import PolicyError, ReportedPolicy

from backend.agent.schemas import Inventory
from backend.errors import Invalid


def stored_inventory(inventory: Inventory, prefix: str) -> dict[str, Any]:
    """The inventory to store, its policy checked by the one model of libs/policy (422 naming
    the field otherwise)."""
    stored = inventory.stored()
    if isinstance(stored.get("policy"), dict):
        try:
            ReportedPolicy.from_dict(stored["policy"])
        except PolicyError as exc:
            raise Invalid(f"{prefix}policy.{exc.field}", exc.message) from exc
    return stored


def reported_policy(inventory: dict[str, Any] | None) -> ReportedPolicy | None:
    """The policy the agent last reported, or None (agents older than ADR 0009 report none)."""
    raw = (inventory or {}).get("policy")
    if not isinstance(raw, dict):
        return None
    try:
        return ReportedPolicy.from_dict(raw)
    except PolicyError:  # stored before the server checked it: treat as no policy
        return None
