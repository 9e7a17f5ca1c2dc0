"""A review's discussion is read a page at a time (issue 22 Medium 6: a viewer must not make the API
load every comment of a long discussion in one request): GET /reviews/{id}/comments answers
Page[ReviewCommentRead] oldest first, `limit` 1..COMMENTS_PAGE_MAX (default COMMENTS_PAGE), `offset`
0..1,000,000, `total` counting every comment."""

import uuid
from datetime import UTC, datetime, timedelta

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from backend.models import Role
from backend.models.review import ReviewComment
from backend.review.router import COMMENTS_PAGE, COMMENTS_PAGE_MAX
from tests.backend.test_reviews import make_review
from tests.factories import create_user

T0 = datetime(2026, 12, 1, tzinfo=UTC)


def _comments(session: Session, review_id: str, author: uuid.UUID, n: int) -> list[str]:
    """n comments at distinct times, added newest first (the test's transaction has one now(), and
    insertion order must not be what orders them); their bodies, oldest first."""
    for i in reversed(range(n)):
        session.add(
            ReviewComment(
                review_id=uuid.UUID(review_id),
                author_id=author,
                body=f"c{i:03d}",
                created_at=T0 + timedelta(minutes=i),
            )
        )
    session.flush()
    return [f"c{i:03d}" for i in range(n)]


def test_pages_are_oldest_first_and_cover_the_discussion_once(client: TestClient, session: Session) -> None:
    admin = create_user(session)
    viewer = create_user(session, role=Role.viewer, team=admin.team)
    rv = make_review(client, admin)
    bodies = _comments(session, rv["id"], admin.user.id, 7)
    url = f"/api/v1/reviews/{rv['id']}/comments"
    seen: list[str] = []
    for offset in (0, 3, 6):
        r = client.get(url, params={"limit": 3, "offset": offset}, headers=viewer.headers)
        assert r.status_code == 200, r.text
        page = r.json()
        assert page["total"] == 7
        assert len(page["items"]) == (3 if offset < 6 else 1)
        seen += [c["body"] for c in page["items"]]
    assert seen == bodies
    past = client.get(url, params={"limit": 3, "offset": 7}, headers=viewer.headers).json()
    assert past == {"items": [], "total": 7}


def test_the_default_page_and_the_largest(client: TestClient, session: Session) -> None:
    u = create_user(session)
    rv = make_review(client, u)
    bodies = _comments(session, rv["id"], u.user.id, COMMENTS_PAGE_MAX + 1)
    url = f"/api/v1/reviews/{rv['id']}/comments"
    default = client.get(url, headers=u.headers).json()
    assert [c["body"] for c in default["items"]] == bodies[:COMMENTS_PAGE]
    assert default["total"] == COMMENTS_PAGE_MAX + 1
    largest = client.get(url, params={"limit": COMMENTS_PAGE_MAX}, headers=u.headers).json()
    assert [c["body"] for c in largest["items"]] == bodies[:COMMENTS_PAGE_MAX]


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"limit": 0}, "limit"),
        ({"limit": -1}, "limit"),
        ({"limit": COMMENTS_PAGE_MAX + 1}, "limit"),
        ({"limit": "ten"}, "limit"),
        ({"offset": -1}, "offset"),
        ({"offset": 1_000_001}, "offset"),
        ({"offset": 2**63}, "offset"),
    ],
)
def test_a_bad_page_is_a_422_naming_the_parameter(
    client: TestClient, session: Session, params: dict[str, object], field: str
) -> None:
    u = create_user(session)
    rv = make_review(client, u)
    r = client.get(f"/api/v1/reviews/{rv['id']}/comments", params=params, headers=u.headers)
    assert r.status_code == 422, r.text
    assert field in [d["field"] for d in r.json()["detail"]], r.text


def test_a_new_comment_is_answered_alone_and_comes_last(client: TestClient, session: Session) -> None:
    u = create_user(session)
    rv = make_review(client, u)
    _comments(session, rv["id"], u.user.id, 3)
    r = client.post(f"/api/v1/reviews/{rv['id']}/comments", json={"body": "newest"}, headers=u.headers)
    assert r.status_code == 201, r.text
    assert r.json()["body"] == "newest" and r.json()["author_name"] == "Test User"
    page = client.get(
        f"/api/v1/reviews/{rv['id']}/comments", params={"limit": 1, "offset": 3}, headers=u.headers
    ).json()
    assert [c["id"] for c in page["items"]] == [r.json()["id"]] and page["total"] == 4
