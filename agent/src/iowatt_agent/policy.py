"""This host's policy (docs/adr/0009-host-policy.md): what the server's runs may touch here.

Two files in the state directory, both written 0600 by the local `iowatt-agent targets ...` and
`iowatt-agent meters ...` commands and read on every lease:

    policy.json   targets (directory / file / device by a /dev/disk/by-id/ link) and limits
    meters.json   wattmeters by name: {"meters": {NAME: {"spec": ..., "idle_s": ...}}, "default": NAME}
                  (specs may hold BMC or plug credentials: they never leave the host)

A file that is group/world-writable or not owned by the agent's uid is refused (whoever can
write it decides what runs touch). The old single-meter `meter.json` becomes the meter "default"
of `meters.json`, and the default, the first time `meters.json` is read.

The rules themselves are in `iowatt_policy` (libs/policy), shared with the server; this module
reads and writes the files, reports the policy (no secrets), builds the engine options the agent
alone sets (ADR 0009 §5) and writes the systemd drop-in that opens the targets to the service.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import hashlib
import json
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from iowatt_policy import (
    AGENT_ONLY_OPTIONS,
    BY_ID_PREFIX,
    MeterInfo,
    Policy,
    PolicyError,
    ReportedPolicy,
    Target,
    check_name,
)
from iowatt_workload import DEFAULT_IDLE_S

from .config import ConfigError, ensure_state_dir, write_private_file
from .meters import SCHEMES, MeterError, ParsedSpec, redact

POLICY_FILE = "policy.json"
METERS_FILE = "meters.json"
LEGACY_METER_FILE = "meter.json"
LEGACY_METER_NAME = "default"
DROPIN_DIR_ENV = "IOWATT_AGENT_SYSTEMD_DROPIN_DIR"
DEFAULT_DROPIN_DIR = Path("/etc/systemd/system/iowatt-agent.service.d")
DROPIN_FILE = "10-targets.conf"
BY_ID_DIR = Path(BY_ID_PREFIX)
MAX_FILE_BYTES = 1 << 20


class PolicyFileError(ConfigError):
    """policy.json or meters.json cannot be trusted or read; the message says what to do."""


# --- private files -------------------------------------------------------------------------------


def read_private_file(path: Path) -> str | None:
    """The text of a root-owned policy file, or None when it does not exist. Refuses a symlink,
    a file not owned by this process's uid, and a group/world-writable one."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise PolicyFileError(f"{path} is a symbolic link: refusing to read it") from None
        raise PolicyFileError(f"cannot read {path}: {exc.strerror}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise PolicyFileError(f"{path} is not a regular file")
        uid = os.geteuid()
        if st.st_uid != uid:
            raise PolicyFileError(
                f"{path} is owned by uid {st.st_uid}, not by the agent's uid {uid}: refusing it "
                f"(whoever can write it decides what runs touch); fix with `chown {uid} {path}`"
            )
        if st.st_mode & 0o022:
            raise PolicyFileError(
                f"{path} is group- or world-writable (mode {stat.S_IMODE(st.st_mode):o}): refusing it; "
                f"fix with `chmod 600 {path}`"
            )
        parent = os.stat(path.parent)
        if parent.st_uid != uid or parent.st_mode & 0o022:
            raise PolicyFileError(
                f"{path.parent} (holding {path.name}) is not the agent's own private directory (owner uid "
                f"{parent.st_uid}, mode {stat.S_IMODE(parent.st_mode):o}): anyone who can write there can "
                f"replace the file; fix with `chown {uid} {path.parent} && chmod 700 {path.parent}`"
            )
        if st.st_size > MAX_FILE_BYTES:
            raise PolicyFileError(f"{path} is larger than {MAX_FILE_BYTES} bytes")
        with os.fdopen(os.dup(fd), "r", encoding="utf-8") as f:
            return f.read()
    finally:
        os.close(fd)


def _load_json(path: Path) -> Any | None:
    text = read_private_file(path)
    if text is None:
        return None
    try:
        return json.loads(text)
    except ValueError as exc:
        raise PolicyFileError(f"{path} is not valid JSON: {exc}") from None


def _save_json(state_dir: Path, name: str, doc: Any) -> Path:
    ensure_state_dir(state_dir)
    path = state_dir / name
    write_private_file(path, (json.dumps(doc, indent=2) + "\n").encode())
    return path


# --- policy.json ---------------------------------------------------------------------------------


def load_policy(state_dir: Path) -> Policy:
    """The host's policy; an empty one (nothing allowed) when there is no policy.json."""
    path = state_dir / POLICY_FILE
    doc = _load_json(path)
    if doc is None:
        return Policy()
    try:
        return Policy.from_dict(doc)
    except PolicyError as exc:
        raise PolicyFileError(f"{path}: {exc}") from None


def save_policy(state_dir: Path, policy: Policy) -> Path:
    return _save_json(state_dir, POLICY_FILE, policy.to_dict())


# --- meters.json -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class MeterEntry:
    spec: str
    idle_s: float | None = None


@dataclass
class Meters:
    meters: dict[str, MeterEntry] = field(default_factory=dict)
    default: str | None = None

    def put(self, name: str, spec: str, idle_s: float | None, *, default: bool = False) -> None:
        """Store a meter under `name`; the first meter (or one put with default=True) is the default."""
        self.meters[name] = MeterEntry(spec, idle_s)
        if default or self.default is None:
            self.default = name

    def to_dict(self) -> dict[str, Any]:
        return {
            "meters": {
                name: {"spec": m.spec, **({"idle_s": m.idle_s} if m.idle_s is not None else {})}
                for name, m in sorted(self.meters.items())
            },
            "default": self.default,
        }

    @classmethod
    def from_dict(cls, doc: Any, where: str) -> Meters:
        if not isinstance(doc, dict) or not isinstance(doc.get("meters", {}), dict):
            raise PolicyFileError(
                f"{where}: expected {{'meters': {{NAME: {{'spec': ...}}}}, 'default': NAME}}"
            )
        meters: dict[str, MeterEntry] = {}
        for name, raw in doc.get("meters", {}).items():
            try:
                check_name(name, "name")
            except PolicyError as exc:
                raise PolicyFileError(f"{where}: meter {exc}") from None
            if not isinstance(raw, dict) or not isinstance(raw.get("spec"), str) or not raw["spec"]:
                raise PolicyFileError(f"{where}: meter {name!r} has no spec")
            idle = raw.get("idle_s")
            if idle is not None and (isinstance(idle, bool) or not isinstance(idle, int | float) or idle < 0):
                raise PolicyFileError(f"{where}: meter {name!r}: idle_s must be a number >= 0")
            meters[name] = MeterEntry(raw["spec"], float(idle) if idle is not None else None)
        default = doc.get("default")
        if default is not None and default not in meters:
            raise PolicyFileError(f"{where}: default meter {default!r} is not one of its meters")
        return cls(meters, default)

    def info(self, default_idle_s: float | None = None) -> tuple[MeterInfo, ...]:
        """What the server may know of each meter; `default_idle_s` is the agent's own idle
        setting, reported for meters without one of their own (the idle a run takes with it)."""
        return tuple(
            meter_info(name, m.spec, m.idle_s if m.idle_s is not None else default_idle_s)
            for name, m in sorted(self.meters.items())
        )


def meter_info(name: str, spec: str, idle_s: float | None = None) -> MeterInfo:
    """Name, driver, tier and idle baseline of a meter: what the server may know of it."""
    scheme = ParsedSpec.parse(spec.strip()).scheme
    driver = SCHEMES.get(scheme)
    if driver is None:  # not an in-band sensor
        return MeterInfo(name=name, driver="unknown", tier="unknown", idle_s=idle_s)
    return MeterInfo(name=name, driver=driver.scheme, tier=driver.tier, idle_s=idle_s)


def load_meters(state_dir: Path) -> Meters:
    """The host's meters; migrates the old single `meter.json` into `meters.json` first."""
    path = state_dir / METERS_FILE
    doc = _load_json(path)
    if doc is None:
        legacy = _load_json(state_dir / LEGACY_METER_FILE)
        if legacy is None:
            return Meters()
        if not isinstance(legacy, dict) or not isinstance(legacy.get("spec"), str):
            raise PolicyFileError(f"{state_dir / LEGACY_METER_FILE} is not a valid meter config")
        idle = legacy.get("idle_s")
        entry = MeterEntry(legacy["spec"], float(idle) if isinstance(idle, int | float) else None)
        meters = Meters({LEGACY_METER_NAME: entry}, LEGACY_METER_NAME)
        if os.access(state_dir, os.W_OK):
            save_meters(state_dir, meters)
            (state_dir / LEGACY_METER_FILE).unlink(missing_ok=True)
        return meters
    return Meters.from_dict(doc, str(path))


def save_meters(state_dir: Path, meters: Meters) -> Path:
    return _save_json(state_dir, METERS_FILE, meters.to_dict())


def redacted(spec: str) -> str:
    return redact(spec)


# --- the report ------------------------------------------------------------------------------------


def device_facts(target: Target, sys_root: Path = Path("/")) -> Target:
    """A device target with the model, serial hash and size of the device its link points at."""
    from .hostfacts import hash_serial

    if target.kind != "device":
        return target
    name = os.path.basename(os.path.realpath(target.path))
    block = sys_root / "sys" / "class" / "block" / name
    size = None
    with contextlib.suppress(OSError, ValueError):
        size = int((block / "size").read_text().strip()) * 512
    # a partition's model and serial are its disk's
    disk = block if (block / "device").exists() else block.resolve().parent

    def read(p: Path) -> str | None:
        try:
            return " ".join(p.read_text(errors="replace").split()) or None
        except OSError:
            return None

    model = read(disk / "device" / "model")
    serial = read(disk / "device" / "serial") or read(disk / "serial") or read(disk / "device" / "wwid")
    return Target(
        path=target.path,
        kind=target.kind,
        writable=target.writable,
        destructive=target.destructive,
        model=model,
        serial_sha256=hash_serial(serial),
        size_bytes=size,
    )


def free_inodes(path: str) -> int | None:
    """The inodes still free to an unprivileged user on `path`'s file system (statvfs
    f_favail), rounded down to two significant digits (so the report, and its fingerprint, do
    not change with every file someone creates: the inventory is re-sent when it changes); None
    when the file system does not count inodes (btrfs reports f_files 0) or cannot be read."""
    try:
        st = os.statvfs(path)
    except OSError:
        return None
    if st.f_files <= 0:
        return None
    free = int(st.f_favail)
    step: int = 10 ** max(0, len(str(free)) - 2)
    return free // step * step


def directory_facts(target: Target) -> Target:
    """A directory target with its file system's free inodes (the default files limit)."""
    if target.kind != "directory":
        return target
    return dataclasses.replace(target, free_inodes=free_inodes(target.path))


def report(
    policy: Policy,
    meters: Meters,
    *,
    mem_total_bytes: int | None = None,
    idle_s: float | None = DEFAULT_IDLE_S,
) -> ReportedPolicy:
    """What the inventory carries (`inventory.policy`) and what every lease is checked against:
    targets with their facts (devices: model, serial hash, size; directories: free inodes), each
    meter's idle baseline (its own, else `idle_s`: the agent's setting) and the host's MemTotal,
    which the default memory limit derives from (read here when not given)."""
    from .hostfacts import read_mem_bytes

    return ReportedPolicy.from_policy(
        policy,
        meters=meters.info(idle_s),
        default_meter=meters.default,
        targets=[directory_facts(device_facts(t)) for t in policy.targets],
        mem_total_bytes=mem_total_bytes if mem_total_bytes is not None else read_mem_bytes() or None,
    )


def load_report(state_dir: Path) -> ReportedPolicy:
    return report(load_policy(state_dir), load_meters(state_dir))


def fingerprint(reported: ReportedPolicy) -> str:
    return hashlib.sha256(json.dumps(reported.to_dict(), sort_keys=True).encode()).hexdigest()


# --- what the engine gets (ADR 0009 §5) ------------------------------------------------------------


def engine_options(
    kind: str, resolved: str, run_key: str, *, writable: bool, destructive: bool, run_dir: Path | None = None
) -> tuple[dict[str, str], Path | None]:
    """The options only the agent sets (ADR 0009 §5) for a target of `kind` at `resolved` (the
    path the engine opens), and the data file of a directory target. `writable`: the host lets
    runs write this file; `destructive`: both keys of a device (host and run) are given.
    `run_dir`: a directory target's run of jobs that make files of their own (nrfiles, filesize,
    a job file's directory: libs/policy's multi_file) runs in this directory the agent made beneath
    the target, confined to it, the engine naming the files (fio's $jobname.$jobnum.$filenum);
    it is returned as the data file, removed with everything in it after the run."""
    if kind == "directory" and run_dir is not None:
        if os.path.normpath(run_dir.parent) != os.path.normpath(resolved):
            raise ValueError(f"run directory {run_dir} is not directly in the target {resolved}")
        return {"directory": str(run_dir), "beneath": str(run_dir), "unlink": "1"}, run_dir
    if kind == "directory":
        data_file = Path(resolved) / f"iowatt-{run_key}.dat"
        return {"filename": str(data_file), "beneath": resolved, "create_new": "1", "unlink": "1"}, data_file
    if kind == "file":
        # beneath its own directory too: a file swapped for a symlink during the run is not followed
        options = {"filename": resolved, "beneath": os.path.dirname(resolved), "keep_existing": "1"}
        return {**options, **({} if writable else {"readonly": "1"})}, None
    if kind == "device":
        return {"filename": resolved, **({"destructive": "1"} if destructive else {"readonly": "1"})}, None
    raise ValueError(f"unknown target kind {kind!r}")


def engine_job_for(
    engine_job: dict[str, Any],
    *,
    target: Target,
    resolved: str,
    run_key: str,
    destructive: bool,
    run_dir: Path | None = None,
) -> tuple[dict[str, Any], Path | None]:
    """The job file the engine runs: the (already checked) job plus the agent's own options from
    the host's target. Returns it and a directory target's data file (removed after the run if
    the engine left it behind), or `run_dir` (engine_options)."""
    options, data_file = engine_options(
        target.kind,
        resolved,
        run_key,
        writable=target.writable,
        destructive=target.destructive and destructive,
        run_dir=run_dir,
    )
    return with_agent_options(engine_job, options), data_file


def with_agent_options(engine_job: dict[str, Any], options: dict[str, str]) -> dict[str, Any]:
    """`engine_job` with `options` in its global section. A job that sets any agent-only option
    itself is refused (check_run refuses it first; nothing is ever stripped silently)."""
    glob = dict(engine_job.get("global") or {})
    jobs = [dict(j) for j in engine_job.get("jobs") or []]
    if not jobs:
        raise ValueError("engine job has no jobs")
    clash = sorted(k for k in AGENT_ONLY_OPTIONS if k in glob or any(k in j for j in jobs))
    if clash:
        raise ValueError(f"the job sets {', '.join(clash)}, which only the agent sets")
    glob.update(options)
    return {"global": glob, "jobs": jobs}


def local_target(path: str) -> tuple[str, str]:
    """`bench --target PATH` (the local root user's own choice): (kind, real path). The same
    kinds, and so the same safe engine options, as a server run."""
    if not path:
        raise ValueError("target path is empty")
    absolute = os.path.abspath(path)
    try:
        st = os.stat(absolute)
    except OSError as exc:
        raise ValueError(
            f"target {path}: {exc.strerror} (give a directory, an existing file or a block device)"
        ) from None
    real = os.path.realpath(absolute)
    if stat.S_ISDIR(st.st_mode):
        return "directory", real
    if stat.S_ISREG(st.st_mode):
        return "file", real
    if stat.S_ISBLK(st.st_mode):
        return "device", real
    raise ValueError(f"target {path}: not a directory, regular file or block device")


def by_id_links(device: str, by_id_dir: Path = BY_ID_DIR) -> list[str]:
    """The stable /dev/disk/by-id/ names that point at `device` (its real path)."""
    real = os.path.realpath(device)
    try:
        names = sorted(os.listdir(by_id_dir))
    except OSError:
        return []
    return [str(by_id_dir / n) for n in names if os.path.realpath(by_id_dir / n) == real]


# --- systemd ---------------------------------------------------------------------------------------


def dropin_dir() -> Path | None:
    """Where the drop-in goes: $IOWATT_AGENT_SYSTEMD_DROPIN_DIR, or the system's when systemd runs."""
    env = os.environ.get(DROPIN_DIR_ENV)
    if env:
        return Path(env)
    if Path("/run/systemd/system").is_dir():
        return DEFAULT_DROPIN_DIR
    return None


def dropin_text(policy: Policy) -> str:
    lines = [
        "# Written by `iowatt-agent targets` from the host policy: the service may write where runs",
        "# may write, and open the raw devices the host allows. Do not edit: it is rewritten on",
        "# every change of the targets.",
        "[Service]",
    ]
    for t in policy.targets:
        if t.kind == "directory" or (t.kind == "file" and t.writable):
            lines.append(f"ReadWritePaths=-{t.path}")
    for t in policy.targets:
        if t.kind == "device":
            lines.append(f"DeviceAllow={t.path} {'rw' if t.destructive else 'r'}")
    return "\n".join(lines) + "\n"


def write_dropin(policy: Policy, directory: Path | None = None) -> Path | None:
    """Write/refresh the drop-in; None when there is no systemd here (and no override)."""
    directory = directory or dropin_dir()
    if directory is None:
        return None
    directory.mkdir(parents=True, exist_ok=True, mode=0o755)
    path = directory / DROPIN_FILE
    write_private_file(path, dropin_text(policy).encode(), mode=0o644)
    return path


__all__ = [
    "DROPIN_DIR_ENV",
    "METERS_FILE",
    "POLICY_FILE",
    "MeterEntry",
    "MeterError",
    "Meters",
    "PolicyFileError",
    "by_id_links",
    "device_facts",
    "directory_facts",
    "free_inodes",
    "dropin_text",
    "engine_job_for",
    "engine_options",
    "with_agent_options",
    "fingerprint",
    "load_meters",
    "load_policy",
    "load_report",
    "local_target",
    "meter_info",
    "redacted",
    "report",
    "save_meters",
    "save_policy",
    "write_dropin",
]
