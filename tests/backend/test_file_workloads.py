"""File workloads on the server (issue 14, ADR 0022): the spec's kinds and their 422s, the engine's
--parse-only as the only parser (its refusals, its facts), the presets queued and leased, a run's
scale, campaigns, the upgrade of a version-2 spec, and the compare's identity of file workloads."""

import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select, text
from sqlalchemy.orm import Session

from backend.compare.fingerprint import fingerprint
from backend.config import get_settings
from backend.models import Run, Workload
from backend.run import service as run_service
from backend.workload.builtin import BUILTINS, VDBENCH_BIG
from backend.workload.schemas import SPEC_VERSION, WorkloadSpec, load_spec
from tests.conftest import REPO
from tests.factories import INVENTORY, UserCtx, create_agent, create_run, create_user

PM = {"number": 20, "transactions": 40, "size_low_bytes": 4096, "size_high_bytes": 8192, "subdirectories": 2}
VDB = """fsd=fsd1,anchor=/ignored,depth=1,width=2,files=4,size=64k
fwd=fwd1,fsd=fsd1,rdpct=90,xfersize=4k,fileselect=random,fileio=random,threads=2
rd=rd1,fwd=fwd1,fwdrate=max,format=yes,elapsed=60,interval=1"""


def _workload(client: TestClient, u: UserCtx, spec: dict[str, Any], name: str = "fw") -> Any:
    body = {"team_id": str(u.team.id), "name": name, "spec": spec}
    return client.post("/api/v1/workloads", json=body, headers=u.headers)


def _field(r: Any) -> tuple[str, str]:
    assert r.status_code == 422, r.text
    d = r.json()["detail"][0]
    return d["field"], d["message"]


def _preset_id(session: Session, name: str) -> uuid.UUID:
    row = session.scalar(select(Workload).where(Workload.builtin.is_(True), Workload.name == name))
    assert row is not None
    return row.id


def _runs(session: Session) -> int:
    return session.scalar(select(func.count()).select_from(Run)) or 0


def test_each_kind_needs_its_own_parameters_and_nothing_else(client: TestClient, session: Session) -> None:
    u = create_user(session)
    job = {"name": "j", "rw": "read", "bs_bytes": 4096, "size_bytes": 8192}
    assert _field(_workload(client, u, {"kind": "postmark"}))[0] == "spec.postmark"
    assert _field(_workload(client, u, {"kind": "vdbench"}))[0] == "spec.vdbench"
    both = {"kind": "postmark", "postmark": PM, "vdbench": {"parameters": VDB}}
    assert _field(_workload(client, u, both)) == (
        "spec.vdbench",
        "only a workload of kind 'vdbench' has these parameters (this one is 'postmark')",
    )
    field, message = _field(
        _workload(client, u, {"kind": "vdbench", "vdbench": {"parameters": VDB}, "jobs": [job]})
    )
    assert field == "spec.jobs" and "no jobs" in message
    assert _field(_workload(client, u, {"kind": "block"})) == (
        "spec.jobs",
        "a block workload needs at least one job",
    )
    assert (
        _field(_workload(client, u, {"postmark": PM, "jobs": [job]}))[0] == "spec.postmark"
    )  # block by default
    assert _field(_workload(client, u, {"kind": "tpc"}))[0] == "spec.kind"


@pytest.mark.parametrize(
    ("over", "field"),
    [
        ({"number": 0}, "spec.postmark.number"),
        ({"bias_read": 11}, "spec.postmark.bias_read"),
        ({"bias_create": -2}, "spec.postmark.bias_create"),
        ({"size_low_bytes": 9000, "size_high_bytes": 100}, "spec.postmark.size_high_bytes"),
        ({"read_block_bytes": 64 * 2**20 + 1}, "spec.postmark.read_block_bytes"),
        ({"transactions": 2**31}, "spec.postmark.transactions"),
        ({"location": "/etc"}, "spec.postmark.location"),
    ],
)
def test_bad_postmark_numbers_are_422_naming_the_setting(
    client: TestClient, session: Session, over: dict[str, Any], field: str
) -> None:
    u = create_user(session)
    assert _field(_workload(client, u, {"kind": "postmark", "postmark": {**PM, **over}}))[0] == field


