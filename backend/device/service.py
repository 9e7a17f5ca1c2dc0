"""Which device a run measures, from what the agent and the engine report.

Identity: a device is its kernel disk as the agent's inventory lists it
(`block_devices[].name`: zram0 and zram1, loop0 and loop1 are distinct disks), keyed by its
`serial_sha256` when the inventory has one, so the same physical disk keeps its device across
runs even if the kernel names it sdc after a reboot. A partition (sda1, nvme0n1p2, loop0p1)
maps to the inventory disk it belongs to; a device target (`/dev/disk/by-id/...`) to the disk
whose serial the host policy reports for it; a device-mapper device (LVM, LUKS, multipath:
`/dev/mapper/NAME`, dm-N, or a file system on one) to its mapper name, with the disks beneath it
in its facts; a file to the device holding its file system.

At run creation only the path is known; when the result arrives, the engine's own facts about
what it opened (`iowatt.target`: the kernel device from the file's st_dev / the device's st_rdev,
its whole disk, model, size; the file system) decide, and a run whose path guessed wrong moves to
the right device (a guessed device left without runs is removed). A disk with a serial is one
device across the agents of a team on bare-metal hosts (virtual disks repeat serials). Keys
written before this (`block:<name>`) are adopted by the serial key on the next run, so older runs
and their device stay together; a run keeps the device it was stored with.
"""

import hashlib
import os
import re
import uuid
from typing import Any, NamedTuple

from sqlalchemy import select
from sqlalchemy import update as sql_update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session

from backend.agent.schemas import Inventory
from backend.audit import service as audit
from backend.auth.principal import UserPrincipal
from backend.device import repository
from backend.device.schemas import DeviceUpdate, OpenedTarget
from backend.errors import Conflict, Invalid, NotFound
from backend.jobs import enqueue
from backend.models import ACTIVE_STATUSES, Agent, Device, Role, Run, RunTarget
from backend.run import deletion as run_deletion

# Partition names when the inventory cannot say (older agents, no block_devices): a disk whose
# name ends in a digit takes "p<n>" (nvme0n1p2, mmcblk0p1, loop0p1); sd/vd/xvd/hd disks take
# "<n>" (sda1). Anything else (zram0, loop3, md0, dm-1, ram0) is a whole disk.
_PARTITION = re.compile(r"^(?P<pdisk>.*\d)p\d+$|^(?P<disk>(?:s|v|xv|h)d[a-z]+)\d+$")
_MAPPER = "/dev/mapper/"
_SLAVE_FACTS = ("name", "model", "serial_sha256", "size_bytes", "rotational", "interface")


class Identity(NamedTuple):
    key: str
    name: str
    kind: str
    facts: dict[str, Any]


class _Host:
    """The inventory, indexed for identification."""

    def __init__(self, inventory: Inventory | dict[str, Any] | None) -> None:
        inv = Inventory.read(inventory) if isinstance(inventory, dict) else inventory
        self.inv = inv or Inventory()
        self.disks = {d.name: d for d in self.inv.block_devices}
        self.by_dm_name = {d.dm_name: d.name for d in self.inv.block_devices if d.dm_name}

    def facts(self, disk: str) -> dict[str, Any]:
        dev = self.disks.get(disk)
        return dev.model_dump(mode="json", exclude_unset=True) if dev is not None else {"name": disk}

    def serial_names(self, serial: str) -> list[str]:
        return [d.name for d in self.inv.block_devices if d.serial_sha256 == serial]

    def disk_of(self, dev_name: str) -> str:
        """The whole disk a kernel block name belongs to (itself when it is one)."""
        if dev_name in self.disks:
            return dev_name
        m = _PARTITION.match(dev_name)
        if m:
            parent = m.group("pdisk") or m.group("disk")
            if not self.disks or parent in self.disks:
                return str(parent)
        return dev_name

    def policy_disk(self, target_path: str) -> str | None:
        """The inventory disk of a device target, by the serial the host policy reports for it."""
        for t in self.inv.policy.targets if self.inv.policy else []:
            if t.path == target_path and t.serial_sha256:
                names = self.serial_names(t.serial_sha256)
                if len(names) == 1:  # a serial two disks share names neither
                    return names[0]
        return None

    def mount_for(self, path: str) -> tuple[str, str, str, str] | None:
        """(mountpoint, source, fstype, options) of the longest mount point holding path."""
        path = os.path.normpath(path)
        best = None
        for m in self.inv.mounts:
            mp = os.path.normpath(m.mountpoint)
            inside = path == mp or path.startswith(mp.rstrip("/") + "/")
            if inside and (best is None or len(mp) > len(os.path.normpath(best.mountpoint))):
                best = m
        return (best.mountpoint, best.source, best.fstype, best.options) if best else None


