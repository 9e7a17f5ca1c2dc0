"""`iowatt-agent targets ...` and `iowatt-agent meters set|unset|show`: the host's own policy
(docs/adr/0009-host-policy.md). Only these local commands change what the server's runs may
touch and which meters they may name; `cli.py` registers them (`register_policy_commands`).

Exit codes: 0 ok; 2 usage (bad path, unstable device name, bad limit, unreadable policy file).
"""

from __future__ import annotations

import dataclasses
import json
import os
import stat
import sys
from pathlib import Path
from typing import Annotated

import typer
from iowatt_policy import (
    AGENT_ONLY_OPTIONS,
    AUTO,
    BY_ID_PREFIX,
    DEFAULT_FILES_FRACTION,
    DEFAULT_MAX_FILES_CAP,
    DEFAULT_MEMORY_FRACTION,
    KNOWN_DBMS,
    Limits,
    Policy,
    PolicyError,
    Target,
    check_name,
    effective_max_files,
    effective_max_memory,
    parse_size,
    parse_time_ns,
)
from iowatt_policy.model import MAX_METERS
from rich import box
from rich.console import Console
from rich.table import Table

from . import policy as host_policy
from .args import StateDirOpt, fail
from .config import ConfigError, resolve_state_dir
from .meters import MeterError, open_meter, redact
from .power import DEFAULT_IDLE_S

out = Console(soft_wrap=True)  # paths and commands are never broken across lines
err = Console(stderr=True, soft_wrap=True)

BY_ID_DIR_ENV = "IOWATT_AGENT_BY_ID_DIR"  # where `targets add --device` looks for stable names (tests)

DropinOpt = Annotated[
    Path | None,
    typer.Option(
        "--systemd-dropin-dir",
        envvar=host_policy.DROPIN_DIR_ENV,
        help="Where to write 10-targets.conf [default: /etc/systemd/system/iowatt-agent.service.d "
        "when systemd runs]",
    ),
]
NEXT_STEP = "systemctl daemon-reload && systemctl restart iowatt-agent"


def _console() -> Console:
    return out if out.is_terminal else Console(width=170)


def _load(state_dir: Path | None) -> tuple[Path, Policy]:
    directory = resolve_state_dir(state_dir)
    try:
        return directory, host_policy.load_policy(directory)
    except ConfigError as exc:
        raise fail(str(exc)) from None


def _save(directory: Path, policy: Policy, dropin: Path | None) -> None:
    try:
        path = host_policy.save_policy(directory, policy)
    except (ConfigError, OSError) as exc:
        raise fail(f"cannot write the policy: {exc}") from None
    out.print(f"policy written to {path}", highlight=False)
    try:
        written = host_policy.write_dropin(policy, dropin)
    except OSError as exc:
        err.print(f"[yellow]warning:[/] cannot write the systemd drop-in: {exc}", highlight=False)
        return
    if written is not None:
        out.print(f"systemd drop-in {written} refreshed; next: {NEXT_STEP}", highlight=False)
    out.print(
        "a running agent reports the new policy to the server within a few seconds "
        "and checks every lease against it"
    )


def _existing(path: str, what: str) -> tuple[str, os.stat_result]:
    """An absolute path with no symbolic link in it (the host names what it means)."""
    absolute = os.path.abspath(path)
    try:
        st = os.lstat(absolute)
    except OSError as exc:
        raise fail(f"{what} {absolute}: {exc.strerror}") from None
    real = os.path.realpath(absolute)
    if real != absolute:
        raise fail(
            f"{absolute} is or passes through a symbolic link (it resolves to {real}); a link can be "
            f"changed after you allowed it: add the real path, {real}"
        )
    return absolute, st


def _device_target(path: str, destructive: bool) -> Target:
    by_id_dir = Path(os.environ.get(BY_ID_DIR_ENV) or host_policy.BY_ID_DIR)
    if not path.startswith(BY_ID_PREFIX):
        links = host_policy.by_id_links(path, by_id_dir)
        hint = (
            "its stable names: " + ", ".join(links)
            if links
            else f"no {BY_ID_PREFIX} name points to it here (ls -l {BY_ID_PREFIX})"
        )
        raise fail(
            f"{path} is not a stable device name: /dev/sdX-style names can change at the next boot, so "
            f"a device target is named by its {BY_ID_PREFIX}... link; {hint}"
        )
    real = os.path.realpath(path)
    try:
        st = os.stat(real)
    except OSError as exc:
        raise fail(f"device {path}: {exc.strerror}") from None
    if not stat.S_ISBLK(st.st_mode):
        raise fail(f"{path} -> {real} is not a block device")
    try:
        return Target.device(os.path.normpath(path), destructive=destructive)
    except PolicyError as exc:
        raise fail(exc.message) from None