def test_vdbench_text_the_engine_refuses_is_422_with_the_engines_message(
    client: TestClient, session: Session
) -> None:
    u = create_user(session)
    bad = VDB.replace("depth=1", "depth=1,bogus=3")
    field, message = _field(_workload(client, u, {"kind": "vdbench", "vdbench": {"parameters": bad}}))
    assert field == "spec.vdbench.parameters"
    assert message.startswith("bogus: fsd: parameter 'bogus' is not supported by iowatt-engine"), message
    out_of_range = VDB.replace("rdpct=90", "rdpct=101")
    field, message = _field(
        _workload(client, u, {"kind": "vdbench", "vdbench": {"parameters": out_of_range}})
    )
    assert field == "spec.vdbench.parameters" and "rdpct" in message and "101" in message
    big = {"kind": "vdbench", "vdbench": {"parameters": "*" * (64 * 1024 + 1)}}
    assert _field(_workload(client, u, big))[0] == "spec.vdbench.parameters"
    scale = {"kind": "vdbench", "vdbench": {"parameters": VDB, "scale": 1001}}
    assert _field(_workload(client, u, scale))[0] == "spec.vdbench.scale"


def test_saved_file_workloads_carry_the_engines_facts(client: TestClient, session: Session) -> None:
    u = create_user(session)
    sent_facts = {
        "mode": "vdbench",
        "threads": 1,
        "max_block_bytes": 1,
        "bytes_written_max": 1,
        "runtime_s_max": 1,
        "dataset_bytes": 1,
        "files": 1,
        "directories": 1,
    }
    r = _workload(client, u, {"kind": "vdbench", "vdbench": {"parameters": VDB}, "facts": sent_facts})
    assert r.status_code == 201, r.text
    facts = r.json()["spec"]["facts"]  # the engine's, not the ones sent
    assert (facts["files"], facts["directories"], facts["threads"]) == (8, 2, 2)
    assert facts["dataset_bytes"] == 8 * 64 * 1024 and facts["max_block_bytes"] == 4096
    assert facts["runtime_s_max"] == 60 and facts["o_direct"] is False
    r = _workload(client, u, {"kind": "postmark", "postmark": PM}, name="pm")
    assert r.status_code == 201, r.text
    spec = r.json()["spec"]
    assert spec["kind"] == "postmark" and spec["jobs"] == [] and spec["vdbench"] is None
    assert spec["facts"]["mode"] == "postmark" and spec["facts"]["files"] == 20
    assert spec["facts"]["threads"] == 1 and spec["facts"]["runtime_s_max"] is None


def test_postmark_commands_render_every_setting() -> None:
    spec = WorkloadSpec.model_validate(
        {
            "kind": "postmark",
            "postmark": {**PM, "bias_read": -1, "buffering": False, "fsync": True, "seed": 7},
        }
    )
    assert spec.engine_job() == {
        "mode": "postmark",
        "commands": "set size 4096 8192\nset number 20\nset subdirectories 2\nset read 512\nset write 512\n"
        "set transactions 40\nset bias read -1\nset bias create 5\nset buffering false\nset seed 7\n"
        "set fsync true\nrun\nquit\n",
    }
    plain = WorkloadSpec.model_validate({"kind": "postmark", "postmark": {}}).engine_job()
    assert "subdirectories" not in str(plain["commands"]) and "fsync" not in str(plain["commands"])


