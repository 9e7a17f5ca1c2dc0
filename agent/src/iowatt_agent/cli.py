"""`iowatt-agent` command line: enroll, repin, run, bench, inventory, meters.

Arguments and thin commands only: what is printed lives in `render`, the worker loop and its
drain in `loop`, and the measured run (idle before, engine load, idle after) that `bench` and
a lease share in `measured`; `targets_cli` holds the host-policy commands.

Exit codes: 0 ok; 1 failure (server unreachable, engine failed at run time); 2 usage or setup
error (bad option, not enrolled, engine not found, engine rejected an option); 3 refused by the
server (bad token, name taken, agent revoked); 77 the engine cannot run this job here; 130
interrupted.
"""

from __future__ import annotations

import json
import logging
import os
import re
import signal
import socket
import ssl
import sys
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Annotated, Any

import typer
from rich.markup import escape

from . import __version__, presets
from . import policy as host_policy
from .client import (
    ApiClient,
    ApiError,
    Conflict,
    PermanentError,
    RetryPolicy,
    ServerCertificateRejected,
    Unauthorized,
)
from .config import (
    AgentConfig,
    ConfigError,
    MeterConfig,
    TlsTrust,
    ensure_state_dir,
    load_config,
    load_meter_config,
    normalize_server_url,
    resolve_state_dir,
    save_config,
    save_meter_config,
    server_ssl_context,
    write_private_file,
)
from .engine import EngineNotFound, locate_engine
from .inventory import collect as collect_inventory
from .logs import setup_logging
from .loop import AgentLoop, LoopSettings
from .measured import run_measured
from .meters import Clock, MeterError, open_meter, redact
from .power import DEFAULT_IDLE_S, Grid, PowerSession, energy_and_carbon
from .render import (
    BenchProgress,
    err,
    out,
    print_meter_schemes,
    print_presets,
    print_result,
    render_inventory,
)
from .render import result_rows as _dir_rows  # noqa: F401 - its old home, imported by tests
from .runner import EngineOutcome, EngineProcess
from .schemas import EnrollRequest
from .targets_cli import meter_for_bench, parse_engine_args, register_policy_commands
from .transport import (
    CA_FILE,
    FINGERPRINT_HINT,
    PIN_FILE,
    CertificateFetchError,
    TransportError,
    ca_context,
    check_plain_http,
    der_fingerprint,
    endpoint,
    fetch_server_certificate,
    format_fingerprint,
    is_loopback_host,
    parse_fingerprint,
    pinned_context,
    probe,
    read_ca_file,
    rejection_message,
)

AGENT_NAME_RE = re.compile(r"[A-Za-z0-9_.\-]{1,120}")

