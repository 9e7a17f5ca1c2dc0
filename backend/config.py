"""Server settings from the environment (prefix IOWATT_), one object per process."""

import json
import os
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

REPO_ROOT = Path(__file__).resolve().parent.parent


def _instance_default(name: str, fallback: str) -> str:
    """A connection setting of the local `make up` instance: its state directory's env file
    (IOWATT_STATE_DIR, default .iowatt/; mode 0600, so only its owner reads it). Without that
    file, `fallback`, built from that instance's IOWATT_*_PORT. Tests (IOWATT_ENV=test) never
    read the file: they set their own URLs."""
    if os.environ.get("IOWATT_ENV") == "test":
        return fallback
    state = Path(os.environ.get("IOWATT_STATE_DIR") or REPO_ROOT / ".iowatt")
    try:
        lines = (state / "env").read_text().splitlines()
    except OSError:
        return fallback
    for line in lines:
        key, sep, value = line.partition("=")
        if sep and key.strip() == name:
            return value.strip()
    return fallback


def _public_url_default() -> str:
    """Without IOWATT_PUBLIC_URL: in compose, Caddy's name and HTTPS port (IOWATT_HOSTNAME,
    IOWATT_HTTPS_PORT, which docker-compose.yml passes); else the local instance's (its env file,
    written by make up), else its own API port (a second instance on :8100 never hands out links to
    another one on :8000)."""
    host = os.environ.get("IOWATT_HOSTNAME", "").strip()
    if host:
        return f"https://{host}:{os.environ.get('IOWATT_HTTPS_PORT') or '443'}"
    return _instance_default(
        "IOWATT_PUBLIC_URL", f"http://127.0.0.1:{os.environ.get('IOWATT_API_PORT') or '8000'}"
    )


