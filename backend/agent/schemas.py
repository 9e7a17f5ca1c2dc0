import copy
import uuid
from datetime import datetime
from typing import Annotated, Any, Literal, Self

from iowatt_policy.model import MAX_IDLE_S
from pydantic import ConfigDict, Field, StringConstraints, ValidationError, field_validator, model_validator
from pydantic_core import PydanticCustomError

from backend.kit.schema import InputSchema, OutputSchema, nul_path

MAX_TTL_S = 30 * 24 * 3600
MIN_TTL_S = 60

Short = Annotated[str, StringConstraints(max_length=300)]
Path = Annotated[str, StringConstraints(max_length=4096)]
MeterName = Annotated[str, StringConstraints(max_length=120)]


class EnrollmentTokenCreate(InputSchema):
    team_id: uuid.UUID
    ttl_s: int = Field(
        7 * 24 * 3600, ge=MIN_TTL_S, le=MAX_TTL_S, description="lifetime in seconds (60 s ... 30 days)"
    )
    max_uses: int = Field(1, ge=1, le=1000, description="how many agents may enrol with it")


class EnrollmentTokenCreated(OutputSchema):
    id: uuid.UUID
    team_id: uuid.UUID
    token: str
    expires_at: datetime | None
    max_uses: int


class EnrollmentTokenRead(OutputSchema):
    """An enrolment token as listed: never the token itself (only its hash is stored)."""

    id: uuid.UUID
    team_id: uuid.UUID
    created_by: uuid.UUID | None
    created_at: datetime
    expires_at: datetime | None
    uses: int
    max_uses: int
    revoked_at: datetime | None


# --- inventory (docs/contracts.md §2) ----------------------------------------------------------
# One schema for what the agent sends, what is stored (agents.inventory, JSONB) and what AgentRead
# serves. Bounded everywhere; keys a newer agent adds are kept as sent (stored and served, not
# rejected), so an agent upgrade never breaks enrolment. Every field is optional: older agents sent
# less. Rows stored before a bound existed are read with `Inventory.read`, which never fails.


class _InventoryPart(InputSchema):
    # served (AgentRead.inventory) with every declared field, so the OpenAPI says so
    model_config = ConfigDict(
        extra="allow", str_strip_whitespace=True, json_schema_serialization_defaults_required=True
    )

    @model_validator(mode="after")
    def _no_nul_in_extra_keys(self) -> Self:
        where = nul_path(self.__pydantic_extra__ or {})
        if where is not None:  # the declared fields are checked by InputSchema's validator
            raise PydanticCustomError(
                "nul_character", "must not contain a NUL character (at {at})", {"at": where}
            )
        return self


class OsInfo(_InventoryPart):
    kernel: Short | None = None
    distro: Short | None = None


class CpuInfo(_InventoryPart):
    model: Short | None = None
    cores: int | None = Field(None, ge=0, le=1_000_000)


class BlockDevice(_InventoryPart):
    name: Short
    model: Short | None = None
    serial_sha256: Short | None = None
    firmware: Short | None = None
    size_bytes: int | None = Field(None, ge=0, le=2**63 - 1)
    rotational: bool | None = None
    interface: Short | None = None
    scheduler: Short | None = None
    logical_block_bytes: int | None = Field(None, ge=0, le=2**31)
    physical_block_bytes: int | None = Field(None, ge=0, le=2**31)
    # device-mapper (LVM, LUKS, multipath): its name under /dev/mapper and the disks beneath it
    dm_name: Short | None = Field(None, description="dm-N only: the name under /dev/mapper")
    slaves: list[Short] = Field(
        default_factory=list, max_length=256, description="kernel names of the devices beneath (dm, md)"
    )


class Mount(_InventoryPart):
    mountpoint: Path
    source: Path
    fstype: Short
    options: Annotated[str, StringConstraints(max_length=4096)] = ""


