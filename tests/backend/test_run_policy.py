"""Runs judged against the host's reported policy (ADR 0009) on the server: meters by name, the
two keys for destructive writes, targets, limits, agents without a policy, campaigns; and the
fuzzing findings of issue 9 in runs and campaigns."""

import json
import uuid
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from backend.models import Run
from backend.run import service as run_service
from tests.factories import INVENTORY, AgentCtx, MiB, UserCtx, create_agent, create_user

DEVICE = "/dev/disk/by-id/nvme-Samsung_SSD_980_S1"
SCRATCH = "/dev/disk/by-id/ata-WDC_SCRATCH_1"


def policy(**over: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "targets": [
            {"path": "/srv/bench", "kind": "directory", "writable": True},
            {"path": "/srv/notes.txt", "kind": "file", "writable": False},
            {"path": DEVICE, "kind": "device", "writable": False, "destructive": False},
            {
                "path": SCRATCH,
                "kind": "device",
                "writable": True,
                "destructive": True,
                "model": "WDC WD40",
                "serial_sha256": "ab" * 32,
                "size_bytes": 4 * 10**12,
            },
        ],
        "meters": [{"name": "plug", "driver": "shelly", "tier": "plug"}],
        "default_meter": "plug",
        "limits": {"max_threads": 8},
    }
    return {**base, **over}


def agent_with(session: Session, u: UserCtx, pol: dict[str, Any] | None) -> AgentCtx:
    inv = {k: v for k, v in INVENTORY.items() if k != "policy"}
    if pol is not None:
        inv["policy"] = pol
    return create_agent(session, team=u.team, inventory=inv)


def job(**over: Any) -> dict[str, Any]:
    return {"name": "j", "rw": "randread", "bs_bytes": 4096, "size_bytes": 16 * MiB, "runtime_s": 2, **over}


def body(agent: AgentCtx, **over: Any) -> dict[str, Any]:
    return {
        "agent_id": str(agent.agent.id),
        "target_path": "/srv/bench",
        "workload": {"jobs": [job()]},
        **over,
    }


def runs(session: Session) -> int:
    return session.scalar(select(func.count()).select_from(Run)) or 0


def refused(client: TestClient, u: UserCtx, b: dict[str, Any], session: Session) -> list[dict[str, Any]]:
    before = runs(session)
    r = client.post("/api/v1/runs", json=b, headers=u.headers)
    assert r.status_code == 422, r.text
    assert runs(session) == before  # nothing stored
    return list(r.json()["detail"])


@pytest.fixture
def ctx(session: Session) -> tuple[UserCtx, AgentCtx]:
    u = create_user(session)
    return u, agent_with(session, u, policy())


def test_a_meter_spec_is_refused_naming_the_host_command(
    client: TestClient, session: Session, ctx: tuple[UserCtx, AgentCtx]
) -> None:
    """Issue 9's first reproduction: `"meter": "command:/usr/bin/id"` ran a program as root."""
    u, a = ctx
    detail = refused(client, u, body(a, meter="command:/usr/bin/id", idle_s=0), session)
    assert [d["field"] for d in detail] == ["meter"]
    assert "never its spec" in detail[0]["message"]
    assert "iowatt-agent meters set NAME SPEC" in detail[0]["message"]
    assert "/usr/bin/id" not in json.dumps(detail)


def test_an_unknown_meter_name_is_refused_with_its_fix(
    client: TestClient, session: Session, ctx: tuple[UserCtx, AgentCtx]
) -> None:
    u, a = ctx
    [d] = refused(client, u, body(a, meter="wt310"), session)
    assert d["field"] == "meter" and d["rule"] == "meter.unknown"
    assert d["message"].endswith("on the host: iowatt-agent meters set wt310 SPEC")
    assert d["fix"] == "iowatt-agent meters set wt310 SPEC"


@pytest.mark.parametrize("meter", ["plug", "", None])
def test_a_known_meter_none_or_the_default_is_stored_and_leased_by_name(
    client: TestClient, session: Session, ctx: tuple[UserCtx, AgentCtx], meter: str | None
) -> None:
    u, a = ctx
    r = client.post("/api/v1/runs", json=body(a, meter=meter, idle_s=5), headers=u.headers)
    assert r.status_code == 201, r.text
    assert r.json()["meter"] == meter and r.json()["destructive"] is False
    run_id = uuid.UUID(r.json()["id"])
    assert run_service.dispatch(session, run_id=run_id) == a.agent.id
    lease = client.post(f"/api/v1/agents/{a.agent.id}/lease?wait_s=0", headers=a.headers).json()["lease"]
    assert lease["meter"] == meter and lease["destructive"] is False and lease["idle_s"] == 5


