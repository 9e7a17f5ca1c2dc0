"""Enrolment and re-pinning: read the enrollment token, decide how the server is trusted
(a pinned certificate, a CA bundle, or loopback http://), enrol, and store the credentials.

`enroll_host` and `repin_host` are the bodies of `iowatt-agent enroll` and `repin`; they end a
command with `args.fail` (exit 1 unreachable, 2 usage or trust, 3 refused by the server). Nothing
is written to the state directory before the server's certificate is trusted and, for `enroll`,
the server accepted the token.
"""

from __future__ import annotations

import os
import re
import socket
import ssl
import sys
from dataclasses import dataclass
from pathlib import Path

import typer

from . import __version__
from . import policy as host_policy
from .args import ENROLL_TOKEN_ENV, LEGACY_ENROLL_TOKEN_ENV, check_meter_spec, fail
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
    ConfigError,
    ensure_state_dir,
    normalize_server_url,
    resolve_state_dir,
    write_private_file,
)
from .credentials import AgentConfig, TlsTrust, load_config, save_config
from .inventory import collect as collect_inventory
from .meters import redact
from .render import err, out
from .schemas import EnrollRequest
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
)

AGENT_NAME_RE = re.compile(r"[A-Za-z0-9_.\-]{1,120}")


def _say(text: str) -> None:
    out.print(text, highlight=False, soft_wrap=True, emoji=False)


# --- the token -------------------------------------------------------------------------------------


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


# --- trusting the server ----------------------------------------------------------------------------


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
            _say(f"server certificate of {ep.display}: {format_fingerprint(got)}")
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
                _say(f"compare it with the server's own: {FINGERPRINT_HINT}")
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


# --- enroll and repin ------------------------------------------------------------------------------


def enroll_host(
    *,
    server: str,
    token_file: str | None,
    fingerprint: str | None,
    ca_file: Path | None,
    verify_hostname: bool,
    insecure_http: bool,
    name: str | None,
    replace: bool,
    meter: str | None,
    idle: float | None,
    state_dir: Path | None,
) -> None:
    """Check the arguments, trust the server, enrol, then write agent.json, the trust anchor and
    (with a meter) meters.json."""
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
        verify_hostname=verify_hostname,
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
        _say(f"server verified with the {what} in {directory / trust.tls.file}")
    if trust.insecure_http:
        err.print("[bold yellow]warning:[/] plain http:// to a non-loopback server (--insecure-http)")
    if meter is not None:
        store_host_meter(directory, meter, idle)


def store_host_meter(directory: Path, spec: str, idle_s: float | None) -> None:
    """`enroll --meter`: this host's meter, stored like `meters set default SPEC --default`
    (meters.json, 0600, owner-checked); an old meter.json is migrated first by load_meters."""
    try:
        meters = host_policy.load_meters(directory)
        meters.put(host_policy.LEGACY_METER_NAME, spec, idle_s, default=True)
        path = host_policy.save_meters(directory, meters)
    except (ConfigError, OSError) as exc:
        raise fail(f"enrolled, but the meter was not stored: {exc} (iowatt-agent meters set)", 2) from None
    _say(f"meter {host_policy.LEGACY_METER_NAME} (the default): {redact(spec)} stored in {path}")


def repin_host(
    *,
    server: str | None,
    fingerprint: str | None,
    ca_file: Path | None,
    verify_hostname: bool,
    insecure_http: bool,
    state_dir: Path | None,
) -> None:
    """Trust the server anew (or move to another URL) keeping the agent's identity and token."""
    directory = resolve_state_dir(state_dir)
    try:
        config = load_config(directory)
        server_url = normalize_server_url(server) if server else config.server_url
    except ConfigError as exc:
        raise fail(str(exc), 2) from None
    old = config.tls.fingerprint_sha256 if config.tls else None
    if old:
        _say(f"pinned until now: {format_fingerprint(old)}")
    trust = establish_trust(
        server_url,
        fingerprint=fingerprint,
        ca_file=ca_file,
        verify_hostname=verify_hostname,
        insecure_http=insecure_http,
        confirm_prompt="Trust this certificate from now on?",
    )
    store_trust(directory, trust)
    updated = config.model_copy(
        update={"server_url": server_url, "tls": trust.tls, "insecure_http": trust.insecure_http}
    )
    save_config(directory, updated)
    if trust.tls is None:
        _say(f"server {server_url}: plain http:// (no certificate)")
    else:
        what = "pinned certificate" if trust.tls.mode == "pin" else "CA bundle"
        _say(
            f"server {server_url} now verified with the {what} in {directory / trust.tls.file}; "
            "restart the agent (systemctl restart iowatt-agent)"
        )