def register_policy_commands(app: typer.Typer, meters_app: typer.Typer) -> None:
    """Add the `targets` sub-app to `app` and set/unset/show to `meters_app`."""
    app.add_typer(targets_app, name="targets")
    meters_app.command("set")(meters_set)
    meters_app.command("unset")(meters_unset)
    meters_app.command("show")(meters_show)


# --- targets -------------------------------------------------------------------------------------

targets_app = typer.Typer(
    help="What the server's runs may touch on this host: directories, files and raw devices, and limits.",
    no_args_is_help=True,
)


@targets_app.command("add")
def targets_add(
    path: Annotated[
        str | None, typer.Argument(help="A directory runs may create their own data file in")
    ] = None,
    file: Annotated[
        str | None,
        typer.Option("--file", help="An existing file runs may use (read-only unless --allow-write)"),
    ] = None,
    allow_write: Annotated[
        bool, typer.Option("--allow-write", help="With --file: runs may write it")
    ] = False,
    device: Annotated[
        str | None,
        typer.Option("--device", help=f"A raw block device by its stable name, {BY_ID_PREFIX}..."),
    ] = None,
    destructive: Annotated[
        bool,
        typer.Option(
            "--destructive",
            help="With --device: runs confirmed as destructive may overwrite it (its data is lost)",
        ),
    ] = False,
    state_dir: StateDirOpt = None,
    dropin_dir: DropinOpt = None,
) -> None:
    """Allow a target. Adding a path again replaces its entry (so `--allow-write` can be changed)."""
    given = [x for x in (path, file, device) if x is not None]
    if len(given) != 1:
        raise fail("give exactly one of PATH (a directory), --file PATH or --device PATH")
    if allow_write and file is None:
        raise fail("--allow-write goes with --file")
    if destructive and device is None:
        raise fail("--destructive goes with --device")
    try:
        if path is not None:
            absolute, st = _existing(path, "directory")
            if not stat.S_ISDIR(st.st_mode):
                raise fail(f"{absolute} is not a directory (an existing file: --file {absolute})")
            target = Target.directory(absolute)
        elif file is not None:
            absolute, st = _existing(file, "file")
            if not stat.S_ISREG(st.st_mode):
                raise fail(f"{absolute} is not a regular file")
            target = Target.file(absolute, allow_write=allow_write)
        else:
            assert device is not None
            target = _device_target(device, destructive)
    except PolicyError as exc:
        raise fail(exc.message) from None
    directory, policy = _load(state_dir)
    try:
        policy = policy.with_target(target)
    except PolicyError as exc:
        raise fail(exc.message) from None
    _save(directory, policy, dropin_dir)
    out.print(f"allowed: {_describe(target)}", highlight=False)


def _describe(t: Target) -> str:
    if t.kind == "directory":
        return f"{t.path} (directory: runs create and remove their own data file in it)"
    if t.kind == "file":
        return f"{t.path} (file, {'read-write' if t.writable else 'read-only'})"
    writes = "destructive: confirmed runs may overwrite it" if t.destructive else "read-only"
    return f"{t.path} (device, {writes})"


@targets_app.command("remove")
def targets_remove(
    path: Annotated[str, typer.Argument(help="The target's path as `targets list` shows it")],
    state_dir: StateDirOpt = None,
    dropin_dir: DropinOpt = None,
) -> None:
    """Stop allowing a target."""
    directory, policy = _load(state_dir)
    wanted = path if policy.target(path) is not None else os.path.abspath(path)
    if policy.target(wanted) is None:
        raise fail(f"{path} is not a target (iowatt-agent targets list)")
    _save(directory, policy.without_target(wanted), dropin_dir)
    out.print(f"removed: {wanted}", highlight=False)