def test_presets_are_served_with_facts_and_queued_with_their_engine_job(
    client: TestClient, session: Session
) -> None:
    u = create_user(session)
    a = create_agent(session, team=u.team)
    items = {w["name"]: w for w in client.get("/api/v1/workloads", headers=u.headers).json()["items"]}
    for name in ("postmark-low", "postmark-medium", "postmark-high", "vdbench-big", "vdbench-small"):
        spec = items[name]["spec"]
        assert spec["kind"] == name.split("-")[0] and spec["facts"] is not None, name
        WorkloadSpec.model_validate(spec)  # what the server serves is valid input again
    low = items["postmark-low"]["spec"]["postmark"]
    assert (low["subdirectories"], low["number"], low["transactions"]) == (10, 10_000, 50_000)
    high = items["postmark-high"]["spec"]["postmark"]
    assert (high["subdirectories"], high["number"], high["transactions"]) == (100, 70_000, 100_000)
    assert (high["read_block_bytes"], high["size_low_bytes"], high["size_high_bytes"]) == (
        4096,
        327 * 1024,
        327 * 1024,
    )
    assert items["vdbench-big"]["spec"]["vdbench"]["parameters"] == VDBENCH_BIG.strip()
    assert items["vdbench-big"]["spec"]["facts"]["files"] == 65  # seed's 100 files at the default scale
    assert "500 GiB for 10 h" in items["vdbench-big"]["description"]

    for name in ("postmark-low", "vdbench-small"):
        body = {
            "agent_id": str(a.agent.id),
            "target_path": "/srv/bench",
            "workload_id": str(_preset_id(session, name)),
        }
        r = client.post("/api/v1/runs", json=body, headers=u.headers)
        assert r.status_code == 201, r.text
        assert r.json()["workload_id"] == body["workload_id"] and r.json()["name"].startswith(name)
        run = session.get(Run, uuid.UUID(r.json()["id"]))
        assert run is not None and run.workload_spec["spec_version"] == SPEC_VERSION
        assert load_spec(run.workload_spec).engine_job() == BUILTINS[name][1].engine_job()
        assert run.workload_spec["facts"]["mode"] == name.split("-")[0]
        assert run_service.dispatch(session, run_id=run.id) == a.agent.id
        lease = client.post(f"/api/v1/agents/{a.agent.id}/lease?wait_s=0", headers=a.headers).json()["lease"]
        assert lease["engine_job"] == BUILTINS[name][1].engine_job()
        assert lease["timeout_s"] >= load_spec(run.workload_spec).timeout_s()
        cancel = client.post(f"/api/v1/runs/{run.id}/cancel", headers=u.headers)  # frees the agent
        assert cancel.status_code == 200, cancel.text


def test_a_runs_scale_is_applied_recorded_and_refused_on_the_other_kind(
    client: TestClient, session: Session
) -> None:
    u = create_user(session)
    a = create_agent(session, team=u.team)

    def post(name: str, **over: Any) -> Any:
        body = {
            "agent_id": str(a.agent.id),
            "target_path": "/srv/bench",
            "workload_id": str(_preset_id(session, name)),
            **over,
        }
        return client.post("/api/v1/runs", json=body, headers=u.headers)

    r = post("vdbench-big", scale=0.1)
    assert r.status_code == 201, r.text
    wl = r.json()["workload"]
    assert wl["vdbench"]["scale"] == pytest.approx(0.0001) and wl["scaled_by"] == 0.1
    assert wl["facts"]["runtime_s_max"] == 4  # 10 h x 0.0001, in whole seconds: the facts of the scaled run
    r = post("postmark-low", scale=0.01)
    assert r.status_code == 201, r.text
    pm = r.json()["workload"]
    assert (pm["postmark"]["number"], pm["postmark"]["transactions"], pm["scaled_by"]) == (100, 500, 0.01)
    assert pm["facts"]["files"] == 100
    tiny = post("postmark-low", scale=1e-9)  # at least one file and one transaction
    assert tiny.status_code == 201 and tiny.json()["workload"]["postmark"]["number"] == 1

    before = _runs(session)
    assert _field(post("postmark-low", shorten=0.5))[0] == "shorten"
    assert _field(post("quick", scale=0.5))[0] == "scale"
    assert _field(post("vdbench-big", scale=0))[0] == "scale"
    assert _runs(session) == before


def test_scale_above_the_engines_bound_is_422(client: TestClient, session: Session) -> None:
    u = create_user(session)
    a = create_agent(session, team=u.team)
    spec = {"kind": "vdbench", "vdbench": {"parameters": VDB, "scale": 10}}
    body = {"agent_id": str(a.agent.id), "target_path": "/srv/bench", "workload": spec, "scale": 200}
    field, message = _field(client.post("/api/v1/runs", json=body, headers=u.headers))
    assert field == "scale" and "2000" in message


def test_inline_file_run_refused_by_the_engine_names_the_runs_field(
    client: TestClient, session: Session
) -> None:
    u = create_user(session)
    a = create_agent(session, team=u.team)
    bad = {"kind": "vdbench", "vdbench": {"parameters": VDB.replace("threads=2", "threads=zz")}}
    body = {"agent_id": str(a.agent.id), "target_path": "/srv/bench", "workload": bad}
    field, message = _field(client.post("/api/v1/runs", json=body, headers=u.headers))
    assert field == "workload.vdbench.parameters" and "threads" in message