class PolicyTarget(_InventoryPart):
    path: Path
    kind: Literal["directory", "file", "device"]
    writable: bool = Field(False, description="absent: true for a directory, else false (libs/policy)")
    destructive: bool = False
    # devices: what the agent read from sysfs (the UI asks for the model or serial to confirm)
    model: Short | None = None
    serial_sha256: Annotated[str, StringConstraints(max_length=64)] | None = None
    size_bytes: int | None = Field(None, ge=0, le=2**63 - 1)
    free_inodes: int | None = Field(
        None, ge=0, le=2**63 - 1, description="directories: free inodes of their file system (statvfs)"
    )


class PolicyLimits(_InventoryPart):
    """Per-run limits (iowatt_policy.Limits); null = no limit; "auto" = the host's default."""

    max_threads: int | None = Field(None, gt=0, le=2**31)
    max_iodepth: int | None = Field(None, gt=0, le=2**31)
    max_bs_bytes: int | None = Field(None, gt=0, le=2**63 - 1)
    max_bytes_written: int | None = Field(None, gt=0, le=2**63 - 1)
    max_runtime_s: float | None = Field(None, gt=0, le=10**9)
    max_memory_bytes: Annotated[int, Field(gt=0, le=2**63 - 1)] | Literal["auto"] | None = Field(
        "auto", description='memory a run may need, bytes; "auto" = half the host\'s RAM (libs/policy)'
    )
    max_files: Annotated[int, Field(gt=0, le=2**63 - 1)] | Literal["auto"] | None = Field(
        "auto",
        description='files + directories a run lays out; "auto" = half the target\'s free inodes, '
        "at most 10 million (libs/policy)",
    )


class PolicyMeter(_InventoryPart):
    """A meter the host configured, by name: never its spec (it may hold credentials)."""

    name: MeterName
    driver: Annotated[str, StringConstraints(max_length=64)]
    tier: Annotated[str, StringConstraints(max_length=32)]
    idle_s: float | None = Field(
        None,
        ge=0,
        le=MAX_IDLE_S,
        allow_inf_nan=False,
        description="seconds of each idle baseline (before and after the load) a run measured with this "
        "meter takes when the run sets none: the meter's own idle setting, else the agent's; null from "
        "an agent that does not report it",
    )


class Policy(_InventoryPart):
    """What the host allows (ADR 0009 §4), as the agent reported it."""

    targets: list[PolicyTarget] = Field(default_factory=list, max_length=200)
    meters: list[PolicyMeter] = Field(default_factory=list, max_length=50)
    default_meter: MeterName | None = None
    limits: PolicyLimits = Field(default_factory=PolicyLimits)
    allowed_dbms: list[Annotated[str, StringConstraints(max_length=64)]] = Field(
        default_factory=list,
        max_length=16,
        description="DBMSs the host lets TPC-H runs start (iowatt-agent targets allow-dbms); none by default",
    )
    mem_total_bytes: int | None = Field(
        None, ge=0, le=2**63 - 1, description="the host's MemTotal: the default memory limit's base"
    )


class Capabilities(_InventoryPart):
    """What the agent build runs: the server refuses a run of another kind at queue time."""

    workload_kinds: list[Short] = Field(
        default_factory=list, max_length=32, description="WorkloadSpec.kind values: block, postmark, ..."
    )
    tpch_dbms: list[Short] = Field(
        default_factory=list, max_length=16, description="DBMSs whose server binaries the host has"
    )
    multi_target: bool = Field(
        False, description="runs a lease on several targets at once (Lease.targets); false: an older agent"
    )
    protocol: int | None = Field(
        None, ge=1, le=1000, description="the wire protocol the agent speaks; null: protocol 1 (no header)"
    )
    engine_version: Short | None = Field(None, description="its engine's `--version`; null: not reported")
    engine_features: list[Short] | None = Field(
        None,
        max_length=16,
        description="the asynchronous ioengines its engine ran on the host (io_uring, libaio); null: "
        "not reported (an agent before protocol 2)",
    )


