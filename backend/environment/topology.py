"""The environment model's rules, pure (no database): what a topology may say for its kind, the
flat facets compare and views group and filter by, the procurement protection it implies, and the
topology an agent's inventory suggests for a target (ADR 0035)."""

import os
import re
from collections.abc import Callable, Iterable
from typing import Any

from backend.environment.schemas import (
    EnvironmentTopology,
    Facet,
    FileSystem,
    MemberDevices,
    Raid,
)
from backend.errors import Invalid

# fewest data devices of each level (hot spares apart); levels not listed: 1
MIN_MEMBERS = {
    "raid1": 2, "raid1c3": 3, "raid1c4": 4, "raid5": 3, "raid6": 4, "raid10": 4,
    "raid50": 6, "raid60": 8, "raidz1": 2, "raidz2": 3, "raidz3": 4,
}  # fmt: skip
NAS_KINDS = ("nas", "other")


def member_count(raid: Raid | None) -> int | None:
    if raid is None:
        return None
    if raid.member_count is not None:
        return raid.member_count
    return sum(m.count for m in raid.members) or None


def check(kind: str, topology: EnvironmentTopology) -> None:
    """What pydantic cannot see: a 422 naming the field (`topology.raid.member_count`, ...)."""
    raid = topology.raid
    if raid is not None:
        listed = sum(m.count for m in raid.members)
        if raid.members and raid.member_count is not None and listed != raid.member_count:
            raise Invalid(
                "topology.raid.member_count",
                f"{raid.member_count} devices, but the members listed count {listed}",
            )
        n = member_count(raid)
        need = MIN_MEMBERS.get(raid.level, 1)
        if n is not None and n < need:
            raise Invalid(
                "topology.raid.member_count", f"{raid.level} needs at least {need} devices, not {n}"
            )
        if n is not None and raid.level == "raid10" and raid.implementation != "btrfs" and n % 2:
            raise Invalid(
                "topology.raid.member_count", f"raid10 stripes mirrored pairs: an even count, not {n}"
            )
    if topology.nas is not None and kind not in NAS_KINDS:
        raise Invalid("topology.nas", f"a NAS protocol describes a kind nas environment, not {kind}")


def protection(topology: EnvironmentTopology) -> str | None:
    """The RAID level in a procurement candidate's words (backend/review/formulas.parse_protection)."""
    raid = topology.raid
    if raid is None:
        return None
    level = {"single": "jbod", "raid1c3": "replica:3", "raid1c4": "replica:4"}.get(raid.level, raid.level)
    return (
        level
        if level in ("jbod", "raid0", "raid1", "raid5", "raid6", "raid10", "replica:3", "replica:4")
        else None
    )


# --- facets: one flat value per field, for grouping and filtering -----------------------------

NONE = "none"  # the facet value of a run without the field (no environment, or not known)


def _speed(bps: int | None) -> str | None:
    return None if bps is None else str(bps)


FACETS: dict[str, tuple[str, Callable[[dict[str, Any], EnvironmentTopology], str | None]]] = {
    "kind": ("kind", lambda s, t: s.get("kind")),
    "raid_level": ("RAID level", lambda s, t: t.raid.level if t.raid else None),
    "raid_implementation": ("RAID by", lambda s, t: t.raid.implementation if t.raid else None),
    "member_count": ("members", lambda s, t: str(n) if (n := member_count(t.raid)) else None),
    "member_model": (
        "member model",
        lambda s, t: " + ".join(sorted({m.model for m in t.raid.members}))
        if t.raid and t.raid.members
        else None,
    ),
    "media": (
        "media",
        lambda s, t: " + ".join(sorted({m.media for m in t.raid.members if m.media}))
        if t.raid and any(m.media for m in t.raid.members)
        else None,
    ),
    "controller_cache_policy": (
        "controller cache",
        lambda s, t: t.controller.cache_policy if t.controller else None,
    ),
    "transport": ("fabric", lambda s, t: t.fabric.transport if t.fabric else None),
    "link_speed_bps": (
        "link speed (bit/s)",
        lambda s, t: _speed(t.fabric.link_speed_bps) if t.fabric else None,
    ),
    "nas_protocol": ("NAS protocol", lambda s, t: t.nas.protocol if t.nas else None),
    "nas_version": (
        "NAS protocol version",
        lambda s, t: f"{t.nas.protocol} {t.nas.version}" if t.nas and t.nas.version else None,
    ),
    "fstype": ("file system", lambda s, t: t.filesystem.fstype if t.filesystem else None),
    "mount_options": ("mount options", lambda s, t: t.filesystem.mount_options if t.filesystem else None),
    "region": ("grid region", lambda s, t: s.get("region")),
    "pue": ("PUE", lambda s, t: f"{s['pue']:g}" if isinstance(s.get("pue"), int | float) else None),
}
FACET_NAMES: tuple[str, ...] = Facet.__args__  # type: ignore[attr-defined]
assert set(FACETS) == set(FACET_NAMES), "FACETS and schemas.Facet list the same fields"