def test_target_not_listed_is_refused(
    client: TestClient, session: Session, ctx: tuple[UserCtx, AgentCtx]
) -> None:
    u, a = ctx
    [d] = refused(client, u, body(a, target_path="/etc/passwd"), session)
    assert d["field"] == "target_path" and d["rule"] == "target.not_allowed"
    assert "iowatt-agent targets add /etc/passwd" in d["message"]
    # beneath a listed directory is not the directory: targets are used exactly as listed
    [d] = refused(client, u, body(a, target_path="/srv/bench/../../etc"), session)
    assert d["rule"] == "target.not_allowed"


def test_a_write_job_on_a_read_only_file_is_refused(
    client: TestClient, session: Session, ctx: tuple[UserCtx, AgentCtx]
) -> None:
    """Issue 9's second reproduction ran a job on an existing file; a write job is refused here."""
    u, a = ctx
    ok = client.post("/api/v1/runs", json=body(a, target_path="/srv/notes.txt"), headers=u.headers)
    assert ok.status_code == 201, ok.text
    [d] = refused(
        client, u, body(a, target_path="/srv/notes.txt", workload={"jobs": [job(rw="randwrite")]}), session
    )
    assert d["field"] == "workload.jobs.0.rw" and d["rule"] == "file.read_only"
    assert d["message"].endswith("iowatt-agent targets add --file /srv/notes.txt --allow-write")


def test_raw_devices_need_both_keys(
    client: TestClient, session: Session, ctx: tuple[UserCtx, AgentCtx]
) -> None:
    u, a = ctx
    write = {"jobs": [job(rw="randwrite", direct=True)]}
    # the host has not marked the device destructive: no run key helps
    [d] = refused(client, u, body(a, target_path=DEVICE, workload=write, destructive=True), session)
    assert d["field"] == "destructive" and d["rule"] == "device.not_destructive"
    assert d["message"].endswith(f"iowatt-agent targets add --device {DEVICE} --destructive")
    [d] = refused(client, u, body(a, target_path=DEVICE, workload=write), session)
    assert d["field"] == "workload.jobs.0.rw" and d["rule"] == "device.not_destructive"
    # the host marked it destructive, but the run did not confirm
    [d] = refused(client, u, body(a, target_path=SCRATCH, workload=write), session)
    assert d["field"] == "destructive" and d["rule"] == "run.destructive_not_confirmed"
    # both keys
    r = client.post(
        "/api/v1/runs", json=body(a, target_path=SCRATCH, workload=write, destructive=True), headers=u.headers
    )
    assert r.status_code == 201, r.text
    assert r.json()["destructive"] is True
    assert run_service.dispatch(session, run_id=uuid.UUID(r.json()["id"])) == a.agent.id
    lease = client.post(f"/api/v1/agents/{a.agent.id}/lease?wait_s=0", headers=a.headers).json()["lease"]
    assert lease["destructive"] is True and lease["target_path"] == SCRATCH
    assert "destructive" not in json.dumps(lease["engine_job"])  # the agent alone adds destructive=1
    # reading a device needs no key; destructive on a directory is refused
    assert client.post("/api/v1/runs", json=body(a, target_path=DEVICE), headers=u.headers).status_code == 201
    [d] = refused(client, u, body(a, destructive=True), session)
    assert d["field"] == "destructive" and d["rule"] == "target.kind"


def test_limits_and_every_violation_are_listed(
    client: TestClient, session: Session, ctx: tuple[UserCtx, AgentCtx]
) -> None:
    u, a = ctx
    detail = refused(
        client,
        u,
        body(a, target_path="/etc", meter="x:y", workload={"jobs": [job(numjobs=16)]}),
        session,
    )
    assert [d["field"] for d in detail] == ["meter"]  # the schema refuses a spec before anything else
    detail = refused(
        client, u, body(a, target_path="/etc", meter="nope", workload={"jobs": [job(numjobs=16)]}), session
    )
    assert [(d["field"], d["rule"]) for d in detail] == [
        ("target_path", "target.not_allowed"),
        ("meter", "meter.unknown"),
        ("workload.jobs.0.numjobs", "limit.threads"),
    ]
    assert detail[2]["message"].endswith("on the host: iowatt-agent targets limits --max-threads 16")


