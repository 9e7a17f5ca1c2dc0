"""GET /api/v1/runs filters server-side (issue 13): every filter, paging with totals, sort, text
search and tags (PUT /runs/{id}/tags, GET /tags)."""

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.orm import Session

from backend.models import Campaign, Device, Environment, Role, Run, RunStatus, RunTag, Workload
from tests.factories import UserCtx, create_agent, create_result, create_run, create_user

T0 = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)


@dataclass
class World:
    u: UserCtx
    runs: dict[str, Run]
    ids: dict[str, str]


@pytest.fixture(scope="module")
def _module_world(engine: Engine) -> Iterator[tuple[Connection, Session, World]]:
    """The world built once for the module in a transaction rolled back at its end (building it
    per test was three times the cost of the tests themselves); each test runs in a savepoint of
    it (`connection`, `session` below), so no test sees another's changes."""
    conn = engine.connect()
    trans = conn.begin()
    s = Session(bind=conn, join_transaction_mode="create_savepoint", expire_on_commit=False)
    try:
        yield conn, s, _build_world(s)
    finally:
        s.close()
        trans.rollback()
        conn.close()


@pytest.fixture
def connection(_module_world: tuple[Connection, Session, World]) -> Connection:
    return _module_world[0]


@pytest.fixture
def session(_module_world: tuple[Connection, Session, World]) -> Iterator[Session]:
    """The module's session in a savepoint of its own, rolled back after the test; the world's
    objects are read again afterwards (a test changes some of them)."""
    s = _module_world[1]
    sp = s.begin_nested()
    s.connection()  # the SAVEPOINT now: requests write through sessions of their own too
    try:
        yield s
    finally:
        if sp.is_active:
            sp.rollback()
        s.expire_all()


@pytest.fixture
def world(session: Session, _module_world: tuple[Connection, Session, World]) -> World:
    return _module_world[2]


def _build_world(session: Session) -> World:
    """Six runs of one team with distinct agents, devices, environments, workloads, campaigns,
    statuses, sources, dates and tags, plus a run of another team that nothing may show."""
    u = create_user(session)
    a1 = create_agent(session, team=u.team, name="alpha-host").agent
    a2 = create_agent(session, team=u.team, name="beta-host").agent
    env = Environment(team_id=u.team.id, name="lab rack 3", kind="local")
    wl = Workload(team_id=u.team.id, name="nightly-oltp", spec={"jobs": []})
    session.add_all([env, wl])
    session.flush()
    runs = {
        "old": create_run(session, agent=a1, name="old baseline", status=RunStatus.succeeded),
        "q": create_run(session, agent=a1, name="queued one", status=RunStatus.queued),
        "fail": create_run(session, agent=a2, name="zeta failed", status=RunStatus.failed),
        "env": create_run(
            session, agent=a2, name="in the rack", status=RunStatus.succeeded, environment_id=env.id
        ),
        "wl": create_run(session, agent=a1, name="oltp run", status=RunStatus.succeeded, workload_id=wl.id),
        "shm": create_run(
            session, agent=a2, name="ram disk", status=RunStatus.cancelled, target_path="/dev/shm/x"
        ),
    }
    runs["wl"].source = "import"
    for i, key in enumerate(["old", "q", "fail", "env", "wl", "shm"]):
        runs[key].created_at = T0 + timedelta(days=i)
    dev = session.get(Device, runs["shm"].device_id)
    assert dev is not None
    dev.facts = {**dev.facts, "model": "Optane P5800X"}
    session.add_all(
        [
            RunTag(run_id=runs["old"].id, tag="baseline"),
            RunTag(run_id=runs["old"].id, tag="fw 2.1"),
            RunTag(run_id=runs["env"].id, tag="baseline"),
        ]
    )
    other = create_user(session)
    create_run(session, agent=create_agent(session, team=other.team).agent, name="old baseline of B")
    session.flush()
    return World(
        u=u,
        runs=runs,
        ids={"a1": str(a1.id), "a2": str(a2.id), "env": str(env.id), "wl": str(wl.id)},
    )


def names(client: TestClient, w: World, **query: Any) -> list[str]:
    r = client.get("/api/v1/runs", params=query, headers=w.u.headers)
    assert r.status_code == 200, r.text
    body = r.json()
    return [item["name"] for item in body["items"]]


