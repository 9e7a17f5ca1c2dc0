import uuid
from datetime import datetime

from pydantic import Field, field_validator

from backend.invitation.schemas import EMAIL_RE
from backend.kit.schema import InputSchema, OutputSchema

ACCOUNT_TOKEN_HELP = "the token from the link's fragment (#token=...)"


class EmailVerificationSent(OutputSchema):
    email: str = Field(description="where the verification mail went")
    expires_at: datetime = Field(description="until when its link works")


class TokenConfirm(InputSchema):
    token: str = Field(min_length=10, max_length=200, description=ACCOUNT_TOKEN_HELP)


class PasswordResetRequest(InputSchema):
    email: str = Field(min_length=3, max_length=320)

    @field_validator("email")
    @classmethod
    def _email(cls, value: str) -> str:
        if not EMAIL_RE.match(value):
            raise ValueError("is not an e-mail address")
        return value.lower()


class PasswordResetRequested(OutputSchema):
    """The same answer whether or not an account uses the address."""

    message: str


class PasswordResetConfirm(InputSchema):
    token: str = Field(min_length=10, max_length=200, description=ACCOUNT_TOKEN_HELP)
    password: str = Field(
        min_length=8, max_length=1000, description="the new password, at least 8 characters"
    )


class AdminUserRead(OutputSchema):
    """An account as an instance administrator sees it."""

    id: uuid.UUID
    email: str
    display_name: str
    is_active: bool
    is_instance_admin: bool
    email_verified: bool = Field(description="the owner proved they receive mail at this address")
    password_set: bool
    sso_linked: bool = Field(description="a single sign-on identity is linked to the account")
    team_count: int
    created_at: datetime


class ResetLinkCreated(OutputSchema):
    """A one-use password reset link to hand to the account's owner (shown only here)."""

    url: str = Field(description="<public URL>/reset-password#token=<token>")
    expires_at: datetime
