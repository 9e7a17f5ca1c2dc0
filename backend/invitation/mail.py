"""Invitation mail over SMTP (stdlib smtplib), when IOWATT_SMTP_URL is set.

Mail is a convenience: the inviter always gets the link in the API's answer, so a mail server that
is down or refuses costs a warning in the log and `mailed: false`, never the invitation."""

import smtplib
import ssl
from datetime import datetime
from email.message import EmailMessage
from email.utils import make_msgid
from urllib.parse import unquote, urlsplit

from backend.config import get_settings
from backend.logs import log


def _message(*, to: str, team: str, inviter: str, role: str, url: str, expires_at: datetime) -> EmailMessage:
    s = get_settings()
    msg = EmailMessage()
    msg["From"] = s.smtp_from
    msg["To"] = to
    # names may hold line breaks: a header must not (it would end the header, or refuse to be set)
    msg["Subject"] = " ".join(f"{inviter} invites you to the team {team} on iowatt".split())
    msg["Message-ID"] = make_msgid(domain="iowatt")
    msg.set_content(
        f"{inviter} invites you to join the team {team!r} on iowatt as a {role}.\n\n"
        f"Open this link to accept (it works once, until {expires_at:%Y-%m-%d %H:%M} UTC):\n\n"
        f"    {url}\n\n"
        "If you did not expect this invitation, ignore this mail.\n"
    )
    return msg


def send_invitation(*, to: str, team: str, inviter: str, role: str, url: str, expires_at: datetime) -> bool:
    """Send the invitation; True when the SMTP server accepted it, False when SMTP is not
    configured or the server could not be reached or refused."""
    s = get_settings()
    if not s.smtp_url:
        return False
    parts = urlsplit(s.smtp_url)
    if parts.scheme not in ("smtp", "smtps") or not parts.hostname:
        log.warning(
            "invitation.mail_not_sent", error="IOWATT_SMTP_URL must be smtp://host[:port] or smtps://"
        )
        return False
    try:
        msg = _message(to=to, team=team, inviter=inviter, role=role, url=url, expires_at=expires_at)
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
        log.warning("invitation.mail_not_sent", error=f"{type(exc).__name__}: {str(exc)[:200]}")
        return False
    return True
