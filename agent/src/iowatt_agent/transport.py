"""How the agent reaches its server ("Transport").

- `https://` is verified against exactly one trust anchor chosen at enrolment and stored in the
  state directory: the server's own certificate (pinned after its SHA-256 fingerprint was
  confirmed) or a CA bundle given with `--ca-file`. The system's CA store is never consulted, so
  a LAN attacker with any publicly trusted certificate is still refused.
- `http://` is allowed to loopback only (127.0.0.0/8, ::1, localhost), unless the operator
  stored `--insecure-http`, which `run` warns about on every start.

Nothing here sends the enrolment or agent token: the token goes out only over a connection
verified with the context built here.
"""

from __future__ import annotations

import hashlib
import ipaddress
import re
import socket
import ssl
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

PIN_FILE = "server-cert.pem"
CA_FILE = "server-ca.pem"
FINGERPRINT_HINT = "openssl x509 -in CERT.pem -noout -fingerprint -sha256"


class TransportError(Exception):
    """A setup problem with the server URL or its trust anchor (usage error, exit 2)."""


class CertificateFetchError(TransportError):
    """The server could not be reached to read its certificate (exit 1: try again later)."""


@dataclass(frozen=True)
class Endpoint:
    scheme: str
    host: str
    port: int

    @property
    def display(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"


def endpoint(url: str) -> Endpoint:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise TransportError(f"server URL must look like https://HOST[:PORT], got {url!r}")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        raise TransportError(f"server URL has an invalid port: {url!r}") from None
    return Endpoint(parts.scheme, parts.hostname, port)


def is_loopback_host(host: str) -> bool:
    """127.0.0.0/8, ::1 and the name localhost (never resolved: a name is judged as written)."""
    if host.lower().rstrip(".") == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_plain_http(url: str, *, insecure_http: bool) -> None:
    """Refuse `http://` to anything but loopback unless the operator said --insecure-http."""
    ep = endpoint(url)
    if ep.scheme == "http" and not insecure_http and not is_loopback_host(ep.host):
        raise TransportError(
            f"refusing plain http:// to {ep.host}: tokens and results would cross the network "
            "unencrypted. Use https:// (the agent pins the server's certificate), or pass "
            "--insecure-http to accept that risk (the agent then warns on every start); "
            "http:// is allowed without it only to loopback (127.0.0.0/8, ::1, localhost)"
        )


# --- fingerprints ------------------------------------------------------------------------------

_HEX64 = re.compile(r"[0-9a-f]{64}")


def parse_fingerprint(text: str) -> str:
    """'SHA256:AB:CD:..', 'sha256=abcd..', 'ABCD..' -> 64 lowercase hex digits."""
    value = text.strip()
    value = re.sub(r"(?i)^sha-?256\s*(fingerprint)?\s*[:=]?\s*", "", value)
    value = value.replace(":", "").replace(" ", "").lower()
    if not _HEX64.fullmatch(value):
        raise TransportError(
            f"--fingerprint must be SHA256: followed by 64 hex digits (colons allowed), got {text!r}; "
            f"on the server: {FINGERPRINT_HINT}"
        )
    return value


def format_fingerprint(hex_digest: str) -> str:
    """64 hex digits -> 'SHA256:AB:CD:...' (openssl's colon form, upper case)."""
    pairs = [hex_digest[i : i + 2].upper() for i in range(0, len(hex_digest), 2)]
    return "SHA256:" + ":".join(pairs)


def der_fingerprint(der: bytes) -> str:
    return hashlib.sha256(der).hexdigest()


def pem_fingerprint(pem: str) -> str:
    """SHA-256 of the first certificate in `pem`."""
    return der_fingerprint(ssl.PEM_cert_to_DER_cert(first_pem_certificate(pem)))


_PEM_CERT = re.compile(r"-----BEGIN CERTIFICATE-----\s+[A-Za-z0-9+/=\s]+?-----END CERTIFICATE-----")


def first_pem_certificate(pem: str) -> str:
    match = _PEM_CERT.search(pem)
    if match is None:
        raise TransportError("no PEM certificate (-----BEGIN CERTIFICATE-----) found")
    return match.group(0) + "\n"


# --- trust anchors -----------------------------------------------------------------------------


def fetch_server_certificate(url: str, *, timeout_s: float = 10.0) -> bytes:
    """The certificate the server presents now (DER), read without trusting it: the caller
    decides by fingerprint whether to. No token or other data is sent on this connection."""
    ep = endpoint(url)
    if ep.scheme != "https":
        raise TransportError(f"{url} is not https://: there is no certificate to pin")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE  # read only; trust is decided by the fingerprint
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    try:
        with (
            socket.create_connection((ep.host, ep.port), timeout=timeout_s) as raw,
            context.wrap_socket(raw, server_hostname=ep.host) as tls,
        ):
            der = tls.getpeercert(binary_form=True)
    except ssl.SSLError as exc:
        raise CertificateFetchError(f"TLS handshake with {ep.display} failed: {exc}") from None
    except OSError as exc:
        reason = exc.strerror or str(exc) or type(exc).__name__
        raise CertificateFetchError(f"cannot connect to {ep.display}: {reason}") from None
    if not der:
        raise CertificateFetchError(f"{ep.display} presented no certificate")
    return der


def _context(verify_hostname: bool) -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)  # CERT_REQUIRED, hostname check on
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.check_hostname = verify_hostname
    return context