def test_a_stored_workload_is_named_by_workload_id(client: TestClient, session: Session) -> None:
    u = create_user(session)
    a = agent_with(session, u, policy(limits={"max_bs_bytes": 64 * 1024}))
    wl = next(
        w for w in client.get("/api/v1/workloads", headers=u.headers).json()["items"] if w["name"] == "quick"
    )
    b = {"agent_id": str(a.agent.id), "target_path": "/srv/bench", "workload_id": wl["id"]}
    detail = refused(client, u, b, session)
    assert {d["field"] for d in detail} == {"workload_id"} and detail[0]["rule"] == "limit.block_size"


def test_an_agent_without_a_policy_runs_nothing(client: TestClient, session: Session) -> None:
    u = create_user(session)
    old = agent_with(session, u, None)
    [d] = refused(client, u, body(old), session)
    assert d["field"] == "agent_id"
    assert "upgrade iowatt-agent" in d["message"] and "iowatt-agent targets add PATH" in d["message"]


def test_the_policy_is_read_as_the_agent_last_reported_it(client: TestClient, session: Session) -> None:
    u = create_user(session)
    a = agent_with(session, u, policy())
    assert (
        client.post("/api/v1/runs", json=body(a, target_path="/srv/new"), headers=u.headers).status_code
        == 422
    )
    pol = policy()
    pol["targets"].append({"path": "/srv/new", "kind": "directory", "writable": True})
    inv = {**INVENTORY, "policy": pol}
    r = client.put(f"/api/v1/agents/{a.agent.id}/inventory", json=inv, headers=a.headers)
    assert r.status_code == 200, r.text
    assert "/srv/new" in [t["path"] for t in r.json()["policy"]["targets"]]
    assert (
        client.post("/api/v1/runs", json=body(a, target_path="/srv/new"), headers=u.headers).status_code
        == 201
    )


def test_a_meters_idle_baseline_is_served_as_the_agent_reported_it(
    client: TestClient, session: Session
) -> None:
    """issue 25: the New-run page's estimate counts the meter's idle baseline; an agent that does
    not report one reads null (the UI then says it assumes the default)."""
    u = create_user(session)
    a = agent_with(session, u, policy())
    meters = [
        {"name": "plug", "driver": "shelly", "tier": "plug", "idle_s": 12.5},
        {"name": "bmc", "driver": "ipmi", "tier": "bmc"},
    ]
    inv = {**INVENTORY, "policy": policy(meters=meters)}
    r = client.put(f"/api/v1/agents/{a.agent.id}/inventory", json=inv, headers=a.headers)
    assert r.status_code == 200, r.text
    got = client.get(f"/api/v1/agents/{a.agent.id}", headers=u.headers)
    assert got.status_code == 200, got.text
    assert {m["name"]: m["idle_s"] for m in got.json()["policy"]["meters"]} == {"plug": 12.5, "bmc": None}


@pytest.mark.parametrize(
    ("pol", "field"),
    [
        (
            policy(targets=[{"path": "/a", "kind": "directory"}, {"path": "/a", "kind": "directory"}]),
            "policy.targets.1.path",
        ),
        (
            policy(targets=[{"path": "/dev/sda", "kind": "device", "writable": False}]),
            "policy.targets.0.path",
        ),
        (
            policy(targets=[{"path": "/srv/../etc", "kind": "directory", "writable": True}]),
            "policy.targets.0.path",
        ),
        (policy(default_meter="nope"), "policy.default_meter"),
        (policy(meters=[{"name": "a:b", "driver": "x", "tier": "plug"}]), "policy.meters.0.name"),
        (
            policy(meters=[{"name": "p", "driver": "x", "tier": "plug", "idle_s": -1}]),
            "policy.meters.0.idle_s",
        ),
    ],
)
def test_a_policy_libs_policy_refuses_is_422(
    client: TestClient, session: Session, ctx: tuple[UserCtx, AgentCtx], pol: dict[str, Any], field: str
) -> None:
    _, a = ctx
    r = client.put(
        f"/api/v1/agents/{a.agent.id}/inventory", json={**INVENTORY, "policy": pol}, headers=a.headers
    )
    assert r.status_code == 422, r.text
    assert r.json()["detail"][0]["field"] == field


# --- fuzzing findings (issue 9) ---------------------------------------------------------------


@pytest.mark.parametrize("path", ["/api/v1/runs", "/api/v1/campaigns"])
@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("offset=9223372036854775808", "offset"),
        ("limit=0", "limit"),
        ("offset=-1", "offset"),
        ("offset=1000001", "offset"),
    ],
)
def test_page_bounds_are_422(client: TestClient, session: Session, path: str, query: str, field: str) -> None:
    u = create_user(session)
    r = client.get(f"{path}?{query}", headers=u.headers)
    assert r.status_code == 422 and r.json()["detail"][0]["field"] == field, r.text
    assert client.get(f"{path}?offset=1000000", headers=u.headers).status_code == 200


