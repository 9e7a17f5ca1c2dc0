"""Which device a target path lives on, from the agent's inventory (longest mount prefix)."""

import os
import re
import uuid
from typing import Any

from sqlalchemy import select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session

from backend.auth.principal import UserPrincipal
from backend.device.schemas import DeviceUpdate
from backend.errors import Invalid, NotFound
from backend.jobs import enqueue
from backend.models import Agent, Device, Role

_PARTITION = re.compile(r"^(?P<disk>(?:nvme\d+n\d+|mmcblk\d+))p\d+$|^(?P<sd>[a-z]+)\d+$")


def _disk_of(dev_name: str) -> str:
    m = _PARTITION.match(dev_name)
    if m:
        return m.group("disk") or m.group("sd")
    return dev_name


def _mount_for(path: str, mounts: list[dict[str, Any]]) -> dict[str, Any] | None:
    path = os.path.normpath(path)
    best: dict[str, Any] | None = None
    for m in mounts:
        mp = os.path.normpath(str(m.get("mountpoint", "")))
        inside = path == mp or path.startswith(mp.rstrip("/") + "/")
        if inside and (best is None or len(mp) > len(os.path.normpath(str(best["mountpoint"])))):
            best = m
    return best


def identify(inventory: dict[str, Any] | None, target_path: str) -> tuple[str, str, str, dict[str, Any]]:
    """(key, name, kind, facts) of the device under target_path."""
    inv = inventory or {}
    if target_path.startswith("/dev/") and not target_path.startswith("/dev/shm"):
        name = os.path.basename(target_path)
        return f"block:{_disk_of(name)}", name, "block", _block_facts(inv, _disk_of(name))
    mount = _mount_for(target_path, list(inv.get("mounts") or []))
    if mount is None:
        return f"path:{os.path.normpath(target_path)}", target_path, "unknown", {}
    source, fstype = str(mount.get("source", "")), str(mount.get("fstype", ""))
    facts = {"mountpoint": mount.get("mountpoint"), "fstype": fstype, "mount_options": mount.get("options")}
    if source.startswith("/dev/"):
        disk = _disk_of(os.path.basename(source))
        return f"block:{disk}", disk, "block", {**_block_facts(inv, disk), **facts}
    # RAM and network file systems have no block device: key them by mount point
    kind = (
        "ram"
        if fstype in ("tmpfs", "ramfs")
        else ("network" if fstype in ("nfs", "nfs4", "cifs", "smb3") else fstype or "unknown")
    )
    return f"{fstype}:{mount.get('mountpoint')}", f"{fstype} {mount.get('mountpoint')}", kind, facts


def _block_facts(inv: dict[str, Any], disk: str) -> dict[str, Any]:
    for dev in inv.get("block_devices") or []:
        if dev.get("name") == disk:
            return dict(dev)
    return {"name": disk}


def resolve(session: Session, *, agent: Agent, target_path: str) -> Device:
    key, name, kind, facts = identify(agent.inventory, target_path)
    # INSERT .. ON CONFLICT so two runs created at once for a new device cannot collide
    session.execute(
        insert(Device)
        .values(team_id=agent.team_id, agent_id=agent.id, key=key, name=name, kind=kind, facts=facts)
        .on_conflict_do_nothing(index_elements=["agent_id", "key"])
    )
    device = session.scalars(select(Device).where(Device.agent_id == agent.id, Device.key == key)).one()
    if facts and device.facts != facts:
        device.facts = facts
    if device.media is None:
        device.media = media_of(kind, facts)
    if device.capacity_bytes is None and isinstance(facts.get("size_bytes"), int):
        device.capacity_bytes = facts["size_bytes"]
    return device


def media_of(kind: str, facts: dict[str, Any]) -> str:
    """hdd | ssd | ram | unknown, for the embodied-carbon default (the team can correct it)."""
    if kind == "ram" or facts.get("interface") in ("ram", "zram"):
        return "ram"
    rotational = facts.get("rotational")
    if rotational is True or rotational == 1:
        return "hdd"
    if rotational is False or rotational == 0:
        return "ssd"
    return "unknown"


def update(session: Session, *, principal: UserPrincipal, device_id: uuid.UUID, body: DeviceUpdate) -> Device:
    device = session.get(Device, device_id)
    if device is None or device.team_id not in principal.team_ids:
        raise NotFound("device not found")
    principal.require(device.team_id, Role.member)
    for field, value in body.model_dump(exclude_unset=True).items():
        if field in ("name", "media", "lifetime_years") and value is None:
            raise Invalid(field, "cannot be null")
        setattr(device, field, value)
    session.flush()
    enqueue(session, "energy.recompute_device", device_id=str(device.id))
    return device
