"""IOPS at a latency target (issue 29): the figure from hand-made sweeps (a knee, a search that
missed, the 99.9th percentile, nothing under the target) and the qos view of a run of the preset's
own job file: its curve, its figure with the search's depth from the document, the power over the
load's last seconds and IOPS per watt (backend/views/builders/qos.py)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from backend.models import RunResult
from backend.power import service as power_service
from backend.power.schemas import PowerUpload
from backend.views.builders.qos import (
    QosPoint,
    QosTarget,
    best_under,
    figure,
    latency_target_ns,
    meets,
)
from backend.workload.builtin import BUILTINS
from backend.workload.facts import with_facts
from backend.workload.schemas import stored_spec
from tests.factories import create_agent, create_result, create_run, create_user

MS = 1_000_000


def sweep(*rows: tuple[int, float, float, float]) -> list[QosPoint]:
    return [QosPoint(f"qd{d}", d, iops, p99, p999) for d, iops, p99, p999 in rows]


KNEE = sweep(
    (1, 10_000, 0.15 * MS, 0.3 * MS),
    (4, 38_000, 0.3 * MS, 0.6 * MS),
    (16, 120_000, 0.8 * MS, 1.6 * MS),
    (64, 150_000, 2.5 * MS, 6 * MS),
    (256, 152_000, 9 * MS, 20 * MS),
)


def test_the_highest_iops_under_the_target_is_the_knee() -> None:
    p99 = QosTarget(1 * MS, 99)
    assert best_under(KNEE, p99) == KNEE[2]
    # the engine's search is the figure when it met the target ...
    search = QosPoint("at-target", 24, 131_000, 0.95 * MS, 1.9 * MS, search=True)
    assert figure([*KNEE, search], p99) == search
    # ... and the sweep's best point when it did not (or did not run)
    missed = QosPoint("at-target", 1, 9_000, 1.2 * MS, 1.5 * MS, search=True)
    assert figure([*KNEE, missed], p99) == KNEE[2]
    assert figure(KNEE, p99) == KNEE[2]


def test_the_percentile_picks_the_latency_and_nothing_under_is_none() -> None:
    p999 = QosTarget(1 * MS, 99.9)
    assert best_under(KNEE, p999) == KNEE[1]  # p99.9 of QD16 is 1.6 ms
    assert meets(KNEE[0], QosTarget(1 * MS, 100)) is None  # every I/O: the sweep keeps no maximum
    assert best_under(KNEE, QosTarget(100_000, 99)) is None
    assert QosTarget(500_000, 99.9).label() == "p99.9 ≤ 500 µs"


def test_latency_target_is_microseconds_unless_it_says() -> None:
    assert latency_target_ns("500") == 500_000
    assert latency_target_ns("1ms") == MS
    assert latency_target_ns("2.5ms") == 2_500_000
    with pytest.raises(ValueError):
        latency_target_ns("soon")


def engine_job(j: dict[str, Any], depth: int = 24) -> dict[str, Any]:
    """One job of the engine's document with the figures a QoS run is read by."""
    search = j["name"] == "at-target"
    options: dict[str, Any] = {"iodepth": 256 if search else int(j["name"].removeprefix("qd"))}
    if search:
        options |= {"latency_target_ns": MS, "latency_percentile": 99.0}
    pct = {"99.000000": j["read_clat_p99_ns"], "99.900000": j["read_clat_p999_ns"]}
    return {
        "jobname": j["name"],
        "read": {"iops": j["read_iops"], "total_ios": 1000, "clat_ns": {"percentile": pct}},
        "write": {"iops": 0, "total_ios": 0},
        "iowatt": {"options": options},
        **({"latency_depth": depth} if search else {}),
    }


def qos_run(session: Session, u, *, depth: int = 24, tier: str = "lab"):  # type: ignore[no-untyped-def]
    """A run of qos-randread-4k with the sweep's figures, the search's depth in its document and
    a meter of `tier`: 100 W over the load, 150 W in its last two seconds."""
    spec = with_facts(BUILTINS["qos-randread-4k"][1])
    a = create_agent(session, team=u.team)
    run = create_run(session, agent=a.agent, preset="qos-randread-4k")
    run.workload_spec = stored_spec(spec)
    jobs = [
        {
            "name": p.name,
            "rw": "randread",
            "bs_bytes": 4096,
            "read_iops": p.iops,
            "read_clat_p99_ns": int(p.p99_ns or 0),
            "read_clat_p999_ns": int(p.p999_ns or 0),
        }
        for p in KNEE
    ] + [
        {
            "name": "at-target",
            "rw": "randread",
            "bs_bytes": 4096,
            "read_iops": 131_000.0,
            "read_clat_p99_ns": 950_000,
            "read_clat_p999_ns": 1_900_000,
        }
    ]
    create_result(session, run=run, jobs=jobs)
    # the stored document as the engine writes it: what a review's iops_at_target reads
    stored = session.get(RunResult, run.id)
    assert stored is not None
    stored.engine_result = {"jobs": [engine_job(j) for j in jobs]}
    # create_result's jobs run 5 s each: the search is the last; its reported window 5 s
    t = [k * 10**9 for k in range(0, 61)]
    power_service.ingest(
        session,
        run_id=run.id,
        power=PowerUpload.model_validate(
            {
                "meter": {
                    "name": "m",
                    "driver": "command",
                    "model": "",
                    "tier": tier,
                    "quantity": "power",
                    "accuracy_pct": None,
                    "accuracy_w": 1.0,
                    "accuracy_declared": False,
                    "nominal_interval_s": 1.0,
                },
                "status": "ok",
                "reason": None,
                "t0_utc": datetime(2026, 12, 6, tzinfo=UTC).isoformat(),
                "phases": [{"name": "load", "start_ns": 0, "end_ns": 60 * 10**9}],
                "samples": {"t_ns": t, "value": [150.0 if x >= 55 * 10**9 else 100.0 for x in t]},
                "cleaning": {
                    "dropped_nonfinite": 0,
                    "dropped_negative": 0,
                    "dropped_out_of_order": 0,
                    "dropped_duplicate": 0,
                },
            }
        ),
    )
    session.flush()
    return run


