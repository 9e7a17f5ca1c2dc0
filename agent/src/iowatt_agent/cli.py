"""`iowatt-agent` command line: enroll, repin, run, bench, presets, inventory, meters, upload.

Commands only: each parses its arguments and calls one function. The shared option types and
`fail` are in `args`; enrolment and TLS trust in `enrol`; the local benchmark in `bench`; the
worker loop, its heartbeat, signals and drain in `loop`; what is printed in `render`;
`targets_cli` holds the host-policy commands and `meter_check` `meters test`.

Start-up: every call imports this module, its option types (`args`) and the policy commands
(`targets_cli`); what one command alone needs (the HTTP client, the worker loop, bench, the
inventory) is imported in that command, so `targets list` or `meters set` does not pay for the
others (tests/agent/test_startup_imports.py).

Exit codes: 0 ok; 1 failure (server unreachable, engine failed at run time); 2 usage or setup
error (bad option, not enrolled, engine not found, engine rejected an option); 3 refused by the
server (bad token, name taken, agent revoked); 77 the engine cannot run this job here; 130
interrupted.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from . import __version__
from . import policy as host_policy
from .args import (
    ENROLL_TOKEN_ENV,
    CaFileOpt,
    EngineOpt,
    FingerprintOpt,
    IdleOpt,
    InsecureHttpOpt,
    MeterOpt,
    NoVerifyHostnameOpt,
    StateDirOpt,
    TokenFileOpt,
    TokenRefusedOpt,
    check_meter_spec,
    fail,
)
from .ci_upload import UPLOAD_TOKEN_ENV
from .config import ConfigError, resolve_state_dir
from .power import DEFAULT_IDLE_S
from .render import out, print_meter_schemes, print_presets, render_inventory
from .render import result_rows as _dir_rows  # noqa: F401 - its old home, imported by tests
from .targets_cli import parse_engine_args, register_policy_commands  # noqa: F401 - tests import it

if TYPE_CHECKING:
    from .client import ApiClient


def __getattr__(name: str) -> Any:
    """`AgentLoop`, imported when first asked for (by `run`, or by a test that replaces it here)."""
    if name == "AgentLoop":
        from .loop import AgentLoop

        return AgentLoop
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


app = typer.Typer(
    name="iowatt-agent",
    help="iowatt on-host agent: enrol with an iowatt server, run its benchmarks, or bench locally.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def version_callback(value: bool) -> None:
    if value:
        out.print(f"iowatt-agent {__version__}")
        raise typer.Exit(0)


@app.callback()
def main_callback(
    version: Annotated[
        bool, typer.Option("--version", callback=version_callback, is_eager=True, help="Print the version")
    ] = False,
) -> None:
    pass


# --- enroll, repin ---------------------------------------------------------------------------------


@app.command()
def enroll(
    server: Annotated[
        str, typer.Option(help="Server URL, e.g. https://iowatt.example:8443 (http:// only to loopback)")
    ],
    token_file: TokenFileOpt = None,
    token: TokenRefusedOpt = None,
    fingerprint: FingerprintOpt = None,
    ca_file: CaFileOpt = None,
    no_verify_hostname: NoVerifyHostnameOpt = False,
    insecure_http: InsecureHttpOpt = False,
    name: Annotated[str | None, typer.Option(help="Agent name [default: host name]")] = None,
    replace: Annotated[bool, typer.Option(help="Take over an existing agent with the same name")] = False,
    meter: MeterOpt = None,
    idle: IdleOpt = None,
    state_dir: StateDirOpt = None,
) -> None:
    """Register this host with a server, pin the server's certificate and store the agent's
    credentials (mode 0600). The token comes from --token-file or $IOWATT_ENROLL_TOKEN.
    --meter stores this host's default meter (meters.json, as `meters set`)."""
    if token is not None:
        raise fail(
            "--token is refused: a token on the command line is visible to every local user (ps) "
            f"and kept in shell history. Pass it with --token-file PATH ('-' reads stdin) or in the "
            f"environment variable {ENROLL_TOKEN_ENV}",
            2,
        )
    from .enrol import enroll_host

    enroll_host(
        server=server,
        token_file=token_file,
        fingerprint=fingerprint,
        ca_file=ca_file,
        verify_hostname=not no_verify_hostname,
        insecure_http=insecure_http,
        name=name,
        replace=replace,
        meter=meter,
        idle=idle,
        state_dir=state_dir,
    )


