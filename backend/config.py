"""Server settings from the environment (prefix IOWATT_), one object per process."""

from functools import lru_cache
from pathlib import Path

from pydantic import Field, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

REPO_ROOT = Path(__file__).resolve().parent.parent


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="IOWATT_", env_file=None, extra="ignore")

    env: str = Field("dev", description="dev | test | prod")
    database_url: str = "postgresql+psycopg://iowatt@127.0.0.1:55432/iowatt"
    redis_url: str = "redis://127.0.0.1:56379/0"
    secret_key: str = "dev-insecure-secret"
    frontend_dist: Path = REPO_ROOT / "frontend" / "dist"
    session_token_ttl_s: int = 7 * 24 * 3600
    heartbeat_interval_s: int = 10
    # An agent that has not sent a heartbeat for this long is shown offline and gets no new runs.
    agent_offline_after_s: int = 45
    # An assigned run the agent has not started within this time goes back to the queue.
    lease_start_timeout_s: int = 60
    # A running run whose agent has not reported progress within this time is failed.
    lease_progress_timeout_s: int = 120
    run_max_attempts: int = 3
    longpoll_max_wait_s: int = 30

    @model_validator(mode="after")
    def _refuse_placeholder_secret(self) -> "Settings":
        if self.env == "prod" and self.secret_key.startswith("dev-"):
            raise ValueError("IOWATT_SECRET_KEY must be set to a real secret when IOWATT_ENV=prod")
        return self


@lru_cache
def get_settings() -> Settings:
    return Settings()