def test_relative_target_path_is_422_in_runs_and_campaigns(
    client: TestClient, session: Session, ctx: tuple[UserCtx, AgentCtx]
) -> None:
    u, a = ctx
    [d] = refused(client, u, body(a, target_path="srv/bench"), session)
    assert d["field"] == "target_path" and "absolute" in d["message"]
    camp = {
        "name": "c",
        "workload": {"jobs": [job()]},
        "targets": [{"agent_id": str(a.agent.id), "target_path": "x"}],
    }
    r = client.post("/api/v1/campaigns", json=camp, headers=u.headers)
    assert r.status_code == 422 and r.json()["detail"][0]["field"] == "targets.0.target_path", r.text


def test_long_derived_run_names_fit(client: TestClient, session: Session) -> None:
    u = create_user(session)
    long_dir = "/srv/" + "d" * 3000
    pol = policy()
    pol["targets"].append({"path": long_dir, "kind": "directory", "writable": True})
    a = agent_with(session, u, pol)
    r = client.post("/api/v1/runs", json=body(a, target_path=long_dir), headers=u.headers)
    assert r.status_code == 201, r.text
    assert len(r.json()["name"]) == 200 and "…" in r.json()["name"]
    camp = {
        "name": "n" * 200,
        "workload": {"jobs": [job()]},
        "repeats": 2,
        "targets": [{"agent_id": str(a.agent.id), "target_path": long_dir}],
    }
    r = client.post("/api/v1/campaigns", json=camp, headers=u.headers)
    assert r.status_code == 201, r.text
    names = [
        client.get(f"/api/v1/runs/{rid}", headers=u.headers).json()["name"] for rid in r.json()["run_ids"]
    ]
    assert all(len(n) <= 200 for n in names) and names[0].endswith("#1") and names[1].endswith("#2")


def test_campaigns_are_checked_against_the_policy_of_each_target(
    client: TestClient, session: Session, ctx: tuple[UserCtx, AgentCtx]
) -> None:
    u, a = ctx
    camp = {
        "name": "c",
        "workload": {"jobs": [job()]},
        "meter": "nope",
        "targets": [
            {"agent_id": str(a.agent.id), "target_path": "/srv/bench"},
            {"agent_id": str(a.agent.id), "target_path": "/etc"},
        ],
    }
    before = runs(session)
    r = client.post("/api/v1/campaigns", json=camp, headers=u.headers)
    assert r.status_code == 422, r.text
    detail = r.json()["detail"]
    assert [d["field"] for d in detail] == ["targets.0.meter"] and detail[0]["rule"] == "meter.unknown"
    r = client.post("/api/v1/campaigns", json={**camp, "meter": None}, headers=u.headers)
    assert r.status_code == 422 and [d["field"] for d in r.json()["detail"]] == ["targets.1.target_path"]
    spec = client.post("/api/v1/campaigns", json={**camp, "meter": "ipmi:h,password=x"}, headers=u.headers)
    assert spec.status_code == 422 and spec.json()["detail"][0]["field"] == "meter"
    assert runs(session) == before
    ok = client.post(
        "/api/v1/campaigns", json={**camp, "meter": "plug", "targets": camp["targets"][:1]}, headers=u.headers
    )
    assert ok.status_code == 201, ok.text
    run = client.get(f"/api/v1/runs/{ok.json()['run_ids'][0]}", headers=u.headers).json()
    assert run["meter"] == "plug"


# --- issue 22 (M4): memory and files -----------------------------------------------------------------

GiB = 1 << 30
TEN_BILLION_FILES = (
    "fsd=f,anchor=/x,depth=2,width=100,files=1000000,size=4k\n"
    "fwd=w,fsd=f,operation=read,xfersize=4k,threads=4\nrd=r,fwd=w,elapsed=60,fwdrate=max,format=yes\n"
)
NO_LIMITS = {"max_threads": None, "max_iodepth": None, "max_bs_bytes": None, "max_runtime_s": None}


def host_with_facts(session: Session, u: UserCtx, **over: Any) -> AgentCtx:
    """An agent of issue 22: its RAM (16 GiB) and its directory's free inodes (1 million) reported,
    memory and files limits left to the host's defaults ("auto"), TPC-H allowed."""
    pol = policy(
        targets=[{"path": "/srv/bench", "kind": "directory", "writable": True, "free_inodes": 1_000_000}],
        limits={**NO_LIMITS, "max_memory_bytes": "auto", "max_files": "auto"},
        allowed_dbms=["postgresql"],
        mem_total_bytes=16 * GiB,
        **over,
    )
    inv = {**{k: v for k, v in INVENTORY.items() if k != "policy"}, "policy": pol}
    inv["capabilities"] = {"workload_kinds": ["block", "vdbench", "tpch"], "tpch_dbms": ["postgresql"]}
    return create_agent(session, team=u.team, inventory=inv)


