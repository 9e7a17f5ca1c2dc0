import uuid
from datetime import datetime
from typing import Annotated, Any, Literal

import iowatt_energy as ie
from pydantic import ConfigDict, Field, StringConstraints, field_validator

from backend.kit.schema import InputSchema, OutputSchema

# local, DAS, SAN, NAS, cloud; "raid" and "other" are the labels environments had before the
# topology (ADR 0035): still accepted and read back, a RAID's level now lives in `topology.raid`
Kind = Literal["local", "das", "san", "nas", "raid", "cloud", "other"]

# --- topology (ADR 0035) ----------------------------------------------------------------------
# Every part is optional (null: not known or not there); the same models are read and written, and
# served with every field present (json_schema_serialization_defaults_required), as the inventory.

RaidLevel = Literal[
    "single", "jbod", "raid0", "raid1", "raid1c3", "raid1c4", "raid5", "raid6", "raid10",
    "raid50", "raid60", "dup", "raidz1", "raidz2", "raidz3",
]  # fmt: skip
RaidImplementation = Literal["hardware", "md", "btrfs", "zfs", "lvm", "array"]
Transport = Literal["sas", "sata", "nvme", "fc", "iscsi", "nvme_of", "ethernet"]
CachePolicy = Literal["write_back", "write_through", "none"]
NasProtocol = Literal["nfs", "smb", "sshfs", "other"]
Media = Literal["hdd", "ssd", "nvme", "other"]
Short = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200)]


class _TopologyPart(InputSchema):
    model_config = ConfigDict(
        extra="forbid", str_strip_whitespace=True, json_schema_serialization_defaults_required=True
    )


class MemberDevices(_TopologyPart):
    """Identical devices of a RAID set or array: a model and how many of it."""

    model: Short
    count: int = Field(ge=1, le=100_000)
    capacity_bytes: int | None = Field(None, ge=0, le=2**63 - 1)
    media: Media | None = None


class Raid(_TopologyPart):
    level: RaidLevel
    implementation: RaidImplementation | None = None
    member_count: int | None = Field(
        None, ge=1, le=100_000, description="devices in the set (hot spares excluded); null: the members' sum"
    )
    hot_spares: int = Field(0, ge=0, le=100_000)
    stripe_bytes: int | None = Field(None, ge=512, le=2**40, description="the strip (chunk) per member")
    members: list[MemberDevices] = Field(default_factory=list, max_length=64)


class Controller(_TopologyPart):
    model: Short | None = None
    cache_policy: CachePolicy | None = None
    cache_bytes: int | None = Field(None, ge=0, le=2**50)
    cache_protected: bool | None = Field(None, description="battery- or flash-backed write cache")


class Fabric(_TopologyPart):
    transport: Transport
    link_speed_bps: int | None = Field(
        None, ge=1, le=4 * 10**12, description="one link's signalling rate, bits per second"
    )
    links: int | None = Field(None, ge=1, le=1024, description="paths or ports in use (multipath)")


class Nas(_TopologyPart):
    protocol: NasProtocol
    version: str | None = Field(None, pattern=r"^[0-9]+(\.[0-9]+){0,3}$", description="e.g. 4.2, 3.1.1")


class FileSystem(_TopologyPart):
    fstype: str = Field(
        pattern=r"^[a-z0-9][a-z0-9_.+-]{0,39}$", description="as the kernel names it: ext4, xfs"
    )
    mount_options: str = Field("", max_length=2048, pattern=r"^[^\s]*$", description="comma-separated")


class EnvironmentTopology(_TopologyPart):
    """What the storage is: RAID, controller, fabric, NAS protocol, file system (each null: unknown)."""

    raid: Raid | None = None
    controller: Controller | None = None
    fabric: Fabric | None = None
    nas: Nas | None = None
    filesystem: FileSystem | None = None

    def stored(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude_none=True)

    @classmethod
    def read(cls, raw: object) -> "EnvironmentTopology":
        """A stored topology; one a later bound refuses reads as unknown rather than failing."""
        try:
            return cls.model_validate(raw if isinstance(raw, dict) else {})
        except ValueError:
            return cls()


def _region(v: str | None) -> str | None:
    if v is None:
        return None
    v = v.upper()
    if v not in ie.GRID_INTENSITY:
        raise ValueError(f"unknown region; known: {', '.join(sorted(ie.GRID_INTENSITY))}")
    return v