@targets_app.command("list")
def targets_list(
    json_output: Annotated[bool, typer.Option("--json", help="The policy as the server gets it")] = False,
    state_dir: StateDirOpt = None,
) -> None:
    """The targets and limits of this host."""
    directory, policy = _load(state_dir)
    if json_output:
        try:
            meters = host_policy.load_meters(directory)
        except ConfigError as exc:
            raise fail(str(exc)) from None
        sys.stdout.write(json.dumps(host_policy.report(policy, meters).to_dict(), indent=2) + "\n")
        return
    console = _console()
    if not policy.targets:
        console.print(
            "no targets: the server's runs are all refused (iowatt-agent targets add DIR | --file PATH | "
            f"--device {BY_ID_PREFIX}...)",
            highlight=False,
        )
    else:
        table = Table(title="targets", title_justify="left", box=box.SIMPLE_HEAD, show_edge=False)
        for header in ("path", "kind", "writes", "device"):
            table.add_column(header, overflow="fold")
        for t in host_policy.report(policy, host_policy.Meters()).targets:
            writes = {
                "directory": "own data file",
                "file": "allowed" if t.writable else "read-only",
                "device": "destructive" if t.destructive else "read-only",
            }[t.kind]
            facts = ""
            if t.kind == "device":
                size = f"{t.size_bytes / 1e9:,.1f} GB" if t.size_bytes else "?"
                facts = f"{os.path.realpath(t.path)} {t.model or ''} {size}"
            table.add_row(t.path, t.kind, writes, facts)
        console.print(table)
    _print_limits(console, policy)
    _print_dbms(console, policy)


def _print_limits(console: Console, policy: Policy) -> None:
    limits = policy.limits

    def show(value: float | int | str | None, unit: str = "") -> str:
        return (
            "no limit"
            if value is None
            else f"{value:g}{unit}"
            if isinstance(value, float)
            else f"{value}{unit}"
        )

    reported = host_policy.report(policy, host_policy.Meters())
    memory = effective_max_memory(limits, reported.mem_total_bytes)
    memory_text = show(limits.max_memory_bytes, "" if limits.max_memory_bytes == AUTO else " B")
    if limits.max_memory_bytes == AUTO:
        memory_text += f" (now {show(memory.value, ' B')}: {memory.source})"
    files_text = show(limits.max_files)
    if limits.max_files == AUTO:
        per_target = [
            f"{t.path} {effective_max_files(limits, t).value}"
            for t in reported.targets
            if t.kind == "directory"
        ]
        files_text += (
            f" ({DEFAULT_FILES_FRACTION:.0%} of a target's free inodes, at most {DEFAULT_MAX_FILES_CAP}"
        )
        files_text += f"; now: {', '.join(per_target)})" if per_target else ")"
    console.print(
        "limits: "
        f"threads {show(limits.max_threads)} · iodepth {show(limits.max_iodepth)} · "
        f"block size {show(limits.max_bs_bytes, ' B')} · bytes written per run "
        f"{show(limits.max_bytes_written, ' B')} · runtime {show(limits.max_runtime_s, ' s')} · "
        f"memory {memory_text} · files {files_text}",
        highlight=False,
    )


def _limit_value(
    text: str | None, parse: type[int] | type[float] | str, *, auto: bool = False
) -> tuple[bool, int | float | str | None]:
    """(given?, value) of a limit option: 'none' = no limit; 'auto' = the host's default (memory
    and files only)."""
    if text is None:
        return False, None
    if text.lower() in ("none", "unlimited"):
        return True, None
    if auto and text.lower() == AUTO:
        return True, AUTO
    try:
        if parse == "size":
            value: int | float = parse_size(text)
        elif parse == "time":
            value = parse_time_ns(text) / 1e9
        else:
            value = int(text)
    except ValueError as exc:
        raise fail(f"{text!r}: {exc}") from None
    if value <= 0:
        raise fail(f"{text!r}: a limit must be > 0 (or none)")
    return True, value