def test_no_filter_lists_the_teams_runs_newest_first_with_the_total(client: TestClient, world: World) -> None:
    r = client.get("/api/v1/runs", headers=world.u.headers).json()
    assert r["total"] == 6
    assert [i["name"] for i in r["items"]] == [
        "ram disk",
        "oltp run",
        "in the rack",
        "zeta failed",
        "queued one",
        "old baseline",
    ]
    assert {i["source"] for i in r["items"]} == {"agent", "import"}
    old = next(i for i in r["items"] if i["name"] == "old baseline")
    assert old["tags"] == ["baseline", "fw 2.1"]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ({"status": "failed"}, ["zeta failed"]),
        ({"status": ["failed", "cancelled"]}, ["ram disk", "zeta failed"]),
        ({"agent_id": "a2"}, ["ram disk", "in the rack", "zeta failed"]),
        ({"environment_id": "env"}, ["in the rack"]),
        ({"workload_id": "wl"}, ["oltp run"]),
        ({"source": "import"}, ["oltp run"]),
        ({"source": "agent", "agent_id": "a1"}, ["queued one", "old baseline"]),
        ({"tag": "baseline"}, ["in the rack", "old baseline"]),
        ({"tag": ["baseline", "fw 2.1"]}, ["old baseline"]),  # every tag given
        ({"tag": "nope"}, []),
        ({"created_from": "2026-11-05T00:00:00Z"}, ["ram disk", "oltp run"]),
        ({"created_from": "2026-11-05T12:00:00Z"}, ["ram disk", "oltp run"]),  # inclusive
        ({"created_to": "2026-11-02T12:00:00Z"}, ["old baseline"]),  # exclusive
        ({"created_from": "2026-11-02", "created_to": "2026-11-04"}, ["zeta failed", "queued one"]),
        ({"created_from": "2026-11-05T13:00:00+01:00"}, ["ram disk", "oltp run"]),  # an offset counts
        ({"q": "BASELINE"}, ["in the rack", "old baseline"]),  # the name, or a tag
        ({"q": "optane"}, ["ram disk"]),  # the device's model
        ({"q": "nightly"}, ["oltp run"]),  # the workload's name
        ({"q": "beta-host rack"}, ["in the rack"]),  # every word, each anywhere
        ({"q": "100%"}, []),  # LIKE's wildcards are plain characters
        ({"q": "_"}, []),
    ],
)
def test_each_filter_narrows_the_list(
    client: TestClient, world: World, query: dict[str, Any], expected: list[str]
) -> None:
    query = {k: world.ids.get(v, v) if isinstance(v, str) else v for k, v in query.items()}
    assert names(client, world, **query) == expected
    r = client.get("/api/v1/runs", params={**query, "limit": 1}, headers=world.u.headers).json()
    assert r["total"] == len(expected)  # the total counts every match, not the page


