"""Team A's world for the security tests: principals of every kind and one object of every kind.

The same builder serves the authorization matrix (in-process app, one transaction rolled back at the
end) and the fuzzing (a real uvicorn on its own database): it creates users and agents with the test
factories and everything else through the real API, the way a team would, so the objects are as
the routes make them. Every name of team A carries `marker`, which must never appear in an answer
to anyone outside team A.
"""

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol

from sqlalchemy.orm import Session

from backend.models import Role, Run, SeriesDetection
from backend.run import service as run_service
from backend.series import service as series_service
from tests.factories import INVENTORY, create_agent, create_user, engine_document

API = "/api/v1"
PASSWORD = "correct horse battery"

# Every kind of caller, in the matrix's column order.
PRINCIPALS = ("anonymous", "viewer", "member", "admin", "user_b", "agent_x", "agent_y", "agent_revoked")


class Http(Protocol):
    """What the builder needs of a client: TestClient and httpx.Client both fit."""

    def request(self, method: str, url: str, **kwargs: Any) -> Any: ...


# The host policy the agents report (ADR 0009 §4): the targets the world's runs use are allowed.
POLICY: dict[str, Any] = {
    "targets": [
        {"path": "/srv/bench", "kind": "directory", "writable": True, "destructive": False},
        {"path": "/dev/shm", "kind": "directory", "writable": True, "destructive": False},
    ],
    "meters": [{"name": "plug", "driver": "shelly", "tier": "plug"}],
    "default_meter": None,
    "limits": {},
}
INVENTORY_WITH_POLICY: dict[str, Any] = {**INVENTORY, "policy": POLICY}

JOB: dict[str, Any] = {
    "name": "rr4k",
    "rw": "randread",
    "bs_bytes": 4096,
    "size_bytes": 16 * 1024 * 1024,
    "runtime_s": 1,
    "time_based": True,
}


@dataclass
class World:
    marker: str
    team_a: uuid.UUID
    team_b: uuid.UUID
    email: dict[str, str]
    headers: dict[str, dict[str, str]]
    ids: dict[str, str] = field(default_factory=dict)
    leases: dict[str, str] = field(default_factory=dict)
    raw: dict[str, str] = field(default_factory=dict)  # secrets the API showed once (tokens)

    @property
    def secrets(self) -> list[str]:
        """Strings only team A may ever read: its marker and every id of its objects."""
        return [self.marker, str(self.team_a), *self.ids.values()]


def _ok(r: Any, what: str) -> dict[str, Any]:
    assert r.status_code < 300, f"building the world: {what} answered {r.status_code}: {r.text[:500]}"
    return dict(r.json()) if r.content else {}


def power_doc(meter_fields: set[str]) -> dict[str, Any]:
    """A small, valid power measurement (idle, load, idle); the meter's fields follow the schema."""
    ns = 1_000_000_000
    t = [k * ns for k in range(31)]
    v = [100.0 if 5 * ns < ts <= 25 * ns else 80.0 for ts in t]
    meter = {"driver": "shelly", "tier": "plug", "quantity": "power_avg", "nominal_interval_s": 1.0}
    if "name" in meter_fields:
        meter["name"] = "plug"
    if "spec" in meter_fields:
        meter["spec"] = "plug"
    return {
        "meter": {k: v for k, v in meter.items() if k in meter_fields},
        "status": "ok",
        "reason": None,
        "t0_utc": "2026-11-21T10:00:00Z",
        "phases": [
            {"name": "idle_before", "start_ns": 0, "end_ns": 5 * ns},
            {"name": "load", "start_ns": 5 * ns, "end_ns": 25 * ns},
            {"name": "idle_after", "start_ns": 25 * ns, "end_ns": 30 * ns},
        ],
        "samples": {"t_ns": t, "value": v},
        "cleaning": {},
    }


