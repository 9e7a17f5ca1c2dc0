"""Wire models of the agent <-> server HTTP contract (docs/contracts.md §2).

Requests forbid unknown fields (a typo must fail here, not on the server); answers ignore fields
they do not know, so the server can grow without breaking deployed agents.
Base units: bytes, nanoseconds, seconds; timestamps are UTC.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal
from uuid import UUID

from pydantic import BaseModel, ConfigDict, Field


class Request(BaseModel):
    model_config = ConfigDict(extra="forbid")

    def wire_exclude(self) -> set[str] | None:
        """Fields left out of the JSON body (see ResultUpload)."""
        return None


class Answer(BaseModel):
    model_config = ConfigDict(extra="ignore")


# --- inventory ---------------------------------------------------------------------------------


class OsInfo(Request):
    kernel: str
    distro: str | None


class CpuInfo(Request):
    model: str | None
    cores: int


class BlockDevice(Request):
    name: str
    model: str | None
    serial_sha256: str | None
    firmware: str | None
    size_bytes: int
    rotational: bool | None
    interface: str
    scheduler: str | None
    logical_block_bytes: int | None
    physical_block_bytes: int | None
    # device-mapper (LVM, LUKS, multipath): the name under /dev/mapper; dm and md: the kernel
    # names of the devices beneath (the server keys a dm device by its mapper name, docs/contracts.md)
    dm_name: str | None = None
    slaves: list[str] = Field(default_factory=list)


class Mount(Request):
    mountpoint: str
    source: str
    fstype: str
    options: str


class PolicyTarget(Request):
    """A target the host allows (ADR 0009 §4); devices carry what identifies them."""

    path: str
    kind: Literal["directory", "file", "device"]
    writable: bool
    destructive: bool
    model: str | None = None
    serial_sha256: str | None = None
    size_bytes: int | None = None
    free_inodes: int | None = None  # directories: their file system's free inodes


class PolicyMeter(Request):
    """A meter the host configured, by name: never its spec."""

    name: str
    driver: str
    tier: str
    idle_s: float | None = None  # each idle baseline a run with this meter takes when it sets none


class PolicyLimits(Request):
    max_threads: int | None
    max_iodepth: int | None
    max_bs_bytes: int | None
    max_bytes_written: int | None
    max_runtime_s: float | None
    # "auto" = the host's default (from its RAM / the target's free inodes)
    max_memory_bytes: int | Literal["auto"] | None = "auto"
    max_files: int | Literal["auto"] | None = "auto"


class PolicyReport(Request):
    """`inventory.policy`: iowatt_policy.ReportedPolicy on the wire (ReportedPolicy.to_dict())."""

    targets: list[PolicyTarget]
    meters: list[PolicyMeter]
    default_meter: str | None
    limits: PolicyLimits
    allowed_dbms: list[str] = []  # the DBMSs TPC-H runs may start
    mem_total_bytes: int | None = None  # the host's MemTotal: the default memory limit's base


class Capabilities(Request):
    """`inventory.capabilities`: what this agent build runs, so the server refuses at
    queue time a run the agent could not read (a missing field: an agent older than this)."""

    workload_kinds: list[str]  # WorkloadSpec.kind values: block, postmark, vdbench, heap_btree, tpch
    tpch_dbms: list[str]  # DBMSs whose server binaries are installed here (tpch needs one)
    multi_target: bool = True  # runs a lease on several targets at once (Lease.targets)
    # protocol 2 (protocol.py): left out of the JSON when None, as the previous release sent them
    protocol: int | None = Field(None, exclude_if=lambda v: v is None)
    engine_version: str | None = Field(None, exclude_if=lambda v: v is None)
    # the asynchronous ioengines the engine ran here (io_uring, libaio: engine_features.py)
    engine_features: list[str] | None = Field(None, exclude_if=lambda v: v is None)


# topology (agent/src/iowatt_agent/topology.py; the server suggests an environment's from it)


class TopologyMount(Request):
    mountpoint: str
    source: str
    fstype: str
    options: str
    major: int
    minor: int
    disk: str | None  # the kernel name of the block device (sda1, dm-0); null: none (tmpfs, btrfs)


class BtrfsFilesystem(Request):
    uuid: str
    label: str | None
    data_profile: str | None  # single, dup, raid0, raid1, raid1c3, raid1c4, raid5, raid6, raid10
    metadata_profile: str | None
    devices: list[str]  # kernel names of its member devices


class MdArray(Request):
    name: str
    level: str | None
    raid_disks: int | None
    members: list[str]  # active members (not spares or failed ones)
    spares: int
    chunk_bytes: int | None


class LvmVolume(Request):
    vg: str
    lv: str
    segtype: str | None
    stripes: int | None
    devices: list[str]
    dm_name: str | None


class QueueFacts(Request):
    name: str
    write_cache: str | None  # "write back" | "write through"
    nr_requests: int | None
    max_sectors_kb: int | None
    read_ahead_kb: int | None
    discard_max_bytes: int | None


class HostTopology(Request):
    mounts: list[TopologyMount] = Field(default_factory=list)
    btrfs: list[BtrfsFilesystem] = Field(default_factory=list)
    md: list[MdArray] = Field(default_factory=list)
    lvm: list[LvmVolume] = Field(default_factory=list)
    queues: list[QueueFacts] = Field(default_factory=list)


class Inventory(Request):
    hostname: str
    os: OsInfo
    cpu: CpuInfo
    mem_bytes: int
    virtualization: str | None
    block_devices: list[BlockDevice]
    mounts: list[Mount]
    policy: PolicyReport | None = None  # null: enrolment before any policy is read (the run reports it)
    capabilities: Capabilities | None = None
    topology: HostTopology | None = None  # null: not read (agents older than the environment model)


# --- enrolment and heartbeat -------------------------------------------------------------------


class EnrollRequest(Request):
    enrollment_token: str
    name: str
    hostname: str
    agent_version: str
    inventory: Inventory
    replace: bool = False


class EnrollResponse(Answer):
    agent_id: UUID
    agent_token: str
    team_id: UUID
    heartbeat_interval_s: float
    token_expires_at: datetime | None = None  # servers before docs/adr/0011 send none


AgentState = Literal["idle", "busy", "draining"]


class HeartbeatRequest(Request):
    state: AgentState
    current_run_id: UUID | None
    agent_version: str
    # the lease of the run this process holds now (taken, not yet reported), and the id this
    # process made at its start: the server fails at once a running run that another process
    # started and whose lease this one does not hold (it was lost in a restart)
    current_lease_id: UUID | None = None
    boot_id: UUID | None = None
    # this agent's clock when it sent the heartbeat: t0 of the clock exchange (clock.py)
    sent_at: datetime | None = None


class LeaseRequest(Request):
    """The body of a lease poll: the polling process's boot id (the one its heartbeats carry). The
    server then fails at once only running runs another process started; this process's own
    (a result uploading or waiting in the spool) stay running."""

    boot_id: UUID | None = None


class HeartbeatResponse(Answer):
    server_time: datetime  # t2 of the clock exchange: when the server answered
    received_at: datetime | None = None  # t1: when the server got the heartbeat (older servers: none)
    heartbeat_interval_s: float
    # when the token the heartbeat came with expires, and a new token's lifetime (docs/adr/0011);
    # absent from servers whose tokens never expire
    token_expires_at: datetime | None = None
    token_ttl_s: float | None = None


class TokenRotated(Answer):
    """POST /agents/{id}/token: the agent's new token; stored before it is used."""

    agent_token: str
    token_expires_at: datetime