def test_text_search_finds_the_same_runs_past_its_id_lists(
    client: TestClient, world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """q='s matches among devices, workloads, agents and tags are id lists of at most TEXT_IDS (so
    PostgreSQL can OR index scans for a rare word) and subqueries past it (a common word): the same
    runs either way (the cases above ran with the lists)."""
    from backend.run import repository

    monkeypatch.setattr(repository, "TEXT_IDS", 0)  # every non-empty list is "too long"
    for q, expected in [
        ("BASELINE", ["in the rack", "old baseline"]),  # "old baseline" by its name and its tag
        ("optane", ["ram disk"]),
        ("nightly", ["oltp run"]),
        ("beta-host rack", ["in the rack"]),
    ]:
        assert names(client, world, q=q) == expected
        total = client.get("/api/v1/runs", params={"q": q, "limit": 1}, headers=world.u.headers).json()[
            "total"
        ]
        assert total == len(expected)  # the count's arms: each run once


def test_a_words_count_counts_each_run_once_whichever_ways_it_matches(
    client: TestClient, session: Session, world: World
) -> None:
    """The bounded count reads a word's ways of matching one after another, each run in the first
    it matches: a run matching two counts once, and a run whose device is none (its device arm is
    NULL, not false) still counts by its name."""
    old = world.runs["old"]
    old.device_id = None
    old.name = "optane old"
    session.flush()
    for query, expected in [
        ({"q": "optane"}, 2),  # "ram disk" by its device's model, "optane old" by its name
        ({"q": "baseline"}, 2),  # "old baseline" by its tag only now; "in the rack" by its tag
        ({"q": "rack beta-host"}, 1),  # by its name and its agent's
        ({"q": "optane", "status": "succeeded"}, 1),  # the other filters in every arm
    ]:
        body = client.get("/api/v1/runs", params={**query, "limit": 1}, headers=world.u.headers).json()
        assert (body["total"], body["total_exact"]) == (expected, True), query


def test_device_and_campaign_filters(client: TestClient, session: Session, world: World) -> None:
    shm = world.runs["shm"]
    assert names(client, world, device_id=str(shm.device_id)) == ["ram disk"]
    camp = Campaign(team_id=world.u.team.id, name="sweep", spec={}, created_by=world.u.user.id)
    session.add(camp)
    session.flush()
    world.runs["fail"].campaign_id = camp.id
    session.flush()
    assert names(client, world, campaign_id=str(camp.id)) == ["zeta failed"]
    assert names(client, world, campaign_id=str(uuid.uuid4())) == []


def test_paging_walks_every_match_once(client: TestClient, world: World) -> None:
    seen: list[str] = []
    for offset in (0, 2, 4, 6):
        r = client.get("/api/v1/runs", params={"limit": 2, "offset": offset}, headers=world.u.headers)
        body = r.json()
        assert body["total"] == 6
        seen += [i["id"] for i in body["items"]]
    assert len(seen) == len(set(seen)) == 6


@pytest.mark.parametrize(
    ("sort", "first", "last"),
    [
        ("created", "old baseline", "ram disk"),
        ("-created", "ram disk", "old baseline"),
        ("name", "in the rack", "zeta failed"),
        ("-name", "zeta failed", "in the rack"),
        ("status", "queued one", "ram disk"),  # queued < ... < succeeded < failed < cancelled
    ],
)
def test_sort(client: TestClient, world: World, sort: str, first: str, last: str) -> None:
    got = names(client, world, sort=sort)
    assert got[0] == first and got[-1] == last


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ({"status": "sideways"}, "status.0"),
        ({"sort": "energy"}, "sort"),
        ({"source": "mail"}, "source"),
        ({"created_from": "yesterday"}, "created_from"),
        ({"created_from": "2026-11-04", "created_to": "2026-11-03"}, "created_to"),
        ({"q": "x" * 201}, "q"),
        ({"tag": "t" * 65}, "tag.0"),
        ({"limit": 0}, "limit"),
    ],
)
def test_bad_filters_are_a_422_naming_the_parameter(
    client: TestClient, world: World, query: dict[str, Any], field: str
) -> None:
    r = client.get("/api/v1/runs", params=query, headers=world.u.headers)
    assert r.status_code == 422, r.text
    assert field in [d["field"] for d in r.json()["detail"]], r.text


def test_the_recorded_environments_fields_filter_the_list(
    client: TestClient, session: Session, world: World
) -> None:
    """env=FIELD:VALUE reads each run's environment as it was recorded (its snapshot), as compare's
    filter does: a run recorded before its environment was edited keeps the old value."""
    r = world.runs
    shelf = {"name": "shelf", "kind": "das", "topology": {"raid": {"level": "raid10", "member_count": 4}}}
    r["env"].environment_snapshot = {**shelf, "recorded_at": "2026-11-04T12:00:00Z"}
    r["old"].environment_snapshot = {**shelf, "recorded_at": "2026-11-01T12:00:00Z"}  # the same, earlier
    r["fail"].environment_snapshot = {**shelf, "topology": {"raid": {"level": "raid1", "member_count": 2}}}
    r["wl"].environment_snapshot = {"name": "array", "kind": "san", "topology": {}}
    for run in (r["q"], r["shm"]):
        run.environment_snapshot = None
    session.flush()
    assert names(client, world, env="raid_level:raid10") == ["in the rack", "old baseline"]
    assert names(client, world, env="raid_level:RAID10") == ["in the rack", "old baseline"]
    # values of one field: any of them; several fields: every one
    assert names(client, world, env=["raid_level:raid1", "raid_level:raid10"]) == [
        "in the rack",
        "zeta failed",
        "old baseline",
    ]
    assert names(client, world, env=["kind:das", "raid_level:raid1"]) == ["zeta failed"]
    assert names(client, world, env="kind:san") == ["oltp run"]
    # none: runs without it, those without an environment at all among them
    assert names(client, world, env="raid_level:none") == ["ram disk", "oltp run", "queued one"]
    assert names(client, world, env="kind:nas") == []
    # with the other filters, and counted in the total
    assert names(client, world, env="kind:das", agent_id=world.ids["a1"]) == ["old baseline"]
    page = client.get("/api/v1/runs", params={"env": "kind:das", "limit": 1}, headers=world.u.headers).json()
    assert page["total"] == 3
    bad = client.get("/api/v1/runs", params={"env": "colour:blue"}, headers=world.u.headers)
    assert bad.status_code == 422 and "env.0" in bad.text