app = typer.Typer(
    name="iowatt-agent",
    help="iowatt on-host agent: enrol with an iowatt server, run its benchmarks, or bench locally.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

StateDirOpt = Annotated[
    Path | None,
    typer.Option(
        "--state-dir",
        envvar="IOWATT_AGENT_STATE_DIR",
        help="State directory [default: /var/lib/iowatt-agent]",
    ),
]
EngineOpt = Annotated[
    Path | None,
    typer.Option("--engine", envvar="IOWATT_ENGINE", help="Path to iowatt-engine [default: search]"),
]
MeterOpt = Annotated[
    str | None,
    typer.Option(
        "--meter", help="Wattmeter spec, e.g. hwmon:/sys/class/hwmon/hwmon3/power1_input (meters list)"
    ),
]
IdleOpt = Annotated[
    float | None,
    typer.Option(
        "--idle",
        min=0,
        help=f"Seconds of idle baseline before and after the load [default: {DEFAULT_IDLE_S:g}]",
    ),
]


def check_meter_spec(spec: str) -> str:
    """A spec that does not even parse is a usage error (exit 2); an unreachable meter is not."""
    try:
        open_meter(spec)
    except MeterError as exc:
        raise fail(str(exc), 2) from None
    return spec


def fail(message: str, code: int) -> typer.Exit:
    # the message is text, never markup or emoji codes (":CD:" in a fingerprint is not a disc)
    err.print(f"[bold red]error:[/] {escape(message)}", highlight=False, soft_wrap=True, emoji=False)
    return typer.Exit(code)


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


# --- enroll --------------------------------------------------------------------------------------

ENROLL_TOKEN_ENV = "IOWATT_ENROLL_TOKEN"
LEGACY_ENROLL_TOKEN_ENV = "IOWATT_ENROLLMENT_TOKEN"  # the name before issue 9, still read

TokenFileOpt = Annotated[
    str | None,
    typer.Option(
        "--token-file",
        help=f"File holding the enrollment token ('-' = stdin) [default: ${ENROLL_TOKEN_ENV}]",
    ),
]
TokenRefusedOpt = Annotated[
    str | None, typer.Option("--token", hidden=True, help="Refused: use --token-file or the environment")
]
FingerprintOpt = Annotated[
    str | None,
    typer.Option(
        "--fingerprint",
        help="SHA256:<hex> of the server's certificate: pin it without asking (must match)",
    ),
]
CaFileOpt = Annotated[
    Path | None,
    typer.Option(
        "--ca-file", help="PEM CA bundle to verify the server with, instead of pinning its certificate"
    ),
]
NoVerifyHostnameOpt = Annotated[
    bool,
    typer.Option(
        "--no-verify-hostname",
        help="Accept a certificate that does not name the server's host (the pin or CA still holds)",
    ),
]
InsecureHttpOpt = Annotated[
    bool,
    typer.Option(
        "--insecure-http",
        help="Allow http:// to a host that is not loopback (unencrypted; `run` warns on every start)",
    ),
]


def read_enroll_token(token_file: str | None) -> str:
    """The token from --token-file (or stdin), else the environment: never from argv, where
    every local user sees it in `ps` and the shell keeps it in its history."""
    if token_file is not None:
        if token_file == "-":
            raw, source = sys.stdin.read(), "stdin"
        else:
            try:
                raw = Path(token_file).read_text()
            except (OSError, UnicodeDecodeError) as exc:
                reason = getattr(exc, "strerror", None) or str(exc)
                raise fail(f"cannot read --token-file {token_file}: {reason}", 2) from None
            source = token_file
    else:
        env_name = ENROLL_TOKEN_ENV if os.environ.get(ENROLL_TOKEN_ENV) else LEGACY_ENROLL_TOKEN_ENV
        raw, source = os.environ.get(env_name, ""), f"${env_name}"
        if not raw.strip():
            raise fail(
                f"no enrollment token: pass --token-file PATH ('-' reads stdin) or set ${ENROLL_TOKEN_ENV}",
                2,
            )
    token = raw.strip()
    if not token or any(c.isspace() for c in token):
        raise fail(f"the enrollment token from {source} must be one word (the token only)", 2)
    return token


def interactive() -> bool:
    return sys.stdin.isatty() and sys.stdout.isatty()


@dataclass
class Trust:
    """How the server will be verified, before anything is written to the state directory."""

    tls: TlsTrust | None
    pem: str | None
    context: ssl.SSLContext | None
    insecure_http: bool


def establish_trust(
    server_url: str,
    *,
    fingerprint: str | None,
    ca_file: Path | None,
    verify_hostname: bool,
    insecure_http: bool,
    confirm_prompt: str = "Trust this certificate?",
) -> Trust:
    """Pin the server's certificate (confirmed by --fingerprint or on a terminal), or load
    --ca-file, or accept http:// (loopback, or --insecure-http). Exit 2 on anything doubtful."""
    try:
        ep = endpoint(server_url)
        if ep.scheme == "http":
            if fingerprint or ca_file or not verify_hostname:
                raise TransportError(
                    "--fingerprint, --ca-file and --no-verify-hostname are for https:// servers"
                )
            check_plain_http(server_url, insecure_http=insecure_http)
            return Trust(None, None, None, insecure_http and not is_loopback_host(ep.host))
        if fingerprint and ca_file:
            raise TransportError("pass either --fingerprint (pin the certificate) or --ca-file, not both")
        if ca_file is not None:
            pem = read_ca_file(ca_file)
            tls = TlsTrust(mode="ca", file=CA_FILE, verify_hostname=verify_hostname)
            trust = Trust(tls, pem, ca_context(pem, verify_hostname=verify_hostname), False)
        else:
            want = parse_fingerprint(fingerprint) if fingerprint else None
            der = fetch_server_certificate(server_url)
            got = der_fingerprint(der)
            out.print(
                f"server certificate of {ep.display}: {format_fingerprint(got)}",
                highlight=False,
                soft_wrap=True,
                emoji=False,
            )
            if want is not None and want != got:
                raise TransportError(
                    f"the server's certificate {format_fingerprint(got)} does not match --fingerprint "
                    f"{format_fingerprint(want)}: refusing it; nothing was sent"
                )
            if want is None:
                if not interactive():
                    raise TransportError(
                        "cannot confirm the server's certificate without a terminal: pass "
                        "--fingerprint SHA256:... (check it on the server: "
                        f"{FINGERPRINT_HINT}) or --ca-file PATH"
                    )
                out.print(
                    f"compare it with the server's own: {FINGERPRINT_HINT}",
                    highlight=False,
                    soft_wrap=True,
                    emoji=False,
                )
                if not typer.confirm(confirm_prompt, default=False):
                    raise TransportError("certificate not trusted: nothing was sent")
            pem = ssl.DER_cert_to_PEM_cert(der)
            tls = TlsTrust(mode="pin", file=PIN_FILE, fingerprint_sha256=got, verify_hostname=verify_hostname)
            trust = Trust(tls, pem, pinned_context(pem, verify_hostname=verify_hostname), False)
    except CertificateFetchError as exc:
        raise fail(str(exc), 1) from None
    except TransportError as exc:
        raise fail(str(exc), 2) from None
    assert trust.context is not None
    reason = probe(server_url, trust.context)
    if reason is not None:
        hint = (
            " (a certificate that does not name this host: --no-verify-hostname)" if verify_hostname else ""
        )
        raise fail(f"the server {ep.display} does not verify: {reason}{hint}; nothing was sent", 2)
    return trust


def store_trust(directory: Path, trust: Trust) -> None:
    """Write the pinned certificate or CA bundle (0600) and drop the other kind, if any."""
    for file in (PIN_FILE, CA_FILE):
        if trust.tls is None or trust.tls.file != file:
            (directory / file).unlink(missing_ok=True)
    if trust.tls is not None and trust.pem is not None:
        write_private_file(directory / trust.tls.file, trust.pem.encode("ascii"))


def client_verify(trust_context: ssl.SSLContext | None) -> ssl.SSLContext | bool:
    """http:// needs no context; https:// never falls back to the system's CAs."""
    return trust_context if trust_context is not None else True


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
    credentials (mode 0600). The token comes from --token-file or $IOWATT_ENROLL_TOKEN."""
    if token is not None:
        raise fail(
            "--token is refused: a token on the command line is visible to every local user (ps) "
            f"and kept in shell history. Pass it with --token-file PATH ('-' reads stdin) or in the "
            f"environment variable {ENROLL_TOKEN_ENV}",
            2,
        )
    if meter is not None:
        check_meter_spec(meter)
    try:
        server_url = normalize_server_url(server)
        directory = ensure_state_dir(resolve_state_dir(state_dir))
    except ConfigError as exc:
        raise fail(str(exc), 2) from None
    hostname = socket.gethostname()
    agent_name = name or hostname.split(".")[0]
    if not AGENT_NAME_RE.fullmatch(agent_name):
        raise fail(
            f"agent name {agent_name!r} is not valid: use 1-120 letters, digits, '_', '.' or '-' (--name)", 2
        )
    enrollment_token = read_enroll_token(token_file)
    trust = establish_trust(
        server_url,
        fingerprint=fingerprint,
        ca_file=ca_file,
        verify_hostname=not no_verify_hostname,
        insecure_http=insecure_http,
    )
    request = EnrollRequest(
        enrollment_token=enrollment_token,
        name=agent_name,
        hostname=hostname,
        agent_version=__version__,
        inventory=collect_inventory(),
        replace=replace,
    )
    pinned = trust.tls.fingerprint_sha256 if trust.tls else None
    with ApiClient(
        server_url,
        retry=RetryPolicy(max_attempts=4),
        verify=client_verify(trust.context),
        pinned_sha256=pinned,
    ) as client:
        try:
            answer = client.enroll(request)
        except Unauthorized:
            raise fail(
                "the server rejected the enrollment token (401): check the token file or "
                f"${ENROLL_TOKEN_ENV}, or create a new enrollment token on the server",
                3,
            ) from None
        except Conflict as exc:
            if exc.code in (None, "agent_name_taken"):
                raise fail(
                    f"an agent named {agent_name!r} is already enrolled (409 agent_name_taken): "
                    "re-run with --replace to take its place (the old agent's token stops working), "
                    "or choose another --name",
                    3,
                ) from None
            raise fail(str(exc), 3) from None
        except ServerCertificateRejected as exc:
            raise fail(str(exc), 2) from None
        except PermanentError as exc:
            raise fail(str(exc), 3) from None
        except ApiError as exc:
            raise fail(f"cannot reach the server at {server_url}: {exc}", 1) from None
    config = AgentConfig(
        server_url=server_url,
        agent_id=answer.agent_id,
        agent_token=answer.agent_token,
        token_expires_at=answer.token_expires_at,
        name=agent_name,
        team_id=answer.team_id,
        heartbeat_interval_s=answer.heartbeat_interval_s,
        tls=trust.tls,
        insecure_http=trust.insecure_http,
    )
    store_trust(directory, trust)
    path = save_config(directory, config)
    out.print(
        f"enrolled as [bold]{agent_name}[/] (agent id {answer.agent_id}); credentials in {path}",
        soft_wrap=True,
        emoji=False,
    )
    if trust.tls is not None:
        what = "pinned certificate" if trust.tls.mode == "pin" else "CA bundle"
        out.print(
            f"server verified with the {what} in {directory / trust.tls.file}",
            highlight=False,
            soft_wrap=True,
            emoji=False,
        )
    if trust.insecure_http:
        err.print("[bold yellow]warning:[/] plain http:// to a non-loopback server (--insecure-http)")
    if meter is not None:
        save_meter_config(directory, MeterConfig(spec=meter, idle_s=idle))
        out.print(f"meter: {redact(meter)}", highlight=False, soft_wrap=True, emoji=False)


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
    directory = resolve_state_dir(state_dir)
    try:
        config = load_config(directory)
        server_url = normalize_server_url(server) if server else config.server_url
    except ConfigError as exc:
        raise fail(str(exc), 2) from None
    old = config.tls.fingerprint_sha256 if config.tls else None
    if old:
        out.print(
            f"pinned until now: {format_fingerprint(old)}", highlight=False, soft_wrap=True, emoji=False
        )
    trust = establish_trust(
        server_url,
        fingerprint=fingerprint,
        ca_file=ca_file,
        verify_hostname=not no_verify_hostname,
        insecure_http=insecure_http,
        confirm_prompt="Trust this certificate from now on?",
    )
    store_trust(directory, trust)
    updated = config.model_copy(
        update={"server_url": server_url, "tls": trust.tls, "insecure_http": trust.insecure_http}
    )
    save_config(directory, updated)
    if trust.tls is None:
        out.print(
            f"server {server_url}: plain http:// (no certificate)",
            highlight=False,
            soft_wrap=True,
            emoji=False,
        )
    else:
        what = "pinned certificate" if trust.tls.mode == "pin" else "CA bundle"
        out.print(
            f"server {server_url} now verified with the {what} in {directory / trust.tls.file}; "
            "restart the agent (systemctl restart iowatt-agent)",
            highlight=False,
            soft_wrap=True,
            emoji=False,
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
        float, typer.Option(min=1, max=60, help="Long-poll wait per lease request, s")
    ] = 25.0,
    log_format: Annotated[str, typer.Option(help="text or json")] = "text",
    log_level: Annotated[str, typer.Option(help="debug, info, warning, error")] = "info",
    meter: MeterOpt = None,
    idle: IdleOpt = None,
) -> None:
    """Work for the server: heartbeat, lease runs, run the engine, upload results. SIGTERM drains."""
    if log_format not in ("text", "json"):
        raise fail(f"--log-format must be text or json, got {log_format!r}", 2)
    setup_logging(log_format, log_level)
    directory = resolve_state_dir(state_dir)
    try:
        config = load_config(directory)
        tls_context = server_ssl_context(directory, config)
        engine_path = locate_engine(engine)
        stored = load_meter_config(directory)
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
    meter_spec = meter if meter is not None else (stored.spec if stored else None)
    if meter_spec:
        check_meter_spec(meter_spec)
    idle_s = idle if idle is not None else (stored.idle_s if stored and stored.idle_s is not None else None)

    def make_client() -> ApiClient:
        return ApiClient(
            config.server_url,
            config.agent_token,
            verify=client_verify(tls_context),
            pinned_sha256=pinned,
        )

    loop = AgentLoop(
        config,
        state_dir=directory,
        engine=engine_path,
        client_factory=make_client,
        settings=LoopSettings(
            lease_wait_s=lease_wait,
            drain_timeout_s=drain_timeout,
            meter=meter_spec or None,
            idle_s=DEFAULT_IDLE_S if idle_s is None else idle_s,
        ),
    )

    def on_signal(signum: int, _frame: FrameType | None) -> None:
        loop.request_drain(signal.Signals(signum).name)

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    raise typer.Exit(loop.run())


# --- bench ---------------------------------------------------------------------------------------


BENCH_DEFAULTS = {"rw": "randread", "bs": "4k", "size": "64m", "runtime": "5"}


def bench_job(base: dict[str, Any], extra: dict[str, str], target_options: dict[str, str]) -> dict[str, Any]:
    job = {k: v for k, v in base.items() if v is not None}
    job.update(extra)
    name = str(job.pop("name", "bench"))
    return {"global": dict(target_options), "jobs": [{"name": name, **job}]}


def bench_job_for(
    options: dict[str, str | None],
    extra: dict[str, str],
    preset: str | None,
    target_options: dict[str, str],
) -> dict[str, Any]:
    """bench's engine job: one job from the options (bench's defaults for those not given), or
    a preset's jobs, which the options given explicitly override. ValueError: a bad preset."""
    if preset is None:
        return bench_job(
            {**options, **{k: options[k] or v for k, v in BENCH_DEFAULTS.items()}}, extra, target_options
        )
    given = {k: str(v) for k, v in options.items() if v is not None and k != "name"}
    job = presets.job_file(preset, target_options["filename"], {**given, **extra})
    job["global"].pop("filename", None)
    return host_policy.with_agent_options(job, target_options)


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
) -> None:
    """Run the engine locally (no server). Any other engine option: --NAME=VALUE (fio names).
    With --meter: idle baseline, load, idle baseline, then energy and CO2 figures.
    The target gets the same safe options as a server's run (ADR 0009 §5): a directory gets a new
    data file, removed afterwards; an existing file is never extended; a block device is opened
    read-only unless --destructive=1."""
    try:
        extra = parse_engine_args(list(ctx.args))
        consent = extra.pop("destructive", "0") not in ("0", "false", "no", "off")
        engine_path = locate_engine(engine)
        kind, real = host_policy.local_target(target)
        target_options, data_file = host_policy.engine_options(
            kind, real, f"bench-{uuid.uuid4().hex[:12]}", writable=True, destructive=consent
        )
    except (ValueError, EngineNotFound) as exc:
        raise fail(str(exc), 2) from None
    if output_format not in ("json", "json+"):
        raise fail(f"--output-format must be json or json+, got {output_format!r}", 2)
    if meter is None and (idle is not None or grid is not None or grid_g_per_kwh is not None or pue != 1.0):
        raise fail("--idle, --grid, --grid-g-per-kwh and --pue need --meter SPEC", 2)
    grid_choice = None
    meter_name = None
    if meter is not None:
        meter_name, meter = meter_for_bench(meter)
        check_meter_spec(meter)
        try:
            grid_choice = Grid.choose(grid, grid_g_per_kwh)
        except ValueError as exc:
            raise fail(str(exc), 2) from None
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
    try:
        job = bench_job_for(options, extra, preset, target_options)
    except ValueError as exc:
        raise fail(str(exc), 2) from None
    job_dir = Path(os.environ.get("TMPDIR", "/tmp"))
    proc = EngineProcess(
        engine_path,
        job,
        job_file=job_dir / f"iowatt-bench-job-{os.getpid()}.json",
        progress_interval_s=0.25,
        output_format=output_format,
    )
    shown = BenchProgress()
    proc.on_progress = shown.on_progress
    proc.on_message = shown.on_message
    session = (
        PowerSession(meter, idle_s=DEFAULT_IDLE_S if idle is None else idle, target=target, name=meter_name)
        if meter
        else None
    )
    interrupted = threading.Event()

    def on_sigint(_signum: int, _frame: FrameType | None) -> None:
        interrupted.set()
        proc.stop("interrupted")

    old = signal.signal(signal.SIGINT, on_sigint)
    try:
        with shown.shown():
            measured = run_measured(
                proc,
                session,
                stop=interrupted,
                data_file=data_file,
                on_idle=shown.on_idle,
                tick_s=0.25,
                on_meter_started=warn_no_meter_data,
            )
    finally:
        signal.signal(signal.SIGINT, old)
    outcome, power = measured.outcome, measured.power
    if interrupted.is_set() or outcome is None:
        raise fail("interrupted: engine stopped", 130)
    finish_bench(outcome, json_output, preset, power, grid_choice, pue)


