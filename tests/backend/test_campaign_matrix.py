"""Campaigns as matrices: several workloads and parameter sweeps, expanded on the server into
cells before anything is queued, each cell's runs carrying its spec, compared by what varies."""

import uuid
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select
from sqlalchemy.orm import Session

from backend.campaign import matrix
from backend.compare import service as compare_service
from backend.errors import Invalid
from backend.models import Agent, Campaign, Role, Run
from backend.workload.schemas import WorkloadSpec
from tests.factories import create_agent, create_result, create_run, create_user

MiB = 1 << 20


def _job(name: str, rw: str, **kw: Any) -> dict[str, Any]:
    return {
        "name": name,
        "rw": rw,
        "size_bytes": 4 * MiB,
        "bs_bytes": 4096,
        "runtime_s": 2,
        "time_based": True,
        **kw,
    }


SPEC = WorkloadSpec.model_validate({"jobs": [_job("rr", "randread"), _job("mix", "randrw", rwmixread=50)]})


def test_a_sweep_expands_into_named_cells_that_set_every_job() -> None:
    cells = matrix.expand([SPEC], {"bs_bytes": [4096, 65536], "iodepth": [1, 32], "rwmixread": [70]})
    assert [c.label for c in cells] == [
        "4 KiB · QD 1 · 70 % reads",
        "4 KiB · QD 32 · 70 % reads",
        "64 KiB · QD 1 · 70 % reads",
        "64 KiB · QD 32 · 70 % reads",
    ]
    last = cells[-1].spec.jobs
    assert [(j.bs_bytes, j.iodepth) for j in last] == [(65536, 32), (65536, 32)]
    # the read share only where reads and writes mix; the pure read job keeps its own
    assert [j.rwmixread for j in last] == [SPEC.jobs[0].rwmixread, 70]
    assert cells[0].params == {"bs_bytes": 4096, "iodepth": 1, "rwmixread": 70}
    assert matrix.params_of(cells[-1].spec.model_dump(mode="json")) == {
        "bs_bytes": 65536,
        "iodepth": 32,
        "numjobs": 1,
        "rwmixread": 70,
    }
    assert matrix.seconds(cells[0].spec) == 4.0
    # no sweep: the workloads as they are
    assert [c.spec for c in matrix.expand([SPEC, SPEC], {})] == [SPEC, SPEC]


@pytest.mark.parametrize(
    ("spec", "sweep", "field", "words"),
    [
        (
            {"jobs": [_job("a", "randread", bssplit="4k/50:64k/50")]},
            {"bs_bytes": [8192]},
            "sweep.bs_bytes",
            "bssplit",
        ),
        ({"jobs": [_job("a", "randread")]}, {"rwmixread": [70]}, "sweep.rwmixread", "mixes"),
        ({"jobs": [_job("a", "randread")]}, {"bs_bytes": [1 << 40]}, "sweep.bs_bytes", "bs_bytes"),
    ],
)
def test_a_sweep_that_cannot_mean_what_it_says_is_refused(
    spec: dict[str, Any], sweep: dict[str, list[int]], field: str, words: str
) -> None:
    with pytest.raises(Invalid) as exc:
        matrix.expand([WorkloadSpec.model_validate(spec)], sweep)
    assert exc.value.detail[0]["field"] == field and words in exc.value.detail[0]["message"]


def test_plan_then_queue_a_matrix_campaign(client: TestClient, session: Session) -> None:
    u = create_user(session, role=Role.member)
    a = create_agent(session, team=u.team)
    saved = client.post(
        "/api/v1/workloads",
        json={
            "team_id": str(u.team.id),
            "name": "seq read 1M",
            "spec": {"jobs": [_job("s", "read", bs_bytes=MiB)]},
        },
        headers=u.headers,
    )
    assert saved.status_code == 201, saved.text
    body: dict[str, Any] = {
        "name": "grid",
        "workload": SPEC.model_dump(mode="json", exclude_none=True),
        "workload_ids": [saved.json()["id"]],
        "sweep": {"iodepth": [1, 8, 32]},
        "targets": [{"agent_id": str(a.agent.id), "target_path": p} for p in ("/srv/a", "/srv/b")],
        "repeats": 2,
    }
    r = client.post("/api/v1/campaigns/plan", json=body, headers=u.headers)
    assert r.status_code == 200, r.text
    plan = r.json()
    assert [c["label"] for c in plan["cells"]] == ["QD 1", "QD 8", "QD 32"] * 2
    assert [c["workload"] for c in plan["cells"]] == ["inline workload"] * 3 + ["seq read 1M"] * 3
    # 3 cells of two 2-s jobs and 3 of one, on 2 targets, twice: (3 * 4 + 3 * 2) * 2 * 2 s
    assert plan["runs"] == 6 * 2 * 2 and plan["measure_s"] == 72.0
    assert session.scalar(select(Run.id).where(Run.agent_id == a.agent.id)) is None  # nothing queued

    r = client.post("/api/v1/campaigns", json=body, headers=u.headers)
    assert r.status_code == 201, r.text
    c = r.json()
    assert len(c["run_ids"]) == 24 and "group_by=sweep&force=true" in c["compare_url"]
    runs = {str(x.id): x for x in session.scalars(select(Run).where(Run.campaign_id == uuid.UUID(c["id"])))}
    ordered = [runs[i] for i in c["run_ids"]]
    assert ordered[0].name == "grid · inline workload · QD 1 · /srv/a · #1"
    assert ordered[1].name == "grid · inline workload · QD 1 · /srv/b · #1"
    assert [j["iodepth"] for j in ordered[2].workload_spec["jobs"]] == [8, 8]
    assert ordered[0].workload_id is None  # a swept cell carries its own spec
    seq = [x for x in ordered if "seq read 1M" in x.name]
    assert len(seq) == 12 and all(x.workload_spec["jobs"][0]["iodepth"] in (1, 8, 32) for x in seq)
    assert ordered[-1].name.endswith("#2")