class Settings(BaseSettings):
    # an empty variable is an unset one (compose passes every setting as ${IOWATT_X:-}: the
    # default here applies unless the operator gave a value)
    model_config = SettingsConfigDict(
        env_prefix="IOWATT_", env_file=None, extra="ignore", env_ignore_empty=True
    )

    env: str = Field("dev", description="dev | test | prod")
    # Defaults come from the local instance's env file (see _instance_default), never from
    # another instance's ports.
    database_url: str = Field(
        default_factory=lambda: _instance_default(
            "IOWATT_DATABASE_URL",
            f"postgresql+psycopg://iowatt@127.0.0.1:{os.environ.get('IOWATT_PG_PORT', '55432')}/iowatt",
        )
    )
    redis_url: str = Field(
        default_factory=lambda: _instance_default(
            "IOWATT_REDIS_URL", f"redis://127.0.0.1:{os.environ.get('IOWATT_REDIS_PORT', '56379')}/0"
        )
    )
    secret_key: str = "dev-insecure-secret"
    frontend_dist: Path = REPO_ROOT / "frontend" / "dist"
    # --- the agent for other hosts (docs/adr/0036): the bundles `make agent-dist` builds, served
    # at /api/v1/agent-dist; and the certificate (PEM) agents see at public_url, whose SHA-256 and
    # public-key pin the install line carries (empty: the line trusts the host's CA store)
    agent_dist_dir: Path = REPO_ROOT / "dist" / "agent"
    agent_tls_cert_file: Path | None = None
    # the CA (PEM) that signs the certificates agents see at public_url when those renew too often to
    # pin (compose's Caddy with `tls internal`: its local root): served at agent-dist/ca.pem with its
    # SHA-256, which the install line checks before it trusts it (ADR 0036)
    agent_tls_ca_file: Path | None = None
    # the anonymous agent-dist routes (manifest, install.sh, bundles): requests a minute from one
    # client address before 429 agent_dist_throttled (a host's install makes two or three)
    agent_dist_requests_per_min: int = Field(60, ge=1, le=1_000_000)
    session_token_ttl_s: int = 7 * 24 * 3600
    heartbeat_interval_s: int = 10
    # Idle agents' heartbeats are paced so that the instance's idle agents send about this many a
    # second in all (an idle agent's long-poll stamps it alive, a busy one's run reports do): 1,000
    # idle agents every 10 s were 100 requests a second, most of the API's idle work. Never more
    # often than heartbeat_interval_s, never less often than idle_heartbeat_max_s (ADR 0051;
    # backend/agent/service.py). 5 a second: up to 50 agents every 10 s, 1,000 every 200 s.
    idle_heartbeats_per_s: float = Field(5.0, gt=0, le=100_000)
    # The longest an idle agent waits between heartbeats: what they still carry is its state, its
    # token's expiry (rotated at half a lifetime of days) and its clock samples (the agent keeps
    # the best of the last 5 minutes'; a group run measures afresh in a burst).
    idle_heartbeat_max_s: int = Field(300, ge=1, le=86_400)
    # An agent that has not sent a heartbeat for this long is shown offline and gets no new runs.
    agent_offline_after_s: int = 45
    # An assigned run the agent has not started within this time goes back to the queue.
    lease_start_timeout_s: int = 60
    # A running run whose agent has not reported progress within this time is failed.
    lease_progress_timeout_s: int = 120
    run_max_attempts: int = 3
    # The longest a lease long-poll waits (whatever the agent asks), and the wait the server names in
    # each lease answer (`poll_wait_s`): 25 s (what every agent asked before) while the instance's
    # idle agents poll less than `idle_polls_per_s` times a second at that wait, else paced so they
    # poll about that often in all, up to this bound (1,000 agents: about every 80 s instead of 25).
    # Keep the bound below every proxy's read timeout on the agents' path (the Helm chart's nginx
    # Ingress: 90 s; Caddy's reverse_proxy has none): a poll answers within its wait and one look.
    # A waiting poll keeps its agent online past agent_offline_after_s: each API process's periodic
    # re-check stamps its waiting polls' agents in one statement (ADR 0053).
    longpoll_max_wait_s: int = Field(80, ge=1, le=300)
    idle_polls_per_s: float = Field(12.5, gt=0, le=100_000)
    # The bulk lane (docs/adr/0056; backend/kit/lanes.py): per API process, at most this many of
    # the users' reads and other bulk requests run at a time (0: no limit), while the agents'
    # protocol, queueing and cancelling runs, /health and /metrics never wait; the others wait in
    # turn, holding no thread and no database session, at most bulk_queue of them, each at most
    # bulk_wait_s, else 503 `overloaded` with Retry-After.
    bulk_concurrency: int = Field(2, ge=0, le=1000)
    bulk_queue: int = Field(200, ge=0, le=100_000)
    bulk_wait_s: float = Field(20.0, gt=0, le=600)
    # Celery (worker/app.py): a task whose worker died holding it unacknowledged (SIGKILL, OOM, a
    # node lost) is handed to another worker once it has waited this long; every task's time
    # limits are derived from it (soft 0.8x, hard 0.9x), so no live task outlasts it and is run twice
    task_visibility_timeout_s: int = Field(300, ge=1, le=24 * 3600)
    # agent tokens (docs/adr/0011): lifetime of a token (an agent rotates it when half is left), and
    # how long the previous token still works once its successor has been used (requests in flight)
    agent_token_ttl_s: int = Field(30 * 24 * 3600, ge=10, le=366 * 24 * 3600)
    agent_token_overlap_s: int = Field(600, ge=0, le=24 * 3600)
    # --- authentication and HTTP hardening ---
    # Argon2id parameters (RFC 9106's second recommendation: t=3, m=64 MiB, p=4); a stored hash
    # made with other parameters is rehashed at the next successful login
    argon2_time_cost: int = Field(3, ge=1)
    argon2_memory_kib: int = Field(65536, ge=8)
    argon2_parallelism: int = Field(4, ge=1)
    # login throttle: failed logins counted per account and per client address in a window
    login_window_s: int = Field(900, gt=0)
    login_max_failures_per_account: int = Field(10, gt=0)
    login_max_failures_per_client: int = Field(50, gt=0)
    # addresses of reverse proxies whose X-Forwarded-For / X-Forwarded-Proto are believed
    trusted_proxies: list[str] = Field(default_factory=list)
    # request bodies: the default limit, and the result upload's (see backend/kit/limits.py)
    max_body_bytes: int = Field(1024 * 1024, gt=0)
    max_result_body_bytes: int = Field(128 * 1024 * 1024, gt=0)
    # an imported file (POST /imports, docs/imports.md): a 200 MB fio json+ file fits
    import_max_bytes: int = Field(256 * 1024 * 1024, gt=0)
    # --- file workloads (docs/adr/0022) ---
    # the iowatt-engine the server runs with --parse-only to check PostMark and vdbench workloads;
    # empty = the repository's build (agent/engine/build/iowatt-engine), else iowatt-engine on PATH
    engine_path: str = ""
    # anonymous share routes (/api/v1/shared/..., /s/...): requests a minute from one client
    # address, found or not, before 429 share_throttled (backend/sharing/throttle.py)
    share_requests_per_min: int = Field(120, ge=1, le=1_000_000)
    # --- people and teams ---
    # the address people open the server at, without a trailing slash: links the server hands out
    # (invitations, share links) are built on it
    # (default: _public_url_default); a scheme's default port is dropped
    public_url: str = Field(default_factory=lambda: _public_url_default(), min_length=1)
    # invitations: how long a link stays usable unless the inviter says otherwise, and at most
    invitation_ttl_s: int = Field(7 * 24 * 3600, gt=0)
    invitation_max_ttl_s: int = Field(30 * 24 * 3600, gt=0)
    # mail (optional): smtp://[user:password@]host[:port] (plain, STARTTLS when the server offers
    # it) or smtps://... (TLS); empty = no mail is sent, the inviter passes the link on
    smtp_url: str = ""
    smtp_from: str = "iowatt <iowatt@localhost>"
    smtp_timeout_s: float = Field(10.0, gt=0)
    # --- alerts (docs/adr/0041-alerts.md) ---
    # alert channels may reach loopback, private and link-local addresses (a webhook receiver on
    # the server's own network); off: only public addresses, so a team admin cannot point the
    # server at its database, its cloud metadata endpoint or another host's admin port
    alert_private_targets: bool = False
    alert_timeout_s: float = Field(10.0, gt=0, le=60)
    # --- who owns an e-mail, who may create teams (docs/adr/0026) ---
    # who may create teams: instance administrators only (as Grafana does for organisations), or
    # every signed-in user
    team_creators: Literal["instance_admins", "users"] = "instance_admins"
    # how long a mailed e-mail verification, a mailed password reset and an admin's reset link work
    email_verification_ttl_s: int = Field(24 * 3600, gt=0, le=7 * 24 * 3600)
    password_reset_ttl_s: int = Field(3600, gt=0, le=24 * 3600)
    admin_reset_link_ttl_s: int = Field(24 * 3600, gt=0, le=7 * 24 * 3600)
    # mails an account may be sent per hour (verification and reset requests; more are refused 429)
    account_mail_per_hour: int = Field(3, gt=0)
    # invitations one user may create per hour, and one team per day (more are refused 429)
    invitations_per_creator_per_hour: int = Field(20, gt=0)
    invitations_per_team_per_day: int = Field(100, gt=0)
    # --- sign-in with OpenID Connect (docs/adr/0017): off while oidc_issuer is empty ---
    # the provider's issuer URL exactly as its discovery document names it
    # (https://ISSUER/.well-known/openid-configuration), e.g. https://sso.example.com/realms/acme
    oidc_issuer: str = ""
    oidc_client_id: str = ""
    oidc_client_secret: str = ""
    oidc_scopes: str = "openid email profile"
    # the login page's button reads "Sign in with <display name>"
    oidc_display_name: str = "single sign-on"
    # create an account (without a password, in no team) for a verified e-mail nobody has; off:
    # only existing accounts (an invitation accepted first, or made by an admin) can sign in
    oidc_auto_create: bool = False
    # take the provider's e-mail as verified when it sends no email_verified claim at all (Microsoft
    # Entra ID does not): only for a provider that issues only addresses its organisation owns,
    # best with oidc_allowed_domains; an explicit email_verified: false is refused all the same
    oidc_trust_email: bool = False
    # e-mail domains whose addresses may be matched or created ("example.com,example.org" or a
    # JSON list); empty = any domain
    oidc_allowed_domains: Annotated[list[str], NoDecode] = Field(default_factory=list)
    # the redirect URI registered at the provider; empty = public_url + /api/v1/auth/oidc/callback
    oidc_redirect_uri: str = ""
    oidc_timeout_s: float = Field(10.0, gt=0)

    @field_validator("agent_tls_cert_file", "agent_tls_ca_file", mode="before")
    @classmethod
    def _no_cert(cls, value: object) -> object:
        """Empty (compose's `${VAR:-}`) is no certificate, not the current directory."""
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("public_url")
    @classmethod
    def _public_url(cls, value: str) -> str:
        """No trailing slash, no default port (compose builds https://HOST:443 when no other port is
        given): links read https://iowatt.example/..., not https://iowatt.example:443/..."""
        url = value.strip().rstrip("/")
        for scheme, port in (("https://", ":443"), ("http://", ":80")):
            if url.startswith(scheme):
                host, sep, rest = url[len(scheme) :].partition("/")
                if host.endswith(port):
                    url = scheme + host[: -len(port)] + sep + rest
        return url.rstrip("/")

    @field_validator("oidc_allowed_domains", mode="before")
    @classmethod
    def _domains(cls, value: object) -> object:
        if isinstance(value, str):
            text = value.strip()
            items = json.loads(text) if text.startswith("[") else text.split(",")
            return [str(d).strip().lower().lstrip("@") for d in items if str(d).strip()]
        return value

    @model_validator(mode="after")
    def _refuse_placeholder_secret(self) -> "Settings":
        if self.env == "prod" and self.secret_key.startswith("dev-"):
            raise ValueError("IOWATT_SECRET_KEY must be set to a real secret when IOWATT_ENV=prod")
        if self.oidc_issuer and not self.oidc_client_id:
            raise ValueError("IOWATT_OIDC_CLIENT_ID must be set when IOWATT_OIDC_ISSUER is")
        if self.oidc_issuer and "openid" not in self.oidc_scopes.split():
            raise ValueError("IOWATT_OIDC_SCOPES must include openid")
        return self


@lru_cache
def get_settings() -> Settings:
    return Settings()
