"""POST /workloads/facts (the UI's New run asks it as a scale is typed): the real engine's
--parse-only bounds of a file workload at a scale, its refusals as 422s at the field, nothing stored."""

from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from backend.models import Workload
from backend.workload.builtin import BUILTINS
from tests.factories import create_user

VDB = """fsd=fsd1,anchor=/ignored,depth=1,width=2,files=4,size=64k
fwd=fwd1,fsd=fsd1,rdpct=90,xfersize=4k,fileselect=random,fileio=random,threads=2
rd=rd1,fwd=fwd1,fwdrate=max,format=yes,elapsed=60,interval=1"""


def _ask(
    client: TestClient, headers: dict[str, str], spec: dict[str, Any], scale: float | None = None
) -> Any:
    return client.post("/api/v1/workloads/facts", json={"spec": spec, "scale": scale}, headers=headers)


def test_vdbench_facts_follow_the_engines_scale(client: TestClient, session: Session) -> None:
    u = create_user(session)
    before = session.scalar(select(func.count()).select_from(Workload))
    spec = {"kind": "vdbench", "vdbench": {"parameters": VDB, "scale": 1}}
    full = _ask(client, u.headers, spec)
    assert full.status_code == 200, full.text
    f = full.json()
    # 2 directories x 4 files of 64 KiB, 2 threads, 60 s, as the engine lays it out
    assert (f["mode"], f["files"], f["directories"], f["threads"]) == ("vdbench", 8, 2, 2)
    assert f["dataset_bytes"] == 8 * 64 * 1024
    assert f["runtime_s_max"] == 60
    half = _ask(client, u.headers, spec, scale=0.5).json()
    assert half["files"] == 4 and half["runtime_s_max"] == 30
    assert half["dataset_bytes"] == 4 * 32 * 1024
    # nothing saved
    assert session.scalar(select(func.count()).select_from(Workload)) == before


def test_the_big_preset_keeps_its_files_for_its_threads(client: TestClient, session: Session) -> None:
    """vdbench-big at ×10 its preset scale: 65 files still (64 exclusive threads need them), each
    ten times larger — what only the engine knows, and why the UI asks."""
    u = create_user(session)
    spec = BUILTINS["vdbench-big"][1].model_dump(mode="json")
    at = _ask(client, u.headers, spec).json()
    more = _ask(client, u.headers, spec, scale=10).json()
    assert at["files"] == more["files"] == 65
    assert 9 <= more["dataset_bytes"] / at["dataset_bytes"] <= 11
    assert more["runtime_s_max"] == 10 * at["runtime_s_max"]


def test_postmark_facts_and_refusals(client: TestClient, session: Session) -> None:
    u = create_user(session)
    pm = {"number": 20, "transactions": 40, "size_low_bytes": 4096, "size_high_bytes": 8192}
    r = _ask(client, u.headers, {"kind": "postmark", "postmark": pm}, scale=2)
    assert r.status_code == 200, r.text
    assert r.json()["files"] == 40 and r.json()["runtime_s_max"] is None
    bad = _ask(client, u.headers, {"kind": "vdbench", "vdbench": {"parameters": VDB + "\nbogus=1"}})
    assert bad.status_code == 422
    assert bad.json()["detail"][0]["field"] == "spec.vdbench.parameters"
    job = {"name": "j", "rw": "read", "bs_bytes": 4096, "size_bytes": 8192}
    block = _ask(client, u.headers, {"jobs": [job]})
    assert block.status_code == 422 and block.json()["detail"][0]["field"] == "spec.kind"
    too_big = _ask(
        client, u.headers, {"kind": "vdbench", "vdbench": {"parameters": VDB, "scale": 500}}, scale=4
    )
    assert too_big.status_code == 422 and too_big.json()["detail"][0]["field"] == "scale"
    assert (
        client.post(
            "/api/v1/workloads/facts", json={"spec": {"kind": "postmark", "postmark": pm}}
        ).status_code
        == 401
    )
