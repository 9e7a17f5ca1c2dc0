"""The InnoDB flushing-policy matrix on the server (docs/innodb-flush.md): the kind's lease job,
facts, scale and refusals (pure), and the `innodb-flush` view and its CSV from a real run's document
(tests/data/innodb/matrix-loop.json: the agent's child on a loop device, six settings at 1 s) with
a meter's samples over the settings' windows: energy per transaction = mean power x window ÷
transactions, the per-transaction figures libs/workload's, never the agent's copy."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from iowatt_workload.innodb import ALL_SETTINGS, per_transaction
from pydantic import ValidationError
from sqlalchemy.orm import Session

from backend.run import service as run_service
from backend.workload.builtin import BUILTINS
from backend.workload.schemas import WorkloadSpec, stored_spec
from tests.factories import create_agent, create_run, create_user

DOC: dict[str, Any] = json.loads(
    (Path(__file__).resolve().parents[1] / "data" / "innodb" / "matrix-loop.json").read_text()
)
WATTS = 50.0


def test_the_kinds_lease_job_facts_and_scale() -> None:
    spec = BUILTINS["innodb-flush"][1]
    k = spec.kind_def
    job = k.engine_job(spec)
    assert job == {
        "mode": "innodb-flush",
        "settings": "1:1,1:0,2:1,2:0,0:1,0:0",
        "tables": "4",
        "table_size": "100000",
        "threads": "8",
        "seconds": "60",
        "warmup_s": "10",
        "buffer_pool_bytes": str(128 << 20),
    }
    f = k.facts(spec)
    assert (f.mode, f.threads, f.bytes_written_max) == ("innodb-flush", 8, None)
    assert f.runtime_s_max is not None and f.runtime_s_max >= 6 * 70
    short = spec.model_copy(update=k.scaled(spec, 0.01))
    assert (short.innodb_flush.seconds, short.innodb_flush.warmup_s) == (1, 0)  # type: ignore[union-attr]
    with pytest.raises(ValueError, match="3600"):
        k.scaled(spec, 100)


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"settings": [{"innodb_flush_log_at_trx_commit": 1, "sync_binlog": 1}] * 2}, "settings"),
        (
            {"settings": [{"innodb_flush_log_at_trx_commit": 3, "sync_binlog": 1}]},
            "innodb_flush_log_at_trx_commit",
        ),
        ({"threads": 0}, "threads"),
        ({"seconds": 3601}, "seconds"),
        ({"buffer_pool_bytes": 1}, "buffer_pool_bytes"),
    ],
)
def test_bad_parameters_name_their_field(body: dict[str, Any], field: str) -> None:
    with pytest.raises(ValidationError) as e:
        WorkloadSpec.model_validate({"kind": "innodb_flush", "innodb_flush": body})
    assert any(field in ".".join(map(str, err["loc"])) for err in e.value.errors()), e.value.errors()


def _power(doc: dict[str, Any]) -> dict[str, Any]:
    """A meter at WATTS from 5 s before the first setting to 5 s after the last, every 0.25 s."""
    cells = doc["innodb_flush"]["cells"]
    t0_ns = cells[0]["start_utc_ns"] - 5 * 10**9
    end_ns = cells[-1]["start_utc_ns"] + cells[-1]["duration_ns"] + 5 * 10**9 - t0_ns
    t = list(range(0, end_ns, 250_000_000))
    t0 = datetime.fromtimestamp(t0_ns // 10**9, UTC).replace(microsecond=(t0_ns % 10**9) // 1000)
    return {
        "meter": {
            "spec": "command:/usr/local/bin/watts",
            "driver": "command",
            "tier": "inband",
            "quantity": "power_avg",
            "nominal_interval_s": 0.25,
        },
        "status": "ok",
        "reason": None,
        "t0_utc": t0.isoformat().replace("+00:00", "Z"),
        "phases": [{"name": "load", "start_ns": 0, "end_ns": end_ns}],
        "samples": {"t_ns": t, "value": [WATTS] * len(t)},
        "cleaning": {},
    }


def innodb_run(
    client: TestClient, session: Session, u: Any, doc: dict[str, Any] = DOC
) -> tuple[uuid.UUID, Any]:
    """A run of the innodb-flush preset whose result is the recorded document, with a meter."""
    a = create_agent(session, team=u.team)
    r = create_run(session, agent=a.agent, preset="innodb-flush")
    r.workload_spec = stored_spec(BUILTINS["innodb-flush"][1])
    session.flush()
    run_service.dispatch(session, run_id=r.id)
    lid = client.post(f"/api/v1/agents/{a.agent.id}/lease?wait_s=0", headers=a.headers).json()["lease"][
        "lease_id"
    ]
    assert (
        client.post(f"/api/v1/runs/{r.id}/start", json={"lease_id": lid}, headers=a.headers).status_code
        == 200
    )
    up = {
        "lease_id": lid,
        "upload_id": str(uuid.uuid4()),
        "engine_result": doc,
        "engine_exit_code": 0,
        "started_at": "2026-12-06T08:40:00Z",
        "finished_at": "2026-12-06T08:41:00Z",
        "power": _power(doc),
    }
    return r.id, client.put(f"/api/v1/runs/{r.id}/result", json=up, headers=a.headers)


def test_the_view_is_the_articles_table_with_energy_per_transaction(
    client: TestClient, session: Session
) -> None:
    u = create_user(session)
    run_id, res = innodb_run(client, session, u)
    assert res.status_code == 201, res.text
    t = client.get(
        "/api/v1/views/table", params={"view": "innodb-flush", "runs": str(run_id)}, headers=u.headers
    )
    assert t.status_code == 200, t.text
    body = t.json()
    keys = [c["key"] for c in body["columns"]]
    rows = [{k: c["value"] for k, c in zip(keys, row["cells"], strict=True)} for row in body["rows"]]
    assert [(r["flush_log"], r["sync_binlog"]) for r in rows] == [(str(f), str(s)) for f, s in ALL_SETTINGS]
    cells = {(c["innodb_flush_log_at_trx_commit"], c["sync_binlog"]): c for c in DOC["innodb_flush"]["cells"]}
    for (f, s), row in zip(ALL_SETTINGS, rows, strict=True):
        c = cells[(f, s)]
        per = per_transaction(c)
        assert row["run0_tps"] == c["tps"] and row["run0_lat_p99"] == c["latency_ns"]["p99"]
        assert row["run0_rel"] == pytest.approx(c["tps"] / cells[(1, 1)]["tps"])
        assert row["run0_fsyncs"] == pytest.approx(per["fsyncs_per_tx"])
        assert row["run0_device_bytes"] == pytest.approx(per["device_bytes_per_tx"])
        assert row["run0_j"] == pytest.approx(WATTS * c["duration_ns"] / 1e9 / c["transactions"])
    assert body["display_units"]["ns"] == "ms" and body["charts"][0]["x"]["unit"] == "/tx"
    csv = client.get(
        "/api/v1/views/table",
        params={"view": "innodb-flush", "runs": str(run_id), "format": "csv"},
        headers=u.headers,
    )
    assert csv.status_code == 200 and csv.text.splitlines()[0].startswith("innodb_flush_log_at_trx_commit,")
    assert len(csv.text.strip().splitlines()) == 1 + len(ALL_SETTINGS)


def test_a_malformed_matrix_is_a_422_naming_the_field(client: TestClient, session: Session) -> None:
    u = create_user(session)
    bad = json.loads(json.dumps(DOC))
    bad["innodb_flush"]["cells"][0]["sync_binlog"] = 7
    _, res = innodb_run(client, session, u, bad)
    assert res.status_code == 422, res.text
    assert "innodb_flush" in res.text and "sync_binlog" in res.text