# storage topology (agent/src/iowatt_agent/topology.py, ADR 0035): the environment's suggestion reads it
Count = Annotated[int, Field(ge=0, le=2**31)]


class TopologyMount(_InventoryPart):
    mountpoint: Path
    source: Path
    fstype: Short
    options: Annotated[str, StringConstraints(max_length=4096)] = ""
    major: Count | None = None
    minor: Count | None = None
    disk: Short | None = Field(None, description="kernel name of its block device; null: none (tmpfs, btrfs)")


class BtrfsFilesystem(_InventoryPart):
    uuid: Short
    label: Short | None = None
    data_profile: Short | None = Field(None, description="single, dup, raid0, raid1, raid1c3, raid10, ...")
    metadata_profile: Short | None = None
    devices: list[Short] = Field(default_factory=list, max_length=256, description="member kernel names")


class MdArray(_InventoryPart):
    name: Short
    level: Short | None = None
    raid_disks: Count | None = None
    members: list[Short] = Field(default_factory=list, max_length=256)
    spares: Count = 0
    chunk_bytes: int | None = Field(None, ge=0, le=2**40)


class LvmVolume(_InventoryPart):
    vg: Short
    lv: Short
    segtype: Short | None = None
    stripes: Count | None = None
    devices: list[Short] = Field(default_factory=list, max_length=256)
    dm_name: Short | None = None


class QueueFacts(_InventoryPart):
    name: Short
    write_cache: Short | None = Field(None, description='"write back" or "write through"')
    nr_requests: Count | None = None
    max_sectors_kb: Count | None = None
    read_ahead_kb: Count | None = None
    discard_max_bytes: int | None = Field(None, ge=0, le=2**63 - 1)


class HostTopology(_InventoryPart):
    mounts: list[TopologyMount] = Field(default_factory=list, max_length=2000)
    btrfs: list[BtrfsFilesystem] = Field(default_factory=list, max_length=1000)
    md: list[MdArray] = Field(default_factory=list, max_length=1000)
    lvm: list[LvmVolume] = Field(default_factory=list, max_length=1000)
    queues: list[QueueFacts] = Field(default_factory=list, max_length=1000)


class Inventory(_InventoryPart):
    hostname: Annotated[str, StringConstraints(max_length=255)] | None = None
    os: OsInfo | None = None
    cpu: CpuInfo | None = None
    mem_bytes: int | None = Field(None, ge=0, le=2**63 - 1)
    virtualization: Short | None = None
    block_devices: list[BlockDevice] = Field(default_factory=list, max_length=1000)
    mounts: list[Mount] = Field(default_factory=list, max_length=2000)
    policy: Policy | None = Field(
        None, description="the host's policy (ADR 0009); absent from agents built before host policies"
    )
    capabilities: Capabilities | None = Field(
        None,
        description="the workload kinds the agent runs; absent: an agent built before workload kinds "
        "(block only)",
    )
    topology: HostTopology | None = Field(
        None,
        description="mounts' devices, btrfs/md/LVM sets, queue facts; absent: an agent older than "
        "the environment model",
    )

    def stored(self) -> dict[str, Any]:
        """What the server keeps: the fields the agent sent (and keys it does not know), as sent."""
        return self.model_dump(mode="json", exclude_unset=True)

    @classmethod
    def read(cls, raw: object) -> "Inventory | None":
        """A stored inventory; never fails. A part that today's bounds refuse (a row written
        before them) is left out: a field, or the list item or object it belongs to."""
        if not isinstance(raw, dict):
            return None
        try:  # a row today's bounds accept (nearly every one) needs no copy: validation reads only
            return cls.model_validate(raw)
        except ValidationError:
            pass
        doc: Any = copy.deepcopy(raw)  # the sweep marks the copy's refused parts
        for _ in range(20):
            try:
                return cls.model_validate(doc)
            except ValidationError as exc:
                for err in exc.errors():
                    loc = err["loc"][:-1] if err["type"] == "missing" else err["loc"]
                    if not loc:
                        return cls()
                    _mark(doc, loc)
                doc = _sweep(doc)
        return cls()


