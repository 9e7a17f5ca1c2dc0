"""The host's write-back on the server (issue 29, seed 004): an agent's `page_cache` in the uploaded
document becomes the run page's settings (GET /runs/{id}/system) and its Dirty/Writeback series
(GET /runs/{id}/series), a malformed one a 422 naming the field; the `writeback` preset's random vs
skip pair as the writeback view, from the real engine's run of the preset's own job file at a small
size (backend/result/pagecache.py, backend/views/builders/writeback.py)."""

from __future__ import annotations

import json
import re
import subprocess
import uuid
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from backend.result import pagecache
from backend.run import service as run_service
from backend.views.builders.writeback import WB_TESTS
from backend.workload.builtin import BUILTINS
from backend.workload.facts import with_facts
from backend.workload.schemas import JobfileSpec, WorkloadSpec, stored_spec
from tests.factories import create_agent, create_run, create_user, engine_document
from tests.stack import ENGINE

PAGE = 4096


def page_cache(n: int = 5) -> dict[str, Any]:
    return {
        "source": "iowatt-agent",
        "settings": {
            "dirty_ratio_pct": 20,
            "dirty_background_ratio_pct": 10,
            "dirty_bytes": 0,
            "dirty_background_bytes": 0,
            "dirty_expire_ns": 30 * 10**9,
            "dirty_writeback_ns": 5 * 10**9,
            "mem_total_bytes": 8 << 30,
        },
        "device": {
            "name": "vdz",
            "read_ahead_bytes": 131072,
            "scheduler": "mq-deadline",
            "write_cache": "write back",
        },
        "samples": {
            "t_ns": [k * 10**9 for k in range(n)],
            "dirty_bytes": [k * (100 << 20) for k in range(n)],
            "writeback_bytes": [k * (10 << 20) for k in range(n)],
            "dirty_threshold_bytes": [1000 * PAGE] * n,
            "background_threshold_bytes": [None] * n,
        },
        "truncated": False,
    }


def upload(
    client: TestClient,
    session: Session,
    u: Any,
    doc: dict[str, Any],
    spec: WorkloadSpec | None = None,
    **run: Any,
) -> tuple[uuid.UUID, Any]:
    """A run of `spec` (default: quick) whose result `doc` is uploaded through the agent API."""
    a = create_agent(session, team=u.team)
    r = create_run(session, agent=a.agent, **run)
    if spec is not None:
        r.workload_spec = stored_spec(spec)
        session.flush()
    run_service.dispatch(session, run_id=r.id)
    lease = client.post(f"/api/v1/agents/{a.agent.id}/lease?wait_s=0", headers=a.headers).json()["lease"]
    lid = lease["lease_id"]
    assert (
        client.post(f"/api/v1/runs/{r.id}/start", json={"lease_id": lid}, headers=a.headers).status_code
        == 200
    )
    up = {
        "lease_id": lid,
        "upload_id": str(uuid.uuid4()),
        "engine_result": doc,
        "engine_exit_code": 0,
        "started_at": "2026-12-06T06:00:00Z",
        "finished_at": "2026-12-06T06:01:00Z",
    }
    return r.id, client.put(f"/api/v1/runs/{r.id}/result", json=up, headers=a.headers)


def test_the_page_cache_is_the_runs_settings_and_series(client: TestClient, session: Session) -> None:
    u = create_user(session)
    run_id, r = upload(client, session, u, {**engine_document(), "page_cache": page_cache()})
    assert r.status_code == 201, r.text
    sys = client.get(f"/api/v1/runs/{run_id}/system", headers=u.headers).json()["page_cache"]
    assert (sys["dirty_ratio_pct"], sys["dirty_expire_ns"], sys["scheduler"], sys["write_cache"]) == (
        20,
        30 * 10**9,
        "mq-deadline",
        "write back",
    )
    assert sys["read_ahead_bytes"] == 131072 and sys["sampled"] is True
    mem = client.get(f"/api/v1/runs/{run_id}/series", headers=u.headers).json()["memory"]
    assert [p["t_s"] for p in mem["points"]] == [0, 1, 2, 3, 4]
    assert mem["points"][3]["dirty_bytes"] == 300 << 20 and mem["points"][3]["writeback_bytes"] == 30 << 20
    assert mem["points"][0]["dirty_threshold_bytes"] == 1000 * PAGE
    assert mem["points"][0]["background_threshold_bytes"] is None