@app.command()
def repin(
    server: Annotated[
        str | None, typer.Option(help="Move to this server URL (same agent) [default: the enrolled one]")
    ] = None,
    fingerprint: FingerprintOpt = None,
    ca_file: CaFileOpt = None,
    no_verify_hostname: NoVerifyHostnameOpt = False,
    insecure_http: InsecureHttpOpt = False,
    state_dir: StateDirOpt = None,
) -> None:
    """Trust the server's new certificate after it was changed on purpose (or move the agent to
    another URL, e.g. from http:// to https://). The agent's identity and token are kept."""
    from .enrol import repin_host

    repin_host(
        server=server,
        fingerprint=fingerprint,
        ca_file=ca_file,
        verify_hostname=not no_verify_hostname,
        insecure_http=insecure_http,
        state_dir=state_dir,
    )


# --- run -----------------------------------------------------------------------------------------


@app.command()
def run(
    state_dir: StateDirOpt = None,
    engine: EngineOpt = None,
    drain_timeout: Annotated[
        float, typer.Option(min=0, help="On SIGTERM, seconds to let the current run finish before killing it")
    ] = 600.0,
    lease_wait: Annotated[
        float | None,
        typer.Option(
            min=1,
            max=60,
            help="Long-poll wait per lease request, s (default: the wait the server names, else 25)",
        ),
    ] = None,
    log_format: Annotated[str, typer.Option(help="text or json")] = "text",
    log_level: Annotated[str, typer.Option(help="debug, info, warning, error")] = "info",
    meter: MeterOpt = None,
    idle: IdleOpt = None,
) -> None:
    """Work for the server: heartbeat, lease runs, run the engine, upload results. SIGTERM drains.
    --meter replaces the host's default meter (meters.json) for this process."""
    from .client import ApiClient
    from .credentials import load_config, server_ssl_context
    from .engine import EngineNotFound, locate_engine
    from .enrol import client_verify
    from .logs import setup_logging
    from .loop import LoopSettings, install_drain_signals
    from .transport import probe, rejection_message

    if log_format not in ("text", "json"):
        raise fail(f"--log-format must be text or json, got {log_format!r}", 2)
    setup_logging(log_format, log_level)
    directory = resolve_state_dir(state_dir)
    try:
        config = load_config(directory)
        tls_context = server_ssl_context(directory, config)
        engine_path = locate_engine(engine)
    except (ConfigError, EngineNotFound) as exc:
        raise fail(str(exc), 2) from None
    if config.insecure_http:
        logging.getLogger("iowatt_agent.transport").warning(
            "transport.insecure_http server=%s: plain http:// to a host that is not loopback, "
            "accepted with --insecure-http at enrolment; tokens and results cross the network "
            "unencrypted. Move to https://: iowatt-agent repin --server https://...",
            config.server_url,
        )
    pinned = config.tls.fingerprint_sha256 if config.tls else None
    if tls_context is not None:
        refused = probe(config.server_url, tls_context)
        if refused is not None:  # fail closed at start; an unreachable server is retried instead
            raise fail(rejection_message(config.server_url, refused, pinned_sha256=pinned), 2)
    if meter:
        check_meter_spec(meter)

    def make_client() -> ApiClient:
        verify = client_verify(tls_context)
        return ApiClient(config.server_url, config.agent_token, verify=verify, pinned_sha256=pinned)

    settings = LoopSettings(
        lease_wait_s=lease_wait,
        drain_timeout_s=drain_timeout,
        meter=meter or None,
        idle_s=DEFAULT_IDLE_S if idle is None else idle,
    )
    loop = sys.modules[__name__].AgentLoop(  # through __getattr__: a test may have replaced it
        config, state_dir=directory, engine=engine_path, client_factory=make_client, settings=settings
    )
    install_drain_signals(loop)
    raise typer.Exit(loop.run())