def test_file_workloads_need_a_directory_target_of_the_host(client: TestClient, session: Session) -> None:
    u = create_user(session)
    inv = json.loads(json.dumps(INVENTORY))
    inv["policy"]["targets"].append({"path": "/srv/data.bin", "kind": "file", "writable": True})
    a = create_agent(session, team=u.team, inventory=inv)
    body = {
        "agent_id": str(a.agent.id),
        "target_path": "/srv/data.bin",
        "workload": {"kind": "postmark", "postmark": PM},
    }
    r = client.post("/api/v1/runs", json=body, headers=u.headers)
    assert r.status_code == 422 and r.json()["error"] == "host_policy_refused", r.text
    assert r.json()["detail"][0]["field"] == "target_path"
    assert (
        client.post("/api/v1/runs", json={**body, "target_path": "/srv/bench"}, headers=u.headers).status_code
        == 201
    )


def test_host_limits_are_checked_with_the_engines_facts(client: TestClient, session: Session) -> None:
    u = create_user(session)
    inv = json.loads(json.dumps(INVENTORY))
    inv["policy"]["limits"] = {"max_threads": 1}
    a = create_agent(session, team=u.team, inventory=inv)
    body = {
        "agent_id": str(a.agent.id),
        "target_path": "/srv/bench",
        "workload": {"kind": "vdbench", "vdbench": {"parameters": VDB}},
    }
    r = client.post("/api/v1/runs", json=body, headers=u.headers)
    assert r.status_code == 422 and r.json()["error"] == "host_policy_refused", r.text
    assert "2" in r.json()["detail"][0]["message"]  # the engine's thread count, 2, over the host's 1
    pm = {**body, "workload": {"kind": "postmark", "postmark": PM}}  # PostMark runs one thread
    assert client.post("/api/v1/runs", json=pm, headers=u.headers).status_code == 201


def test_a_campaign_of_a_file_preset_scales_every_run(client: TestClient, session: Session) -> None:
    u = create_user(session)
    a = create_agent(session, team=u.team)
    body = {
        "name": "pm levels",
        "workload_id": str(_preset_id(session, "postmark-medium")),
        "targets": [
            {"agent_id": str(a.agent.id), "target_path": "/srv/a"},
            {"agent_id": str(a.agent.id), "target_path": "/srv/b"},
        ],
        "repeats": 2,
        "scale": 0.001,
    }
    r = client.post("/api/v1/campaigns", json=body, headers=u.headers)
    assert r.status_code == 201, r.text
    runs = [session.get(Run, uuid.UUID(i)) for i in r.json()["run_ids"]]
    assert len(runs) == 4
    for run in runs:
        assert run is not None
        assert (run.workload_spec["postmark"]["number"], run.workload_spec["scaled_by"]) == (30, 0.001)
        assert run.workload_spec["facts"]["files"] == 30
    block = {**body, "workload_id": str(_preset_id(session, "quick")), "name": "q"}
    assert _field(client.post("/api/v1/campaigns", json=block, headers=u.headers))[0] == "scale"


