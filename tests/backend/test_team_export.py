"""The team export (issue 13; ADR 0021; format: docs/teams.md § Export): a zip of JSON and CSV
with everything of the team, every engine document, and no secret anywhere in it."""

import csv
import io
import json
import re
import uuid
import zipfile
from typing import Any
from urllib.parse import unquote

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select
from sqlalchemy.orm import Session

from backend.kit.disposition import attachment
from backend.models import Agent, ApiToken, AuditEvent, Invitation, Role, RunStatus, ShareLink, User
from backend.power import service as power_service
from tests.backend.test_energy import power_doc, upload
from tests.factories import create_agent, create_run, create_user

SECRET_PREFIXES = ("iwu_", "iwa_", "iwe_", "$argon2", "$scrypt")


def _zip(client: TestClient, team_id: object, headers: dict[str, str]) -> zipfile.ZipFile:
    r = client.post(f"/api/v1/teams/{team_id}/export", headers=headers)
    assert r.status_code == 200, r.text
    assert r.headers["content-type"] == "application/zip"
    assert re.match(r'attachment; filename="iowatt-.+\.zip"', r.headers["content-disposition"])
    return zipfile.ZipFile(io.BytesIO(r.content))


def test_the_export_holds_the_whole_team_and_no_secret(client: TestClient, session: Session) -> None:
    admin = create_user(session, password="admin secret pass")
    member = create_user(session, role=Role.member, team=admin.team)
    a = create_agent(session, team=admin.team)
    run_id, r = upload(client, session, admin, a, power_doc())
    assert r.status_code == 201, r.text
    assert power_service.compute(session, run_id=run_id) is not None
    queued = create_run(session, agent=a.agent, target_path="/srv/a", name="queued one")
    env = client.post(
        "/api/v1/environments",
        json={"team_id": str(admin.team.id), "name": "lab", "kind": "san", "notes": "rack 4"},
        headers=admin.headers,
    ).json()
    client.put(
        f"/api/v1/environments/{env['id']}/grid-intensity",
        content="hour_utc,g_per_kwh\n2026-01-01T00:00:00Z,300\n2026-01-01T01:00:00Z,310\n",
        headers={**admin.headers, "Content-Type": "text/csv"},
    )
    client.post(
        "/api/v1/comments",
        json={"target_kind": "run", "target_key": str(run_id), "body": "**fast**", "body_format": "markdown"},
        headers=member.headers,
    )
    # secrets of every kind in the team's rows
    personal, _ = (
        client.post("/api/v1/auth/tokens", json={"name": "ci"}, headers=member.headers).json()["token"],
        None,
    )
    session.add(
        ShareLink(team_id=admin.team.id, kind="run", target={"run": str(run_id)}, token_hash="f" * 64)
    )
    session.add(
        Invitation(
            team_id=admin.team.id,
            email="new@example.test",
            role=Role.viewer,
            token_hash="e" * 64,
            expires_at=queued.created_at,
        )
    )
    session.flush()
    # somebody else's team stays out of it
    other = create_user(session)
    other_run = create_run(session, agent=create_agent(session, team=other.team).agent, name="not ours")

    z = _zip(client, admin.team.id, admin.headers)
    names = set(z.namelist())
    for expected in (
        "manifest.json",
        "team.json",
        "members.json",
        "agents.json",
        "devices.json",
        "environments.json",
        "environments_grid_intensity.csv",
        "workloads.json",
        "campaigns.json",
        "runs.json",
        "runs.csv",
        f"runs/{run_id}/engine.json",
        f"runs/{run_id}/result.json",
        f"runs/{run_id}/power.json",
        "result_jobs.csv",
        "result_series.csv",
        "power_samples.csv",
        "energy.csv",
        "energy.json",
        "comments.json",
        "share_links.json",
        "invitations.json",
        "audit.json",
    ):
        assert expected in names, expected
    assert z.testzip() is None

    def j(name: str) -> Any:
        return json.loads(z.read(name))

    def rows(name: str) -> list[dict[str, str]]:
        return list(csv.DictReader(io.StringIO(z.read(name).decode())))

    manifest = j("manifest.json")
    assert manifest["format"] == "iowatt-team-export" and manifest["version"] == 1
    assert manifest["team"]["name"] == admin.team.name and manifest["exported_by"] == admin.user.email
    assert manifest["files"]["runs.json"] == 2 and manifest["files"]["runs/*/engine.json"] == 1
    assert {m["email"]: m["role"] for m in j("members.json")} == {
        admin.user.email: "admin",
        member.user.email: "member",
    }
    assert {r["id"] for r in j("runs.json")} == {str(run_id), str(queued.id)}
    assert {r["id"] for r in rows("runs.csv")} == {str(run_id), str(queued.id)}
    # the engine document whole, as stored
    from backend.models import RunResult

    stored = session.get(RunResult, run_id)
    assert stored is not None and j(f"runs/{run_id}/engine.json") == stored.engine_result
    samples = rows("power_samples.csv")
    assert len(samples) == len(power_doc()["samples"]["t_ns"]) and {s["run_id"] for s in samples} == {
        str(run_id)
    }
    assert len(rows("result_series.csv")) == 3 and len(rows("result_jobs.csv")) == 1
    assert [e["run_id"] for e in rows("energy.csv")] == [str(run_id)]
    assert [(h["environment_id"], h["g_per_kwh"]) for h in rows("environments_grid_intensity.csv")] == [
        (env["id"], "300.0"),
        (env["id"], "310.0"),
    ]
    assert [e["notes"] for e in j("environments.json")] == ["rack 4"]
    assert [(c["body"], c["author"]) for c in j("comments.json")] == [("**fast**", "Test User")]
    assert len(j("share_links.json")) == 1 and len(j("invitations.json")) == 1
    # the audit log, with this export's own event (same transaction)
    assert [e["actor"] for e in j("audit.json") if e["action"] == "team.exported"] == [admin.user.email]
    exported = session.scalars(
        select(AuditEvent).where(AuditEvent.team_id == admin.team.id, AuditEvent.action == "team.exported")
    ).all()
    assert len(exported) == 1

    # no secret anywhere: raw tokens, token hashes, password hashes
    everything = b"\n".join(z.read(n) for n in names).decode()
    for prefix in SECRET_PREFIXES:
        assert prefix not in everything, prefix
    hashes = [
        *session.scalars(select(ApiToken.token_hash)),
        *session.scalars(select(Agent.token_hash).where(Agent.team_id == admin.team.id)),
        "f" * 64,
        "e" * 64,
    ]
    passwords = [p for p in session.scalars(select(User.password_hash)) if p]
    for secret in [personal, *hashes, *passwords]:
        assert secret not in everything
    for field in ("token_hash", "password_hash", "previous_token_hash", "lease_id"):
        assert f'"{field}"' not in everything, field
    assert str(other_run.id) not in everything and other.team.name not in everything