@targets_app.command("limits")
def targets_limits(
    max_threads: Annotated[
        str | None,
        typer.Option("--max-threads", help="Threads at once (numjobs summed over concurrent jobs)"),
    ] = None,
    max_iodepth: Annotated[str | None, typer.Option("--max-iodepth", help="iodepth of any job")] = None,
    max_bs: Annotated[
        str | None, typer.Option("--max-bs", help="Largest block size (fio syntax: 64m)")
    ] = None,
    max_bytes_written: Annotated[
        str | None,
        typer.Option("--max-bytes-written", help="Bytes a run may write (fio syntax: 100g), or none"),
    ] = None,
    max_runtime: Annotated[
        str | None, typer.Option("--max-runtime", help="A run's duration (fio syntax: 3600, 6h), or none")
    ] = None,
    max_memory: Annotated[
        str | None,
        typer.Option(
            "--max-memory",
            help="Memory a run may need (fio syntax: 8g), none, or auto (the default: "
            f"{DEFAULT_MEMORY_FRACTION:.0%} of the host's RAM)",
        ),
    ] = None,
    max_files: Annotated[
        str | None,
        typer.Option(
            "--max-files",
            help="Files + directories a run may lay out in a target, none, or auto (the default: "
            f"{DEFAULT_FILES_FRACTION:.0%} of the target's free inodes, at most {DEFAULT_MAX_FILES_CAP})",
        ),
    ] = None,
    reset: Annotated[bool, typer.Option("--reset", help="Back to the defaults first")] = False,
    state_dir: StateDirOpt = None,
    dropin_dir: DropinOpt = None,
) -> None:
    """Show the limits, or set them ('none' = no limit; memory and files: 'auto' = the default
    derived from this host)."""
    changes: dict[str, int | float | str | None] = {}
    for key, text, parse in (
        ("max_threads", max_threads, int),
        ("max_iodepth", max_iodepth, int),
        ("max_bs_bytes", max_bs, "size"),
        ("max_bytes_written", max_bytes_written, "size"),
        ("max_runtime_s", max_runtime, "time"),
        ("max_memory_bytes", max_memory, "size"),
        ("max_files", max_files, int),
    ):
        given, value = _limit_value(text, parse, auto=key in ("max_memory_bytes", "max_files"))
        if given:
            changes[key] = value
    directory, policy = _load(state_dir)
    if not changes and not reset:
        _print_limits(_console(), policy)
        return
    try:
        limits = (Limits() if reset else policy.limits).updated(**changes)
    except PolicyError as exc:
        raise fail(str(exc)) from None
    policy = dataclasses.replace(policy, limits=limits)
    _save(directory, policy, dropin_dir)
    _print_limits(_console(), policy)


# --- DBMSs a TPC-H run may start --------------------------------------------------------

DbmsArg = Annotated[str, typer.Argument(help=f"One of {', '.join(KNOWN_DBMS)}")]


def _dbms_name(name: str) -> str:
    if name not in KNOWN_DBMS:
        raise fail(f"{name!r} is not a DBMS this agent starts (one of {', '.join(KNOWN_DBMS)})")
    return name


@targets_app.command("allow-dbms")
def targets_allow_dbms(name: DbmsArg, state_dir: StateDirOpt = None, dropin_dir: DropinOpt = None) -> None:
    """Let the server's TPC-H runs start a private instance of this DBMS on this host (its
    programs run here, as the DBMS's package user, with data inside a directory target)."""
    _dbms_name(name)
    directory, policy = _load(state_dir)
    _save(directory, policy.with_dbms(name), dropin_dir)
    out.print(f"allowed: TPC-H runs may start a private {name} in a directory target", highlight=False)


@targets_app.command("deny-dbms")
def targets_deny_dbms(name: DbmsArg, state_dir: StateDirOpt = None, dropin_dir: DropinOpt = None) -> None:
    """Stop TPC-H runs from starting this DBMS (every such lease is then refused)."""
    _dbms_name(name)
    directory, policy = _load(state_dir)
    _save(directory, policy.without_dbms(name), dropin_dir)
    out.print(f"denied: TPC-H runs may not start {name}", highlight=False)


def _print_dbms(console: Console, policy: Policy) -> None:
    allowed = ", ".join(policy.allowed_dbms) or "none (iowatt-agent targets allow-dbms postgresql|mariadb)"
    console.print(f"DBMSs TPC-H runs may start: {allowed}", highlight=False)


# --- meters by name ------------------------------------------------------------------------------


def _check_spec(spec: str) -> None:
    try:
        open_meter(spec)
    except MeterError as exc:
        raise fail(str(exc)) from None


def _load_meters(state_dir: Path | None) -> tuple[Path, host_policy.Meters]:
    directory = resolve_state_dir(state_dir)
    try:
        return directory, host_policy.load_meters(directory)
    except ConfigError as exc:
        raise fail(str(exc)) from None


def _save_meters(directory: Path, meters: host_policy.Meters) -> Path:
    try:
        return host_policy.save_meters(directory, meters)
    except (ConfigError, OSError) as exc:
        raise fail(f"cannot write the meters: {exc}") from None