_GONE = object()


def _mark(doc: Any, loc: tuple[int | str, ...]) -> None:
    node = doc
    for part in loc[:-1]:
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            return
    last = loc[-1]
    in_dict = isinstance(node, dict) and last in node
    if in_dict or (isinstance(node, list) and isinstance(last, int) and last < len(node)):
        node[last] = _GONE


def _sweep(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _sweep(v) for k, v in node.items() if v is not _GONE}
    if isinstance(node, list):
        return [_sweep(v) for v in node if v is not _GONE]
    return node


class AgentEnroll(InputSchema):
    enrollment_token: str = Field(min_length=1, max_length=200)
    name: str = Field(min_length=1, max_length=120, pattern=r"^[A-Za-z0-9_.\-]+$")
    hostname: str = Field(min_length=1, max_length=255)
    agent_version: str = Field("", max_length=50)
    inventory: Inventory | None = None
    replace: bool = Field(
        False,
        description="take over the existing agent of this name (a token made by a team admin only; "
        "never a revoked agent)",
    )


class AgentEnrolled(OutputSchema):
    agent_id: uuid.UUID
    agent_token: str
    token_expires_at: datetime = Field(
        description="when agent_token stops working; the agent rotates it before (POST /agents/{id}/token)"
    )
    team_id: uuid.UUID
    heartbeat_interval_s: int


class AgentTokenRotated(OutputSchema):
    """A new token for the calling agent (docs/adr/0011). The token it called with still works
    until its own expiry, or only a short overlap once this one has been used: store this one
    before using it."""

    agent_token: str
    token_expires_at: datetime


class Heartbeat(InputSchema):
    state: Literal["idle", "busy", "draining"]
    current_run_id: uuid.UUID | None = None
    current_lease_id: uuid.UUID | None = Field(
        None, description="the lease of the run the agent process is running now, if any"
    )
    boot_id: uuid.UUID | None = Field(
        None,
        description="made by the agent process at its start: a run started by another process, "
        "whose lease this one does not hold, was lost and fails at once. Absent from older agents",
    )
    agent_version: str = Field("", max_length=50)
    sent_at: datetime | None = Field(
        None,
        description="the agent's clock when it sent the heartbeat (t0 of an NTP-style exchange: with "
        "the answer's received_at and server_time and the agent's receive time it gives the agent's "
        "clock offset and the round trip that bounds it). Absent from older agents",
    )


class LeaseRequest(InputSchema):
    """The body of a lease poll (optional: older agents send none)."""

    boot_id: uuid.UUID | None = Field(
        None,
        description="the polling agent process's boot id (as in its heartbeats): a poll says the "
        "process runs nothing, so the agent's running runs another process started were lost and "
        "fail at once; runs this process started are left to it (it may be uploading or spooling "
        "their results). Absent from older agents: then every running run started before the poll fails",
    )


class HeartbeatAck(OutputSchema):
    server_time: datetime = Field(description="the server's clock when it answered (t2)")
    received_at: datetime | None = Field(
        None, description="the server's clock when the heartbeat arrived (t1); null from older servers"
    )
    heartbeat_interval_s: int
    token_expires_at: datetime = Field(
        description="when the token this heartbeat came with stops working (docs/adr/0011)"
    )
    token_ttl_s: int = Field(
        description="lifetime of a new agent token: the agent rotates when less than half is left"
    )


class LeaseGroup(OutputSchema):
    group_id: uuid.UUID
    members: int = Field(description="how many agents run the group together")
    start_tolerance_ns: int = Field(
        description="a start later or earlier than this marks the group unsynchronized"
    )
    prepare_timeout_s: float = Field(
        description="seconds the members have to report ready after the first one: the agent waits at "
        "the barrier at least this long (protocol 2 agents ignore it and wait up to 600 s)"
    )