def test_a_comparison_links_target_drops_runs_deleted_since(client: TestClient, session: Session) -> None:
    """share_links.json names no run that is gone from the rest of the export: a comparison link's
    target keeps the runs that exist and says how many were deleted, as the live link does."""
    admin = create_user(session)
    a = create_agent(session, team=admin.team).agent
    r1, r2, r3 = (create_run(session, agent=a, status=RunStatus.succeeded, name=f"r{i}") for i in range(3))
    target = {"runs": [str(r1.id), str(r2.id), str(r3.id)], "baseline": str(r1.id), "group_by": "none"}
    session.add(ShareLink(team_id=admin.team.id, kind="comparison", target=target, token_hash="c" * 64))
    session.add(ShareLink(team_id=admin.team.id, kind="run", target={"run": str(r2.id)}, token_hash="d" * 64))
    session.flush()
    assert client.delete(f"/api/v1/runs/{r1.id}", headers=admin.headers).status_code == 204

    z = _zip(client, admin.team.id, admin.headers)
    links = {link["kind"]: link for link in json.loads(z.read("share_links.json"))}
    cmp = links["comparison"]
    assert cmp["target"]["runs"] == [str(r2.id), str(r3.id)]
    assert cmp["target"]["baseline"] is None  # the deleted run was the baseline
    assert cmp["target"]["group_by"] == "none" and cmp["runs_deleted"] == 1
    assert links["run"]["target"] == {"run": str(r2.id)}
    assert str(r1.id) not in z.read("share_links.json").decode()


