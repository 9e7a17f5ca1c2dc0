"""Sending one alert to one channel: a signed webhook (httpx, pinned to the checked address) or
an Apprise notification. Returns (ok, HTTP status or None, error text or None); never raises for
the receiver's failures, which the caller retries."""

import hashlib
import hmac
import json
import time
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from backend.alert import targets
from backend.config import get_settings
from backend.errors import Invalid
from backend.models import Alert, AlertChannel, AlertDelivery

USER_AGENT = "iowatt-alerts/1"


def payload(alert: Alert, delivery: AlertDelivery) -> dict[str, Any]:
    return {
        "delivery_id": str(delivery.id),
        "attempt": delivery.attempts + 1,
        "alert": {
            "id": str(alert.id),
            "team_id": str(alert.team_id),
            "kind": alert.kind,
            "title": alert.title,
            "text": alert.text,
            "link": alert.link,
            "created_at": alert.created_at.isoformat(),
            "details": alert.details,
        },
    }


def signature(secret: str, timestamp: str, body: bytes) -> str:
    mac = hmac.new(secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256)
    return f"sha256={mac.hexdigest()}"


def send(channel: AlertChannel, alert: Alert, delivery: AlertDelivery) -> tuple[bool, int | None, str | None]:
    try:
        if channel.kind == "webhook":
            return _webhook(channel, alert, delivery)
        return _apprise(channel, alert)
    except Invalid as exc:  # the address rule, re-checked at each send
        return False, None, exc.message[:500]


def _webhook(
    channel: AlertChannel, alert: Alert, delivery: AlertDelivery
) -> tuple[bool, int | None, str | None]:
    import httpx

    to = targets.check_webhook(channel.url)
    parts = urlsplit(channel.url)
    literal = f"[{to.address}]" if ":" in to.address else to.address
    pinned = urlunsplit((parts.scheme, f"{literal}:{to.port}", parts.path or "/", parts.query, ""))
    body = json.dumps(payload(alert, delivery), separators=(",", ":"), sort_keys=True).encode()
    ts = str(int(time.time()))
    headers = {
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
        "Host": parts.netloc.rsplit("@", 1)[-1],
        "X-Iowatt-Event": alert.kind,
        "X-Iowatt-Delivery": str(delivery.id),
        "X-Iowatt-Timestamp": ts,
        "X-Iowatt-Signature": signature(channel.secret or "", ts, body),
    }
    timeout = get_settings().alert_timeout_s
    try:
        with httpx.Client(timeout=timeout, follow_redirects=False, trust_env=False) as http:
            r = http.post(pinned, content=body, headers=headers, extensions={"sni_hostname": to.host})
    except httpx.HTTPError as exc:
        return False, None, f"{type(exc).__name__}: {exc}"[:500]
    if 200 <= r.status_code < 300:
        return True, r.status_code, None
    return False, r.status_code, f"HTTP {r.status_code}: {r.text[:200]}"


def _apprise(channel: AlertChannel, alert: Alert) -> tuple[bool, int | None, str | None]:
    import apprise

    targets.check_apprise(channel.url)
    a = apprise.Apprise()
    if not a.add(channel.url):
        return False, None, "Apprise cannot read the channel's URL"
    ok = a.notify(
        title=alert.title, body=f"{alert.text}\n\n{alert.link}", body_format=apprise.NotifyFormat.TEXT
    )
    return bool(ok), None, None if ok else "Apprise reported a failed notification (see the worker's log)"