# --- tags ---------------------------------------------------------------------------------------


def test_a_member_sets_tags_and_they_show_in_the_run_and_the_filter(
    client: TestClient, session: Session, world: World
) -> None:
    run = world.runs["q"]
    r = client.put(
        f"/api/v1/runs/{run.id}/tags",
        json={"tags": ["  nvme ", "fw:2.1", "nvme", "rack-3/slot_2"]},
        headers=world.u.headers,
    )
    assert r.status_code == 200, r.text
    assert r.json()["tags"] == ["fw:2.1", "nvme", "rack-3/slot_2"]  # trimmed, once each, sorted
    assert client.get(f"/api/v1/runs/{run.id}", headers=world.u.headers).json()["tags"] == r.json()["tags"]
    assert names(client, world, tag="nvme") == ["queued one"]
    r = client.put(f"/api/v1/runs/{run.id}/tags", json={"tags": ["nvme"]}, headers=world.u.headers)
    assert r.json()["tags"] == ["nvme"]
    assert names(client, world, tag="fw:2.1") == []
    r = client.put(f"/api/v1/runs/{run.id}/tags", json={"tags": []}, headers=world.u.headers)
    assert r.json()["tags"] == []


@pytest.mark.parametrize(
    ("tags", "field"),
    [
        (["a" * 65], "tags.0"),
        ([""], "tags.0"),
        (["two  spaces"], "tags.0"),
        (["semi;colon"], "tags.0"),
        (["ok", "<script>"], "tags.1"),
        ([f"t{i}" for i in range(21)], "tags"),
    ],
)
def test_bad_tags_are_a_422_naming_the_tag(
    client: TestClient, world: World, tags: list[str], field: str
) -> None:
    r = client.put(f"/api/v1/runs/{world.runs['q'].id}/tags", json={"tags": tags}, headers=world.u.headers)
    assert r.status_code == 422, r.text
    assert r.json()["detail"][0]["field"] == field


def test_viewers_read_tags_but_cannot_set_them(client: TestClient, session: Session, world: World) -> None:
    viewer = create_user(session, role=Role.viewer, team=world.u.team)
    run = world.runs["old"]
    r = client.put(f"/api/v1/runs/{run.id}/tags", json={"tags": ["x"]}, headers=viewer.headers)
    assert r.status_code == 403 and "member" in r.json()["message"]
    assert client.get(f"/api/v1/runs/{run.id}", headers=viewer.headers).json()["tags"] == [
        "baseline",
        "fw 2.1",
    ]
    stranger = create_user(session)
    r = client.put(f"/api/v1/runs/{run.id}/tags", json={"tags": ["x"]}, headers=stranger.headers)
    assert r.status_code == 404


def test_the_teams_tags_with_counts_most_used_first(
    client: TestClient, session: Session, world: World
) -> None:
    r = client.get("/api/v1/tags", params={"team_id": str(world.u.team.id)}, headers=world.u.headers)
    assert r.status_code == 200, r.text
    assert r.json()["items"] == [{"tag": "baseline", "runs": 2}, {"tag": "fw 2.1", "runs": 1}]
    stranger = create_user(session)
    r = client.get("/api/v1/tags", params={"team_id": str(world.u.team.id)}, headers=stranger.headers)
    assert r.status_code == 403
    assert client.get("/api/v1/tags", headers=stranger.headers).json()["items"] == []