def _block(host: _Host, disk: str, name: str, fallback: dict[str, Any] | None = None) -> Identity:
    """A whole disk: by serial when it names one disk of this host (USB bridges and some VMs
    repeat one), else by kernel name."""
    facts = host.facts(disk) if disk in host.disks or not fallback else fallback
    serial = facts.get("serial_sha256")
    if isinstance(serial, str) and serial and len(host.serial_names(serial)) == 1:
        return Identity(f"block-serial:{serial}", name, "block", facts)
    return Identity(f"block:{disk}", name, "block", facts)


def _mapped(host: _Host, mapper: str, kernel: str | None) -> Identity:
    """A device-mapper device by its mapper name (dm-N numbers change across reboots), the disks
    beneath it in its facts; rotational when the inventory says all of them agree."""
    dev = host.disks.get(kernel) if kernel else None
    facts = {**(dev.model_dump(mode="json", exclude_unset=True) if dev else {}), "dm_name": mapper}
    facts.setdefault("name", kernel or mapper)
    under = [host.disks[s] for s in (dev.slaves if dev else []) if s in host.disks]
    if under:
        facts["slaves"] = [{k: getattr(d, k) for k in _SLAVE_FACTS} for d in under]
        rot = {d.rotational for d in under}
        if len(rot) == 1 and None not in rot:
            facts["rotational"] = rot.pop()
    return Identity(f"block:{mapper}", mapper, "block", facts)


def _by_source(host: _Host, source: str, name: str | None = None) -> Identity:
    """The device of a kernel block path (a /dev/... target or a mount's source)."""
    base = os.path.basename(source)
    if source.startswith(_MAPPER):
        return _mapped(host, base, host.by_dm_name.get(base))
    if base.startswith("dm-"):
        mapper = host.disks[base].dm_name if base in host.disks else None
        if mapper:
            return _mapped(host, mapper, base)
    disk = host.disk_of(base)
    return _block(host, disk, name or disk)


def _mount_identity(host: _Host, mountpoint: str, source: str, fstype: str, options: str | None) -> Identity:
    fs = {"mountpoint": mountpoint, "fstype": fstype, "mount_options": options}
    if source.startswith("/dev/"):
        key, name, kind, facts = _by_source(host, source)
        return Identity(key, name, kind, {**facts, **fs})
    # RAM and network file systems have no block device: key them by mount point
    kind = (
        "ram"
        if fstype in ("tmpfs", "ramfs")
        else ("network" if fstype in ("nfs", "nfs4", "cifs", "smb3") else fstype or "unknown")
    )
    return Identity(f"{fstype}:{mountpoint}", f"{fstype} {mountpoint}", kind, fs)


