"""`iowatt-agent` command line: enroll, repin, run, bench, inventory, meters.

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
from rich import box
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

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
from .meters import DRIVERS, Clock, MeterError, open_meter, redact
from .power import DEFAULT_IDLE_S, Grid, PowerSession, energy_and_carbon
from .runner import EngineOutcome, EngineProcess, EngineProgress, cleanup_target
from .schemas import EnrollRequest, Inventory
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
from .units import fmt_bytes_rate, fmt_count, fmt_g, fmt_j, fmt_ns, fmt_num, fmt_pct, fmt_w

AGENT_NAME_RE = re.compile(r"[A-Za-z0-9_.\-]{1,120}")

app = typer.Typer(
    name="iowatt-agent",
    help="iowatt on-host agent: enrol with an iowatt server, run its benchmarks, or bench locally.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
out = Console()
err = Console(stderr=True)

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


def stdout_console() -> Console:
    """Pipes and files get whole tables; a terminal gets rich's fitting to its width."""
    return out if out.is_terminal else Console(width=170)


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


def bench_job(base: dict[str, Any], extra: dict[str, str], target_options: dict[str, str]) -> dict[str, Any]:
    job = {k: v for k, v in base.items() if v is not None}
    job.update(extra)
    name = str(job.pop("name", "bench"))
    return {"global": dict(target_options), "jobs": [{"name": name, **job}]}


def _dir_rows(result: dict[str, Any]) -> list[list[str]]:
    rows = []
    for job in result.get("jobs") or []:
        options = {**(job.get("job options") or {}), **((job.get("iowatt") or {}).get("options") or {})}
        rw = str(options.get("rw", "?"))
        bs = options.get("bs", options.get("bs_bytes", "?"))
        cpu = f"{fmt_pct(job.get('usr_cpu'))}/{fmt_pct(job.get('sys_cpu'))}"
        # io_uring's kernel worker threads (io-wq): not in usr/sys (as in fio), shown beside them
        kworker = ((job.get("iowatt") or {}).get("io_uring") or {}).get("kernel_worker_cpu")
        if kworker is not None:
            cpu += f" +{fmt_pct(kworker)} io-wq"
        active = [
            d
            for d in ("read", "write")
            if (job.get(d) or {}).get("total_ios") or (job.get(d) or {}).get("io_bytes")
        ]
        for direction in active:
            d = job[direction]
            clat = d.get("clat_ns") or {}
            lat = d.get("lat_ns") or clat
            pct = clat.get("percentile") or {}
            bw = float(d.get("bw_bytes") or 0)
            rows.append(
                [
                    str(job.get("jobname", "")),
                    f"{rw} {direction[0].upper()}" if len(active) > 1 else rw,
                    str(bs),
                    fmt_count(float(d.get("iops") or 0)),
                    f"{bw / 1e6:,.1f}",
                    f"{bw / 2**20:,.1f}",
                    fmt_ns(lat.get("mean")),
                    fmt_ns(pct.get("50.000000")),
                    fmt_ns(pct.get("99.000000")),
                    cpu,
                ]
            )
    return rows


RESULT_LEGEND = (
    "lat avg: mean total latency · p50/p99: completion latency · CPU %: usr/sys "
    "(+ io_uring kernel workers, io-wq) · R/W: read/write"
)
RESULT_COLUMNS = [
    ("job", "left"),
    ("rw", "left"),
    ("bs", "right"),
    ("IOPS", "right"),
    ("MB/s", "right"),
    ("MiB/s", "right"),
    ("lat avg", "right"),
    ("p50", "right"),
    ("p99", "right"),
    ("CPU %", "right"),
]


