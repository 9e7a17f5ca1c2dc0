"""The anonymous share routes' limit is a setting (IOWATT_SHARE_REQUESTS_PER_MIN, issue 22): read
from the environment, bounded, and what backend/sharing/throttle.py enforces."""

import pytest
from fastapi.testclient import TestClient
from pydantic import ValidationError

from backend.auth.throttle import get_redis
from backend.config import Settings, get_settings
from backend.sharing import throttle


def test_the_setting_is_read_from_the_environment_and_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("IOWATT_SHARE_REQUESTS_PER_MIN", raising=False)
    assert Settings().share_requests_per_min == 120
    monkeypatch.setenv("IOWATT_SHARE_REQUESTS_PER_MIN", "600")
    assert Settings().share_requests_per_min == 600
    for bad in ("0", "-1", "many", "1000001"):
        monkeypatch.setenv("IOWATT_SHARE_REQUESTS_PER_MIN", bad)
        with pytest.raises(ValidationError, match="share_requests_per_min"):
            Settings()


@pytest.mark.parametrize("limit", [1, 3])
def test_the_throttle_answers_429_past_the_setting(
    client: TestClient, monkeypatch: pytest.MonkeyPatch, limit: int
) -> None:
    """An unknown token costs the same as a known one, so 404s count up to the limit, then 429."""
    monkeypatch.setattr(get_settings(), "share_requests_per_min", limit)
    key = throttle.key_for("testclient")
    get_redis().delete(key)
    try:
        codes = [client.get("/api/v1/shared/nope").status_code for _ in range(limit + 1)]
        assert codes == [404] * limit + [429], codes
        r = client.get("/s/nope/preview.png")
        assert r.status_code == 429 and r.json()["error"] == "share_throttled"
        assert 1 <= int(r.headers["Retry-After"]) <= throttle.WINDOW_S
    finally:
        get_redis().delete(key)
