"""Changing one's own password and e-mail (Settings → Account; docs/teams.md § Your account)."""

from pydantic import Field, field_validator

from backend.invitation.schemas import EMAIL_RE
from backend.kit.schema import InputSchema, OutputSchema


class PasswordChange(InputSchema):
    current_password: str = Field(min_length=1, max_length=1000, description="the account's password now")
    new_password: str = Field(
        min_length=8, max_length=1000, description="the new password, at least 8 characters"
    )


class PasswordChanged(OutputSchema):
    """What the change ended: the account's other browser sessions (API tokens stay)."""

    sessions_revoked: int = Field(description="browser sessions of this account signed out (not this one)")


class EmailChange(InputSchema):
    current_password: str = Field(min_length=1, max_length=1000, description="the account's password")
    email: str = Field(min_length=3, max_length=320, description="the new address")

    @field_validator("email")
    @classmethod
    def _email(cls, value: str) -> str:
        if not EMAIL_RE.match(value):
            raise ValueError("is not an e-mail address")
        return value.lower()