# --- leases and runs ---------------------------------------------------------------------------


class LeaseGroup(Answer):
    group_id: UUID
    members: int
    start_tolerance_ns: int
    prepare_timeout_s: float | None = None  # servers before it sent none


class ClockSample(Request):
    offset_ns: int  # the server's clock minus this agent's
    round_trip_ns: int  # the exchange's round trip: the true offset lies within half of it


class ReadyRequest(Request):
    lease_id: UUID
    clock: ClockSample | None = None


class ReadyResponse(Answer):
    start_at: datetime | None  # server time; None: not yet, ask again
    stop: str | None = None  # the group stopped: do not start
    server_time: datetime


class StartedRequest(Request):
    lease_id: UUID
    started_at: datetime  # this agent's clock when it started the engine


class Lease(Answer):
    run_id: UUID
    lease_id: UUID
    lease_expires_at: datetime
    target_path: str
    # a multi-target run: every target's path in order (the first is target_path), each run by an
    # engine of its own at the same time (multi.py); None: the one target_path
    targets: list[str] | None = None
    # The engine's job as the server sends it, kept whole (nothing dropped) for the host policy:
    # a block job {"global": {...}, "jobs": [...]} with fio option names, or a file workload's
    # {"mode": "postmark", "commands": ...} / {"mode": "vdbench", "parameters", "scale", "elapsed"?}
    engine_job: dict[str, Any]
    timeout_s: float = Field(gt=0)
    # The run's meter by NAME on this host (ADR 0009 §4): null = the host's default, "" = none.
    # Never a spec: a value that looks like one is refused (meter.spec_from_server).
    meter: str | None = None
    idle_s: float | None = Field(default=None, ge=0)
    # The run's key for destructive writes to a raw device the host marked destructive.
    destructive: bool = False
    # a member of a group run: prepare, report ready, start at the instant the server answers
    # (group.py); None: start at once
    group: LeaseGroup | None = None