def facet_value(snapshot: dict[str, Any] | None, facet: str) -> str:
    """The run's value of `facet` from its environment snapshot; NONE when it has none."""
    if not snapshot:
        return NONE
    value = FACETS[facet][1](snapshot, EnvironmentTopology.read(snapshot.get("topology")))
    return value if value else NONE


def facet_label(facet: str, value: str) -> str:
    """A column's label: `RAID level raid10`, `kind san`, `fabric: none`."""
    name = FACETS[facet][0]
    return f"{name}: {'not set' if value == NONE else value}"


def parse_filters(values: Iterable[str], field: str = "env") -> list[tuple[str, str]]:
    """`facet:value` pairs (`raid_level:raid10`, `kind:none`); a 422 on `env.N` otherwise."""
    out = []
    for i, raw in enumerate(values):
        facet, sep, value = raw.partition(":")
        if not sep or not value.strip():
            raise Invalid(f"{field}.{i}", "write FIELD:VALUE, e.g. raid_level:raid10 (none: runs without it)")
        if facet.strip() not in FACETS:
            raise Invalid(f"{field}.{i}", f"unknown field {facet!r}; known: {', '.join(FACET_NAMES)}")
        out.append((facet.strip(), value.strip()))
    return out


def matches(snapshot: dict[str, Any] | None, filters: list[tuple[str, str]]) -> bool:
    """Every filter holds (several values of one field: any of them)."""
    by_facet: dict[str, set[str]] = {}
    for facet, value in filters:
        by_facet.setdefault(facet, set()).add(value.lower())
    return all(facet_value(snapshot, f).lower() in wanted for f, wanted in by_facet.items())


# --- suggestion from an agent's inventory ------------------------------------------------------

BTRFS_LEVELS = {"single", "dup", "raid0", "raid1", "raid1c3", "raid1c4", "raid5", "raid6", "raid10"}
MD_LEVELS = {"raid0", "raid1", "raid5", "raid6", "raid10"}
NAS_FS = {"nfs": "nfs", "nfs4": "nfs", "cifs": "smb", "smb3": "smb", "fuse.sshfs": "sshfs"}


def _mount_of(mounts: list[dict[str, Any]], path: str) -> dict[str, Any] | None:
    best = None
    norm = os.path.normpath(path)
    for m in mounts:
        mp = str(m.get("mountpoint") or "")
        if not mp:
            continue
        inside = norm == mp or norm.startswith(mp.rstrip("/") + "/")
        if inside and (best is None or len(mp) > len(str(best["mountpoint"]))):
            best = m
    return best


def _disk(name: str, devices: dict[str, dict[str, Any]]) -> dict[str, Any] | None:
    """The inventory's disk of a kernel name: itself, or the disk of a partition (sda1, nvme0n1p2)."""
    if name in devices:
        return devices[name]
    return devices.get(re.sub(r"(?<=\d)p\d+$|(?<=[a-z])\d+$", "", name))


def _members(names: list[str], devices: dict[str, dict[str, Any]]) -> list[MemberDevices]:
    groups: dict[tuple[str, int | None, str | None], int] = {}
    for name in names:
        disk = _disk(name, devices) or {}
        model = str(disk.get("model") or re.sub(r"\d+$", "", name) or name)  # loop0, loop1: "loop"
        rot = disk.get("rotational")
        media = "nvme" if name.startswith("nvme") else ("hdd" if rot else ("ssd" if rot is False else None))
        key = (model, disk.get("size_bytes"), media)
        groups[key] = groups.get(key, 0) + 1
    return [
        MemberDevices(model=m[:200], count=c, capacity_bytes=size, media=media)
        for (m, size, media), c in sorted(groups.items(), key=lambda kv: kv[0][0])
    ]