def _from_engine(host: _Host, target_path: str, opened: OpenedTarget) -> Identity | None:
    dev, fs = opened.device, opened.fs
    fs_facts: dict[str, Any] = {}
    if fs is not None:
        # the mount options as the inventory lists them (/proc/mounts), so a device's facts read
        # the same whichever side named it (the engine reads mountinfo, super options appended)
        listed = host.mount_for(fs.mount_point)
        options = listed[3] if listed is not None and listed[0] == fs.mount_point else fs.mount_options
        fs_facts = {"mountpoint": fs.mount_point, "fstype": fs.type, "mount_options": options}
    if dev is not None:
        if dev.disk.startswith("dm-"):
            mapper = host.disks[dev.disk].dm_name if dev.disk in host.disks else None
            for path in (fs.source if fs else "", target_path):
                if not mapper and path.startswith(_MAPPER):
                    mapper = os.path.basename(path)
            if mapper:
                key, name, kind, facts = _mapped(host, mapper, dev.disk)
                return Identity(key, name, kind, {**facts, **fs_facts})
        engine_facts = {
            "name": dev.disk,
            "model": dev.model,
            "size_bytes": dev.disk_size_bytes,
            "rotational": bool(dev.rotational) if dev.rotational is not None else None,
            "scheduler": dev.scheduler,
            "logical_block_bytes": dev.logical_block_size,
            "physical_block_bytes": dev.physical_block_size,
        }
        key, name, kind, facts = _block(host, dev.disk, dev.disk, engine_facts)
        return Identity(key, name, kind, {**facts, **fs_facts})
    if fs is not None:  # no block device under the file's st_dev: tmpfs, NFS, btrfs, overlay
        return _mount_identity(host, fs.mount_point, fs.source, fs.type, fs_facts["mount_options"])
    return None


def identify(
    inventory: Inventory | dict[str, Any] | None, target_path: str, opened: OpenedTarget | None = None
) -> Identity:
    """(key, name, kind, facts) of the device under target_path: from what the engine opened
    when it says, else from the path and the inventory."""
    host = _Host(inventory)
    if opened is not None:
        found = _from_engine(host, target_path, opened)
        if found is not None:
            return found
    if target_path.startswith("/dev/") and not target_path.startswith("/dev/shm"):
        name = os.path.basename(target_path)
        disk = host.policy_disk(target_path)
        if disk is not None:
            return _block(host, disk, name)
        return _by_source(host, target_path, name)
    mount = host.mount_for(target_path)
    if mount is None:
        return Identity(f"path:{os.path.normpath(target_path)}", target_path, "unknown", {})
    return _mount_identity(host, *mount)


def _adopt_legacy(session: Session, *, agent: Agent, key: str, facts: dict[str, Any]) -> None:
    """Give a device keyed by kernel name (as devices were keyed before serial-number identity) the
    serial key of the same disk."""
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


def _seen_by_another_agent(session: Session, *, agent: Agent, ident: Identity) -> Device | None:
    """The team's device of this serial on another agent: the same disk moved, shared (SAN) or
    seen again after a re-enrolment. Only between bare-metal hosts, and with the same model and
    size: virtual disks and cloned images repeat serials."""
    if not ident.key.startswith("block-serial:") or _Host(agent.inventory).inv.virtualization != "none":
        return None
    if session.scalars(select(Device.id).where(Device.agent_id == agent.id, Device.key == ident.key)).first():
        return None
    rows = session.execute(
        select(Device, Agent.inventory)
        .join(Agent, Agent.id == Device.agent_id)
        .where(Device.team_id == agent.team_id, Device.key == ident.key, Device.agent_id != agent.id)
        .order_by(Device.created_at)
    )
    for device, inventory in rows:
        other = _Host(inventory).inv.virtualization
        same = all((device.facts or {}).get(k) == ident.facts.get(k) for k in ("model", "size_bytes"))
        if other == "none" and same:
            found: Device = device
            return found
    return None