def pinned_context(pem: str, *, verify_hostname: bool = True) -> ssl.SSLContext:
    """Trust exactly this certificate: it is the only trust anchor (no system CAs), and
    VERIFY_X509_PARTIAL_CHAIN lets a leaf that a CA signed be an anchor on its own."""
    context = _context(verify_hostname)
    context.verify_flags |= ssl.VERIFY_X509_PARTIAL_CHAIN
    try:
        context.load_verify_locations(cadata=first_pem_certificate(pem))
    except ssl.SSLError as exc:
        raise TransportError(f"the pinned certificate cannot be loaded: {exc}") from None
    return context


def ca_context(pem: str, *, verify_hostname: bool = True) -> ssl.SSLContext:
    """Trust the CA certificates of this bundle only (no system CAs)."""
    context = _context(verify_hostname)
    try:
        context.load_verify_locations(cadata=pem)
    except (ssl.SSLError, ValueError) as exc:
        raise TransportError(f"not a usable CA bundle: {exc}") from None
    if not context.get_ca_certs():
        raise TransportError("the CA bundle holds no CA certificate")
    return context


def read_ca_file(path: Path) -> str:
    """A PEM CA bundle given with --ca-file, checked to load."""
    try:
        pem = path.read_text(encoding="ascii")
    except (OSError, UnicodeDecodeError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        raise TransportError(f"cannot read --ca-file {path}: {reason}") from None
    first_pem_certificate(pem)
    ca_context(pem)
    return pem


def probe(url: str, context: ssl.SSLContext, *, timeout_s: float = 10.0) -> str | None:
    """Handshake with `context`: None when it verifies or the server is unreachable (the
    caller retries later), else why the certificate was refused."""
    ep = endpoint(url)
    try:
        with (
            socket.create_connection((ep.host, ep.port), timeout=timeout_s) as raw,
            context.wrap_socket(raw, server_hostname=ep.host),
        ):
            return None
    except ssl.SSLCertVerificationError as exc:
        return str(exc.verify_message or exc)
    except (ssl.SSLError, OSError):
        return None


def rejection_message(url: str, reason: str, *, pinned_sha256: str | None) -> str:
    """Why every request fails now, and the command that fixes it when the change is wanted."""
    ep = endpoint(url)
    text = f"the server {ep.display} failed certificate verification ({reason})"
    if pinned_sha256:
        text += f"; pinned at enrolment: {format_fingerprint(pinned_sha256)}"
        try:
            now = der_fingerprint(fetch_server_certificate(url, timeout_s=5.0))
        except TransportError:
            now = None
        if now and now != pinned_sha256:
            text += f", the server now presents {format_fingerprint(now)}"
    text += (
        ". Nothing is sent to it. If the server's certificate was changed on purpose, check the new "
        f"fingerprint on the server ({FINGERPRINT_HINT}) and re-pin: "
        "`iowatt-agent repin --fingerprint SHA256:...` (or `--ca-file PATH`); "
        "`iowatt-agent enroll --replace ...` re-enrols from scratch"
    )
    return text


def find_verification_error(exc: BaseException) -> ssl.SSLCertVerificationError | None:
    """The certificate error under an httpx/httpcore connect error, if that is what it is."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, ssl.SSLCertVerificationError):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None