def build(session: Session, http: Http, *, commit: Callable[[], None], openapi: dict[str, Any]) -> World:
    """Create team A's world; `commit` makes the factories' rows visible to the app (flush or commit)."""
    marker = f"teamA{uuid.uuid4().hex[:10]}"
    admin = create_user(
        session, role=Role.admin, email=f"admin-{marker}@example.test".lower(), password=PASSWORD
    )
    team = admin.team
    team.name = f"team-{marker}"
    viewer = create_user(session, role=Role.viewer, team=team, password=PASSWORD)
    member = create_user(session, role=Role.member, team=team, password=PASSWORD)
    user_b = create_user(session, role=Role.admin, password=PASSWORD)
    x = create_agent(session, team=team, name=f"x-{marker}", inventory=INVENTORY_WITH_POLICY)
    y = create_agent(session, team=team, name=f"y-{marker}", inventory=INVENTORY_WITH_POLICY)
    gone = create_agent(session, team=team, name=f"revoked-{marker}", inventory=INVENTORY_WITH_POLICY)
    w = World(
        marker=marker,
        team_a=team.id,
        team_b=user_b.team.id,
        email={"admin": admin.user.email, "member": member.user.email},
        headers={
            "anonymous": {},
            "viewer": viewer.headers,
            "member": member.headers,
            "admin": admin.headers,
            "user_b": user_b.headers,
            "agent_x": x.headers,
            "agent_y": y.headers,
            "agent_revoked": gone.headers,
        },
        ids={
            "team": str(team.id),
            "agent_x": str(x.agent.id),
            "agent_y": str(y.agent.id),
            "agent_revoked": str(gone.agent.id),
        },
    )
    commit()

    def call(who: str, method: str, path: str, **kw: Any) -> dict[str, Any]:
        return _ok(http.request(method, API + path, headers=w.headers[who], **kw), f"{method} {path}")

    ta = str(team.id)
    # the revoked agent is revoked the way an admin does it
    call("admin", "POST", f"/agents/{w.ids['agent_revoked']}/revoke")
    w.ids["team"] = str(w.team_a)
    w.ids["environment"] = call(
        "admin", "POST", "/environments", json={"team_id": ta, "name": f"env-{marker}", "kind": "local"}
    )["id"]
    w.ids["workload"] = call(
        "admin",
        "POST",
        "/workloads",
        json={"team_id": ta, "name": f"wl-{marker}", "spec": {"jobs": [JOB]}},
    )["id"]
    enrolment = call("admin", "POST", "/agents/enrollment-tokens", json={"team_id": ta})
    w.ids["enrollment_token"], w.raw["enrollment_token"] = str(enrolment["id"]), enrolment["token"]
    w.ids["member_token"] = call("member", "POST", "/auth/tokens", json={"name": f"ci-{marker}"})["id"]
    # an alert channel (a public IP literal: nothing resolves names here, and nothing is sent)
    w.ids["alert_channel"] = call(
        "admin",
        "POST",
        "/alert-channels",
        json={
            "team_id": ta,
            "name": f"hook-{marker}",
            "kind": "webhook",
            "url": "https://1.1.1.1/iowatt-world",
            "events": ["run_failed"],
        },
    )["id"]

    def queue(agent: str, target: str, name: str) -> str:
        body = {
            "agent_id": w.ids[agent],
            "target_path": target,
            "workload_id": w.ids["workload"],
            "environment_id": w.ids["environment"],
            "name": f"{name}-{marker}",
            "meter": "plug",
        }
        run_id = str(call("member", "POST", "/runs", json=body)["id"])
        commit()
        assert run_service.dispatch(session, run_id=uuid.UUID(run_id)) is not None, f"{name} not dispatched"
        commit()
        lease = call(agent, "POST", f"/agents/{w.ids[agent]}/lease", params={"wait_s": 0})["lease"]
        assert lease is not None and lease["run_id"] == run_id, lease
        w.leases[name] = str(lease["lease_id"])
        return run_id

    # a finished run with a result and power: what the read routes serve
    done = queue("agent_x", "/srv/bench", "run_done")
    call("agent_x", "POST", f"/runs/{done}/start", json={"lease_id": w.leases["run_done"]})
    meter_fields = set(openapi["components"]["schemas"]["MeterInfo"]["properties"])
    call(
        "agent_x",
        "PUT",
        f"/runs/{done}/result",
        json={
            "lease_id": w.leases["run_done"],
            "upload_id": str(uuid.uuid4()),
            "engine_result": engine_document(),
            "engine_exit_code": 0,
            "started_at": datetime(2026, 11, 21, 10, 0, 0, tzinfo=UTC).isoformat(),
            "finished_at": datetime(2026, 11, 21, 10, 0, 30, tzinfo=UTC).isoformat(),
            "power": power_doc(meter_fields),
        },
    )
    w.ids["run_done"] = done
    # a running run of agent X (progress, result, failure, cancel) and an assigned one of agent Y (start)
    w.ids["run_running"] = queue("agent_x", "/srv/bench", "run_running")
    call("agent_x", "POST", f"/runs/{w.ids['run_running']}/start", json={"lease_id": w.leases["run_running"]})
    w.ids["run_assigned"] = queue("agent_y", "/dev/shm", "run_assigned")
    commit()
    run = session.get(Run, uuid.UUID(done))
    assert run is not None and run.device_id is not None
    w.ids["device"] = str(run.device_id)
    # the finished run's series (its task is not run here: no worker) and a change stored on it
    (series_id,) = series_service.track_run(session, run_id=run.id)
    detection = SeriesDetection(
        series_id=series_id,
        metric="read_iops",
        job_index=0,
        kind="new_run",
        direction="regression",
        run_id=run.id,
        at=datetime(2026, 11, 21, 10, 0, 0, tzinfo=UTC),
        mean_before=1000.0,
        mean_after=800.0,
        change_pct=-20.0,
        runs_before=5,
        runs_after=1,
        method="matrix",
        parameters={},
    )
    session.add(detection)
    session.flush()
    w.ids["series"], w.ids["series_detection"] = str(series_id), str(detection.id)
    w.ids["campaign"] = call(
        "member",
        "POST",
        "/campaigns",
        json={
            "name": f"camp-{marker}",
            "workload_id": w.ids["workload"],
            "targets": [{"agent_id": w.ids["agent_y"], "target_path": "/srv/bench"}],
        },
    )["id"]
    w.ids["schedule"] = call(
        "member",
        "POST",
        "/schedules",
        json={
            "name": f"nightly-{marker}",
            "cron": "0 2 * * *",
            "campaign": {
                "name": f"nightly-{marker}",
                "workload_id": w.ids["workload"],
                "targets": [{"agent_id": w.ids["agent_y"], "target_path": "/srv/bench"}],
            },
        },
    )["id"]
    # a group run of agents X and Y (it stays queued: both hold runs), read and cancelled here
    w.ids["run_group"] = call(
        "member",
        "POST",
        "/run-groups",
        json={
            "name": f"group-{marker}",
            "workload_id": w.ids["workload"],
            "members": [{"agent_id": w.ids[a], "target_path": "/srv/bench"} for a in ("agent_x", "agent_y")],
        },
    )["id"]
    commit()
    # people (V1, issue 13): a member's user id, and a pending invitation whose link is its token
    w.ids["member_user"] = str(member.user.id)
    invitation = call(
        "admin",
        "POST",
        f"/teams/{ta}/invitations",
        json={"email": f"invitee-{marker}@example.test", "role": "viewer"},
    )
    w.ids["invitation"] = str(invitation["id"])
    w.ids["invitation_token"] = invitation["url"].rsplit("/", 1)[1]
    commit()
    # a share link (V2, issue 13): the member shares the finished run as a comparison
    shared = call("member", "POST", "/share-links", json={"kind": "comparison", "target": {"runs": [done]}})
    w.ids["share_link"] = str(shared["id"])
    w.ids["share_token"] = shared["url"].rsplit("/s/", 1)[1]
    commit()
    # a comment (V4, issue 13): the member's, on the finished run
    w.ids["comment"] = call(
        "member", "POST", "/comments", json={"target_kind": "run", "target_key": done, "body": f"c-{marker}"}
    )["id"]
    commit()
    # a procurement review (issue 16): the member's, with one candidate, undecided
    w.ids["review"] = call(
        "member",
        "POST",
        "/reviews",
        json={"team_id": str(w.team_a), "name": f"r-{marker}", "currency": "EUR", "horizon_years": "5",
              "tariff_per_kwh": "0.25"},
    )["id"]  # fmt: skip
    w.ids["review_candidate"] = call(
        "member",
        "POST",
        f"/reviews/{w.ids['review']}/candidates",
        json={"name": "mirror", "device": {"model": "disk", "capacity_bytes": 10**12, "unit_price": "100"},
              "count": 2, "protection": "raid1",
              "performance": {"source": "published", "metric": "iops", "value": "200",
                              "reference": "datasheet"}},
    )["id"]  # fmt: skip
    commit()
    return w
