"""Which device a target path lives on, from what the agent reports.

Identity (issue 10): a device is its kernel disk as the agent's inventory lists it
(`block_devices[].name`: zram0 and zram1, loop0 and loop1 are distinct disks), keyed by its
`serial_sha256` when the inventory has one, so the same physical disk keeps its device across
runs even if the kernel names it sdc after a reboot. A partition (sda1, nvme0n1p2, loop0p1)
maps to the inventory disk it belongs to; a device target (`/dev/disk/by-id/...`) to the disk
whose serial the host policy reports for it. Keys written before this (`block:<name>`) are
adopted by the serial key on the next run, so older runs and their device stay together.
"""

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

# Partition names when the inventory cannot say (older agents, no block_devices): a disk whose
# name ends in a digit takes "p<n>" (nvme0n1p2, mmcblk0p1, loop0p1); sd/vd/xvd/hd disks take
# "<n>" (sda1). Anything else (zram0, loop3, md0, dm-1, ram0) is a whole disk.
_PARTITION = re.compile(r"^(?P<pdisk>.*\d)p\d+$|^(?P<disk>(?:s|v|xv|h)d[a-z]+)\d+$")


def _names(inv: dict[str, Any]) -> set[str]:
    return {str(d["name"]) for d in inv.get("block_devices") or [] if isinstance(d, dict) and d.get("name")}


def _disk_of(dev_name: str, disks: set[str] | frozenset[str] = frozenset()) -> str:
    """The whole disk a kernel block name belongs to (itself when it is one)."""
    if dev_name in disks:
        return dev_name
    m = _PARTITION.match(dev_name)
    if m:
        parent = m.group("pdisk") or m.group("disk")
        if not disks or parent in disks:
            return str(parent)
    return dev_name


def _policy_disk(inv: dict[str, Any], target_path: str) -> str | None:
    """The inventory disk of a device target, by the serial the host policy reports for it."""
    policy = inv.get("policy") if isinstance(inv.get("policy"), dict) else None
    for t in (policy or {}).get("targets") or []:
        if isinstance(t, dict) and t.get("path") == target_path and t.get("serial_sha256"):
            names = [
                str(dev["name"])
                for dev in inv.get("block_devices") or []
                if isinstance(dev, dict)
                and dev.get("serial_sha256") == t["serial_sha256"]
                and dev.get("name")
            ]
            if len(names) == 1:  # a serial two disks share names neither
                return names[0]
    return None


def _mount_for(path: str, mounts: list[dict[str, Any]]) -> dict[str, Any] | None:
    path = os.path.normpath(path)
    best: dict[str, Any] | None = None
    for m in mounts:
        mp = os.path.normpath(str(m.get("mountpoint", "")))
        inside = path == mp or path.startswith(mp.rstrip("/") + "/")
        if inside and (best is None or len(mp) > len(os.path.normpath(str(best["mountpoint"])))):
            best = m
    return best


def _block_key(inv: dict[str, Any], disk: str, facts: dict[str, Any]) -> str:
    """By serial when it names one disk of this host (USB bridges and some VMs repeat one)."""
    serial = facts.get("serial_sha256")
    if not isinstance(serial, str) or not serial:
        return f"block:{disk}"
    same = [
        d for d in inv.get("block_devices") or [] if isinstance(d, dict) and d.get("serial_sha256") == serial
    ]
    return f"block-serial:{serial}" if len(same) == 1 else f"block:{disk}"


def identify(inventory: dict[str, Any] | None, target_path: str) -> tuple[str, str, str, dict[str, Any]]:
    """(key, name, kind, facts) of the device under target_path."""
    inv = inventory or {}
    disks = _names(inv)
    if target_path.startswith("/dev/") and not target_path.startswith("/dev/shm"):
        name = os.path.basename(target_path)
        disk = _policy_disk(inv, target_path) or _disk_of(name, disks)
        facts = _block_facts(inv, disk)
        return _block_key(inv, disk, facts), name, "block", facts
    mount = _mount_for(target_path, list(inv.get("mounts") or []))
    if mount is None:
        return f"path:{os.path.normpath(target_path)}", target_path, "unknown", {}
    source, fstype = str(mount.get("source", "")), str(mount.get("fstype", ""))
    facts = {"mountpoint": mount.get("mountpoint"), "fstype": fstype, "mount_options": mount.get("options")}
    if source.startswith("/dev/"):
        disk = _disk_of(os.path.basename(source), disks)
        block = _block_facts(inv, disk)
        return _block_key(inv, disk, block), disk, "block", {**block, **facts}
    # RAM and network file systems have no block device: key them by mount point
    kind = (
        "ram"
        if fstype in ("tmpfs", "ramfs")
        else ("network" if fstype in ("nfs", "nfs4", "cifs", "smb3") else fstype or "unknown")
    )
    return f"{fstype}:{mount.get('mountpoint')}", f"{fstype} {mount.get('mountpoint')}", kind, facts


def _block_facts(inv: dict[str, Any], disk: str) -> dict[str, Any]:
    for dev in inv.get("block_devices") or []:
        if isinstance(dev, dict) and dev.get("name") == disk:
            return dict(dev)
    return {"name": disk}


def _adopt_legacy(session: Session, *, agent: Agent, key: str, facts: dict[str, Any]) -> None:
    """Give a device keyed by kernel name (before issue 10) the serial key of the same disk."""
    if not key.startswith("block-serial:"):
        return
    if session.scalars(select(Device.id).where(Device.agent_id == agent.id, Device.key == key)).first():
        return
    legacy = session.scalars(
        select(Device).where(Device.agent_id == agent.id, Device.key == f"block:{facts.get('name')}")
    ).first()
    if legacy is not None and (legacy.facts or {}).get("serial_sha256") == facts.get("serial_sha256"):
        legacy.key = key
        session.flush()


def resolve(session: Session, *, agent: Agent, target_path: str) -> Device:
    key, name, kind, facts = identify(agent.inventory, target_path)
    _adopt_legacy(session, agent=agent, key=key, facts=facts)
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