# --- bench, presets ------------------------------------------------------------------------------


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def bench(
    ctx: typer.Context,
    target: Annotated[
        str, typer.Option(help="Directory (a temp file is used and removed), file, or block device")
    ],
    rw: Annotated[
        str | None, typer.Option(help="read, write, randread, randwrite, rw, randrw [default: randread]")
    ] = None,
    bs: Annotated[str | None, typer.Option(help="Block size (fio syntax: 4k, 1m) [default: 4k]")] = None,
    size: Annotated[
        str | None, typer.Option(help="Bytes of the target to use (fio syntax: 64m) [default: 64m]")
    ] = None,
    runtime: Annotated[
        str | None, typer.Option(help="Run time (fio syntax: 5, 500ms, 2m) [default: 5]")
    ] = None,
    iodepth: Annotated[str | None, typer.Option(help="Queue depth per job")] = None,
    numjobs: Annotated[str | None, typer.Option(help="Threads")] = None,
    direct: Annotated[str | None, typer.Option(help="1 = O_DIRECT")] = None,
    ioengine: Annotated[str | None, typer.Option(help="psync, libaio, io_uring")] = None,
    name: Annotated[str, typer.Option(help="Job name")] = "bench",
    preset: Annotated[
        str | None,
        typer.Option("--preset", help="A built-in workload instead of one job: see `iowatt-agent presets`"),
    ] = None,
    json_output: Annotated[
        bool, typer.Option("--json", help="Print only the engine's JSON document")
    ] = False,
    output_format: Annotated[str, typer.Option("--output-format", help="json or json+")] = "json",
    engine: EngineOpt = None,
    meter: MeterOpt = None,
    idle: IdleOpt = None,
    grid: Annotated[
        str | None,
        typer.Option("--grid", help="Grid region for CO2, e.g. DE, US, FR [default: WORLD]"),
    ] = None,
    grid_g_per_kwh: Annotated[
        float | None,
        typer.Option("--grid-g-per-kwh", min=0, help="Grid intensity in gCO2e/kWh (overrides --grid)"),
    ] = None,
    pue: Annotated[float, typer.Option("--pue", min=1.0, help="Site power usage effectiveness")] = 1.0,
    scale: Annotated[
        float | None,
        typer.Option(
            "--scale",
            help="A file preset's size (postmark-*: files and transactions; vdbench-*: its scale) x this",
        ),
    ] = None,
) -> None:
    """Run the engine locally (no server). Any other engine option: --NAME=VALUE (fio names).
    With --meter: idle baseline, load, idle baseline, then energy and CO2 figures.
    The target gets the same safe options as a server's run (ADR 0009 §5): a directory gets a new
    data file, removed afterwards; an existing file is never extended; a block device is opened
    read-only unless --destructive=1. --preset tpch takes --dbms, --scale-factor, --streams,
    --query-timeout, --buffer-pool (docs/tpch.md); --preset heap-btree takes --records, --queries,
    --heap-queries, --randseed, --cache-fraction, --structure, --check (docs/heap-btree.md).
    `bench FILE.fio --target DIR`: a fio job file's jobs instead (docs/jobfiles.md); its filename
    and directory are replaced by the target."""
    from .bench import run_bench, split_jobfile
    from .bench_args import BenchArgs

    options = {
        "name": name,
        "rw": rw,
        "bs": bs,
        "size": size,
        "runtime": runtime,
        "iodepth": iodepth,
        "numjobs": numjobs,
        "direct": direct,
        "ioengine": ioengine,
    }
    jobfile, extra = split_jobfile(list(ctx.args))
    run_bench(
        BenchArgs(
            target=target,
            options=options,
            extra=extra,
            preset=preset,
            json_output=json_output,
            output_format=output_format,
            engine=engine,
            meter=meter,
            idle=idle,
            grid=grid,
            grid_g_per_kwh=grid_g_per_kwh,
            pue=pue,
            scale=scale,
            jobfile=jobfile,
        )
    )


