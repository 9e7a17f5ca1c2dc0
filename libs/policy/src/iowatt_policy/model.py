"""The host policy (ADR 0009 §1, §4): what runs may touch on this host and within which limits.

`Policy` is what the host's `policy.json` holds (targets and limits, changed only by the local
`iowatt-agent targets ...` commands). `ReportedPolicy` is what the agent sends in its inventory
and what `check_run()` judges: the same targets (devices with model, serial hash and size), the
meters by name with driver and tier, the default meter's name and the limits. Neither ever holds
a meter spec or a secret: specs stay in the host's `meters.json`.

Every `from_dict()` validates and raises `PolicyError` naming the bad field, so the server can
turn a bad inventory into a 422 and the agent a bad file into a clear error.
"""

from __future__ import annotations

import math
import posixpath
from dataclasses import dataclass, field, fields, replace
from typing import Any, Literal, cast

TargetKind = Literal["directory", "file", "device"]
TARGET_KINDS: tuple[TargetKind, ...] = ("directory", "file", "device")
BY_ID_PREFIX = "/dev/disk/by-id/"
MAX_TARGETS = 200  # the server's bounds on inventory.policy (backend/agent/schemas.py)
MAX_METERS = 50
MAX_COUNT_LIMIT = 2**31  # threads, iodepth
MAX_BYTES_LIMIT = 2**63 - 1
MAX_RUNTIME_LIMIT_S = 1e9
MAX_IDLE_S = 1e9  # a meter's reported idle baseline, seconds
MAX_PATH_CHARS = 4096
MAX_NAME_CHARS = 64
SCHEMA_VERSION = 1
# DBMSs a TPC-H-derived run may start on the host: a private instance, run as the
# DBMS's package user, data inside the run's directory; only those the host consented to
KNOWN_DBMS = ("postgresql", "mariadb")
MAX_DBMS = 16