def test_only_the_teams_admins_export_it(client: TestClient, session: Session) -> None:
    admin = create_user(session)
    member = create_user(session, role=Role.member, team=admin.team)
    stranger = create_user(session)
    r = client.post(f"/api/v1/teams/{admin.team.id}/export", headers=member.headers)
    assert r.status_code == 403 and "admin" in r.json()["message"]
    assert client.post(f"/api/v1/teams/{admin.team.id}/export", headers=stranger.headers).status_code == 404
    empty = _zip(client, stranger.team.id, stranger.headers)
    assert json.loads(empty.read("runs.json")) == [] and empty.read("runs.csv").decode().startswith(
        "id,name,"
    )


def test_a_team_named_in_any_script_exports_with_an_rfc6266_file_name(
    client: TestClient, session: Session
) -> None:
    """Issue 22: "Команда 東京" made the export a 500 (a header is Latin-1). The name travels as
    filename*=UTF-8''… with an ASCII filename= beside it."""
    u = create_user(session)
    u.team.name = 'Команда 東京 "$x" \\ é'
    session.flush()
    r = client.post(f"/api/v1/teams/{u.team.id}/export", headers=u.headers)
    assert r.status_code == 200, r.text
    cd = r.headers["content-disposition"]
    plain = re.search(r'filename="([^"]*)"', cd)
    assert plain and plain.group(1).isascii() and plain.group(1).endswith(".zip"), cd
    star = re.search(r"filename\*=UTF-8''(\S+)", cd)
    assert star, cd
    assert unquote(star.group(1)).startswith("iowatt-Команда-東京-x-é-"), unquote(star.group(1))
    zipfile.ZipFile(io.BytesIO(r.content)).testzip()


@pytest.mark.parametrize(
    "name",
    ["Команда 東京", "東京", "a\r\nb", 'q"uote', "x" * 400, "..", "\\", "$x^2$", "e\u0301"],
)
def test_attachment_names_are_header_safe(name: str) -> None:
    cd = attachment(f"iowatt-{name}.csv", "iowatt.csv")
    cd.encode("latin-1")  # what Starlette does with a header value
    assert cd.isascii() and "\r" not in cd and "\n" not in cd
    plain = re.search(r'filename="([^"]*)"', cd)
    assert plain and plain.group(1).endswith(".csv") and "/" not in plain.group(1)


def test_a_multi_target_runs_targets_are_exported(client: TestClient, session: Session) -> None:
    from backend.models import RunTarget
    from tests.backend.test_multi_target import MULTI, _body
    from tests.factories import engine_document

    admin = create_user(session)
    a = create_agent(session, team=admin.team, inventory=MULTI)
    r = client.post("/api/v1/runs", json=_body(a.agent.id, ["/srv/a", "/dev/shm/x"]), headers=admin.headers)
    assert r.status_code == 201, r.text
    run_id = r.json()["id"]
    q = select(RunTarget).where(RunTarget.run_id == uuid.UUID(run_id)).order_by(RunTarget.target_index)
    targets = list(session.scalars(q))
    doc = engine_document(ios=1000)
    targets[1].engine_result, targets[1].engine_exit_code = doc, 0
    targets[1].jobs = [{"name": "j", "read": {"total_ios": 1000}}]
    session.flush()
    z = _zip(client, admin.team.id, admin.headers)
    exported = json.loads(z.read("run_targets.json"))
    assert [(t["run_id"], t["target_index"], t["target_path"]) for t in exported] == [
        (run_id, 0, "/srv/a"),
        (run_id, 1, "/dev/shm/x"),
    ]
    assert [t["device_id"] for t in exported] == [str(t.device_id) for t in targets]
    assert exported[1]["jobs"] == targets[1].jobs and exported[1]["engine_exit_code"] == 0
    assert "engine_result" not in exported[0]  # each document is a file of its own
    assert json.loads(z.read(f"runs/{run_id}/targets/1/engine.json")) == doc
    assert f"runs/{run_id}/targets/0/engine.json" not in z.namelist()  # none stored yet
    manifest = json.loads(z.read("manifest.json"))["files"]
    assert manifest["run_targets.json"] == 2 and manifest["runs/*/targets/*/engine.json"] == 1
