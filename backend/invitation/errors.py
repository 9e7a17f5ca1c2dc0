from backend.errors import AppError


class InvitationGone(AppError):
    """410: the link existed but can no longer be used (used, expired or revoked)."""

    status_code = 410
    code = "invitation_gone"