def warn_no_meter_data(session: PowerSession) -> None:
    if not session.measuring:
        err.print(f"[yellow]meter:[/] no meter data: {session.reason}", highlight=False)


def finish_bench(
    outcome: EngineOutcome,
    json_output: bool,
    preset: str | None,
    power: dict[str, Any] | None,
    grid: Grid | None,
    pue: float,
) -> None:
    """Exit with the engine's failure, or print the result (JSON or tables), with energy and
    CO2 figures when a meter measured the run."""
    if not outcome.ok:
        code = outcome.exit_code if outcome.exit_code in (1, 2, 77) else 1
        message = outcome.error or "engine failed"
        if outcome.messages and message.endswith(outcome.messages[-1]):
            message = message[: -len(outcome.messages[-1])].rstrip(": ") + " (engine message above)"
        raise fail(message, code)
    assert outcome.result is not None
    if power is None or grid is None:
        if json_output:
            sys.stdout.write(outcome.stdout.strip() + "\n")
        else:
            print_result(outcome.result, preset)
        return
    try:
        energy, carbon = energy_and_carbon(power, outcome.result, grid=grid, pue=pue)
    except ValueError as exc:  # samples that cannot be integrated: say so, keep the result
        energy, carbon = {"status": "error", "reason": str(exc), "source": power["meter"]["spec"]}, None
    if json_output:
        doc = {**outcome.result, "power": power, "energy": energy, "carbon": carbon}
        sys.stdout.write(json.dumps(doc) + "\n")
    else:
        print_result(outcome.result, preset, energy, carbon)


