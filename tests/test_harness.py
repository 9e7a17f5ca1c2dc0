"""The test harness's own shortcuts keep doing what they claim (tests/conftest.py)."""

from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from tests import factories


def test_overridden_requests_reuse_the_analysed_dependencies(client: TestClient, session: Session) -> None:
    """The `client` fixture overrides the session dependency; FastAPI would then analyse every
    sub-dependency of every request again. After a first request, none is analysed again."""
    import fastapi.dependencies.utils as utils

    user = factories.create_user(session, email="harness@example.com")
    assert client.get("/api/v1/agents", headers=user.headers).status_code == 200
    seen: list[object] = []
    real = utils.get_typed_signature

    def counting(call: object) -> object:
        seen.append(call)
        return real(call)  # type: ignore[arg-type]

    utils.get_typed_signature = counting  # type: ignore[assignment]
    try:
        for _ in range(5):
            assert client.get("/api/v1/agents", headers=user.headers).status_code == 200
    finally:
        utils.get_typed_signature = real
    assert seen == [], f"{len(seen)} dependencies analysed again in 5 requests"
