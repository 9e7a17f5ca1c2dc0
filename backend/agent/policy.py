"""The host's policy as its agent reported it (ADR 0009 §4), read with libs/policy's model."""

from typing import Any

from iowatt_policy import PolicyError, ReportedPolicy
from pydantic import BaseModel

from backend.agent.schemas import Inventory
from backend.errors import Invalid


def _declared(value: Any) -> Any:
    """A part of the inventory as plain JSON: the fields the server declares and the agent set.
    Keys a newer agent added are stored, but libs/policy (which refuses unknown keys) never sees
    them: the agent checks its own policy, this copy only gives the early answer."""
    if isinstance(value, BaseModel):
        fields = type(value).model_fields
        return {k: _declared(getattr(value, k)) for k in value.model_fields_set if k in fields}
    if isinstance(value, list):
        return [_declared(v) for v in value]
    return value


def stored_inventory(inventory: Inventory, prefix: str) -> dict[str, Any]:
    """The inventory to store, its policy checked by the one model of libs/policy (422 naming
    the field otherwise)."""
    if inventory.policy is not None:
        try:
            ReportedPolicy.from_dict(_declared(inventory.policy))
        except PolicyError as exc:
            raise Invalid(f"{prefix}policy.{exc.field}", exc.message) from exc
    return inventory.stored()


def reported_policy(inventory: Inventory | dict[str, Any] | None) -> ReportedPolicy | None:
    """The policy the agent last reported, or None (agents older than ADR 0009 report none)."""
    inv = Inventory.read(inventory) if isinstance(inventory, dict) else inventory
    if inv is None or inv.policy is None:
        return None
    try:
        return ReportedPolicy.from_dict(_declared(inv.policy))
    except PolicyError:  # stored before the server checked it: treat as no policy
        return None