class EnvironmentCreate(InputSchema):
    team_id: uuid.UUID
    name: str = Field(min_length=1, max_length=120)
    kind: Kind
    description: str = Field("", max_length=2000)
    notes: str = Field("", max_length=20_000, description="the team's notes on the environment")
    region: str | None = Field(None, description="grid region code (GET /carbon/grid-intensities)")
    grid_g_per_kwh: float | None = Field(
        None, ge=0, le=2000, description="overrides the region's intensity, gCO2e/kWh"
    )
    grid_source: str | None = Field(None, max_length=500, description="where the override comes from")
    pue: float = Field(1.0, ge=1.0, le=3.0, description="power usage effectiveness of the site")
    electricity_price_per_kwh: float | None = Field(None, ge=0, le=10, description="in `currency` per kWh")
    currency: str = Field("EUR", pattern=r"^[A-Z]{3}$")
    topology: EnvironmentTopology = Field(default_factory=EnvironmentTopology)

    _check_region = field_validator("region")(_region)


class EnvironmentUpdate(InputSchema):
    name: str | None = Field(None, min_length=1, max_length=120)
    kind: Kind | None = None
    description: str | None = Field(None, max_length=2000)
    notes: str | None = Field(None, max_length=20_000)
    region: str | None = None
    grid_g_per_kwh: float | None = Field(None, ge=0, le=2000)
    grid_source: str | None = Field(None, max_length=500)
    pue: float | None = Field(None, ge=1.0, le=3.0)
    electricity_price_per_kwh: float | None = Field(None, ge=0, le=10)
    currency: str | None = Field(None, pattern=r"^[A-Z]{3}$")
    topology: EnvironmentTopology | None = Field(
        None, description="replaces the whole topology; {} clears it"
    )

    _check_region = field_validator("region")(_region)

    @field_validator("name", "kind", "description", "notes", "pue", "currency", "topology")
    @classmethod
    def _not_null(cls, v: object) -> object:
        if v is None:  # omit the field to keep its value; null is not a value these can take
            raise ValueError("cannot be null")
        return v


class EnvironmentRead(OutputSchema):
    id: uuid.UUID
    team_id: uuid.UUID
    name: str
    kind: str
    description: str
    notes: str
    region: str | None
    grid_g_per_kwh: float | None
    grid_source: str | None
    pue: float
    electricity_price_per_kwh: float | None
    currency: str
    topology: EnvironmentTopology
    protection: str | None = Field(
        description="the RAID level as a procurement candidate's protection (jbod, raid0|1|5|6|10), if one"
    )
    member_count: int | None = Field(description="devices in the RAID set, if known")
    effective_g_per_kwh: float
    effective_source: str
    hourly_hours: int
    created_at: datetime


class EnvironmentSnapshot(OutputSchema):
    """An environment as it was when a run was queued or uploaded (runs.environment_snapshot)."""

    version: int
    environment_id: uuid.UUID
    name: str
    kind: str
    description: str
    topology: EnvironmentTopology
    region: str | None
    grid_g_per_kwh: float | None
    grid_source: str | None
    pue: float
    electricity_price_per_kwh: float | None
    currency: str
    recorded_at: datetime


class RunEnvironment(OutputSchema):
    run_id: uuid.UUID
    environment_id: uuid.UUID | None = Field(
        description="the environment the run names now (null: none or deleted)"
    )
    snapshot: EnvironmentSnapshot | None = Field(description="as it was when the run was queued; null: none")
    changed: list[str] = Field(
        description="fields whose value the environment has changed since (name, topology.raid.level, ...)"
    )


Facet = Literal[
    "kind", "raid_level", "raid_implementation", "member_count", "member_model", "media",
    "controller_cache_policy", "transport", "link_speed_bps", "nas_protocol", "nas_version",
    "fstype", "mount_options", "region", "pue",
]  # fmt: skip


class TopologySuggestion(OutputSchema):
    environment_id: uuid.UUID
    agent_id: uuid.UUID | None
    agent_name: str | None
    target_path: str | None
    topology: EnvironmentTopology = Field(description="what the agent saw; parts it could not see are null")
    evidence: list[str] = Field(description="what each suggested part comes from, in words")


class GridSeriesImported(OutputSchema):
    environment_id: uuid.UUID
    hours: int
    first_hour_utc: datetime
    last_hour_utc: datetime
