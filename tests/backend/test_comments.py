"""Comments on runs, comparisons and campaigns (issue 13 § Working together; backend/comment)."""

import uuid

from fastapi.testclient import TestClient
from sqlalchemy import select
from sqlalchemy.orm import Session

from backend.models import AuditEvent, Campaign, Comment, Role
from tests.factories import create_agent, create_run, create_user

XSS = '<img src=x onerror="alert(1)"><script>alert(2)</script> **bold** [x](javascript:alert(3))'


def _post(client: TestClient, who: object, **body: object) -> object:
    return client.post("/api/v1/comments", json=body, headers=who.headers)  # type: ignore[attr-defined]


def test_members_comment_on_a_run_and_everyone_in_the_team_reads_it(
    client: TestClient, session: Session
) -> None:
    admin = create_user(session)
    member = create_user(session, role=Role.member, team=admin.team)
    viewer = create_user(session, role=Role.viewer, team=admin.team)
    stranger = create_user(session)
    run = create_run(session, agent=create_agent(session, team=admin.team).agent)

    r = _post(client, member, target_kind="run", target_key=str(run.id), body=XSS, body_format="markdown")
    assert r.status_code == 201, r.text
    c = r.json()
    # stored exactly as written: the UI renders it without raw HTML (tests/browser checks the page)
    assert c["body"] == XSS and c["body_format"] == "markdown"
    assert c["author_id"] == str(member.user.id) and c["author_name"] == "Test User"
    assert c["team_id"] == str(admin.team.id) and c["edited_at"] is None
    assert session.scalar(select(Comment.body).where(Comment.id == uuid.UUID(c["id"]))) == XSS

    # a viewer reads but may not write
    r = _post(client, viewer, target_kind="run", target_key=str(run.id), body="hi")
    assert r.status_code == 403 and "member" in r.json()["message"]
    listed = client.get(
        "/api/v1/comments", params={"target_kind": "run", "target_key": str(run.id)}, headers=viewer.headers
    )
    assert listed.status_code == 200 and [i["id"] for i in listed.json()["items"]] == [c["id"]]
    # a stranger cannot tell the run exists
    for r in (
        client.get(
            "/api/v1/comments",
            params={"target_kind": "run", "target_key": str(run.id)},
            headers=stranger.headers,
        ),
        _post(client, stranger, target_kind="run", target_key=str(run.id), body="hi"),
    ):
        assert r.status_code == 404, r.text
    created = session.scalars(select(AuditEvent.action).where(AuditEvent.team_id == admin.team.id)).all()
    assert "comment.created" in created


def test_only_the_author_edits_and_the_author_or_an_admin_deletes(
    client: TestClient, session: Session
) -> None:
    admin = create_user(session)
    author = create_user(session, role=Role.member, team=admin.team)
    other = create_user(session, role=Role.member, team=admin.team)
    run = create_run(session, agent=create_agent(session, team=admin.team).agent)
    cid = _post(client, author, target_kind="run", target_key=str(run.id), body="first").json()["id"]  # type: ignore[attr-defined]

    for who in (other, admin):
        r = client.patch(f"/api/v1/comments/{cid}", json={"body": "not mine"}, headers=who.headers)
        assert r.status_code == 403 and "author" in r.json()["message"]
    r = client.patch(
        f"/api/v1/comments/{cid}", json={"body": "second", "body_format": "markdown"}, headers=author.headers
    )
    assert r.status_code == 200 and r.json()["body"] == "second" and r.json()["edited_at"] is not None
    assert (
        client.patch(f"/api/v1/comments/{cid}", json={"body": ""}, headers=author.headers).status_code == 422
    )
    r = client.patch(f"/api/v1/comments/{cid}", json={"body_format": "html"}, headers=author.headers)
    assert r.status_code == 422 and r.json()["detail"][0]["field"] == "body_format"
    r = client.patch(f"/api/v1/comments/{cid}", json={"body": None}, headers=author.headers)
    assert r.status_code == 422 and r.json()["detail"][0]["field"] == "body"

    r = client.delete(f"/api/v1/comments/{cid}", headers=other.headers)
    assert r.status_code == 403 and "admin" in r.json()["message"]
    assert client.delete(f"/api/v1/comments/{cid}", headers=author.headers).status_code == 204
    assert client.delete(f"/api/v1/comments/{cid}", headers=author.headers).status_code == 404

    cid2 = _post(client, author, target_kind="run", target_key=str(run.id), body="again").json()["id"]  # type: ignore[attr-defined]
    assert client.delete(f"/api/v1/comments/{cid2}", headers=admin.headers).status_code == 204
    deleted = session.scalars(
        select(AuditEvent).where(AuditEvent.team_id == admin.team.id, AuditEvent.action == "comment.deleted")
    ).all()
    assert {e.target_id for e in deleted} == {cid, cid2}
    assert {e.actor for e in deleted} == {author.user.email, admin.user.email}


def test_a_comparisons_thread_is_found_by_its_runs_in_any_order(client: TestClient, session: Session) -> None:
    u = create_user(session)
    agent = create_agent(session, team=u.team).agent
    a, b = create_run(session, agent=agent), create_run(session, agent=agent, target_path="/srv/a")
    canonical = ",".join(sorted([str(a.id), str(b.id)]))
    r = _post(
        client, u, target_kind="comparison", target_key=f" {str(b.id).upper()} , {a.id},{b.id}", body="x"
    )
    assert r.status_code == 201, r.text  # type: ignore[attr-defined]
    assert r.json()["target_key"] == canonical  # type: ignore[attr-defined]
    for key in (f"{a.id},{b.id}", f"{b.id},{a.id}"):
        got = client.get(
            "/api/v1/comments", params={"target_kind": "comparison", "target_key": key}, headers=u.headers
        )
        assert got.json()["total"] == 1, got.text
    # a subset is another comparison
    only_a = client.get(
        "/api/v1/comments", params={"target_kind": "comparison", "target_key": str(a.id)}, headers=u.headers
    )
    assert only_a.json()["total"] == 0