def _stored_or_made(session: Session, *, agent: Agent, ident: Identity) -> Device:
    """The agent's device of this key: read (the usual case: a disk the agent ran on before), else
    made. INSERT .. ON CONFLICT so two runs created at once for a new device cannot collide, with
    RETURNING: the row made, or none when another transaction made it meanwhile (then read again).
    A new device's media and capacity go in with it (set after, they were an UPDATE of the new
    row). It was an INSERT .. ON CONFLICT DO NOTHING and then a SELECT for every run created and
    every upload; now one SELECT for a known device, a SELECT and the INSERT for a new one."""
    mine = select(Device).where(Device.agent_id == agent.id, Device.key == ident.key)
    device = session.scalars(mine).one_or_none()
    if device is not None:
        return device
    size = ident.facts.get("size_bytes")
    made = session.scalars(
        insert(Device)
        .values(
            team_id=agent.team_id,
            agent_id=agent.id,
            key=ident.key,
            name=ident.name,
            kind=ident.kind,
            facts=ident.facts,
            media=media_of(ident.kind, ident.facts),
            capacity_bytes=size if isinstance(size, int) else None,
        )
        .on_conflict_do_nothing(index_elements=["agent_id", "key"])
        .returning(Device)
    ).one_or_none()
    return made if made is not None else session.scalars(mine).one()


def _device(session: Session, *, agent: Agent, ident: Identity) -> Device:
    _adopt_legacy(session, agent=agent, key=ident.key, facts=ident.facts)
    device = _seen_by_another_agent(session, agent=agent, ident=ident)
    if device is None:
        device = _stored_or_made(session, agent=agent, ident=ident)
    if ident.facts and device.facts != ident.facts:
        device.facts = ident.facts
    if device.media is None:
        device.media = media_of(ident.kind, ident.facts)
    if device.capacity_bytes is None and isinstance(ident.facts.get("size_bytes"), int):
        device.capacity_bytes = ident.facts["size_bytes"]
    return device


def resolve(session: Session, *, agent: Agent, target_path: str) -> Device:
    """The device of a new run, from its path and the agent's inventory."""
    return _device(session, agent=agent, ident=identify(agent.inventory, target_path))


def resolve_declared(
    session: Session,
    *,
    agent: Agent,
    model: str,
    serial: str | None,
    capacity_bytes: int | None,
    media: str | None,
) -> Device:
    """The device of an uploaded result (POST /results, an external host with no inventory), as
    the uploader declared it: keyed by its serial's sha256 like an agent's disk (ADR 0014; one
    device across hosts only between bare-metal inventories, so never for an external host), else
    by model and capacity. Declared media wins over the guess from the model."""
    clean = " ".join((serial or "").split())
    facts: dict[str, Any] = {"model": model}
    if capacity_bytes is not None:
        facts["size_bytes"] = capacity_bytes
    if clean:
        digest = hashlib.sha256(clean.encode()).hexdigest()
        facts["serial_sha256"] = digest
        key = f"block-serial:{digest}"
    else:
        key = f"declared:{model}:{capacity_bytes if capacity_bytes is not None else '?'}"
    device = _device(session, agent=agent, ident=Identity(key[:300], model, "block", facts))
    if media is not None:
        device.media = media
    return device


def confirm_opened(session: Session, *, run: Run, engine_result: object) -> None:
    """With the result: the device the engine opened is the run's device. A run the path put on
    another device moves (after it left the active states, so the one-active-run-per-device
    index never sees it twice); the guessed device goes when no run is left on it and nobody
    described it."""
    opened = OpenedTarget.of(engine_result)
    if opened is None or run.status in ACTIVE_STATUSES:
        return
    agent = session.get(Agent, run.agent_id)
    if agent is None:
        return
    ident = identify(agent.inventory, run.target_path, opened)
    guessed = session.get(Device, run.device_id) if run.device_id else None
    if guessed is not None and guessed.key == ident.key:
        return
    run.device_id = _device(session, agent=agent, ident=ident).id
    # a multi-target run's first target is the run's own device: it moves with it
    session.execute(
        sql_update(RunTarget)
        .where(RunTarget.run_id == run.id, RunTarget.target_index == 0)
        .values(device_id=run.device_id)
    )
    session.flush()
    described = guessed is None or guessed.embodied_kg is not None or guessed.embodied_source is not None
    # no run left on it: as its own device or as a multi-target run's target
    if (
        guessed is not None
        and not described
        and not run_deletion.usage(session, column="device_id", value=guessed.id).total
    ):
        session.delete(guessed)
        session.flush()


