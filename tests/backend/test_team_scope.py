"""Every list takes `team_id` (issue 13 § People and teams: the team switcher scopes the lists):
only that team's rows, 403 naming the team when the caller is not in it, and without it all the
caller's teams as before (scripts keep working)."""

import uuid
from dataclasses import dataclass

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from backend.models import Campaign, Environment, Membership, Role, Team, Workload
from tests.factories import UserCtx, create_agent, create_run, create_user

LISTS = ["runs", "devices", "environments", "agents", "campaigns", "workloads"]


@dataclass
class World:
    u: UserCtx  # admin of team A, viewer of team B
    a: Team
    b: Team
    stranger: Team  # a team the user is not in
    names: dict[str, dict[str, str]]  # list -> team key -> the name of its row there


@pytest.fixture
def world(session: Session) -> World:
    u = create_user(session, role=Role.admin)
    b = Team(name=f"bolt-{uuid.uuid4().hex[:6]}")
    session.add(b)
    session.flush()
    session.add(Membership(user_id=u.user.id, team_id=b.id, role=Role.viewer))
    stranger = create_user(session).team
    names: dict[str, dict[str, str]] = {k: {} for k in LISTS}
    for key, team in (("a", u.team), ("b", b), ("s", stranger)):
        agent = create_agent(session, team=team, name=f"host-{key}").agent
        run = create_run(session, agent=agent, name=f"run-{key}")
        session.add_all(
            [
                Environment(team_id=team.id, name=f"env-{key}", kind="local"),
                Workload(team_id=team.id, name=f"wl-{key}", spec={"jobs": []}),
                Campaign(team_id=team.id, name=f"camp-{key}", spec={}, created_by=u.user.id),
            ]
        )
        session.flush()
        names["runs"][key] = run.name
        names["agents"][key] = agent.name
        names["environments"][key] = f"env-{key}"
        names["workloads"][key] = f"wl-{key}"
        names["campaigns"][key] = f"camp-{key}"
        names["devices"][key] = str(run.device_id)
    return World(u=u, a=u.team, b=b, stranger=stranger, names=names)


def listed(client: TestClient, w: World, path: str, **params: str) -> set[str]:
    r = client.get(f"/api/v1/{path}", params=params, headers=w.u.headers)
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["total"] == len(body["items"])
    key = "id" if path == "devices" else "name"
    return {item[key] for item in body["items"]}


@pytest.mark.parametrize("path", LISTS)
def test_team_id_lists_only_that_team(client: TestClient, world: World, path: str) -> None:
    n = world.names[path]
    only_a = listed(client, world, path, team_id=str(world.a.id))
    only_b = listed(client, world, path, team_id=str(world.b.id))
    assert n["a"] in only_a and n["b"] not in only_a
    assert n["b"] in only_b and n["a"] not in only_b
    assert n["s"] not in only_a | only_b
    # team_id narrows to that team's rows (workloads: plus the built-in ones, which have no team)
    for item_team in _teams_of(client, world, path, world.b.id):
        assert item_team in (str(world.b.id), None)


@pytest.mark.parametrize("path", LISTS)
def test_without_team_id_all_the_callers_teams(client: TestClient, world: World, path: str) -> None:
    n = world.names[path]
    everything = listed(client, world, path)
    assert {n["a"], n["b"]} <= everything
    assert n["s"] not in everything


@pytest.mark.parametrize("path", LISTS)
def test_a_team_the_caller_is_not_in_is_403_naming_it(client: TestClient, world: World, path: str) -> None:
    for team_id in (world.stranger.id, uuid.uuid4()):
        r = client.get(f"/api/v1/{path}", params={"team_id": str(team_id)}, headers=world.u.headers)
        assert r.status_code == 403, r.text
        body = r.json()
        assert body["error"] == "not_a_member"
        assert "not a member of this team" in str(body) and str(team_id) in str(body)


@pytest.mark.parametrize("path", LISTS)
def test_a_malformed_team_id_is_422_naming_the_field(client: TestClient, world: World, path: str) -> None:
    r = client.get(f"/api/v1/{path}", params={"team_id": "bolt"}, headers=world.u.headers)
    assert r.status_code == 422, r.text
    assert "team_id" in r.text


def test_runs_team_id_combines_with_the_other_filters(client: TestClient, world: World) -> None:
    both = {"team_id": str(world.b.id), "q": "run-a"}
    assert listed(client, world, "runs", **both) == set()
    assert listed(client, world, "runs", team_id=str(world.a.id), q="run-a") == {"run-a"}


def _teams_of(client: TestClient, w: World, path: str, team_id: uuid.UUID) -> list[str | None]:
    r = client.get(f"/api/v1/{path}", params={"team_id": str(team_id)}, headers=w.u.headers)
    assert r.status_code == 200, r.text
    return [item.get("team_id") for item in r.json()["items"]]