def test_the_qos_view_has_the_figure_the_curve_and_iops_per_watt(
    client: TestClient, session: Session
) -> None:
    u = create_user(session)
    run = qos_run(session, u)
    r = client.get("/api/v1/views/table", params={"view": "qos", "runs": str(run.id)}, headers=u.headers)
    assert r.status_code == 200, r.text
    t = r.json()
    keys = [c["key"] for c in t["columns"]]
    rows = [dict(zip(keys, [c["value"] for c in row["cells"]], strict=True)) for row in t["rows"]]
    head = rows[0]
    assert head["point"] == "At the target (p99 ≤ 1 ms)" and head["qd"] == "QD 24"
    assert head["iops"] == 131_000 and head["meets"] == "yes"
    assert head["power"] == pytest.approx(150.0) and head["iops_per_w"] == pytest.approx(131_000 / 150)
    assert rows[1]["point"] == "Best sweep point under the target" and rows[1]["qd"] == "QD 16"
    assert [row["qd"] for row in rows[2:]] == ["QD 1", "QD 4", "QD 16", "QD 64", "QD 256"]
    assert [row["meets"] for row in rows[2:]] == ["yes", "yes", "yes", "no", "no"]
    chart = t["charts"][0]
    p99 = next(s for s in chart["series"] if s["label"].endswith(" p99"))
    assert [p["x"] for p in p99["points"]] == [p.iops for p in KNEE]
    target = next(s for s in chart["series"] if s["label"].startswith("target"))
    assert {p["y"] for p in target["points"]} == {MS}
    assert t["columns"][keys.index("iops_per_w")]["unit"] == "IO/s/W"


def test_estimated_power_is_labelled_beside_the_figures(client: TestClient, session: Session) -> None:
    """A run measured by an estimate meter (datasheet watts): its power and IOPS per watt carry the
    label, and so does the row's text (the CSV has figures only)."""
    u = create_user(session)
    run = qos_run(session, u, tier="estimate")
    r = client.get("/api/v1/views/table", params={"view": "qos", "runs": str(run.id)}, headers=u.headers)
    assert r.status_code == 200, r.text
    t = r.json()
    keys = [c["key"] for c in t["columns"]]
    head = dict(zip(keys, t["rows"][0]["cells"], strict=True))
    assert head["point"]["value"] == "At the target (p99 ≤ 1 ms), estimated power"
    assert head["power"]["note"] == head["iops_per_w"]["note"] == "estimated (datasheet watts, no meter)"
    assert head["iops_per_w"]["value"] == pytest.approx(131_000 / 150)
    assert all(row["cells"][keys.index("power")]["note"] is None for row in t["rows"][1:])


def test_a_review_takes_the_iops_at_the_target(client: TestClient, session: Session) -> None:
    """A candidate's performance from a QoS run: the figure at its target, so the review's cost per
    IOPS is at the target; a run without a search says so."""
    from tests.backend.test_reviews import make_review

    u = create_user(session)
    run = qos_run(session, u)
    rv = make_review(client, u)
    body = {
        "name": "qos",
        "device": {"model": "test ssd", "capacity_bytes": 4 * 10**12, "unit_price": "262", "media": "ssd"},
        "count": 1,
        "protection": "jbod",
        "performance": {"source": "run", "run_id": str(run.id), "metric": "iops_at_target"},
    }
    r = client.post(f"/api/v1/reviews/{rv['id']}/candidates", json=body, headers=u.headers)
    assert r.status_code == 201, r.text
    c = r.json()
    assert c["performance_metric"] == "iops_at_target" and float(c["performance_value"]) == 131_000
    assert "IOPS at p99 ≤ 1 ms (at-target, QD 24)" in c["performance_reference"]
    assert float(c["cost_per_iops_single"]) == pytest.approx(262 / 131_000, rel=1e-3)
    plain = create_run(session, agent=create_agent(session, team=u.team).agent)
    create_result(
        session, run=plain, jobs=[{"name": "a", "rw": "randread", "bs_bytes": 4096, "read_iops": 5.0}]
    )
    body["performance"] = {"source": "run", "run_id": str(plain.id), "metric": "iops_at_target"}
    c = client.post(f"/api/v1/reviews/{rv['id']}/candidates", json=body, headers=u.headers).json()
    assert c["performance_value"] is None
    assert any(v["flag"] == "no_result" and "latency-target" in v["message"] for v in c["validity"])