class Lease(OutputSchema):
    run_id: uuid.UUID
    lease_id: uuid.UUID
    lease_expires_at: datetime
    target_path: str
    targets: list[str] | None = Field(
        None,
        description="a multi-target run: every target's path in order (the first is target_path); the "
        "agent runs the engine job on each at the same time and uploads each target's result. "
        "null: the one target_path",
    )
    engine_job: dict[str, Any]
    timeout_s: int
    meter: str | None = Field(
        description='NAME of a meter the host configured; "" = none, null = the host\'s default. '
        "Never a spec (ADR 0009)"
    )
    destructive: bool = Field(description="the run's key of the two-key rule for raw devices")
    idle_s: float | None = Field(description="idle baseline before and after the load; null = the agent's")
    group: LeaseGroup | None = Field(
        None,
        description="a member of a group run: the agent prepares, reports ready (POST /runs/{id}/ready, "
        "long-polled) and starts its engine at the instant the server answers; null: start at once",
    )


class LeaseResponse(OutputSchema):
    lease: Lease | None
    poll_wait_s: int = Field(
        description="seconds: the wait the agent's next lease request should ask for (`wait_s`); the "
        "server scales it with its fleet (25 up to a few hundred idle agents, up to its "
        "IOWATT_LONGPOLL_MAX_WAIT_S). Older agents ignore it and keep asking for 25"
    )


class PolicyTargetRead(OutputSchema):
    path: str
    kind: Literal["directory", "file", "device"]
    writable: bool
    destructive: bool
    model: str | None
    serial_sha256: str | None
    size_bytes: int | None
    free_inodes: int | None = Field(description="directories: free inodes of their file system, or null")


class PolicyLimitsRead(OutputSchema):
    max_threads: int | None
    max_iodepth: int | None
    max_bs_bytes: int | None
    max_bytes_written: int | None
    max_runtime_s: float | None
    max_memory_bytes: int | None = Field(
        description="memory a run may need, bytes, as in force (the host's limit, or its default: half "
        "its RAM); null = no limit, or an agent that reported no RAM size"
    )
    max_files: int | Literal["auto"] | None = Field(
        description='files + directories a run may lay out; "auto" = the host\'s default, half the '
        "target's free inodes (PolicyTargetRead.free_inodes), at most 10 million"
    )


class PolicyMeterRead(OutputSchema):
    name: str
    driver: str
    tier: str
    # a default (unlike other read fields): the UI's types stay compatible across the regeneration
    idle_s: float | None = Field(
        None,
        description="each idle baseline a run with this meter takes when it sets none, seconds; "
        "null: not reported",
    )


class PolicyRead(OutputSchema):
    """The targets and meters the host allows, as last reported: the UI offers only these."""

    targets: list[PolicyTargetRead]
    meters: list[PolicyMeterRead]
    default_meter: str | None
    limits: PolicyLimitsRead
    allowed_dbms: list[str]


class AgentRead(OutputSchema):
    id: uuid.UUID
    team_id: uuid.UUID
    name: str
    hostname: str
    kind: Literal["agent", "external"] = Field(
        description="agent: runs iowatt-agent; external: a host whose results are only uploaded "
        "(POST /api/v1/results): never online, never dispatched to"
    )
    online: bool
    state: str
    last_heartbeat_at: datetime | None
    enrolled_at: datetime
    revoked_at: datetime | None
    token_expires_at: datetime = Field(
        description="when the agent's current token expires; the agent rotates it before then"
    )
    agent_version: str
    inventory: Inventory | None = Field(
        description="as the agent last reported it (keys newer than this server kept as sent)"
    )
    policy: PolicyRead | None = Field(
        description="null until the agent reports a policy (agents built before host policies never do)"
    )
    current_run_id: uuid.UUID | None

    @field_validator("inventory", mode="before")
    @classmethod
    def _stored_inventory(cls, value: object) -> object:
        return Inventory.read(value) if isinstance(value, dict) else value
