from pydantic import Field

from backend.kit.schema import InputSchema, OutputSchema


class OidcConfig(OutputSchema):
    """Whether this server offers sign-in with OpenID Connect, for the login page's button."""

    enabled: bool
    display_name: str | None = Field(description='the button reads "Sign in with <display_name>"')
    login_url: str | None = Field(description="open this in the browser (not with fetch) to sign in")


class OidcSessionRequest(InputSchema):
    code: str = Field(
        min_length=10,
        max_length=200,
        description="the one-time code the sign-in callback put in the fragment of /login/oidc",
    )


class OidcLinkRequest(InputSchema):
    code: str = Field(
        min_length=10,
        max_length=200,
        description="the link code the sign-in callback put in the fragment of /login/oidc (#link=)",
    )
    password: str = Field(min_length=1, max_length=1000, description="the password of the account to link")