def test_no_engine_is_a_503_naming_the_setting(
    client: TestClient, session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    u = create_user(session)
    monkeypatch.setattr(get_settings(), "engine_path", "/nonexistent/iowatt-engine")
    r = _workload(client, u, {"kind": "postmark", "postmark": {**PM, "seed": 99}})
    assert r.status_code == 503 and r.json()["error"] == "engine_unavailable", r.text
    assert "IOWATT_ENGINE_PATH" in r.json()["message"]
    block = {"jobs": [{"name": "j", "rw": "read", "bs_bytes": 4096, "size_bytes": 8192}]}
    assert _workload(client, u, block, name="b").status_code == 201  # block workloads need no engine
    a = create_agent(session, team=u.team)
    run = {
        "agent_id": str(a.agent.id),
        "target_path": "/srv/bench",
        "workload": {"kind": "vdbench", "vdbench": {"parameters": VDB + "\n* new"}},
    }
    r = client.post("/api/v1/runs", json=run, headers=u.headers)
    assert r.status_code == 503 and r.json()["error"] == "engine_unavailable", r.text
    documented = client.get("/openapi.json").json()["paths"]
    for path in ("/api/v1/workloads", "/api/v1/runs", "/api/v1/campaigns"):
        assert "503" in documented[path]["post"]["responses"], path


def test_a_version_2_row_reads_as_a_block_workload(client: TestClient, session: Session) -> None:
    u = create_user(session)
    a = create_agent(session, team=u.team)
    run = create_run(session, agent=a.agent)
    v2 = {
        "jobs": [{"name": "r", "rw": "read", "bs_bytes": 4096, "size_bytes": 1 << 20, "runtime_s": 2}],
        "passes": 1,
        "discard_passes": 0,
        "shortened_by": None,
        "spec_version": 2,
    }
    session.execute(
        text("UPDATE runs SET workload_spec = CAST(:doc AS jsonb) WHERE id = :id"),
        {"doc": json.dumps(v2), "id": run.id},
    )
    session.expire_all()
    read = client.get(f"/api/v1/runs/{run.id}", headers=u.headers).json()["workload"]
    assert (read["kind"], read["postmark"], read["vdbench"], read["facts"]) == ("block", None, None, None)
    assert read["jobs"][0]["name"] == "r"
    assert fingerprint(v2) == fingerprint({**v2, "spec_version": SPEC_VERSION, "kind": "block"})


def test_file_workloads_are_alike_only_when_they_run_the_same_thing() -> None:
    def fp(name: str) -> str:
        return fingerprint(json.loads(json.dumps(BUILTINS[name][1].model_dump(mode="json"))))

    prints = {
        fp(n) for n in ("postmark-low", "postmark-medium", "postmark-high", "vdbench-big", "vdbench-small")
    }
    assert len(prints) == 5
    scaled = BUILTINS["vdbench-big"][1].scaled(0.5).model_dump(mode="json")
    assert fingerprint(scaled) != fp("vdbench-big")


def test_file_timeouts_come_from_the_facts() -> None:
    spec = WorkloadSpec.model_validate(
        {
            "kind": "vdbench",
            "vdbench": {"parameters": VDB},
            "facts": {
                "mode": "vdbench",
                "threads": 2,
                "max_block_bytes": 4096,
                "bytes_written_max": None,
                "runtime_s_max": 600,
                "dataset_bytes": 20 * 10**9,
                "files": 8,
                "directories": 2,
            },
        }
    )
    # 600 s declared + 20 GB at 20 MB/s (1000 s) + 18 file operations at 200/s, x1.5, + 10 min
    assert spec.timeout_s() == int((600 + 1000 + 18 / 200) * 1.5 + 600)


def test_the_server_image_builds_the_engine_and_names_it() -> None:
    text = (Path(REPO) / "deploy" / "Dockerfile.server").read_text()
    assert "make -C /src/engine" in text
    assert "COPY --from=engine /src/engine/build/iowatt-engine /usr/local/bin/iowatt-engine" in text
    assert "IOWATT_ENGINE_PATH=/usr/local/bin/iowatt-engine" in text


def test_a_file_runs_cache_mode_comes_from_its_openflags(client: TestClient, session: Session) -> None:
    u = create_user(session)
    a = create_agent(session, team=u.team)
    direct = VDB.replace("size=64k", "size=64k,openflags=o_direct")
    cache = {}
    for label, spec in (
        ("vdbench-direct", {"kind": "vdbench", "vdbench": {"parameters": direct}}),
        ("vdbench-buffered", {"kind": "vdbench", "vdbench": {"parameters": VDB}}),
        ("postmark", {"kind": "postmark", "postmark": PM}),
    ):
        body = {"agent_id": str(a.agent.id), "target_path": "/srv/bench", "workload": spec}
        r = client.post("/api/v1/runs", json=body, headers=u.headers)
        assert r.status_code == 201, r.text
        cache[label] = client.get(f"/api/v1/runs/{r.json()['id']}/system", headers=u.headers).json()["cache"]
    assert cache == {"vdbench-direct": "direct", "vdbench-buffered": "buffered", "postmark": "buffered"}


def test_a_file_run_is_of_a_preset_only_by_its_workload(client: TestClient, session: Session) -> None:
    from backend.views.service import _preset_of

    u = create_user(session)
    a = create_agent(session, team=u.team)
    body = {
        "agent_id": str(a.agent.id),
        "target_path": "/srv/bench",
        "workload": {"kind": "postmark", "postmark": PM},
    }
    inline = client.post("/api/v1/runs", json=body, headers=u.headers).json()["id"]
    low = _preset_id(session, "postmark-low")
    preset = client.post(
        "/api/v1/runs",
        json={**body, "workload": None, "workload_id": str(low), "scale": 0.001},
        headers=u.headers,
    ).json()["id"]
    names = {low: "postmark-low"}
    inline_run, preset_run = session.get(Run, uuid.UUID(inline)), session.get(Run, uuid.UUID(preset))
    assert inline_run is not None and preset_run is not None
    assert _preset_of(inline_run, names) is None  # not the first preset without jobs
    assert _preset_of(preset_run, names) == "postmark-low"


def test_facts_are_asked_before_queuing_at_a_runs_scale(client: TestClient, session: Session) -> None:
    u = create_user(session)
    vdb = {"kind": "vdbench", "vdbench": {"parameters": VDB}}
    r = client.post("/api/v1/workloads/facts", json={"spec": vdb}, headers=u.headers)
    assert r.status_code == 200, r.text
    assert (r.json()["files"], r.json()["runtime_s_max"], r.json()["mode"]) == (8, 60, "vdbench")
    r = client.post("/api/v1/workloads/facts", json={"spec": vdb, "scale": 0.5}, headers=u.headers)
    assert (r.json()["files"], r.json()["runtime_s_max"]) == (4, 30)  # what POST /runs with scale 0.5 stores
    pm = client.post(
        "/api/v1/workloads/facts",
        json={"spec": {"kind": "postmark", "postmark": PM}, "scale": 2},
        headers=u.headers,
    )
    assert pm.status_code == 200 and pm.json()["files"] == 40
    bad = {"kind": "vdbench", "vdbench": {"parameters": VDB.replace("width=2", "width=x")}}
    field, message = _field(client.post("/api/v1/workloads/facts", json={"spec": bad}, headers=u.headers))
    assert field == "spec.vdbench.parameters" and "width" in message
    block = {"jobs": [{"name": "j", "rw": "read", "bs_bytes": 4096, "size_bytes": 8192}]}
    assert (
        _field(client.post("/api/v1/workloads/facts", json={"spec": block}, headers=u.headers))[0]
        == "spec.kind"
    )
    over = {"spec": {**vdb, "vdbench": {"parameters": VDB, "scale": 500}}, "scale": 4}
    assert _field(client.post("/api/v1/workloads/facts", json=over, headers=u.headers))[0] == "scale"
    assert client.post("/api/v1/workloads/facts", json={"spec": vdb}).status_code == 401
    assert (
        _runs(session) == 0
        and session.scalar(select(func.count()).select_from(Workload).where(Workload.team_id == u.team.id))
        == 0
    )


def test_an_engine_that_does_not_answer_in_time_is_a_422_at_the_text(
    client: TestClient, session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    from backend.workload import facts

    u = create_user(session)
    monkeypatch.setattr(facts, "PARSE_TIMEOUT_S", 1e-6)
    slow = {"kind": "vdbench", "vdbench": {"parameters": VDB + "\n* not seen before: not cached"}}
    field, message = _field(_workload(client, u, slow))
    assert field == "spec.vdbench.parameters" and "took over" in message


def test_a_saved_workload_the_engine_now_refuses_is_a_422_at_workload_id(
    client: TestClient, session: Session
) -> None:
    u = create_user(session)
    a = create_agent(session, team=u.team)
    r = _workload(client, u, {"kind": "vdbench", "vdbench": {"parameters": VDB}})
    assert r.status_code == 201, r.text
    row = session.get(Workload, uuid.UUID(r.json()["id"]))
    assert row is not None
    # as if saved under an engine that took a parameter today's refuses
    row.spec = {**row.spec, "vdbench": {**row.spec["vdbench"], "parameters": VDB + "\nsd=sd1,lun=/dev/sda"}}
    session.flush()
    body = {"agent_id": str(a.agent.id), "target_path": "/srv/bench", "workload_id": r.json()["id"]}
    field, message = _field(client.post("/api/v1/runs", json=body, headers=u.headers))
    assert field == "workload_id" and message.startswith("the engine refuses the saved workload: "), message