def test_the_total_is_counted_up_to_a_bound_past_the_page(
    client: TestClient, world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At a million runs an exact count of a broad filter costs seconds: the list counts at most
    offset + TOTAL_CAP matches and says whether its total is exact."""
    from backend.run import repository

    monkeypatch.setattr(repository, "TOTAL_CAP", 2)

    def page(**query: Any) -> tuple[int, bool, int]:
        body = client.get("/api/v1/runs", params=query, headers=world.u.headers).json()
        return body["total"], body["total_exact"], len(body["items"])

    assert page(limit=1) == (2, False, 1)  # more than 2 match
    assert page(limit=2, offset=2) == (4, False, 2)  # the bound follows the offset
    assert page(limit=2, offset=4) == (6, True, 2)
    assert page(limit=2, offset=8) == (6, True, 0)  # past the end: counted
    assert page(limit=50) == (6, True, 6)  # a short page is its own count
    assert page(limit=1, status="failed") == (1, True, 1)


def _plans_of_page(
    connection: Connection,
    session: Session,
    world: World,
    count_off: tuple[str, ...] = ("enable_seqscan", "enable_indexscan", "enable_bitmapscan"),
    **filters: Any,
) -> tuple[str, str]:
    """The runs list's page and bounded count statements for `filters`, as repository.page issues
    them, and PostgreSQL's plans of them with sequential scans and sorts priced out (a handful of rows
    would otherwise make any plan as cheap as another), and for the count every read of the table's
    rows too: which index serves the page's order, and whether the count needs the rows at all."""
    from sqlalchemy import event

    from backend.run import repository

    issued: list[tuple[str, Any]] = []

    def keep(conn: Any, cursor: Any, statement: str, parameters: Any, context: Any, many: bool) -> None:
        page_or_count = statement.lstrip().startswith(("SELECT runs.id,", "SELECT count(*)"))
        if page_or_count and "CAST(runs.workload_spec" not in statement:  # not the page's specs
            issued.append((statement, parameters))

    event.listen(connection, "before_cursor_execute", keep)
    try:  # limit 1: a full page, so the count is asked for
        repository.page(
            session, [world.u.team.id], filters=repository.RunFilter(**filters), limit=1, offset=0
        )
    finally:
        event.remove(connection, "before_cursor_execute", keep)
    assert len(issued) == 2, issued

    def plan(statement: str, parameters: Any, *off: str) -> str:
        for setting in off:
            connection.exec_driver_sql(f"SET LOCAL {setting} = off")
        try:
            return "\n".join(r[0] for r in connection.exec_driver_sql("EXPLAIN " + statement, parameters))
        finally:
            for setting in off:
                connection.exec_driver_sql(f"RESET {setting}")

    (page_sql, page_params), (count_sql, count_params) = issued
    return (
        plan(page_sql, page_params, "enable_seqscan", "enable_sort"),
        plan(count_sql, count_params, *count_off),
    )


def test_one_agents_page_is_read_from_its_own_index(
    connection: Connection, session: Session, world: World
) -> None:
    """One agent's newest runs come from `ix_runs_agent_created (agent_id, created_at)` (migration
    0025): with the agent's id alone PostgreSQL read every agent's runs newest first and kept this
    one's, 17,865 rows for a page of 50 at a million runs (docs/benchmarks.md § A million runs,
    session 24).

    The table is given that shape first: the team's other agent with 3,000 finished runs, and
    statistics that know them (ANALYZE in the test's transaction counts its own rows; both go with
    its rollback). With the world's six runs alone the planner's choice between this index and
    `ix_runs_team_created` depended on what other tests had left in the statistics."""
    cols = [
        c
        for (c,) in connection.exec_driver_sql(
            "SELECT column_name FROM information_schema.columns "
            "WHERE table_name = 'runs' AND column_name <> 'id'"
        )
    ]
    listed = ", ".join(cols)
    connection.exec_driver_sql(
        f"INSERT INTO runs (id, {listed}) SELECT gen_random_uuid(), {listed} FROM runs, "
        "generate_series(1, 3000) WHERE runs.id = %(run)s",
        {"run": world.runs["env"].id},  # beta-host's, finished: no device exclusivity applies
    )
    connection.exec_driver_sql("ANALYZE runs")
    page, count = _plans_of_page(connection, session, world, agent_id=uuid.UUID(world.ids["a1"]))
    assert "Index Scan Backward using ix_runs_agent_created on runs" in page, page
    # the bounded count from the index alone (the team is included): 12 pages instead of 1,007
    assert "Index Only Scan using ix_runs_agent_created on runs" in count, count