def render_result_table(result: dict[str, Any]) -> Table:
    # Compact enough for an 80-column terminal; numbers never wrap or get cut.
    table = Table(
        title="iowatt-engine result",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        show_edge=False,
        padding=(0, 0),  # the box's blank column separator is the only gap
    )
    for header, justify in RESULT_COLUMNS:
        table.add_column(header, justify=justify, no_wrap=True)  # type: ignore[arg-type]
    for row in _dir_rows(result):
        table.add_row(*row)
    return table


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
    base = {
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
    if preset is not None:  # options given explicitly override every job of the preset
        given = {k: str(v) for k, v in base.items() if v is not None and k != "name"}
        try:
            job = presets.job_file(preset, target_options["filename"], {**given, **extra})
            job["global"].pop("filename", None)
            job = host_policy.with_agent_options(job, target_options)
        except ValueError as exc:
            raise fail(str(exc), 2) from None
    else:
        defaults = {"rw": "randread", "bs": "4k", "size": "64m", "runtime": "5"}
        job = bench_job({**base, **{k: base[k] or v for k, v in defaults.items()}}, extra, target_options)
    job_dir = Path(os.environ.get("TMPDIR", "/tmp"))
    proc = EngineProcess(
        engine_path,
        job,
        job_file=job_dir / f"iowatt-bench-job-{os.getpid()}.json",
        progress_interval_s=0.25,
        output_format=output_format,
    )

    interrupted = False
    stop_idle = threading.Event()

    def on_sigint(_signum: int, _frame: FrameType | None) -> None:
        nonlocal interrupted
        interrupted = True
        stop_idle.set()
        proc.stop("interrupted")

    old = signal.signal(signal.SIGINT, on_sigint)
    progress = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        TaskProgressColumn(),
        TimeElapsedColumn(),
        console=err,
        transient=True,
        disable=not err.is_terminal,
    )
    tasks: dict[int, Any] = {}

    def on_progress(p: EngineProgress) -> None:
        if p.job_index not in tasks:
            tasks[p.job_index] = progress.add_task(p.job_name or f"job {p.job_index}", total=100)
        iops = fmt_count(p.read_iops + p.write_iops)
        rate = f"{iops} IOPS {fmt_bytes_rate(p.read_bw_bytes + p.write_bw_bytes)}"
        progress.update(tasks[p.job_index], completed=p.percent, description=f"{p.job_name} {rate}")

    def on_message(line: str) -> None:
        err.print(line, style="dim", highlight=False, markup=False)

    def on_idle(phase: str, elapsed_s: float, planned_s: float) -> None:
        if phase not in idle_tasks:
            idle_tasks[phase] = progress.add_task(phase, total=100)
        progress.update(
            idle_tasks[phase], completed=100 * elapsed_s / planned_s, description=f"{phase} (idle)"
        )

    idle_tasks: dict[str, Any] = {}
    proc.on_progress = on_progress
    proc.on_message = on_message
    session = (
        PowerSession(meter, idle_s=DEFAULT_IDLE_S if idle is None else idle, target=target, name=meter_name)
        if meter
        else None
    )
    outcome: EngineOutcome | None = None
    power = None
    try:
        with progress:
            if session is None:
                outcome = proc.run()
            else:
                session.start()
                if not session.measuring:
                    err.print(f"[yellow]meter:[/] no meter data: {session.reason}", highlight=False)
                if session.idle("idle_before", stop=stop_idle, on_tick=on_idle, tick_s=0.25):
                    with session.phase("load"):
                        outcome = proc.run()
                    # the data file goes before idle_after, so its removal is not "idle" power
                    cleanup_target(data_file)
                    if outcome.ok:
                        session.idle("idle_after", stop=stop_idle, on_tick=on_idle, tick_s=0.25)
    finally:
        if session is not None:
            power = session.finish()
        signal.signal(signal.SIGINT, old)
        cleanup_target(data_file)
        proc.job_file.unlink(missing_ok=True)
    if interrupted or outcome is None:
        raise fail("interrupted: engine stopped", 130)
    if power is None or grid_choice is None:
        _finish_bench(outcome, json_output, preset)
    else:
        _finish_bench_energy(outcome, json_output, power, grid_choice, pue, preset)


