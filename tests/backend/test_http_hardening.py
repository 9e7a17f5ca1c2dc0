"""HTTP hardening of issue 9: body size limits before parsing and authentication, NUL characters,
null and renamed fields that used to be 500s, security headers, /health and /metrics details only
with a token."""

import asyncio
import json
import uuid
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import create_engine
from sqlalchemy.orm import Session, sessionmaker

import backend
from backend.config import get_settings
from backend.kit.headers import CSP
from backend.kit.limits import MiB
from backend.main import create_app
from backend.models import Membership, Role, Team
from tests.factories import create_agent, create_run, create_user
from tests.services import free_port

JOB = {"name": "rr", "rw": "randread", "bs_bytes": 4096, "size_bytes": 1 << 20, "runtime_s": 1}


def _asgi(
    app: Any, method: str, path: str, headers: list[tuple[bytes, bytes]], chunks: list[bytes]
) -> tuple[int, dict[str, str], bytes, int]:
    """Call the ASGI app directly with a body in chunks: (status, headers, body, chunks read)."""
    pending = list(chunks)
    read = 0
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        nonlocal read
        if not pending:
            return {"type": "http.disconnect"}
        read += 1
        body = pending.pop(0)
        return {"type": "http.request", "body": body, "more_body": bool(pending)}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "root_path": "",
        "query_string": b"",
        "headers": headers,
        "client": ("127.0.0.1", 5000),
        "server": ("testserver", 80),
    }
    asyncio.run(app(scope, receive, send))
    start = next(m for m in sent if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    hdrs = {k.decode(): v.decode() for k, v in start["headers"]}
    return start["status"], hdrs, body, read


# --- request size limits ----------------------------------------------------------------------------


def test_a_declared_length_over_the_limit_is_413_before_the_body_is_read(db_url: str) -> None:
    app = create_app()
    status, hdrs, body, read = _asgi(
        app,
        "POST",
        "/api/v1/workloads",
        [(b"content-type", b"application/json"), (b"content-length", str(2 * MiB).encode())],
        [b"{}"],
    )
    # no token either: the size is decided first
    assert status == 413 and read == 0
    assert json.loads(body) == {
        "error": "payload_too_large",
        "message": "the request body is larger than this route's limit of 1048576 bytes",
        "detail": {"limit_bytes": 1048576},
        "request_id": hdrs["x-request-id"],  # the middleware's, as in every error body
    }
    assert hdrs["content-security-policy"] == CSP  # the 413 carries the security headers too


def test_a_streamed_body_is_cut_at_the_limit(db_url: str) -> None:
    app = create_app()
    chunk = b" " * (256 * 1024)
    status, _, body, read = _asgi(
        app, "POST", "/api/v1/auth/login", [(b"content-type", b"application/json")], [chunk] * 40
    )
    assert status == 413 and json.loads(body)["detail"] == {"limit_bytes": 16 * 1024}
    assert read == 1  # stopped reading at the first chunk past the limit, not after 10 MiB


def test_the_result_upload_takes_big_documents_from_agents_only(client: TestClient, session: Session) -> None:
    u = create_user(session)
    a = create_agent(session, team=u.team)
    run = create_run(session, agent=a.agent)
    big = json.dumps({"padding": "x" * (3 * MiB)})
    hdr = {"content-type": "application/json"}
    # 3 MiB is over the default limit but fine for a result upload with an agent's token: it gets to
    # validation (the body is not a result)
    r = client.put(f"/api/v1/runs/{run.id}/result", content=big, headers={**hdr, **a.headers})
    assert r.status_code == 422, r.text
    # without an agent's token the default limit applies, before authentication
    for who in ({}, u.headers):
        r = client.put(f"/api/v1/runs/{run.id}/result", content=big, headers={**hdr, **who})
        assert r.status_code == 413 and r.json()["detail"]["limit_bytes"] == get_settings().max_body_bytes
    r = client.post("/api/v1/workloads", content=big, headers={**hdr, **u.headers})
    assert r.status_code == 413 and r.json()["detail"]["limit_bytes"] == get_settings().max_body_bytes
    status, _, body, read = _asgi(
        create_app(),
        "PUT",
        f"/api/v1/runs/{run.id}/result",
        [
            (b"authorization", f"Bearer {a.token}".encode()),
            (b"content-length", str(get_settings().max_result_body_bytes + 1).encode()),
        ],
        [b""],
    )
    assert status == 413 and read == 0 and json.loads(body)["detail"]["limit_bytes"] == 128 * MiB


def _result_body(*, jobs: int, series_points: int, power_samples: int) -> dict[str, Any]:
    """A result upload as the agent sends it: json+ jobs with full latency histograms on both
    sides, per-second series spread over the jobs, and power samples."""
    from tests.factories import engine_document

    doc = engine_document(jobs=jobs, series_points=max(1, series_points // jobs))
    for job in doc["jobs"]:
        for side in ("read", "write"):
            job[side].setdefault("clat_ns", {})["bins"] = {str(1000 + 37 * k): 123456 for k in range(1856)}
    t0 = 1_700_000_000_000_000_000
    return {
        "lease_id": str(uuid.uuid4()),
        "upload_id": str(uuid.uuid4()),
        "engine_result": doc,
        "engine_exit_code": 0,
        "started_at": "2026-11-22T18:00:00Z",
        "finished_at": "2026-11-22T19:00:00Z",
        "power": {
            "samples": {
                "t_ns": [t0 + k * 10**9 for k in range(power_samples)],
                "value": [123.456] * power_samples,
            }
        },
    }


def test_the_largest_legitimate_results_fit_the_upload_limit() -> None:
    limit = get_settings().max_result_body_bytes
    # the longest preset: kernel-help, 110 jobs, about 12 h measured, a 1 Hz meter
    kernel_help = len(json.dumps(_result_body(jobs=110, series_points=43_640, power_samples=43_640)))
    assert 10 * MiB < kernel_help < limit / 4, kernel_help
    # the longest job a workload allows (7 days), measured from 6 hours and scaled by 28
    six_h = len(json.dumps(_result_body(jobs=1, series_points=21_600, power_samples=21_600)))
    base = len(json.dumps(_result_body(jobs=1, series_points=1, power_samples=1)))
    week = base + 28 * (six_h - base)
    assert 100 * MiB < week < limit, week


# --- NUL characters and fields that were 500s -----------------------------------------------------


def test_nul_in_bodies_query_and_path_is_422_naming_the_field(client: TestClient, session: Session) -> None:
    u = create_user(session)
    tid = str(u.team.id)
    r = client.post(
        "/api/v1/workloads",
        json={"team_id": tid, "name": "w\u0000", "spec": {"jobs": [JOB]}},
        headers=u.headers,
    )
    assert r.status_code == 422 and r.json()["detail"][0]["field"] == "name"
    r = client.post(
        "/api/v1/environments", json={"team_id": tid, "name": "e\u0000", "kind": "local"}, headers=u.headers
    )
    assert r.status_code == 422 and r.json()["detail"][0]["field"] == "name"
    r = client.post(
        "/api/v1/environments",
        json={"team_id": tid, "name": "e", "kind": "local", "description": "a\u0000b"},
        headers=u.headers,
    )
    assert r.status_code == 422 and r.json()["detail"][0]["field"] == "description"
    r = client.get("/api/v1/compare", params={"runs": "\u0000"}, headers=u.headers)
    assert r.status_code == 422 and r.json()["detail"][0]["field"] == "runs"
    r = client.get("/api/v1/compare/latency", params={"runs": "x", "job": "a\u0000"}, headers=u.headers)
    assert r.status_code == 422 and r.json()["detail"][0]["field"] == "job"
    for path in ("/assets/%00x.js", "/%00", "/api/v1/workloads/%00"):
        r = client.get(path, headers=u.headers)
        assert r.status_code == 422, (path, r.text)
    # nothing was stored
    names = [w["name"] for w in client.get("/api/v1/workloads", headers=u.headers).json()["items"]]
    assert "w\u0000" not in names and "w" not in names


def test_nul_deep_inside_a_json_document_names_where(client: TestClient, session: Session) -> None:
    from backend.kit.schema import InputSchema

    class Doc(InputSchema):
        engine_result: dict[str, Any]

    with pytest.raises(ValueError) as err:
        Doc(engine_result={"jobs": [{"jobname": "ok"}, {"jobname": "b\u0000d"}]})
    assert "engine_result" in str(err.value) and "jobs.1.jobname" in str(err.value)


def _nul_path_walked(value: Any, path: str = "") -> str | None:
    """backend.kit.schema.nul_path as it was before its stack walk: the reference it must match."""
    if isinstance(value, str):
        return path if "\x00" in value else None
    if isinstance(value, dict):
        for k, v in value.items():
            sub = f"{path}.{k}" if path else str(k)
            if isinstance(k, str) and "\x00" in k:
                return sub
            found = _nul_path_walked(v, sub)
            if found is not None:
                return found
        return None
    if isinstance(value, list | tuple | set | frozenset):
        for i, v in enumerate(value):
            found = _nul_path_walked(v, f"{path}.{i}" if path else str(i))
            if found is not None:
                return found
    return None


class _Text(str):
    pass


class _Map(dict):  # type: ignore[type-arg]
    pass


def test_nul_path_finds_the_first_nul_as_a_walk_of_every_key_does() -> None:
    """nul_path answers "none" from a quick walk without paths, and names the same place as the
    walk that makes every key's path did: in strings, keys, subclasses, tuples and sets, deep or
    at the top, and never in numbers, None or objects it does not enter."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from backend.kit.schema import nul_path
    from tests.factories import engine_document

    doc = engine_document(jobs=3, series_points=50)
    assert nul_path(doc) is None and nul_path(json.loads(json.dumps(doc))) is None
    doc["jobs"][2]["read"]["clat_ns"]["percentile"] = {"99.0\x00": 1}
    assert nul_path(doc) == _nul_path_walked(doc) == "jobs.2.read.clat_ns.percentile.99.0\x00"
    odd: list[Any] = [
        _Text("a\x00"),
        _Map({"k": [1, (2, _Text("x\x00"))]}),
        {1: "ok", 2.5: {"z": frozenset({"\x00"})}},
        [{"a": None}, {"b": [1.5, True, {"c": "\x00"}]}],
        ({"t": "fine"}, {"t\x00": 1}),
        {"ok": object(), "bytes": b"\x00"},
        [0, 1.5, True, *range(100)],  # numbers only: skipped whole
        [*range(100), 2.5, "\x00"],  # one string among the numbers
        "\x00",
        7,
        None,
    ]
    for value in odd:
        assert nul_path(value) == _nul_path_walked(value), value
        assert nul_path(value, "at") == _nul_path_walked(value, "at"), value

    text = st.text(alphabet=st.sampled_from("ab.\x00"), max_size=4)
    values = st.recursive(
        st.none() | st.integers() | st.floats() | text,
        lambda inner: st.lists(inner, max_size=4)
        | st.dictionaries(text | st.integers(), inner, max_size=4)
        | st.tuples(inner, inner),
        max_leaves=20,
    )

    @settings(max_examples=300, deadline=None, database=None)
    @given(values)
    def same(value: Any) -> None:
        assert nul_path(value) == _nul_path_walked(value)

    same()


def test_nul_in_a_grid_intensity_csv_is_422(client: TestClient, session: Session) -> None:
    u = create_user(session)
    env = client.post(
        "/api/v1/environments",
        json={"team_id": str(u.team.id), "name": "lab", "kind": "local"},
        headers=u.headers,
    ).json()
    r = client.put(
        f"/api/v1/environments/{env['id']}/grid-intensity",
        content="hour_utc,g_per_kwh\n2026-01-01T00:00:00Z,100\u0000\n",
        headers={**u.headers, "content-type": "text/csv"},
    )
    assert r.status_code == 422, r.text


@pytest.mark.parametrize(
    "body",
    [
        "hour_utc,g_per_kwh\n2026-01-01T00:00:00Z,3\r0\n",  # a lone CR (h6 F4: csv.Error, a 500)
        'hour_utc,g_per_kwh\n"2026-01-01T00:00:00Z,3\n',  # an unterminated quote
    ],
)
def test_a_malformed_grid_intensity_csv_is_422(client: TestClient, session: Session, body: str) -> None:
    u = create_user(session)
    env = client.post(
        "/api/v1/environments",
        json={"team_id": str(u.team.id), "name": "lab", "kind": "local"},
        headers=u.headers,
    ).json()
    r = client.put(
        f"/api/v1/environments/{env['id']}/grid-intensity",
        content=body,
        headers={**u.headers, "content-type": "text/csv"},
    )
    assert r.status_code == 422, r.text
    assert r.json()["detail"][0]["field"].startswith("body")


def test_device_name_null_is_422(client: TestClient, session: Session) -> None:
    u = create_user(session)
    a = create_agent(session, team=u.team)
    run = create_run(session, agent=a.agent)
    for field in ("name", "media", "lifetime_years"):
        r = client.patch(f"/api/v1/devices/{run.device_id}", json={field: None}, headers=u.headers)
        assert r.status_code == 422 and r.json()["detail"][0]["field"] == field, r.text
    r = client.patch(f"/api/v1/devices/{run.device_id}", json={"name": "renamed"}, headers=u.headers)
    assert r.status_code == 200 and r.json()["name"] == "renamed"


def test_renaming_an_environment_to_a_taken_name_is_409(client: TestClient, session: Session) -> None:
    u = create_user(session)
    tid = str(u.team.id)
    first = client.post(
        "/api/v1/environments", json={"team_id": tid, "name": "a", "kind": "local"}, headers=u.headers
    )
    second = client.post(
        "/api/v1/environments", json={"team_id": tid, "name": "b", "kind": "nas"}, headers=u.headers
    )
    assert first.status_code == second.status_code == 201
    r = client.patch(f"/api/v1/environments/{second.json()['id']}", json={"name": "a"}, headers=u.headers)
    assert r.status_code == 409 and r.json()["error"] == "environment_name_taken"
    # the request's transaction is still usable: a valid rename and a null name answer normally
    r = client.patch(f"/api/v1/environments/{second.json()['id']}", json={"name": "c"}, headers=u.headers)
    assert r.status_code == 200 and r.json()["name"] == "c"
    r = client.patch(f"/api/v1/environments/{second.json()['id']}", json={"name": None}, headers=u.headers)
    assert r.status_code == 422 and r.json()["detail"][0]["field"] == "name"


# --- security headers ----------------------------------------------------------------------------------


def test_security_headers_on_every_response(client: TestClient, session: Session) -> None:
    u = create_user(session)
    for path, hdrs in (
        ("/api/v1/health", {}),
        ("/api/v1/auth/me", u.headers),
        ("/api/v1/auth/me", {}),  # 401
        ("/api/v1/nothing", {}),  # 404
        ("/", {}),  # the UI (or its "not built" answer)
        ("/openapi.json", {}),
    ):
        r = client.get(path, headers=hdrs)
        csp = r.headers["content-security-policy"]
        assert "script-src 'self'" in csp and "frame-ancestors 'none'" in csp, path
        directives = dict(d.strip().split(" ", 1) for d in csp.split(";"))
        assert directives["script-src"] == directives["style-src"] == "'self'", path  # nothing inline
        assert r.headers["x-content-type-options"] == "nosniff"
        assert r.headers["referrer-policy"] == "no-referrer"
        assert "strict-transport-security" not in r.headers  # plain http: no HSTS


def test_hsts_only_over_tls_or_from_a_trusted_proxy(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    with TestClient(create_app(), base_url="https://testserver") as tls:
        assert "max-age=" in tls.get("/api/v1/health").headers["strict-transport-security"]
    fwd = {"X-Forwarded-Proto": "https"}
    assert "strict-transport-security" not in client.get("/api/v1/health", headers=fwd).headers
    monkeypatch.setattr(get_settings(), "trusted_proxies", ["testclient"])
    assert "strict-transport-security" in client.get("/api/v1/health", headers=fwd).headers


# --- health and metrics ---------------------------------------------------------------------------------


def test_health_details_only_with_a_valid_token(client: TestClient, session: Session) -> None:
    anon = client.get("/api/v1/health")
    assert anon.status_code == 200 and set(anon.json()) == {"status"}
    assert anon.json()["status"] in ("ok", "degraded")
    bad = client.get("/api/v1/health", headers={"Authorization": "Bearer iwu_not-a-token"})
    assert bad.status_code == 200 and set(bad.json()) == {"status"}
    u = create_user(session)
    full = client.get("/api/v1/health", headers=u.headers).json()
    assert set(full) == {"status", "version", "database", "redis", "worker"} and full["database"]["ok"]
    assert full["version"] == backend.__version__  # the one place the server's version is kept (issue 30)
    a = create_agent(session, team=u.team)
    assert "database" in client.get("/api/v1/health", headers=a.headers).json()


def test_health_is_503_when_the_database_is_down(client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    dead = create_engine(
        f"postgresql+psycopg://iowatt@127.0.0.1:{free_port()}/none", connect_args={"connect_timeout": 2}
    )
    monkeypatch.setattr("backend.health.router.get_sessionmaker", lambda: sessionmaker(bind=dead))
    r = client.get("/api/v1/health")
    assert r.status_code == 503 and r.json() == {"status": "down"}
    dead.dispose()


def test_metrics_per_team_only_with_a_token(client: TestClient, session: Session) -> None:
    u = create_user(session)
    other = create_user(session)
    for owner in (u, other):
        create_run(session, agent=create_agent(session, team=owner.team).agent)
    anon = client.get("/metrics")
    assert anon.status_code == 200 and "iowatt_runs" in anon.text
    assert "iowatt_team_" not in anon.text and u.team.name not in anon.text
    mine = client.get("/metrics", headers=u.headers)
    assert mine.status_code == 200
    assert f'iowatt_team_runs{{status="queued",team="{u.team.name}",team_id="{u.team.id}"}} 1.0' in mine.text
    assert other.team.name not in mine.text
    assert client.get("/metrics", headers={"Authorization": "Bearer iwu_nope"}).status_code == 401


def test_two_of_a_users_teams_with_one_name_stay_two_series(client: TestClient, session: Session) -> None:
    """Names are unique only among the teams their creator is in: a user invited to a second team
    of the same name sees each team's figures as its own series, never summed into one."""
    u = create_user(session)
    twin = Team(name=u.team.name)
    session.add(twin)
    session.flush()
    create_user(session, team=twin)
    session.add(Membership(user_id=u.user.id, team_id=twin.id, role=Role.viewer))
    create_run(session, agent=create_agent(session, team=u.team).agent)
    for _ in range(2):
        create_run(session, agent=create_agent(session, team=twin).agent)
    session.flush()
    text = client.get("/metrics", headers=u.headers).text
    assert f'iowatt_team_runs{{status="queued",team="{u.team.name}",team_id="{u.team.id}"}} 1.0' in text
    assert f'iowatt_team_runs{{status="queued",team="{u.team.name}",team_id="{twin.id}"}} 2.0' in text


def test_the_api_docs_are_served_whole_by_the_server_with_a_csp_of_self(client: TestClient) -> None:
    """/docs and /redoc work in an air-gapped lab (issue 30): every script, style and icon they name
    is the server's own and answers; no inline script; the CSP names no other origin."""
    import re

    for page, library in (("/docs", "swagger"), ("/redoc", "redoc")):
        r = client.get(page)
        assert r.status_code == 200 and library in r.text.lower(), page
        assert "http://" not in r.text and "https://" not in r.text, page
        assert not re.search(r"<script>|<script [^>]*>[^<]", r.text), f"{page}: an inline script"
        assets = re.findall(r'(?:src|href)="([^"]+)"', r.text)
        assert len(assets) >= 2, assets
        for url in assets:
            a = client.get(url)
            assert a.status_code == 200 and len(a.content) > 100, url
        csp = r.headers["content-security-policy"]
        assert "script-src 'self';" in csp and "http" not in csp and "frame-ancestors 'none'" in csp
    assert client.get("/").headers["content-security-policy"] == CSP


def test_health_answers_when_redis_is_down(
    client: TestClient, session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(get_settings(), "redis_url", f"redis://127.0.0.1:{free_port()}/0")
    u = create_user(session)
    r = client.get("/api/v1/health", headers=u.headers)
    assert r.status_code == 200 and r.json()["status"] == "degraded"
    assert r.json()["redis"]["ok"] is False and r.json()["database"]["ok"] is True


def test_get_on_an_api_path_that_has_other_methods_is_405_with_allow(client: TestClient) -> None:
    # the UI's catch-all GET route used to answer 404 here while every other method got 405
    r = client.get("/api/v1/auth/login")
    assert r.status_code == 405
    assert r.headers["allow"] == "POST"
    assert r.json()["error"] == "method_not_allowed"
    assert client.get("/api/v1/no-such-route").status_code == 404
