"""Where an alert channel may send: the address rule (no loopback, private or link-local address
unless the instance allows them) and what an Apprise URL may name.

A webhook is sent to the address checked here, pinned: the request goes to the IP literal with the
name in the Host header and as the TLS server name, so a name that resolves to a public address at
the check and a private one at the send (DNS rebinding) cannot move it. Apprise's plugins connect
on their own: their host is checked at creation and before each send (docs/adr/0041-alerts.md says
what that leaves open)."""

import ipaddress
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

from backend.config import get_settings
from backend.errors import Invalid

# Apprise services a team may use: hosted chat and mail services, and a few self-hosted ones whose
# host is checked like a webhook's. Local notifiers (syslog, dbus, desktop) and file or script
# plugins are not offered.
APPRISE_SCHEMES = frozenset(
    {
        "mailto", "mailtos", "slack", "msteams", "discord", "tgram", "matrix", "matrixs",
        "ntfy", "ntfys", "gotify", "gotifys", "mmost", "mmosts", "rocket", "rockets",
        "pover", "zulip", "json", "jsons", "form", "forms", "xml", "xmls",
    }
)  # fmt: skip


@dataclass(frozen=True)
class Resolved:
    host: str
    port: int
    address: str  # the IP the request goes to


def _public(address: str) -> bool:
    ip = ipaddress.ip_address(address)
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_global and not ip.is_multicast


def resolve(field: str, host: str, port: int) -> Resolved:
    """The first address of `host` the rule allows; 422 naming `field` otherwise."""
    if not host:
        raise Invalid(field, "the URL names no host")
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise Invalid(field, f"cannot resolve {host!r}: {exc}") from exc
    allow_private = get_settings().alert_private_targets
    for info in infos:
        address = str(info[4][0])
        if allow_private or _public(address):
            return Resolved(host=host, port=port, address=address)
    raise Invalid(
        field,
        f"{host!r} resolves to a loopback, private or link-local address; alerts go to public "
        "addresses unless the instance sets IOWATT_ALERT_PRIVATE_TARGETS=true",
    )


def check_webhook(url: str) -> Resolved:
    parts = urlsplit(url)
    if parts.scheme not in ("https", "http"):
        raise Invalid("url", "a webhook URL starts with https:// (or http://)")
    if parts.username or parts.password:
        raise Invalid("url", "put no credentials in a webhook URL: its requests are signed instead")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError as exc:
        raise Invalid("url", f"bad port: {exc}") from exc
    return resolve("url", parts.hostname or "", port)


def check_apprise(url: str) -> None:
    """The URL parses as one of the offered Apprise services; a service on a host of the user's
    choosing (mail server, Matrix, ntfy, JSON/form/XML endpoints) passes the address rule."""
    scheme = url.split("://", 1)[0].lower() if "://" in url else ""
    if scheme not in APPRISE_SCHEMES:
        raise Invalid("url", f"an Apprise URL of one of: {', '.join(sorted(APPRISE_SCHEMES))}")
    import apprise  # the API process imports it only when a channel is checked

    plugin = apprise.Apprise.instantiate(url, suppress_exceptions=True)
    if not plugin:
        raise Invalid("url", "Apprise cannot read this URL (see its documentation for the service)")
    host = getattr(plugin, "host", None)
    if isinstance(host, str) and host and scheme not in ("slack", "msteams", "discord", "tgram", "pover"):
        port = getattr(plugin, "port", None) or (443 if getattr(plugin, "secure", False) else 80)
        resolve("url", host, int(port))


def redact(url: str) -> str:
    """A channel's URL as the API shows it: scheme and host only (tokens and passwords stay in the
    database)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    return f"{parts.scheme}://{host}{'/…' if (parts.path or parts.query or parts.username) else ''}"