def test_a_matrix_over_the_limit_or_of_an_unknown_workload_is_a_422(
    client: TestClient, session: Session
) -> None:
    u = create_user(session, role=Role.member)
    a = create_agent(session, team=u.team)
    body: dict[str, Any] = {
        "name": "too big",
        "workload": SPEC.model_dump(mode="json", exclude_none=True),
        "sweep": {"bs_bytes": [4096 << i for i in range(8)], "iodepth": [1, 2, 4, 8, 16, 32, 64, 128]},
        "targets": [{"agent_id": str(a.agent.id), "target_path": "/srv/a"}],
        "repeats": 10,
    }
    r = client.post("/api/v1/campaigns/plan", json=body, headers=u.headers)
    assert r.status_code == 422 and "= 640" in r.json()["message"], r.text
    body.update(repeats=1, workload_ids=[str(uuid.uuid4())])
    r = client.post("/api/v1/campaigns", json=body, headers=u.headers)
    assert r.status_code == 422 and r.json()["detail"][0]["field"] == "workload_ids.0", r.text
    assert session.scalar(select(Campaign.id).where(Campaign.team_id == u.team.id)) is None


def test_a_matrix_compares_by_what_varies() -> None:
    agent = Agent(id=uuid.uuid4(), name="lab")
    cells = matrix.expand([SPEC], {"iodepth": [1, 32]})

    def run(cell: matrix.Cell, path: str) -> Run:
        return Run(
            id=uuid.uuid4(),
            agent_id=agent.id,
            target_path=path,
            workload_spec=cell.spec.model_dump(mode="json", exclude_none=True),
            workload_id=None,
            name="x",
        )

    runs = [run(c, p) for c in cells for p in ("/srv/a", "/srv/b") for _ in range(2)]
    fps = {r.id: f"fp-{r.workload_spec['jobs'][0]['iodepth']}" for r in runs}
    cols = compare_service._columns(runs, "sweep", {}, {}, {agent.id: agent}, fps, {})
    assert [(label, len(rs)) for _, label, rs in cols] == [
        ("QD 1 · /srv/a on lab", 2),
        ("QD 1 · /srv/b on lab", 2),
        ("QD 32 · /srv/a on lab", 2),
        ("QD 32 · /srv/b on lab", 2),
    ]
    one_target = [r for r in runs if r.target_path == "/srv/a"]
    cols = compare_service._columns(one_target, "sweep", {}, {}, {agent.id: agent}, fps, {})
    assert [label for _, label, _ in cols] == ["QD 1", "QD 32"]


def test_a_matrix_comparison_through_the_api_names_its_columns(client: TestClient, session: Session) -> None:
    """Runs of saved workloads (their names looked up) and swept cells, compared as group_by=sweep."""
    u = create_user(session, role=Role.member)
    a = create_agent(session, team=u.team)
    wl = client.post(
        "/api/v1/workloads",
        json={"team_id": str(u.team.id), "name": "rr 4k", "spec": {"jobs": [_job("rr", "randread")]}},
        headers=u.headers,
    ).json()
    runs = []
    for qd, rate in ((1, 100.0), (32, 900.0)):
        for _ in range(2):
            r = create_run(session, agent=a.agent, target_path="/srv/a")
            r.workload_id = uuid.UUID(wl["id"])
            r.workload_spec = {"jobs": [{**_job("rr", "randread"), "iodepth": qd}]}
            create_result(
                session, run=r, jobs=[{"name": "rr", "rw": "randread", "bs_bytes": 4096, "read_iops": rate}]
            )
            runs.append(r)
    ids = ",".join(str(r.id) for r in runs)
    c = client.get(f"/api/v1/compare?runs={ids}&group_by=sweep&force=true", headers=u.headers)
    assert c.status_code == 200, c.text
    doc = c.json()
    assert [(col["label"], len(col["run_ids"])) for col in doc["columns"]] == [("QD 1", 2), ("QD 32", 2)]
    iops = next(m for m in doc["jobs"][0]["metrics"] if m["key"] == "read_iops")
    assert iops["values"] == [100.0, 900.0]