class PolicyError(ValueError):
    """A policy (file or reported) that does not follow the model; `field` names where."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


def check_path(path: object, field_name: str = "path") -> str:
    """An absolute, normalised path: no `.`/`..` components, no `//`, no trailing `/`, no NUL."""
    if not isinstance(path, str) or not path:
        raise PolicyError(field_name, "must be a non-empty string")
    if len(path) > MAX_PATH_CHARS:
        raise PolicyError(field_name, f"longer than {MAX_PATH_CHARS} characters")
    if "\x00" in path or "\n" in path:
        raise PolicyError(field_name, "must not contain NUL or newline characters")
    if not path.startswith("/"):
        raise PolicyError(field_name, f"must be an absolute path, got {path!r}")
    if path != "/" and (posixpath.normpath(path) != path or path.startswith("//")):
        raise PolicyError(
            field_name,
            f"{path!r} is not normalised (no '.', '..', '//' or trailing '/'): write it as "
            f"{posixpath.normpath(path)!r}",
        )
    return path


def check_name(name: object, field_name: str = "name") -> str:
    """A meter name: 1-64 of letters, digits, '_', '.', '-' (never a spec: no ':')."""
    if not isinstance(name, str) or not name:
        raise PolicyError(field_name, "must be a non-empty string")
    if len(name) > MAX_NAME_CHARS:
        raise PolicyError(field_name, f"longer than {MAX_NAME_CHARS} characters")
    if not all(c.isascii() and (c.isalnum() or c in "_.-") for c in name):
        raise PolicyError(field_name, f"{name!r}: use letters, digits, '_', '.' or '-'")
    return name


def _bool(doc: dict[str, Any], key: str, where: str, default: bool | None = None) -> bool:
    value = doc.get(key, default)
    if not isinstance(value, bool):
        raise PolicyError(f"{where}.{key}", "must be true or false")
    return value


def _opt_str(doc: dict[str, Any], key: str, where: str, max_chars: int = 200) -> str | None:
    value = doc.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or len(value) > max_chars or "\x00" in value:
        raise PolicyError(f"{where}.{key}", f"must be a string of at most {max_chars} characters")
    return value


def _opt_count(doc: dict[str, Any], key: str, where: str) -> int | None:
    value = doc.get(key)
    if value is not None and (
        isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_BYTES_LIMIT
    ):
        raise PolicyError(f"{where}.{key}", "must be an integer >= 0 or null")
    return value


def _obj(doc: object, where: str) -> dict[str, Any]:
    if not isinstance(doc, dict):
        raise PolicyError(where, "must be an object")
    return cast(dict[str, Any], doc)


@dataclass(frozen=True)
class Target:
    """One allowed target.

    directory  the agent creates its own data file in it (`iowatt-<run>.dat`, removed after the
               run) and may always write that file; `writable` is true.
    file       an existing file used as is: never extended, read-only unless the host allowed
               writes (`targets add --file PATH --allow-write`, `writable` true).
    device     a raw block device named by a stable /dev/disk/by-id/ link: read-only unless the host
               marked it `destructive` (then `writable` is true too), and even then written only
               by runs that carry `destructive: true` (the second key).
    """

    path: str
    kind: TargetKind
    writable: bool
    destructive: bool = False
    # devices, as reported (filled in by the agent from sysfs; never in policy.json)
    model: str | None = None
    serial_sha256: str | None = None
    size_bytes: int | None = None
    # directories, as reported: the file system's inodes an unprivileged user may still take
    # (statvfs f_favail); None when it does not count inodes (btrfs: f_files 0) or is unknown
    free_inodes: int | None = None

    def __post_init__(self) -> None:
        check_path(self.path)
        if self.kind not in TARGET_KINDS:
            raise PolicyError("kind", f"must be one of {', '.join(TARGET_KINDS)}, got {self.kind!r}")
        if self.kind == "directory" and not self.writable:
            raise PolicyError("writable", "a directory target is always writable (the agent's own file)")
        if self.kind != "device" and self.destructive:
            raise PolicyError("destructive", "only a device target can be destructive")
        if self.kind == "device":
            if not self.path.startswith(BY_ID_PREFIX):
                raise PolicyError(
                    "path", f"a device target is named by a stable {BY_ID_PREFIX}... link, got {self.path!r}"
                )
            if self.writable != self.destructive:
                raise PolicyError("writable", "a device target is writable exactly when it is destructive")
        if self.size_bytes is not None and self.size_bytes < 0:
            raise PolicyError("size_bytes", "must be >= 0")
        if self.free_inodes is not None and self.free_inodes < 0:
            raise PolicyError("free_inodes", "must be >= 0")

    @classmethod
    def directory(cls, path: str) -> Target:
        return cls(path=path, kind="directory", writable=True)

    @classmethod
    def file(cls, path: str, *, allow_write: bool = False) -> Target:
        return cls(path=path, kind="file", writable=allow_write)

    @classmethod
    def device(cls, path: str, *, destructive: bool = False) -> Target:
        return cls(path=path, kind="device", writable=destructive, destructive=destructive)

    def to_dict(self, *, facts: bool = True) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "path": self.path,
            "kind": self.kind,
            "writable": self.writable,
            "destructive": self.destructive,
        }
        if facts and self.kind == "device":
            doc.update(model=self.model, serial_sha256=self.serial_sha256, size_bytes=self.size_bytes)
        if facts and self.kind == "directory":
            doc.update(free_inodes=self.free_inodes)
        return doc

    @classmethod
    def from_dict(cls, raw: object, where: str = "targets.0") -> Target:
        doc = _obj(raw, where)
        kind = doc.get("kind")
        if kind not in TARGET_KINDS:
            raise PolicyError(f"{where}.kind", f"must be one of {', '.join(TARGET_KINDS)}")
        size = _opt_count(doc, "size_bytes", where)
        inodes = _opt_count(doc, "free_inodes", where)
        try:
            return cls(
                path=check_path(doc.get("path"), f"{where}.path"),
                kind=cast(TargetKind, kind),
                writable=_bool(doc, "writable", where, default=kind == "directory"),
                destructive=_bool(doc, "destructive", where, default=False),
                model=_opt_str(doc, "model", where),
                serial_sha256=_opt_str(doc, "serial_sha256", where, 64),
                size_bytes=size,
                free_inodes=inodes,
            )
        except PolicyError as exc:
            if exc.field.startswith(where):
                raise
            raise PolicyError(f"{where}.{exc.field}", exc.message) from None


# Limit defaults: generous for every built-in preset (CrystalDiskMark's RND4K Q32T16 is 16 threads
# at depth 32, the DiskSpd sweep goes to 16 MiB blocks) yet bounded; `None` = no limit.
DEFAULT_MAX_THREADS = 64
DEFAULT_MAX_IODEPTH = 256
DEFAULT_MAX_BS_BYTES = 64 * 1024 * 1024
DEFAULT_MAX_BYTES_WRITTEN: int | None = None
DEFAULT_MAX_RUNTIME_S = 6 * 3600.0
# Memory and files: by default derived from the host, "auto" in policy.json; the host's
# explicit value (or none) wins. memory: this fraction of the host's MemTotal; files (files +
# directories a run lays out in a directory target): this fraction of the target file system's
# free inodes, and never more than DEFAULT_MAX_FILES_CAP (the largest seed file set, vdbench's
# small set, has 1,638,400 files at scale 1: the cap leaves six times that).
AUTO: Literal["auto"] = "auto"
DEFAULT_MEMORY_FRACTION = 0.5
DEFAULT_FILES_FRACTION = 0.5
DEFAULT_MAX_FILES_CAP = 10_000_000
AUTO_LIMITS = ("max_memory_bytes", "max_files")


@dataclass(frozen=True)
class Limits:
    """What one run may ask of this host (`iowatt-agent targets limits`); None = unlimited.

    max_threads        threads running at the same time: the sum of `numjobs` over the jobs of one
                       stonewall group that can run together (jobs without `stonewall` run with the
                       previous one; a job with `wait_for` never beside the jobs it waits for), so
                       also the `numjobs` of any single job; `io_submit_mode=offload` adds each
                       clone's `iodepth` submission threads.
    max_iodepth        `iodepth` of any job (as given, whatever the ioengine).
    max_bs_bytes       the largest block size of any job: `bs` (both of `R,W`) and every `bssplit`
                       entry.
    max_bytes_written  bytes the whole run may write: per writing job numjobs x loops x (io_size or
                       size, or the device's size), plus the layout of a directory target's data
                       file (its largest offset+size). A time-based writing job is bounded only by
                       `rate_iops` x (ramp_time + runtime) x its write block size; without
                       rate_iops it is unbounded and refused while this limit is set.
    max_runtime_s      the run's declared duration: the sum over stonewall groups of the longest
                       ramp_time + runtime; the agent also never lets the engine run longer than
                       1.5 x this + 300 s (layout and slack), so size-bound jobs are capped too.
    max_memory_bytes   memory the run may need on the host, as `memory.py`'s one bound computes
                       it from the job (buffers, per-thread and per-file state, a DBMS's cache).
                       "auto" (the default): DEFAULT_MEMORY_FRACTION of the host's MemTotal.
    max_files          files + directories a run lays out in its directory target (the engine's
                       bounds). "auto" (the default): DEFAULT_FILES_FRACTION of the target file
                       system's free inodes, at most DEFAULT_MAX_FILES_CAP.
    """

    max_threads: int | None = DEFAULT_MAX_THREADS
    max_iodepth: int | None = DEFAULT_MAX_IODEPTH
    max_bs_bytes: int | None = DEFAULT_MAX_BS_BYTES
    max_bytes_written: int | None = DEFAULT_MAX_BYTES_WRITTEN
    max_runtime_s: float | None = DEFAULT_MAX_RUNTIME_S
    max_memory_bytes: int | Literal["auto"] | None = AUTO
    max_files: int | Literal["auto"] | None = AUTO

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if value is None or (f.name in AUTO_LIMITS and value == AUTO):
                continue
            if f.name == "max_runtime_s":
                ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
                ok = ok and 0 < value <= MAX_RUNTIME_LIMIT_S
            else:
                top = MAX_COUNT_LIMIT if f.name in ("max_threads", "max_iodepth") else MAX_BYTES_LIMIT
                ok = isinstance(value, int) and not isinstance(value, bool) and 0 < value <= top
            if not ok:
                kind = "number" if f.name == "max_runtime_s" else "integer"
                auto = ', "auto"' if f.name in AUTO_LIMITS else ""
                raise PolicyError(f.name, f"must be a positive {kind}{auto} or null")

    def to_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_dict(cls, raw: object, where: str = "limits") -> Limits:
        doc = _obj(raw, where)
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(doc) - known)
        if unknown:
            raise PolicyError(f"{where}.{unknown[0]}", f"unknown limit (known: {', '.join(sorted(known))})")
        try:
            return cls(**{k: doc[k] for k in known if k in doc})
        except PolicyError as exc:
            raise PolicyError(f"{where}.{exc.field}", exc.message) from None

    def updated(self, **changes: Any) -> Limits:
        return replace(self, **changes)


def _dbms_from(raw: object, where: str, *, known_only: bool) -> tuple[str, ...]:
    """The DBMSs the host consented to start: unique names; the host's own file knows only
    KNOWN_DBMS, a reported policy any plain name (a newer agent may run more)."""
    if not isinstance(raw, list) or len(raw) > MAX_DBMS:
        raise PolicyError(where, f"must be a list of at most {MAX_DBMS} DBMS names")
    names: list[str] = []
    for i, name in enumerate(raw):
        check_name(name, f"{where}.{i}")
        if known_only and name not in KNOWN_DBMS:
            raise PolicyError(f"{where}.{i}", f"{name!r} is not one of {', '.join(KNOWN_DBMS)}")
        if name in names:
            raise PolicyError(f"{where}.{i}", f"{name} is listed twice")
        names.append(name)
    return tuple(names)


def _targets_from(raw: object, where: str) -> tuple[Target, ...]:
    if not isinstance(raw, list):
        raise PolicyError(where, "must be a list")
    if len(raw) > MAX_TARGETS:
        raise PolicyError(where, f"more than {MAX_TARGETS} targets")
    targets = tuple(Target.from_dict(t, f"{where}.{i}") for i, t in enumerate(raw))
    seen: set[str] = set()
    for i, t in enumerate(targets):
        if t.path in seen:
            raise PolicyError(f"{where}.{i}.path", f"{t.path} is listed twice")
        seen.add(t.path)
    return targets


@dataclass(frozen=True)
class Policy:
    """The host's policy file (`policy.json`): targets, limits and the DBMSs a run may start
    (`iowatt-agent targets allow-dbms NAME`; none by default). An empty policy allows nothing."""

    targets: tuple[Target, ...] = ()
    limits: Limits = field(default_factory=Limits)
    allowed_dbms: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        _dbms_from(list(self.allowed_dbms), "allowed_dbms", known_only=True)

    def target(self, path: str) -> Target | None:
        return next((t for t in self.targets if t.path == path), None)

    def with_target(self, target: Target) -> Policy:
        """Add `target`, or replace the target with the same path in its place (adding twice is
        harmless)."""
        if self.target(target.path) is None:
            if len(self.targets) >= MAX_TARGETS:
                raise PolicyError("targets", f"at most {MAX_TARGETS} targets (remove one first)")
            return replace(self, targets=(*self.targets, target))
        return replace(self, targets=tuple(target if t.path == target.path else t for t in self.targets))

    def without_target(self, path: str) -> Policy:
        return replace(self, targets=tuple(t for t in self.targets if t.path != path))

    def with_dbms(self, name: str) -> Policy:
        """Consent to start `name` (one of KNOWN_DBMS); allowing it twice is harmless."""
        if name in self.allowed_dbms:
            return self
        return replace(self, allowed_dbms=(*self.allowed_dbms, name))

    def without_dbms(self, name: str) -> Policy:
        return replace(self, allowed_dbms=tuple(d for d in self.allowed_dbms if d != name))

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": SCHEMA_VERSION,
            "targets": [t.to_dict(facts=False) for t in self.targets],
            "limits": self.limits.to_dict(),
            "allowed_dbms": list(self.allowed_dbms),
        }

    @classmethod
    def from_dict(cls, raw: object) -> Policy:
        doc = _obj(raw, "policy")
        version = doc.get("version", SCHEMA_VERSION)
        if version != SCHEMA_VERSION:
            raise PolicyError(
                "version", f"unsupported policy version {version!r} (this agent reads {SCHEMA_VERSION})"
            )
        return cls(
            targets=_targets_from(doc.get("targets", []), "targets"),
            limits=Limits.from_dict(doc.get("limits", {})),
            allowed_dbms=_dbms_from(doc.get("allowed_dbms", []), "allowed_dbms", known_only=True),
        )


@dataclass(frozen=True)
class MeterInfo:
    """A meter as reported: its name on this host, driver (scheme) and accuracy tier. No spec."""

    name: str
    driver: str
    tier: str
    # seconds of each idle baseline (before and after the load) a run measured with this meter
    # takes when the run sets none: the meter's own idle setting, else the agent's default; None
    # from an agent that does not report it (the New-run page's duration estimate counts it)
    idle_s: float | None = None

    def to_dict(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"name": self.name, "driver": self.driver, "tier": self.tier}
        if self.idle_s is not None:
            doc["idle_s"] = self.idle_s
        return doc

    @classmethod
    def from_dict(cls, raw: object, where: str = "meters.0") -> MeterInfo:
        doc = _obj(raw, where)
        name = check_name(doc.get("name"), f"{where}.name")
        driver = _opt_str(doc, "driver", where, 50)
        tier = _opt_str(doc, "tier", where, 32)
        if not driver or not tier:
            raise PolicyError(f"{where}.{'driver' if not driver else 'tier'}", "must be a non-empty string")
        idle = doc.get("idle_s")
        if idle is not None and (
            isinstance(idle, bool) or not isinstance(idle, int | float) or not 0 <= idle <= MAX_IDLE_S
        ):
            raise PolicyError(
                f"{where}.idle_s", f"must be a number of seconds from 0 to {MAX_IDLE_S:g} or null"
            )
        return cls(name=name, driver=driver, tier=tier, idle_s=None if idle is None else float(idle))


@dataclass(frozen=True)
class ReportedPolicy:
    """What the agent reports in `inventory.policy` and what `check_run()` judges."""

    targets: tuple[Target, ...] = ()
    meters: tuple[MeterInfo, ...] = ()
    default_meter: str | None = None
    limits: Limits = field(default_factory=Limits)
    allowed_dbms: tuple[str, ...] = ()
    # the host's MemTotal (/proc/meminfo), which "auto" memory limits derive from; None: an
    # agent built before memory limits (the server then leaves the memory limit to the agent's check)
    mem_total_bytes: int | None = None

    def __post_init__(self) -> None:
        _dbms_from(list(self.allowed_dbms), "allowed_dbms", known_only=False)
        if self.mem_total_bytes is not None and not 0 <= self.mem_total_bytes <= MAX_BYTES_LIMIT:
            raise PolicyError("mem_total_bytes", "must be an integer >= 0 or null")
        names = [m.name for m in self.meters]
        if len(names) != len(set(names)):
            raise PolicyError("meters", "meter names must be unique")
        if self.default_meter is not None and self.default_meter not in names:
            raise PolicyError("default_meter", f"{self.default_meter!r} is not one of the meters")

    @classmethod
    def from_policy(
        cls,
        policy: Policy,
        *,
        meters: tuple[MeterInfo, ...] | list[MeterInfo] = (),
        default_meter: str | None = None,
        targets: tuple[Target, ...] | list[Target] | None = None,
        mem_total_bytes: int | None = None,
    ) -> ReportedPolicy:
        """The report of `policy`; `targets` replaces its targets (the agent passes them with
        device and directory facts filled in), `mem_total_bytes` is the host's MemTotal."""
        return cls(
            targets=tuple(policy.targets if targets is None else targets),
            meters=tuple(meters),
            default_meter=default_meter,
            limits=policy.limits,
            allowed_dbms=policy.allowed_dbms,
            mem_total_bytes=mem_total_bytes,
        )

    def target(self, path: str) -> Target | None:
        return next((t for t in self.targets if t.path == path), None)

    def meter(self, name: str) -> MeterInfo | None:
        return next((m for m in self.meters if m.name == name), None)

    def to_dict(self) -> dict[str, Any]:
        return {
            "targets": [t.to_dict() for t in self.targets],
            "meters": [m.to_dict() for m in self.meters],
            "default_meter": self.default_meter,
            "limits": self.limits.to_dict(),
            "allowed_dbms": list(self.allowed_dbms),
            "mem_total_bytes": self.mem_total_bytes,
        }

    @classmethod
    def from_dict(cls, raw: object) -> ReportedPolicy:
        doc = _obj(raw, "policy")
        meters_raw = doc.get("meters", [])
        if not isinstance(meters_raw, list) or len(meters_raw) > MAX_METERS:
            raise PolicyError("meters", f"must be a list of at most {MAX_METERS} meters")
        default = doc.get("default_meter")
        if default is not None:
            default = check_name(default, "default_meter")
        return cls(
            targets=_targets_from(doc.get("targets", []), "targets"),
            meters=tuple(MeterInfo.from_dict(m, f"meters.{i}") for i, m in enumerate(meters_raw)),
            default_meter=default,
            limits=Limits.from_dict(doc.get("limits", {})),
            allowed_dbms=_dbms_from(doc.get("allowed_dbms", []), "allowed_dbms", known_only=False),
            mem_total_bytes=_opt_count(doc, "mem_total_bytes", "policy"),
        )


# --- the limits in force ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Effective:
    """A memory or files limit as it applies now: `value` None = not checked (no limit, or an
    "auto" limit whose host fact is unknown: an agent built before memory limits reported none);
    `source` says where the value comes from, for messages and `targets limits`."""

    value: int | None
    source: str


def effective_max_memory(limits: Limits, mem_total_bytes: int | None) -> Effective:
    """The memory limit in force: the host's own, or DEFAULT_MEMORY_FRACTION of MemTotal."""
    limit = limits.max_memory_bytes
    if limit != AUTO:
        assert not isinstance(limit, str)
        return Effective(limit, "the host's limit" if limit is not None else "no limit")
    if not mem_total_bytes:
        return Effective(None, "the host's default, of a RAM size this agent did not report")
    value = max(1, int(mem_total_bytes * DEFAULT_MEMORY_FRACTION))
    return Effective(
        value, f"the default: {DEFAULT_MEMORY_FRACTION:.0%} of the host's {mem_total_bytes} bytes of RAM"
    )


def effective_max_files(limits: Limits, target: Target | None) -> Effective:
    """The files limit in force in `target`: the host's own, or DEFAULT_FILES_FRACTION of the
    target file system's free inodes, at most DEFAULT_MAX_FILES_CAP (the cap alone when the file
    system does not count inodes)."""
    limit = limits.max_files
    if limit != AUTO:
        assert not isinstance(limit, str)
        return Effective(limit, "the host's limit" if limit is not None else "no limit")
    free = target.free_inodes if target is not None else None
    if free is None:
        return Effective(DEFAULT_MAX_FILES_CAP, f"the default cap of {DEFAULT_MAX_FILES_CAP} files")
    value = min(DEFAULT_MAX_FILES_CAP, int(free * DEFAULT_FILES_FRACTION))
    if value == DEFAULT_MAX_FILES_CAP:
        return Effective(value, f"the default cap of {DEFAULT_MAX_FILES_CAP} files")
    return Effective(
        value,
        f"the default: {DEFAULT_FILES_FRACTION:.0%} of the {free} free inodes of the file system of "
        f"{target.path if target else 'the target'}",
    )