def test_a_run_without_one_has_none(client: TestClient, session: Session) -> None:
    u = create_user(session)
    run_id, r = upload(client, session, u, engine_document())
    assert r.status_code == 201, r.text
    assert client.get(f"/api/v1/runs/{run_id}/system", headers=u.headers).json()["page_cache"] is None
    assert client.get(f"/api/v1/runs/{run_id}/series", headers=u.headers).json()["memory"] is None


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (lambda pc: pc["samples"]["dirty_bytes"].pop(), "engine_result.page_cache.samples"),
        (lambda pc: pc["samples"]["t_ns"].reverse(), "engine_result.page_cache.samples"),
        (
            lambda pc: pc["settings"].update(dirty_ratio_pct=101),
            "engine_result.page_cache.settings.dirty_ratio_pct",
        ),
        (
            lambda pc: pc["samples"]["writeback_bytes"].__setitem__(0, -1),
            "engine_result.page_cache.samples.writeback_bytes.0",
        ),
    ],
)
def test_a_malformed_page_cache_is_a_422_naming_it(
    client: TestClient, session: Session, change: Any, field: str
) -> None:
    u = create_user(session)
    pc = page_cache()
    change(pc)
    _, r = upload(client, session, u, {**engine_document(), "page_cache": pc})
    assert r.status_code == 422, r.text
    assert field in r.text, r.text


def test_a_long_series_is_served_as_bucket_means() -> None:
    doc = pagecache.PageCacheDoc.model_validate(page_cache(4000))
    s = pagecache.series(doc)
    assert s is not None and len(s.points) == 2000 and s.points[0].t_s == 1.0
    assert s.points[0].dirty_bytes == (0 + (100 << 20)) // 2


def small_writeback_text() -> str:
    """The preset's own job file at a small size: the same jobs, names and patterns."""
    spec = BUILTINS["writeback"][1]
    assert spec.jobfile is not None
    text = spec.jobfile.text
    for big, small in (
        ("io_size=2g", "io_size=1m"),
        ("io_size=512m", "io_size=256k"),
        ("size=16g", "size=8m"),
        ("size=8g", "size=4m"),
    ):
        text = text.replace(big, small)
    assert re.search(r"size=\d+g", text) is None  # nothing of the full size left
    return text


def writeback_run(client: TestClient, session: Session, u: Any, tmp_path: Path) -> uuid.UUID:
    """A run of the writeback preset at a small size, its document the real engine's."""
    text = small_writeback_text()
    spec = with_facts(WorkloadSpec(kind="jobfile", jobfile=JobfileSpec(text=text)))
    job = tmp_path / "wb.fio"
    job.write_text(text.replace("[global]", f"[global]\nfilename={tmp_path / 'target.dat'}"))
    out = subprocess.run(
        [str(ENGINE), "--output-format=json", str(job)], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    run_id, r = upload(client, session, u, json.loads(out.stdout), spec, preset="writeback")
    assert r.status_code == 201, r.text
    return run_id


def test_random_against_skip_as_the_writeback_view(
    client: TestClient, session: Session, tmp_path: Path
) -> None:
    u = create_user(session)
    run_id = writeback_run(client, session, u, tmp_path)
    t = client.get(
        "/api/v1/views/table", params={"view": "writeback", "runs": str(run_id)}, headers=u.headers
    )
    assert t.status_code == 200, t.text
    rows = [[c["value"] for c in row["cells"]] for row in t.json()["rows"]]
    assert [row[0] for row in rows[:4]] == [label for _, label in WB_TESTS]
    by = {name: row for (name, _), row in zip(WB_TESTS, rows, strict=False)}
    rand, skip = by["rand-write-4k-direct"][1], by["skip-write-4k-direct"][1]
    assert rand > 0 and skip > 0 and by["seq-write-1m-buffered"][1] > 0
    assert rows[4][0].startswith("Skip ÷ completely random") and rows[4][1] == pytest.approx(skip / rand)