# --- inventory -----------------------------------------------------------------------------------


@app.command("presets")
def list_presets() -> None:
    """The built-in workloads (the seeds' block workloads) that `bench --preset NAME` runs."""
    print_presets()


@app.command()
def inventory(
    json_output: Annotated[
        bool, typer.Option("--json", help="Print the inventory as JSON (the wire format)")
    ] = False,
    state_dir: StateDirOpt = None,
) -> None:
    """Show what this host reports to the server: host, block devices, mounts, and its policy
    (targets, meters by name, limits: `targets list`) when the state directory has one."""
    directory = resolve_state_dir(state_dir)
    try:
        reported = host_policy.load_report(directory) if directory.is_dir() else None
    except ConfigError as exc:
        raise fail(str(exc), 2) from None
    inv = collect_inventory(policy=reported)
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
    try:
        meter = open_meter(meter_for_bench(spec)[1], interval_s=interval)
        bind = getattr(meter, "bind_target", None)
        if bind is not None and target is not None:
            bind(target)
    except MeterError as exc:
        raise fail(str(exc), 2) from None
    clock = Clock.now()
    try:
        meter.start(clock)
    except MeterError as exc:
        raise fail(f"no meter data: {exc}", 1) from None
    shown = 0
    deadline = time.monotonic() + seconds
    try:
        while time.monotonic() < deadline:
            time.sleep(min(1.0, max(0.0, deadline - time.monotonic())))
            snap = meter.snapshot()
            for t, v in zip(snap.t_ns[shown:], snap.value[shown:], strict=True):
                unit = "J (counter)" if meter.quantity == "energy_counter" else "W"
                out.print(f"{t / 1e9:8.3f} s  {v:12.3f} {unit}", highlight=False)
            shown = len(snap.t_ns)
    except KeyboardInterrupt:
        pass
    readings = meter.stop()
    info = meter.describe()
    n = len(readings.t_ns)
    span_s = (readings.t_ns[-1] - readings.t_ns[0]) / 1e9 if n > 1 else 0.0
    rate = (n - 1) / span_s if span_s > 0 else 0.0
    out.print(
        f"{info['driver']} · {info['model'] or 'unknown model'} · tier {info['tier']} · {info['quantity']} · "
        f"accuracy {'declared' if info['accuracy_declared'] else 'assumed'} ±{info['accuracy_pct']} %"
        + (f" ± {info['accuracy_w']} W" if info["accuracy_w"] else ""),
        highlight=False,
    )
    values = [v for v in readings.value if v == v and v >= 0]
    if meter.quantity == "energy_counter" and n > 1 and span_s > 0:
        level = f"mean {(readings.value[-1] - readings.value[0]) / span_s:,.2f} W from the counter"
    elif values:
        level = f"mean {sum(values) / len(values):,.2f} W, min {min(values):,.2f}, max {max(values):,.2f}"
    else:
        level = "no usable readings"
    out.print(
        f"{n} readings in {span_s:.1f} s: {rate:.2f} Hz achieved "
        f"(nominal {1 / meter.interval_s:g} Hz); {level}; {readings.errors} failed reads",
        highlight=False,
    )
    if meter.lost or not values:
        raise fail(f"no meter data: {meter.lost or readings.last_error or 'no usable readings'}", 1)


register_policy_commands(app, meters_app)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
