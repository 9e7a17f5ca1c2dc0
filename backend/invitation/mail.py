"""Invitation mail, when IOWATT_SMTP_URL is set (sent by backend/auth/mail.py).

Mail is a convenience: the inviter always gets the link in the API's answer, so a mail server that
is down or refuses costs a warning in the log and `mailed: false`, never the invitation.

The text is the server's: the team's and the inviter's names are the only words a user chose, and
they pass through `mail.plain` (no link, no address, at most 60 characters each), so nobody can make
the server mail a message of their own to any address."""

from datetime import datetime

from backend.auth import mail


def send_invitation(*, to: str, team: str, inviter: str, role: str, url: str, expires_at: datetime) -> bool:
    """Send the invitation; True when the SMTP server accepted it."""
    team_text, inviter_text = mail.plain(team) or "a team", mail.plain(inviter) or "An admin"
    return mail.send(
        to=to,
        subject=f"{inviter_text} invites you to the team {team_text} on iowatt",
        body=(
            f'{inviter_text} invites you to join the team "{team_text}" on iowatt as a {role}.\n\n'
            f"Open this link to accept (it works once, until {expires_at:%Y-%m-%d %H:%M} UTC):\n\n"
            f"    {url}\n\n"
            "If you did not expect this invitation, ignore this mail.\n"
        ),
        what="invitation",
    )
