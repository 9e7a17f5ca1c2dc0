"""Seed 003 as its author ran it (issue 29): the kernel-help report's program read and wrote an unused
partition directly. The `kernel-help` preset is queued on a host-listed block device (a loop device
here) with the destructive consent — both keys: the host's `--destructive` and the run's — the host
plans it by its own policy (the agent's plan_lease), the real engine runs it on the device, and the
kernel-help view shows it beside the same preset on a file. Shortened ×0.01 (640 KiB or one block
per point). Needs root, losetup and the built engine (skipped otherwise)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import uuid
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from iowatt_agent.plan import plan_lease
from iowatt_agent.policy import Meters, load_report, save_policy
from iowatt_agent.schemas import Lease
from iowatt_policy import Policy, Target
from sqlalchemy import select
from sqlalchemy.orm import Session

from backend.models import Workload
from backend.run import service as run_service
from tests.factories import INVENTORY, create_agent, create_user
from tests.stack import ENGINE

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("losetup") or not os.access(ENGINE, os.X_OK),
    reason="needs root, losetup and the built engine",
)
PARTITION = (1 << 30) + (1 << 20)  # the preset's 1 GiB region and a little more (sparse)


@pytest.fixture
def partition(tmp_path: Path):
    backing = tmp_path / "partition.img"
    with backing.open("wb") as f:
        f.truncate(PARTITION)
    try:
        dev = subprocess.run(
            ["losetup", "-f", "--show", str(backing)], check=True, capture_output=True, text=True
        ).stdout.strip()
    except subprocess.CalledProcessError as exc:
        pytest.skip(f"no loop device here: {exc.stderr.strip()}")
    by_id = Path("/dev/disk/by-id")
    by_id.mkdir(parents=True, exist_ok=True)  # no udev here; left for other processes' links
    link = by_id / f"iowatt-test-{uuid.uuid4().hex[:12]}"
    link.symlink_to(dev)
    try:
        yield link
    finally:
        link.unlink()
        subprocess.run(["losetup", "-d", dev], check=False)


def run_on(
    client: TestClient, session: Session, a: Any, u: Any, state: Path, target: str, **extra: Any
) -> uuid.UUID:
    """Queue kernel-help on `target`, lease it, plan it as the host does, run the engine, upload."""
    wl = session.scalar(select(Workload).where(Workload.name == "kernel-help", Workload.builtin.is_(True)))
    assert wl is not None
    body = {"agent_id": str(a.agent.id), "target_path": target, "workload_id": str(wl.id), "shorten": 0.01}
    r = client.post("/api/v1/runs", json={**body, **extra}, headers=u.headers)
    assert r.status_code == 201, r.text
    run_id = uuid.UUID(r.json()["id"])
    run_service.dispatch(session, run_id=run_id)
    lease = client.post(f"/api/v1/agents/{a.agent.id}/lease?wait_s=0", headers=a.headers).json()["lease"]
    plan = plan_lease(
        Lease.model_validate(lease), policy=_policy(state), meters=Meters(), idle_s=0, engine=ENGINE
    )
    job = state / f"{run_id}.json"
    job.write_text(json.dumps(plan.job))
    out = subprocess.run(
        [str(ENGINE), "--output-format=json", *plan.engine_args, str(job)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    if plan.data_file is not None:
        plan.data_file.unlink(missing_ok=True)
    lid = lease["lease_id"]
    assert (
        client.post(f"/api/v1/runs/{run_id}/start", json={"lease_id": lid}, headers=a.headers).status_code
        == 200
    )
    up = {
        "lease_id": lid,
        "upload_id": str(uuid.uuid4()),
        "engine_result": json.loads(out.stdout),
        "engine_exit_code": 0,
        "started_at": "2026-12-06T06:00:00Z",
        "finished_at": "2026-12-06T06:01:00Z",
    }
    assert client.put(f"/api/v1/runs/{run_id}/result", json=up, headers=a.headers).status_code == 201
    return run_id


def _policy(state: Path) -> Policy:
    from iowatt_agent.policy import load_policy

    return load_policy(state)


@pytest.mark.early  # ~45 s of mostly waiting (two shortened kernel-help runs through the page cache)
def test_kernel_help_on_a_raw_partition_beside_the_file_version(
    client: TestClient, session: Session, tmp_path: Path, partition: Path
) -> None:
    state = tmp_path / "state"
    files = tmp_path / "files"
    files.mkdir()
    # the host lists the partition with its destructive key, and a directory for the file version
    save_policy(
        state, Policy(targets=(Target.device(str(partition), destructive=True), Target.directory(str(files))))
    )
    u = create_user(session)
    inventory = {
        **{k: v for k, v in INVENTORY.items() if k != "policy"},
        "policy": load_report(state).to_dict(),
    }
    a = create_agent(session, team=u.team, inventory=inventory)
    # the run's key is the second: without it the server refuses to queue the writes
    wl = session.scalar(select(Workload).where(Workload.name == "kernel-help", Workload.builtin.is_(True)))
    assert wl is not None
    refused = client.post(
        "/api/v1/runs",
        json={"agent_id": str(a.agent.id), "target_path": str(partition), "workload_id": str(wl.id)},
        headers=u.headers,
    )
    assert refused.status_code == 422 and "destructive" in refused.text, refused.text
    device = run_on(client, session, a, u, state, str(partition), destructive=True)
    on_file = run_on(client, session, a, u, state, str(files))
    t = client.get(
        "/api/v1/views/table",
        params={"view": "kernel-help", "runs": f"{device},{on_file}"},
        headers=u.headers,
    )
    assert t.status_code == 200, t.text
    view = t.json()
    assert [r["target_path"] for r in view["runs"]] == [str(partition), str(files)]
    rows = [[c["value"] for c in row["cells"]] for row in view["rows"]]
    # one row group per run, each named by its own target: the device's beside the file's
    labels = [r["label"] for r in view["runs"]]
    assert len(set(labels)) == 2 and {row[0] for row in rows} == set(labels)
    for label in labels:
        figures = [v for row in rows if row[0] == label for v in row[2:] if isinstance(v, float)]
        assert len(figures) > 40 and all(v > 0 for v in figures), label
    # the device run read and wrote the raw device: its jobs' target is the block device
    doc = client.get(f"/api/v1/runs/{device}/result", headers=u.headers).json()["engine_result"]
    assert doc["iowatt"]["target"]["kind"] == "blockdev"