class LeaseResponse(Answer):
    lease: Lease | None
    # the wait the server names for the next lease request (servers since 0.x of session 25;
    # an older server names none: the agent keeps its 25 s)
    poll_wait_s: float | None = None


class StartRequest(Request):
    lease_id: UUID


class ProgressRequest(Request):
    lease_id: UUID
    job_index: int
    job_name: str
    percent: float
    elapsed_ns: int
    read_iops: float
    read_bw_bytes: int
    write_iops: float
    write_bw_bytes: int


class ProgressResponse(Answer):
    cancel_requested: bool
    lease_expires_at: datetime | None = None


# --- power samples (contract §4) ---------------------------------------------------------------

Tier = Literal["lab", "bmc", "pdu", "plug", "inband", "component", "estimate", "unknown"]
Quantity = Literal["power", "power_avg", "energy_counter"]


class PowerMeter(Request):
    name: str | None  # the meter's name on the host (null: a spec given to local `bench`)
    spec: str  # secrets (password=, community=) redacted
    driver: str  # "unknown" when the spec itself could not be used (status no_meter_data)
    model: str  # "" when the meter did not say
    tier: Tier
    quantity: Quantity
    accuracy_pct: float | None
    accuracy_w: float
    accuracy_declared: bool
    nominal_interval_s: float = Field(gt=0)


class PowerPhase(Request):
    name: Literal["idle_before", "load", "idle_after"]
    start_ns: int
    end_ns: int


class PowerSamples(Request):
    """Columnar: t_ns[i] (ns since t0_utc on the agent's monotonic clock) and value[i] (W, or J
    for energy_counter)."""

    t_ns: list[int]
    value: list[float]


class PowerCleaning(Request):
    dropped_nonfinite: int
    dropped_negative: int
    dropped_out_of_order: int
    dropped_duplicate: int


class PowerUpload(Request):
    meter: PowerMeter
    status: Literal["ok", "no_meter_data"]
    reason: str | None = Field(max_length=2000)
    t0_utc: datetime
    phases: list[PowerPhase]
    samples: PowerSamples
    cleaning: PowerCleaning


class TargetResultUpload(Request):
    """One target's engine document of a multi-target run (its place in Lease.targets)."""

    target_index: int
    engine_result: dict[str, Any]
    engine_exit_code: int


class ResultUpload(Request):
    lease_id: UUID
    upload_id: UUID
    engine_result: dict[str, Any] | None = None  # None: a multi-target run's (its `targets`)
    engine_exit_code: int
    started_at: datetime
    finished_at: datetime
    agent_version: str
    power: PowerUpload | None = None
    targets: list[TargetResultUpload] | None = None

    def wire_exclude(self) -> set[str] | None:
        # No meter: leave `power` out rather than send null (the same thing to a server that knows
        # the field), so servers from before contract §4, which forbid unknown fields, still
        # accept meterless results. A one-target run sends no `targets`, as before.
        left_out = {name for name in ("power", "targets", "engine_result") if getattr(self, name) is None}
        return left_out or None


class FailureReport(Request):
    lease_id: UUID
    upload_id: UUID
    reason: str
    exit_code: int | None
    stderr_tail: str
    cancelled: bool


class ErrorBody(Answer):
    error: str
    message: str = ""
    detail: Any = None