def test_a_hosts_name_is_counted_from_its_runs_by_agent_first(
    connection: Connection, session: Session, world: World
) -> None:
    """`q=` with a host's name (in its runs' names too, as the server names runs): the bounded count
    reads the host's runs by agent first (an index read) and the names' ILIKE only for what is left
    below its bound; counted as one OR, PostgreSQL walked the teams' runs testing each name, ~52,000
    runs for 1,001 matches at a million (docs/benchmarks.md § The runs list at a million runs
    (session 25)). The plan's shape is the statement's (a UNION ALL of limited parts, in order),
    whatever the statistics."""
    _, count = _plans_of_page(connection, session, world, (), text="beta-host")
    assert "Append" in count, count
    arms = count.split("Append", 1)[1].split("->  Limit")[1:]
    assert len(arms) == 2, count  # the agent's runs, then the names
    assert "agent_id = " in arms[0] and "~~*" not in arms[0], count
    assert "~~*" in arms[1] and "IS NOT TRUE" in arms[1], count


def test_a_pages_runs_of_one_spec_share_its_parsed_document(session: Session, world: World) -> None:
    """A page's runs of one workload spec hold one parsed document (read as text and parsed once per
    distinct text: a CrystalDiskMark page parsed 50 copies of 19 KB and took each one's repr), the
    same as each run's stored spec."""
    import json

    from sqlalchemy import select

    from backend.run import repository

    world.runs["q"].workload_spec = {**world.runs["q"].workload_spec, "note": "another spec"}
    session.flush()
    session.expire_all()
    runs, _, _ = repository.page(
        session, [world.u.team.id], filters=repository.RunFilter(), limit=50, offset=0
    )
    rows = session.execute(select(Run.id, Run.workload_spec).where(Run.team_id == world.u.team.id))
    stored = {run_id: spec for run_id, spec in rows}  # parsed by psycopg, one per row
    assert {r.id: r.workload_spec for r in runs} == stored
    texts = {json.dumps(r.workload_spec, sort_keys=True) for r in runs}
    assert len(texts) == 2 and len({id(r.workload_spec) for r in runs}) == 2


def test_jobs_false_leaves_the_items_jobs_out_and_does_not_read_them(
    client: TestClient, connection: Connection, session: Session, world: World
) -> None:
    """`GET /runs?jobs=false` (the runs page, which shows no job figure): the items' `jobs` and
    `passes` are empty and the result jobs are not read; at a million runs the name sort's page of 50
    CrystalDiskMark runs (1,720 job summaries) was ~130 ms of the server's CPU with them and ~35
    without (docs/benchmarks.md § A million runs, session 24). Everything else is the same."""
    from tests.sql import captured_sql

    run = world.runs["old"]
    create_result(
        session, run=run, jobs=[{"name": "r", "rw": "randread", "bs_bytes": 4096, "read_iops": 100.0}]
    )

    def listed(**query: Any) -> tuple[dict[str, Any], bool]:
        with captured_sql(connection) as statements:
            r = client.get("/api/v1/runs", params={"q": "old baseline", **query}, headers=world.u.headers)
        assert r.status_code == 200, r.text
        (item,) = r.json()["items"]
        return item, any("FROM RESULT_JOBS" in st for st in statements)

    full, read_jobs = listed()
    assert [j["name"] for j in full["jobs"]] == ["r"] and read_jobs
    light, read_jobs = listed(jobs="false")
    assert light["jobs"] == [] and light["passes"] == [] and not read_jobs
    assert {k: v for k, v in light.items() if k not in ("jobs", "passes")} == {
        k: v for k, v in full.items() if k not in ("jobs", "passes")
    }