def suggest(inventory: dict[str, Any] | None, target_path: str) -> tuple[EnvironmentTopology, list[str]]:
    """The topology an agent's inventory shows for a target: its mount's file system and options,
    the btrfs profile or md level beneath it and their members, LVM segments, the members' fabric
    and write cache. Parts it cannot see stay null (a SAN's controller, a NAS's server side)."""
    inv = inventory or {}
    topo: dict[str, Any] = inv.get("topology") or {}
    mounts = [m for m in (topo.get("mounts") or inv.get("mounts") or []) if isinstance(m, dict)]
    devices = {str(d.get("name")): d for d in inv.get("block_devices") or [] if isinstance(d, dict)}
    queues = {str(q.get("name")): q for q in topo.get("queues") or [] if isinstance(q, dict)}
    evidence: list[str] = []
    out: dict[str, Any] = {}
    mount = _mount_of(mounts, target_path)
    if mount is None:
        return EnvironmentTopology(), [f"no mount of the agent's inventory holds {target_path}"]
    fstype, options = str(mount.get("fstype") or ""), str(mount.get("options") or "")
    try:
        out["filesystem"] = FileSystem(fstype=fstype, mount_options=options.replace(" ", ""))
        evidence.append(f"{target_path} is on {mount.get('mountpoint')}: {fstype} ({options})")
    except ValueError:
        evidence.append(f"{mount.get('mountpoint')}: file system type {fstype!r} not recognised")
    source = os.path.basename(str(mount.get("source") or ""))
    disk = str(mount.get("disk") or source)
    members: list[str] = []
    if fstype in NAS_FS:
        out["nas"] = {"protocol": NAS_FS[fstype]}
        version = next((o.split("=", 1)[1] for o in options.split(",") if o.startswith("vers=")), None)
        if version and version.replace(".", "").isdigit():
            out["nas"]["version"] = version
        out["fabric"] = {"transport": "ethernet"}
        evidence.append(f"a network file system ({fstype}): NAS protocol {NAS_FS[fstype]}")
    for fs in topo.get("btrfs") or []:
        devs = [str(d) for d in fs.get("devices") or []]
        if fstype == "btrfs" and (source in devs or disk in devs):
            level = str(fs.get("data_profile") or "")
            if level in BTRFS_LEVELS:
                out["raid"] = {"level": level, "implementation": "btrfs"}
                members = devs
                evidence.append(
                    f"btrfs {fs.get('uuid')}: data {level}, metadata {fs.get('metadata_profile')} "
                    f"on {', '.join(devs)}"
                )
    for md in topo.get("md") or []:
        if str(md.get("name")) in (source, disk):
            level = str(md.get("level") or "")
            if level in MD_LEVELS:
                out["raid"] = {"level": level, "implementation": "md"}
                if md.get("chunk_bytes"):
                    out["raid"]["stripe_bytes"] = md["chunk_bytes"]
                members = [str(x) for x in md.get("members") or []]
                evidence.append(f"md {md.get('name')}: {level} of {', '.join(members)}")
    for lv in topo.get("lvm") or []:
        if source and source in (str(lv.get("dm_name") or ""), f"{lv.get('vg')}-{lv.get('lv')}"):
            seg = str(lv.get("segtype") or "")
            lv_level = {
                "raid1": "raid1",
                "raid5": "raid5",
                "raid6": "raid6",
                "raid10": "raid10",
                "striped": "raid0",
            }.get(seg)
            if lv_level and (seg != "striped" or (lv.get("stripes") or 1) > 1):
                out["raid"] = {"level": lv_level, "implementation": "lvm"}
                members = [str(x) for x in lv.get("devices") or []]
                evidence.append(f"LVM {lv.get('vg')}/{lv.get('lv')}: {seg} on {', '.join(members)}")
    if "raid" in out and members:
        out["raid"]["members"] = [
            m.model_dump(mode="json", exclude_none=True) for m in _members(members, devices)
        ]
    look = members or [disk]
    interfaces = {str(d.get("interface")) for d in (_disk(x, devices) for x in look) if d}
    transport = {"nvme": "nvme", "sata": "sata", "sas": "sas"}
    known = {transport[i] for i in interfaces if i in transport}
    if len(known) == 1 and "fabric" not in out:
        out["fabric"] = {"transport": known.pop()}
        evidence.append(f"the devices' interface: {out['fabric']['transport']}")
    caches = {str(queues[d].get("write_cache")) for d in look if d in queues and queues[d].get("write_cache")}
    if len(caches) == 1:
        policy = {"write back": "write_back", "write through": "write_through"}.get(caches.pop())
        if policy:
            out["controller"] = {"cache_policy": policy}
            evidence.append(f"/sys/block/*/queue/write_cache: {policy.replace('_', ' ')}")
    try:
        return EnvironmentTopology.model_validate(out), evidence
    except ValueError as exc:  # an agent's odd value: keep what is sure
        return EnvironmentTopology(filesystem=out.get("filesystem")), [*evidence, f"left out: {exc}"]