def test_bad_targets_are_422_or_404_naming_the_field(client: TestClient, session: Session) -> None:
    u = create_user(session)
    other_team = create_user(session)
    run = create_run(session, agent=create_agent(session, team=u.team).agent)
    cases = [
        ({"target_kind": "run", "target_key": "not-a-uuid", "body": "x"}, 422, "target_key"),
        ({"target_kind": "device", "target_key": str(run.id), "body": "x"}, 422, "target_kind"),
        ({"target_kind": "run", "target_key": str(run.id), "body": ""}, 422, "body"),
        (
            {"target_kind": "run", "target_key": str(run.id), "body": "x", "body_format": "html"},
            422,
            "body_format",
        ),
        ({"target_kind": "run", "target_key": str(run.id), "body": "x" * 20_001}, 422, "body"),
        (
            {
                "target_kind": "run",
                "target_key": str(run.id),
                "body": "x",
                "team_id": str(other_team.team.id),
            },
            422,
            "team_id",
        ),
        (
            {
                "target_kind": "comparison",
                "target_key": ",".join(str(uuid.uuid4()) for _ in range(51)),
                "body": "x",
            },
            422,
            "target_key",
        ),
        ({"target_kind": "run", "target_key": str(uuid.uuid4()), "body": "x"}, 404, None),
        ({"target_kind": "campaign", "target_key": str(uuid.uuid4()), "body": "x"}, 404, None),
        ({"target_kind": "comparison", "target_key": f"{run.id},{uuid.uuid4()}", "body": "x"}, 404, None),
    ]
    for body, status, field in cases:
        r = client.post("/api/v1/comments", json=body, headers=u.headers)
        assert r.status_code == status, (body, r.text)
        if field:
            assert r.json()["detail"][0]["field"] == field, r.text
    assert session.scalar(select(Comment.id).where(Comment.team_id == u.team.id)) is None


def test_campaign_comments(client: TestClient, session: Session) -> None:
    u = create_user(session)
    campaign = Campaign(team_id=u.team.id, name="camp", spec={"repeats": 1}, created_by=u.user.id)
    session.add(campaign)
    session.flush()
    cid = str(campaign.id)
    r = _post(client, u, target_kind="campaign", target_key=cid, body="looks good")
    assert r.status_code == 201  # type: ignore[attr-defined]
    got = client.get(
        "/api/v1/comments", params={"target_kind": "campaign", "target_key": cid}, headers=u.headers
    )
    assert [i["body"] for i in got.json()["items"]] == ["looks good"]


def test_notes_on_devices_and_environments(client: TestClient, session: Session) -> None:
    u = create_user(session)
    viewer = create_user(session, role=Role.viewer, team=u.team)
    run = create_run(session, agent=create_agent(session, team=u.team).agent)
    dev = f"/api/v1/devices/{run.device_id}"
    assert client.get("/api/v1/devices", headers=u.headers).json()["items"][0]["notes"] == ""
    r = client.patch(dev, json={"notes": "# swapped\nfirmware 2.1 <b>ok</b>"}, headers=u.headers)
    assert r.status_code == 200 and r.json()["notes"] == "# swapped\nfirmware 2.1 <b>ok</b>"
    assert client.patch(dev, json={"notes": None}, headers=u.headers).json()["detail"][0]["field"] == "notes"
    assert client.patch(dev, json={"notes": "x" * 20_001}, headers=u.headers).status_code == 422
    assert client.patch(dev, json={"notes": "no"}, headers=viewer.headers).status_code == 403
    env = client.post(
        "/api/v1/environments",
        json={"team_id": str(u.team.id), "name": "lab", "kind": "local", "notes": "row 3"},
        headers=u.headers,
    ).json()
    assert env["notes"] == "row 3"
    r = client.patch(f"/api/v1/environments/{env['id']}", json={"notes": "row 4"}, headers=u.headers)
    assert r.status_code == 200 and r.json()["notes"] == "row 4"
    listed = client.get("/api/v1/environments", headers=viewer.headers).json()["items"]
    assert [e["notes"] for e in listed] == ["row 4"]


def test_an_author_demoted_to_viewer_can_no_longer_edit_their_comment(
    client: TestClient, session: Session
) -> None:
    admin = create_user(session)
    author = create_user(session, role=Role.member, team=admin.team)
    run = create_run(session, agent=create_agent(session, team=admin.team).agent)
    cid = _post(client, author, target_kind="run", target_key=str(run.id), body="first").json()["id"]  # type: ignore[attr-defined]
    r = client.patch(
        f"/api/v1/teams/{admin.team.id}/members/{author.user.id}",
        json={"role": "viewer"},
        headers=admin.headers,
    )
    assert r.status_code == 200, r.text
    r = client.patch(f"/api/v1/comments/{cid}", json={"body": "rewritten"}, headers=author.headers)
    assert r.status_code == 403 and "member" in r.json()["message"]
    assert session.scalar(select(Comment.body).where(Comment.id == uuid.UUID(cid))) == "first"
    # their own comment may still be deleted by them (taking words back is not putting new ones)
    assert client.delete(f"/api/v1/comments/{cid}", headers=author.headers).status_code == 204