def meters_set(
    name: Annotated[str, typer.Argument(help="The meter's name on this host; runs name it (e.g. wall)")],
    spec: Annotated[
        str | None, typer.Argument(help="Its spec (meters list), e.g. shelly://192.168.1.40")
    ] = None,
    default: Annotated[bool, typer.Option("--default", help="Runs that name no meter use this one")] = False,
    idle: Annotated[
        float | None,
        typer.Option(
            "--idle", min=0, help=f"Seconds of idle baseline around runs [default: {DEFAULT_IDLE_S:g}]"
        ),
    ] = None,
    state_dir: StateDirOpt = None,
) -> None:
    """Store a meter under a name (in meters.json, 0600: specs may hold credentials). The first
    meter becomes the default. `meters set SPEC` alone (the old form) names it "default"."""
    if spec is None:
        if ":" not in name:
            raise fail("give NAME SPEC, e.g. `iowatt-agent meters set wall shelly://192.168.1.40`")
        name, spec = host_policy.LEGACY_METER_NAME, name
    try:
        check_name(name, "name")
    except PolicyError as exc:
        raise fail(f"meter name {exc.message}") from None
    _check_spec(spec)
    directory, meters = _load_meters(state_dir)
    if name not in meters.meters and len(meters.meters) >= MAX_METERS:
        raise fail(f"at most {MAX_METERS} meters (meters unset one first)")
    meters.put(name, spec, idle, default=default)
    path = _save_meters(directory, meters)
    mark = " (the default)" if meters.default == name else ""
    out.print(f"meter {name}{mark}: {redact(spec)} stored in {path}", highlight=False)


def meters_unset(
    name: Annotated[
        str | None, typer.Argument(help="The meter to forget [default: the default meter]")
    ] = None,
    state_dir: StateDirOpt = None,
) -> None:
    """Forget a meter; runs that name it are refused (meter.unknown)."""
    directory, meters = _load_meters(state_dir)
    name = name or meters.default
    if name is None or name not in meters.meters:
        out.print("no such meter" if name else "no meter was set")
        return
    del meters.meters[name]
    if meters.default == name:
        meters.default = None
    _save_meters(directory, meters)
    out.print(f"meter {name} removed" + ("; there is no default meter now" if meters.default is None else ""))


def meters_show(
    json_output: Annotated[bool, typer.Option("--json", help="As JSON (specs redacted)")] = False,
    state_dir: StateDirOpt = None,
) -> None:
    """This host's meters, their specs with secrets redacted."""
    _directory, meters = _load_meters(state_dir)
    rows = []
    for info in meters.info():
        entry = meters.meters[info.name]
        rows.append(
            {
                **info.to_dict(),
                "spec": redact(entry.spec),
                "idle_s": entry.idle_s if entry.idle_s is not None else DEFAULT_IDLE_S,
                "default": info.name == meters.default,
            }
        )
    if json_output:
        sys.stdout.write(json.dumps({"meters": rows, "default": meters.default}, indent=2) + "\n")
        return
    if not rows:
        out.print("no meter set (iowatt-agent meters set NAME SPEC)")
        return
    table = Table(box=box.SIMPLE_HEAD, show_edge=False)
    for header in ("name", "driver", "tier", "spec", "idle", "default"):
        table.add_column(header, overflow="fold")
    for r in rows:
        table.add_row(
            r["name"], r["driver"], r["tier"], r["spec"], f"{r['idle_s']:g} s", "yes" if r["default"] else ""
        )
    _console().print(table)


# --- bench (local) -------------------------------------------------------------------------------


def meter_for_bench(meter: str) -> tuple[str | None, str]:
    """(name, spec) for `bench --meter` and `meters test`: the name of a meter in meters.json, or
    a spec as the local user gives it (`rapl` is both a scheme and a possible name: the name wins)."""
    if ":" not in meter:
        try:
            meters = host_policy.load_meters(resolve_state_dir(None))
        except ConfigError as exc:
            raise fail(str(exc)) from None
        entry = meters.meters.get(meter)
        if entry is not None:
            return meter, entry.spec
    return None, meter


def parse_engine_args(args: list[str]) -> dict[str, str]:
    """Extra `--name=value` (or `--name value`, or a bare `--flag`) as fio-named engine options.
    The options the agent sets from --target are refused; `--destructive=1` is kept: it is the
    local user's consent to write a raw device."""
    options: dict[str, str] = {}
    i = 0
    while i < len(args):
        arg = args[i]
        if not arg.startswith("--") or len(arg) <= 2:
            raise ValueError(f"unexpected argument {arg!r}: engine options are given as --name=value")
        key, eq, value = arg[2:].partition("=")
        if not eq:
            if i + 1 < len(args) and not args[i + 1].startswith("--"):
                value = args[i + 1]
                i += 1
            else:
                value = "1"
        key = key.replace("-", "_")
        if key in AGENT_ONLY_OPTIONS and key != "destructive":
            raise ValueError(f"--{key} is set by the agent from --target")
        options[key] = value
        i += 1
    return options