def test_a_vdbench_set_of_ten_billion_files_is_refused_at_queue_time(
    client: TestClient, session: Session
) -> None:
    u = create_user(session)
    a = host_with_facts(session, u)
    b = body(a, workload={"kind": "vdbench", "vdbench": {"parameters": TEN_BILLION_FILES}})
    detail = refused(client, u, b, session)
    assert [(d["field"], d["rule"]) for d in detail] == [
        ("workload.vdbench.parameters", "limit.memory"),
        ("workload.vdbench.parameters", "limit.files"),
    ]
    memory, files = detail
    assert f"the host allows {8 * GiB}" in memory["message"] and "10000000000 files" in memory["message"]
    assert "on the host: iowatt-agent targets limits --max-memory " in memory["message"]
    assert "the host allows 500000" in files["message"] and "1000000 free inodes" in files["message"]
    assert files["message"].endswith("on the host: iowatt-agent targets limits --max-files 10000010100")
    # the host's own limits win over the defaults
    lifted = host_with_facts(session, u)
    pol = lifted.agent.inventory["policy"]
    pol["limits"] = {**pol["limits"], "max_memory_bytes": None, "max_files": None}
    r = client.put(
        f"/api/v1/agents/{lifted.agent.id}/inventory", json=lifted.agent.inventory, headers=lifted.headers
    )
    assert r.status_code == 200, r.text
    assert r.json()["policy"]["limits"]["max_memory_bytes"] is None
    r = client.post("/api/v1/runs", json=body(lifted, workload=b["workload"]), headers=u.headers)
    assert r.status_code == 201, r.text


def test_a_tpch_buffer_pool_of_one_tib_is_refused_at_queue_time(client: TestClient, session: Session) -> None:
    u = create_user(session)
    a = host_with_facts(session, u)
    tpch = {"dbms": "postgresql", "scale_factor": 0.01, "buffer_pool_bytes": 1 << 40}
    [d] = refused(client, u, body(a, workload={"kind": "tpch", "tpch": tpch}), session)
    assert (d["field"], d["rule"]) == ("workload.tpch.buffer_pool_bytes", "limit.memory")
    assert f"the host allows {8 * GiB}" in d["message"] and "postgresql" in d["message"]
    ok = {**tpch, "buffer_pool_bytes": GiB}
    r = client.post("/api/v1/runs", json=body(a, workload={"kind": "tpch", "tpch": ok}), headers=u.headers)
    assert r.status_code == 201, r.text


def test_a_block_job_with_huge_buffers_is_refused_at_queue_time(client: TestClient, session: Session) -> None:
    u = create_user(session)
    a = host_with_facts(session, u)
    huge = job(numjobs=256, iodepth=4096, bs_bytes=64 * MiB, size_bytes=GiB)  # 64 TiB of request buffers
    [d] = refused(client, u, body(a, workload={"jobs": [huge]}), session)
    assert d["rule"] == "limit.memory" and d["field"] == "workload.jobs.0.bs_bytes"
    assert "256 threads x iodepth 4096 x 67108864-byte buffers" in d["message"]
    # the agent's own RAM-derived limit, as the UI sees it
    got = client.get(f"/api/v1/agents/{a.agent.id}", headers=u.headers).json()["policy"]
    assert got["limits"]["max_memory_bytes"] == 8 * GiB and got["limits"]["max_files"] == "auto"
    assert got["targets"][0]["free_inodes"] == 1_000_000


def test_an_agent_older_than_the_memory_limits_is_left_to_its_own_check(
    client: TestClient, session: Session
) -> None:
    """An agent that reports no RAM: the server cannot derive the default memory limit, so it queues
    the run (the agent re-checks every lease: ADR 0009); files still meet the default cap."""
    u = create_user(session)
    a = agent_with(session, u, policy(limits=NO_LIMITS))
    huge = job(numjobs=256, iodepth=4096, bs_bytes=64 * MiB, size_bytes=GiB)
    r = client.post("/api/v1/runs", json=body(a, workload={"jobs": [huge]}), headers=u.headers)
    assert r.status_code == 201, r.text
    assert (
        client.get(f"/api/v1/agents/{a.agent.id}", headers=u.headers).json()["policy"]["limits"][
            "max_memory_bytes"
        ]
        is None
    )
