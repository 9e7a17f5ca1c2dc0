"""Mail the server sends (invitations, e-mail verification, password resets) over SMTP (stdlib
smtplib), when IOWATT_SMTP_URL is set.

What a user typed (a team's or a person's name) reaches a mail only through `plain`: letters,
digits, spaces and a few marks, at most 60 characters. No dot, colon, slash or @ survives, so no
user can make the server mail a link or an address of their choosing."""

import re
import smtplib
import ssl
import unicodedata
from email.message import EmailMessage
from email.utils import make_msgid
from urllib.parse import unquote, urlsplit

from backend.config import get_settings
from backend.logs import log

PLAIN_MAX_CHARS = 60
_NOT_PLAIN = re.compile(r"[^\w \-'&()]+")


def plain(text: str, *, limit: int = PLAIN_MAX_CHARS) -> str:
    """User text as a mail may carry it: word characters, spaces and - ' & ( ), cut to `limit`."""
    text = unicodedata.normalize("NFKC", text)
    cleaned = " ".join(_NOT_PLAIN.sub(" ", text).replace("_", " ").split())
    return cleaned if len(cleaned) <= limit else cleaned[: limit - 1].rstrip() + "…"


def available() -> bool:
    """Whether this server is configured to send mail at all."""
    return bool(get_settings().smtp_url)


def send(*, to: str, subject: str, body: str, what: str) -> bool:
    """Send one plain-text mail; True when the SMTP server accepted it, False when SMTP is not
    configured or the server could not be reached or refused (a warning in the log says why)."""
    s = get_settings()
    if not s.smtp_url:
        return False
    parts = urlsplit(s.smtp_url)
    if parts.scheme not in ("smtp", "smtps") or not parts.hostname:
        log.warning(f"{what}.mail_not_sent", error="IOWATT_SMTP_URL must be smtp://host[:port] or smtps://")
        return False
    try:
        msg = EmailMessage()
        msg["From"] = s.smtp_from
        msg["To"] = to
        msg["Subject"] = " ".join(subject.split())  # a header must not hold a line break
        msg["Message-ID"] = make_msgid(domain="iowatt")
        msg.set_content(body)
        client: smtplib.SMTP
        if parts.scheme == "smtps":
            client = smtplib.SMTP_SSL(
                parts.hostname,
                parts.port or 465,
                timeout=s.smtp_timeout_s,
                context=ssl.create_default_context(),
            )
        else:
            client = smtplib.SMTP(parts.hostname, parts.port or 25, timeout=s.smtp_timeout_s)
        with client:
            client.ehlo()
            if parts.scheme == "smtp" and client.has_extn("starttls"):
                client.starttls(context=ssl.create_default_context())
                client.ehlo()
            if parts.username:
                client.login(unquote(parts.username), unquote(parts.password or ""))
            client.send_message(msg)
    except (OSError, ValueError, smtplib.SMTPException) as exc:  # ValueError: an address email refuses
        log.warning(f"{what}.mail_not_sent", error=f"{type(exc).__name__}: {str(exc)[:200]}")
        return False
    return True
