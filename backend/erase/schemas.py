from pydantic import Field

from backend.kit.schema import InputSchema


class TeamDelete(InputSchema):
    confirm_name: str = Field(
        min_length=1, max_length=120, description="the team's name, typed again: it must match exactly"
    )


class AccountDelete(InputSchema):
    password: str | None = Field(
        None, min_length=1, max_length=1024, description="the account's password (accounts that have one)"
    )
    confirm_email: str | None = Field(
        None,
        min_length=1,
        max_length=320,
        description="the account's e-mail, typed again (accounts without a password: OpenID Connect)",
    )