def opened_target_device(
    session: Session, *, run: Run, target_path: str, engine_result: object, current: uuid.UUID | None
) -> uuid.UUID | None:
    """A target of a multi-target run: the device its own engine opened (as `confirm_opened`
    decides for the run's own device), else `current` (the device found from the path)."""
    opened = OpenedTarget.of(engine_result)
    agent = session.get(Agent, run.agent_id)
    if opened is None or agent is None:
        return current
    return _device(session, agent=agent, ident=identify(agent.inventory, target_path, opened)).id


# a hypervisor's disk: the guest sees virtio/Xen or an emulated controller whose model names it;
# its rotational flag is the emulator's default (QEMU says 1), not the media beneath
_VIRTUAL_INTERFACES = ("virtio", "xen")
_VIRTUAL_MODELS = ("qemu", "vbox", "virtual disk", "vmware", "virtio", "msft virtual")


def media_of(kind: str, facts: dict[str, Any]) -> str:
    """hdd | ssd | ram | virtual | unknown, for the embodied-carbon default (the team can correct
    it); a virtual disk is "virtual" whatever its rotational flag says."""
    if kind == "ram" or facts.get("interface") in ("ram", "zram"):
        return "ram"
    model = str(facts.get("model") or "").lower()
    if facts.get("interface") in _VIRTUAL_INTERFACES or any(m in model for m in _VIRTUAL_MODELS):
        return "virtual"
    rotational = facts.get("rotational")
    if rotational is True or rotational == 1:
        return "hdd"
    if rotational is False or rotational == 0:
        return "ssd"
    return "unknown"


def list_devices(
    session: Session,
    *,
    principal: UserPrincipal,
    agent_id: uuid.UUID | None,
    team_id: uuid.UUID | None = None,
) -> list[Device]:
    return repository.list_in_teams(session, principal.teams_for(team_id), agent_id=agent_id)


def update(session: Session, *, principal: UserPrincipal, device_id: uuid.UUID, body: DeviceUpdate) -> Device:
    device = session.get(Device, device_id)
    if device is None or device.team_id not in principal.team_ids:
        raise NotFound("device not found")
    principal.require(device.team_id, Role.member)
    for field, value in body.model_dump(exclude_unset=True).items():
        if field in ("name", "media", "lifetime_years", "notes") and value is None:
            raise Invalid(field, "cannot be null")
        setattr(device, field, value)
    session.flush()
    enqueue(session, "energy.recompute_device", device_id=str(device.id))
    return device


def delete(session: Session, *, principal: UserPrincipal, device_id: uuid.UUID, force: bool) -> None:
    """An admin deletes a device (ADR 0021). Runs that name it: 409 listing them, unless `force`,
    which detaches them (their results stay, without a device). A run holding it (assigned,
    running): 409 always. The agent's next run on that disk makes a fresh device row."""
    device = session.get(Device, device_id)
    if device is None or device.team_id not in principal.team_ids:
        raise NotFound("device not found")
    principal.require(device.team_id, Role.admin)
    used = run_deletion.usage(session, column="device_id", value=device.id)
    if used.active_ids:
        raise Conflict(
            f"the device is in use by {len(used.active_ids)} assigned or running run(s): cancel first",
            code="device_busy",
            detail={"runs": used.active_ids},
        )
    if used.total and not force:
        raise Conflict(
            f"used by {used.total} run(s); delete them first, or add ?force=true to keep them "
            "without a device",
            code="device_in_use",
            detail={"run_count": used.total, "runs": used.run_ids},
        )
    detached = run_deletion.detach(session, column="device_id", value=device.id) if used.total else 0
    audit.record(
        session,
        team_id=device.team_id,
        action="device.deleted",
        target_kind="device",
        target_id=device.id,
        user_id=principal.user_id,
        details={"name": device.name, "key": device.key, "detached_runs": detached},
    )
    session.delete(device)
    session.flush()