def _finish_bench_energy(
    outcome: EngineOutcome,
    json_output: bool,
    power: dict[str, Any],
    grid: Grid,
    pue: float,
    preset: str | None = None,
) -> None:
    if not outcome.ok:
        _finish_bench(outcome, json_output, preset)
        return
    assert outcome.result is not None
    try:
        energy, carbon = energy_and_carbon(power, outcome.result, grid=grid, pue=pue)
    except ValueError as exc:  # samples that cannot be integrated: say so, keep the result
        energy, carbon = {"status": "error", "reason": str(exc), "source": power["meter"]["spec"]}, None
    if json_output:
        doc = {**outcome.result, "power": power, "energy": energy, "carbon": carbon}
        sys.stdout.write(json.dumps(doc) + "\n")
        return
    console = stdout_console()
    console.print(render_result_table(outcome.result))
    console.print(RESULT_LEGEND, style="dim", highlight=False)
    render_passes(console, preset, outcome.result)
    render_energy(console, energy, carbon)


def render_passes(console: Console, preset: str | None, result: dict[str, Any]) -> None:
    """CrystalDiskMark-style best-of-passes table for presets that run passes."""
    rows = presets.pass_rows(preset, result) if preset else []
    if not rows:
        return
    table = Table(
        title=f"{preset}: best of passes (as CrystalDiskMark reports)",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        show_edge=False,
    )
    for header in ("test", "passes", "best MB/s", "best IOPS", "median MB/s", "spread"):
        table.add_column(header, justify="left" if header == "test" else "right", no_wrap=True)
    for r in rows:
        table.add_row(
            r["test"],
            str(r["passes"]),
            f"{r['best_bw_bytes'] / 1e6:,.1f}",
            fmt_count(r["best_iops"]),
            f"{r['median_bw_bytes'] / 1e6:,.1f}",
            f"{r['spread_pct']:.1f} %",
        )
    console.print(table)


def render_energy(console: Console, energy: dict[str, Any], carbon: dict[str, Any] | None) -> None:
    if energy.get("status") != "ok":
        console.print(
            f"[bold yellow]energy: no meter data[/] ({energy.get('source')}): {energy.get('reason')}",
            highlight=False,
        )
        return
    estimated = bool(energy.get("estimated"))
    label = str(energy.get("tier_label") or energy.get("tier"))
    title = f"energy · {label}" + (" · ESTIMATE from datasheet watts, not a measurement" if estimated else "")
    table = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, show_edge=False, padding=(0, 0))
    for header in (
        "idle W",
        "load W",
        "runtime",
        "energy",
        "± (k=2)",
        "above idle",
        "J/GB",
        "IOPS/W",
        "MB/s/W",
    ):
        table.add_column(header, justify="right", no_wrap=True)
    mark = "~" if estimated else ""
    table.add_row(
        fmt_w(energy.get("idle_w"), mark),
        fmt_w(energy.get("load_w_mean"), mark),
        f"{float(energy.get('runtime_s') or 0):.1f} s",
        fmt_j(energy.get("total_j"), mark),
        fmt_j(energy.get("uncertainty_j")),
        fmt_j(energy.get("dynamic_j"), mark),
        fmt_num(energy.get("j_per_gb"), mark),
        fmt_num(energy.get("iops_per_w"), mark),
        fmt_num(energy.get("mb_s_per_w"), mark),
    )
    console.print(table)
    details = [
        f"source {energy.get('source')}",
        f"{energy.get('samples')} samples at {float(energy.get('achieved_rate_hz') or 0):.1f} Hz",
        f"accuracy {'declared' if energy.get('accuracy_declared') else 'assumed'} "
        f"±{energy.get('accuracy_pct')} %",
    ]
    flags = [f for f in energy.get("flags") or [] if f != "accuracy_assumed"]
    if flags:
        details.append("flags: " + ", ".join(flags))
    console.print(" · ".join(details), style="dim", highlight=False)
    if carbon is not None:
        region = f"{carbon['grid_region']} " if carbon.get("grid_region") else ""
        source = str(carbon["grid_source"])
        if carbon.get("grid_year") and str(carbon["grid_year"]) not in source:
            source += f", {carbon['grid_year']}"
        console.print(
            f"CO2e {mark}{fmt_g(carbon['operational_gco2e'])} (grid {region}{carbon['grid_gco2e_per_kwh']:g} "
            f"gCO2e/kWh, PUE {carbon['pue']:g}; {source})",
            highlight=False,
        )


