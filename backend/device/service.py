"""Which device a target path lives on, from the agent's inventory (longest mount prefix)."""

import os
import re
from typing import Any

from sqlalchemy import select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session

from backend.models import Agent, Device

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
    return device