@app.command("upload")
def upload_cmd(
    result: Annotated[Path, typer.Argument(help="engine or fio --output-format=json document")],
    server: Annotated[str, typer.Option(help="Server URL, e.g. https://iowatt.example:8443")],
    team: Annotated[str, typer.Option(help="the team's id (Team page, or /auth/me)")],
    host: Annotated[str, typer.Option(help="the machine that ran it (an external host on the server)")],
    device_model: Annotated[str, typer.Option(help='the device measured, e.g. "Samsung SSD 990 PRO 2TB"')],
    upload_id: Annotated[
        str, typer.Option(help="unique per CI job (its job id): the same id again adds nothing")
    ],
    token_file: Annotated[
        str | None,
        typer.Option(
            help=f"File holding an upload-scoped API token ('-' = stdin) [default: ${UPLOAD_TOKEN_ENV}]"
        ),
    ] = None,
    token: TokenRefusedOpt = None,
    name: Annotated[str | None, typer.Option(help="the run's name [default: FILE on HOST]")] = None,
    serial: Annotated[str | None, typer.Option(help="the device's serial (only its sha256 is kept)")] = None,
    capacity_bytes: Annotated[int | None, typer.Option(help="the device's capacity, bytes")] = None,
    media: Annotated[str | None, typer.Option(help="hdd | ssd | ram | virtual | unknown")] = None,
    environment: Annotated[str | None, typer.Option(help="an environment id of the team")] = None,
    tag: Annotated[list[str] | None, typer.Option(help="a tag (repeat)")] = None,
) -> None:
    """Upload a finished result from CI (POST /api/v1/results; docs/teams.md § Uploads from CI).
    The token (scope upload) comes from --token-file or $IOWATT_UPLOAD_TOKEN."""
    if token is not None:
        raise fail(
            "--token is refused: a token on the command line is visible to every local user (ps) "
            f"and kept in shell history. Pass it with --token-file PATH ('-' reads stdin) or in "
            f"{UPLOAD_TOKEN_ENV}",
            2,
        )
    from .ci_upload import UploadArgs, UploadError, upload

    secret = read_upload_token(token_file)
    args = UploadArgs(
        server=server,
        token=secret,
        result=result,
        team_id=team,
        host=host,
        device_model=device_model,
        upload_id=upload_id,
        name=name,
        serial=serial,
        capacity_bytes=capacity_bytes,
        media=media,
        environment_id=environment,
        tags=tag or [],
    )
    try:
        answer = upload(args)
    except UploadError as e:
        raise fail(str(e), e.code) from e
    seen = " (already uploaded: nothing added)" if answer.get("duplicate") else ""
    out.print(f"{answer.get('url')}{seen}", highlight=False, soft_wrap=True)


def read_upload_token(token_file: str | None) -> str:
    """The upload token from --token-file (or stdin) or $IOWATT_UPLOAD_TOKEN; exit 2 without one."""
    if token_file == "-":
        secret = sys.stdin.readline().strip()
    elif token_file is not None:
        try:
            secret = Path(token_file).read_text().strip()
        except OSError as e:
            raise fail(f"--token-file {token_file}: {e.strerror or e}", 2) from e
    else:
        secret = os.environ.get(UPLOAD_TOKEN_ENV, "").strip()
    if not secret:
        raise fail(f"no upload token: pass --token-file PATH or set {UPLOAD_TOKEN_ENV}", 2)
    return secret


@app.command("presets")
def list_presets() -> None:
    """The built-in workloads (the published reports' workloads) that `bench --preset NAME` runs."""
    print_presets()


# --- inventory -----------------------------------------------------------------------------------


@app.command()
def inventory(
    json_output: Annotated[
        bool, typer.Option("--json", help="Print the inventory as JSON (the wire format)")
    ] = False,
    state_dir: StateDirOpt = None,
) -> None:
    """Show what this host reports to the server: host, block devices, mounts, and its policy
    (targets, meters by name, limits: `targets list`) when the state directory has one."""
    from .engine import EngineNotFound, locate_engine
    from .inventory import collect as collect_inventory

    directory = resolve_state_dir(state_dir)
    try:
        reported = host_policy.load_report(directory) if directory.is_dir() else None
    except ConfigError as exc:
        raise fail(str(exc), 2) from None
    try:
        engine: Path | None = locate_engine(None)  # its version and ioengines, as `run` reports them
    except EngineNotFound:
        engine = None
    inv = collect_inventory(policy=reported, engine=engine)
    if json_output:
        sys.stdout.write(json.dumps(inv.model_dump(mode="json"), indent=2) + "\n")
    else:
        render_inventory(inv)


# --- meters --------------------------------------------------------------------------------------

meters_app = typer.Typer(
    help="Wattmeters: list the supported ones, test one, set this host's meter.", no_args_is_help=True
)
app.add_typer(meters_app, name="meters")


@meters_app.command("list")
def meters_list() -> None:
    """Every supported meter scheme with its tier, rate, what it needs and an example spec."""
    print_meter_schemes()


@meters_app.command("test")
def meters_test(
    spec: Annotated[
        str, typer.Argument(help="Meter spec, e.g. shelly://192.168.1.40, or a meter's name (meters show)")
    ],
    seconds: Annotated[float, typer.Option(min=0.5, max=3600, help="How long to read")] = 5.0,
    interval: Annotated[
        float | None, typer.Option(min=0.01, help="Sampling interval, s [default: the meter's]")
    ] = None,
    target: Annotated[
        str | None, typer.Option(help="For estimate: the target whose block device is modelled")
    ] = None,
) -> None:
    """Read a meter for a few seconds; print its readings, the achieved rate and its tier."""
    from .meter_check import read_meter

    read_meter(spec, seconds=seconds, interval=interval, target=target)


register_policy_commands(app, meters_app)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