def _finish_bench(outcome: EngineOutcome, json_output: bool, preset: str | None = None) -> None:
    if not outcome.ok:
        code = outcome.exit_code if outcome.exit_code in (1, 2, 77) else 1
        message = outcome.error or "engine failed"
        if outcome.messages and message.endswith(outcome.messages[-1]):
            message = message[: -len(outcome.messages[-1])].rstrip(": ") + " (engine message above)"
        raise fail(message, code)
    assert outcome.result is not None
    if json_output:
        sys.stdout.write(outcome.stdout.strip() + "\n")
        return
    console = stdout_console()
    console.print(render_result_table(outcome.result))
    console.print(RESULT_LEGEND, style="dim", highlight=False)
    render_passes(console, preset, outcome.result)


# --- inventory -----------------------------------------------------------------------------------


def render_inventory(inv: Inventory) -> None:
    out = stdout_console()
    out.print(
        f"[bold]{inv.hostname}[/]  {inv.os.distro or '?'}  kernel {inv.os.kernel}  "
        f"{inv.cpu.model or '?'} ({inv.cpu.cores} cores)  {inv.mem_bytes / 2**30:.1f} GiB RAM  "
        f"virtualization: {inv.virtualization or 'unknown'}",
        highlight=False,
    )
    devices = Table(title="block devices", title_justify="left")
    for col in (
        "name",
        "interface",
        "model",
        "firmware",
        "size",
        "rotational",
        "scheduler",
        "log/phys block",
    ):
        devices.add_column(col)
    for d in inv.block_devices:
        devices.add_row(
            d.name,
            d.interface,
            d.model or "",
            d.firmware or "",
            f"{d.size_bytes / 1e9:,.1f} GB",
            {True: "yes", False: "no", None: "?"}[d.rotational],
            d.scheduler or "",
            f"{d.logical_block_bytes or '?'} / {d.physical_block_bytes or '?'} B",
        )
    out.print(devices)
    mounts = Table(title="mounts", title_justify="left")
    for col in ("mountpoint", "source", "fstype", "options"):
        mounts.add_column(col)
    for m in inv.mounts:
        mounts.add_row(m.mountpoint, m.source, m.fstype, m.options)
    out.print(mounts)


@app.command("presets")
def list_presets() -> None:
    """The built-in workloads (the seeds' block workloads) that `bench --preset NAME` runs."""
    table = Table(box=box.SIMPLE_HEAD)
    for col in ("preset", "jobs", "passes", "what"):
        table.add_column(col, overflow="fold")
    for name, p in sorted(presets.load().items()):
        passes = (
            f"{p['passes']} (+{p['discard_passes']} discarded)" if p["discard_passes"] else str(p["passes"])
        )
        table.add_row(name, str(len(p["engine_job"]["jobs"])), passes, p["description"])
    out.print(table)


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
    table = Table(title="meter schemes", title_justify="left", box=box.SIMPLE_HEAD, show_edge=False)
    for header in ("scheme", "tier", "rate", "what", "needs", "example"):
        table.add_column(header, overflow="fold")
    for d in DRIVERS:
        rate = f"{1 / d.native_interval_s:g} Hz"
        table.add_row(d.scheme, d.tier, rate, d.summary, d.needs, d.example)
    console = stdout_console()
    console.print(table)
    console.print(
        "tiers: lab (analyzer) > bmc / pdu > plug (informative) > inband; component = CPU/DRAM only, "
        "never wall power; estimate = datasheet model, labelled an estimate everywhere",
        style="dim",
        highlight=False,
    )


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
