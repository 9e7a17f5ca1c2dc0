"""Arguments shared by the `iowatt-agent` commands: the option types, how a usage error ends a
command (`fail`), and the checks that turn a bad argument into exit 2 before anything runs."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from .meters import MeterError, open_meter
from .power import DEFAULT_IDLE_S
from .render import err

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

# --- enrol and repin: how the server is trusted ----------------------------------------------------

ENROLL_TOKEN_ENV = "IOWATT_ENROLL_TOKEN"
LEGACY_ENROLL_TOKEN_ENV = "IOWATT_ENROLLMENT_TOKEN"  # the variable's earlier name, still read

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


def fail(message: str, code: int = 2) -> typer.Exit:
    """Print `error: message` on stderr; the caller raises the returned exit."""
    # the message is text, never markup or emoji codes (":CD:" in a fingerprint is not a disc)
    err.print(f"[bold red]error:[/] {escape(message)}", highlight=False, soft_wrap=True, emoji=False)
    return typer.Exit(code)


def check_meter_spec(spec: str) -> str:
    """A spec that does not even parse is a usage error (exit 2); an unreachable meter is not."""
    try:
        open_meter(spec)
    except MeterError as exc:
        raise fail(str(exc), 2) from None
    return spec
