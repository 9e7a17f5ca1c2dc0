"""Power samples in, energy and carbon out (issue 4, server side), with the paper's numbers."""

import csv
import io
import json
import math
import uuid
from datetime import timedelta
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select
from sqlalchemy.orm import Session

from backend.kit.time import utcnow
from backend.models import PowerSample, RunResult, RunStatus
from backend.power import service as power_service
from backend.run import service as run_service
from tests.factories import AgentCtx, UserCtx, create_agent, create_run, create_user, engine_document

NS = 1_000_000_000


def power_doc(
    *,
    idle_w: float = 263.8,
    load_w: float = 264.18,
    idle_s: int = 5,
    load_s: int = 15,
    hz: int = 10,
    meter: dict[str, Any] | None = None,
    extra: tuple[list[int], list[float]] | None = None,
) -> dict[str, Any]:
    t, v = [], []
    total = 2 * idle_s + load_s
    for k in range(total * hz + 1):
        ts = k * NS // hz
        t.append(ts)
        # interval averages: the reading at ts covers the 1/hz before it, so steps align exactly
        v.append(load_w if idle_s * NS < ts <= (idle_s + load_s) * NS else idle_w)
    if extra:
        t += extra[0]
        v += extra[1]
    return {
        "meter": meter
        or {
            "spec": "command:/usr/local/bin/watts",
            "driver": "command",
            "tier": "inband",
            "quantity": "power_avg",
            "nominal_interval_s": 1 / hz,
        },
        "status": "ok",
        "reason": None,
        "t0_utc": "2026-11-21T10:00:00Z",
        "phases": [
            {"name": "idle_before", "start_ns": 0, "end_ns": idle_s * NS},
            {"name": "load", "start_ns": idle_s * NS, "end_ns": (idle_s + load_s) * NS},
            {"name": "idle_after", "start_ns": (idle_s + load_s) * NS, "end_ns": total * NS},
        ],
        "samples": {"t_ns": t, "value": v},
        "cleaning": {"dropped_nonfinite": 0},
    }


def upload(
    client: TestClient,
    session: Session,
    u: UserCtx,
    a: AgentCtx,
    power: dict[str, Any] | None,
    target: str = "/srv/bench",
    environment_id: uuid.UUID | None = None,
) -> tuple[uuid.UUID, Any]:
    run = create_run(session, agent=a.agent, target_path=target, environment_id=environment_id)
    run_service.dispatch(session, run_id=run.id)
    lid = client.post(f"/api/v1/agents/{a.agent.id}/lease?wait_s=0", headers=a.headers).json()["lease"][
        "lease_id"
    ]
    client.post(f"/api/v1/runs/{run.id}/start", json={"lease_id": lid}, headers=a.headers)
    body = {
        "lease_id": lid,
        "upload_id": str(uuid.uuid4()),
        "engine_result": engine_document(ios=1_000_000),
        "engine_exit_code": 0,
        "started_at": "2026-11-21T10:00:00Z",
        "finished_at": "2026-11-21T10:00:25Z",
        "power": power,
    }
    raw = json.dumps(body)  # allows NaN, which a broken meter driver could send
    return run.id, client.put(
        f"/api/v1/runs/{run.id}/result",
        content=raw,
        headers={**a.headers, "Content-Type": "application/json"},
    )


def test_paper_arithmetic_from_stored_samples(client: TestClient, session: Session) -> None:
    u = create_user(session)
    a = create_agent(session, team=u.team)
    doc = power_doc()
    doc["samples"]["value"][7] = 263.80000000000007  # 17 significant digits: exact or not
    run_id, r = upload(client, session, u, a, doc)
    assert r.status_code == 201, r.text
    # every sample stored as sent, bit for bit (COPY's binary format: backend/power/repository.py)
    stored = session.execute(
        select(PowerSample.t_ns, PowerSample.value)
        .where(PowerSample.run_id == run_id)
        .order_by(PowerSample.t_ns)
    ).all()
    assert [tuple(x) for x in stored] == list(
        zip(doc["samples"]["t_ns"], doc["samples"]["value"], strict=True)
    )
    assert len(stored) == 251
    pending = client.get(f"/api/v1/runs/{run_id}", headers=u.headers).json()["energy"]
    assert pending["status"] == "pending" and pending["tier"] == "inband"
    power_service.compute(session, run_id=run_id)  # what the worker's energy.compute_run does
    e = client.get(f"/api/v1/runs/{run_id}", headers=u.headers).json()["energy"]
    assert e["status"] == "ok"
    assert e["total_j"] == pytest.approx(3962.7, abs=0.01)  # 264.18 W x 15 s, the paper's Table 5
    assert e["idle_w"] == pytest.approx(263.8) and e["load_w_mean"] == pytest.approx(264.18)
    assert e["dynamic_j"] == pytest.approx((264.18 - 263.8) * 15, abs=0.01)
    assert e["j_per_gb"] == pytest.approx(3962.7 / (1_000_000 * 4096 / 1e9), rel=1e-6)
    assert e["grid_g_per_kwh"] == 445.0 and "no environment" in e["grid_source"]
    assert e["operational_gco2e"] == pytest.approx(3962.7 / 3.6e6 * 445, rel=1e-6)
    tb = 1_000_000 * 4096 / 1e12  # the engine document moved 1e6 x 4 KiB
    assert e["gco2e_per_tb"] == pytest.approx(3962.7 / 3.6e6 * 445 / tb, rel=1e-6)
    assert e["uncertainty_j"] > 0 and "accuracy_assumed" in e["flags"]
    assert [p["name"] for p in e["phases"]] == ["idle_before", "load", "idle_after"]


def test_bad_samples_are_dropped_and_counted_never_integrated(client: TestClient, session: Session) -> None:
    u = create_user(session)
    a = create_agent(session, team=u.team)
    bad = ([7 * NS, 8 * NS, 9 * NS, 10 * NS], [math.nan, -5.0, 1e6, 1e6])  # NaN, negative, 2 duplicates
    run_id, r = upload(client, session, u, a, power_doc(extra=bad))
    assert r.status_code == 201, r.text
    power_service.compute(session, run_id=run_id)
    e = client.get(f"/api/v1/runs/{run_id}", headers=u.headers).json()["energy"]
    assert e["dropped"]["dropped_nonfinite"] == 1 and e["dropped"]["dropped_negative"] == 1
    assert e["dropped"]["dropped_out_of_order"] + e["dropped"]["dropped_duplicate"] == 2
    assert e["total_j"] == pytest.approx(3962.7, abs=0.01)  # the 1 MW readings did not count


def test_no_meter_data_keeps_the_run_and_says_why(client: TestClient, session: Session) -> None:
    u = create_user(session)
    a = create_agent(session, team=u.team)
    doc = {
        **power_doc(),
        "status": "no_meter_data",
        "reason": "connection refused by 10.0.0.9:8888",
        "samples": {"t_ns": [], "value": []},
    }
    run_id, r = upload(client, session, u, a, doc)
    assert r.status_code == 201, r.text
    run = client.get(f"/api/v1/runs/{run_id}", headers=u.headers).json()
    assert run["status"] == "succeeded"
    assert run["energy"]["status"] == "no_meter_data" and "connection refused" in run["energy"]["reason"]
    assert power_service.compute(session, run_id=run_id) is None


def test_malformed_power_is_422_and_nothing_is_stored(client: TestClient, session: Session) -> None:
    u = create_user(session)
    a = create_agent(session, team=u.team)
    doc = power_doc()
    doc["samples"]["value"].pop()
    run_id, r = upload(client, session, u, a, doc)
    assert r.status_code == 422 and r.json()["detail"][0]["field"] == "power.samples"
    assert client.get(f"/api/v1/runs/{run_id}", headers=u.headers).json()["status"] == RunStatus.running.value
    unknown_tier = power_doc(meter={"spec": "x", "driver": "x", "tier": "guess", "quantity": "power"})
    other = create_agent(session, team=u.team)  # the first agent still holds its running run
    _, r = upload(client, session, u, other, unknown_tier, target="/dev/shm/z")
    assert r.status_code == 422 and r.json()["detail"][0]["field"] == "power.meter.tier"


def test_power_series_is_downsampled_in_the_database(client: TestClient, session: Session) -> None:
    u = create_user(session)
    a = create_agent(session, team=u.team)
    run_id, r = upload(client, session, u, a, power_doc(idle_s=60, load_s=3600, hz=10))  # 37,201 samples
    assert r.status_code == 201
    s = client.get(f"/api/v1/runs/{run_id}/power?points=1000", headers=u.headers).json()
    assert 900 <= len(s["points"]) <= 1000
    assert s["load_start_s"] == 60 and s["tier_label"] == "in-band sensor"
    assert s["points"][0]["t_s"] < 0 < s["points"][-1]["t_s"]  # idle before is before the load start
    mid = s["points"][len(s["points"]) // 2]
    assert mid["w_mean"] == pytest.approx(264.18)
    assert mid["w_min"] == pytest.approx(264.18) and mid["w_max"] == pytest.approx(264.18)


def test_environment_carbon_settings_hourly_series_and_device_embodied(
    client: TestClient, session: Session
) -> None:
    u = create_user(session)
    a = create_agent(session, team=u.team)
    r = client.post(
        "/api/v1/environments",
        headers=u.headers,
        json={"team_id": str(u.team.id), "name": "lab", "kind": "san", "region": "de", "pue": 1.5},
    )
    assert r.status_code == 201, r.text
    env = r.json()
    assert env["region"] == "DE" and env["effective_g_per_kwh"] == 341.0 and "2024" in env["effective_source"]
    bad = client.patch(f"/api/v1/environments/{env['id']}", json={"region": "Atlantis"}, headers=u.headers)
    assert bad.status_code == 422 and bad.json()["detail"][0]["field"] == "region"
    assert (
        client.patch(f"/api/v1/environments/{env['id']}", json={"pue": 0.8}, headers=u.headers).status_code
        == 422
    )
    run_id, _ = upload(client, session, u, a, power_doc(), environment_id=uuid.UUID(env["id"]))
    e = power_service.compute(session, run_id=run_id)
    assert e is not None and e.carbon_method == "annual"
    assert e.operational_gco2e == pytest.approx(3962.7 / 3.6e6 * 1.5 * 341, rel=1e-6)
    csv_bad = "hour_utc,g_per_kwh\n2026-11-21T10:00:00Z,100\nnot-a-date,5\n"
    r = client.put(
        f"/api/v1/environments/{env['id']}/grid-intensity",
        content=csv_bad,
        headers={**u.headers, "Content-Type": "text/csv"},
    )
    assert r.status_code == 422 and r.json()["detail"][0]["field"] == "body.line.3"
    csv_ok = "hour_utc,g_per_kwh\n2026-11-21T09:00:00Z,900\n2026-11-21T10:00:00Z,100\n"
    r = client.put(
        f"/api/v1/environments/{env['id']}/grid-intensity",
        content=csv_ok,
        headers={**u.headers, "Content-Type": "text/csv"},
    )
    assert r.status_code == 200 and r.json()["hours"] == 2
    e = power_service.compute(session, run_id=run_id)
    assert e is not None and e.carbon_method == "hourly"  # the load (10:00:05-10:00:20) is in the 10:00 hour
    assert e.operational_gco2e == pytest.approx(3962.7 / 3.6e6 * 1.5 * 100, rel=1e-3)
    devices = client.get("/api/v1/devices", headers=u.headers).json()["items"]
    vda = next(d for d in devices if d["name"] == "vda")
    # QEMU's virtio disk says rotational=1: it is the hypervisor's disk ("virtual"), not an HDD, and
    # has no embodied default until the team says what is beneath it
    assert vda["media"] == "virtual" and vda["embodied_kg"] is None and vda["embodied_is_default"]
    r = client.patch(f"/api/v1/devices/{vda['id']}", headers=u.headers, json={"media": "hdd"})
    assert r.status_code == 200 and r.json()["embodied_kg"] == 30.0
    r = client.patch(
        f"/api/v1/devices/{vda['id']}", headers=u.headers, json={"media": "ssd", "capacity_bytes": 2 * 10**12}
    )
    assert r.status_code == 200 and r.json()["embodied_kg"] == pytest.approx(110.0)
    e = power_service.compute(session, run_id=run_id)
    assert e is not None and e.embodied_gco2e == pytest.approx(110_000 * 15 / (5 * 365.25 * 86400), rel=1e-6)


def test_compare_shows_the_papers_energy_table(client: TestClient, session: Session) -> None:
    u = create_user(session)
    a = create_agent(session, team=u.team)
    hdd, _ = upload(
        client, session, u, a, power_doc(idle_w=263.8, load_w=264.63, load_s=153), target="/srv/hdd"
    )
    dram, _ = upload(
        client, session, u, a, power_doc(idle_w=475.7, load_w=484.74, load_s=34), target="/dev/shm/d"
    )
    for rid in (hdd, dram):
        power_service.compute(session, run_id=rid)
    c = client.get(f"/api/v1/compare?runs={hdd},{dram}", headers=u.headers).json()
    m = {x["key"]: x["values"] for x in c["energy"]}
    assert m["idle_w"] == pytest.approx([263.8, 475.7])
    assert m["total_j"] == pytest.approx([40488.39, 16481.16], abs=0.01)  # Table 5, Medium
    assert round(m["total_j"][0] / m["total_j"][1], 2) == 2.46


def test_carbon_reference_tables(client: TestClient, session: Session) -> None:
    u = create_user(session)
    grid = client.get("/api/v1/carbon/grid-intensities", headers=u.headers).json()
    assert len(grid) >= 20 and all(g["source"] and g["year"] for g in grid)
    emb = {d["media"]: d for d in client.get("/api/v1/carbon/embodied-defaults", headers=u.headers).json()}
    assert emb["hdd"]["kg_per_drive"] == 30.0 and emb["ssd"]["kg_per_gb"] == 0.055


def test_runs_show_the_meters_name_driver_and_tier_never_its_spec(
    client: TestClient, session: Session
) -> None:
    """ADR 0009: a spec may hold BMC or plug credentials; the server neither stores nor shows it."""
    from backend.models import RunEnergy, RunPower

    u = create_user(session)
    a = create_agent(session, team=u.team)
    meter = {
        "name": "bmc",
        "spec": "ipmi:host=10.0.0.9,user=admin,password=hunter2",  # an older agent still sends it
        "driver": "ipmi",
        "tier": "bmc",
        "quantity": "power",
        "nominal_interval_s": 0.1,
    }
    run_id, r = upload(client, session, u, a, power_doc(meter=meter))
    assert r.status_code == 201, r.text
    power_service.compute(session, run_id=run_id)
    stored = session.get(RunPower, run_id)
    assert stored is not None and "spec" not in stored.meter and stored.meter["name"] == "bmc"
    energy = session.get(RunEnergy, run_id)
    assert energy is not None and energy.summary["source"] == "bmc (ipmi)"
    run = client.get(f"/api/v1/runs/{run_id}", headers=u.headers)
    series = client.get(f"/api/v1/runs/{run_id}/power", headers=u.headers)
    e = run.json()["energy"]
    assert (e["source"], e["meter_name"], e["meter_driver"], e["tier"]) == (
        "bmc (ipmi)",
        "bmc",
        "ipmi",
        "bmc",
    )
    s = series.json()
    assert (s["source"], s["meter_name"], s["meter_driver"], s["tier"]) == (
        "bmc (ipmi)",
        "bmc",
        "ipmi",
        "bmc",
    )
    for text in (run.text, series.text, client.get("/api/v1/runs", headers=u.headers).text):
        assert "hunter2" not in text and "ipmi:" not in text


def test_power_lists_and_numbers_are_bounded() -> None:
    from pydantic import ValidationError

    from backend.power.schemas import MAX_SAMPLES, PowerUpload

    doc = power_doc(idle_s=1, load_s=1, hz=1)
    doc["samples"] = {"t_ns": [0] * (MAX_SAMPLES + 1), "value": [1.0] * (MAX_SAMPLES + 1)}
    with pytest.raises(ValidationError) as exc:
        PowerUpload.model_validate(doc)
    assert {e["loc"][:2] for e in exc.value.errors()} == {("samples", "t_ns"), ("samples", "value")}
    doc = power_doc(idle_s=1, load_s=1, hz=1)
    doc["cleaning"] = {f"k{i}": 0 for i in range(21)}
    with pytest.raises(ValidationError):
        PowerUpload.model_validate(doc)
    doc = power_doc(idle_s=1, load_s=1, hz=1)
    doc["samples"]["t_ns"][0] = 2**63
    with pytest.raises(ValidationError):
        PowerUpload.model_validate(doc)


def test_result_numbers_beyond_bigint_are_422_not_500(client: TestClient, session: Session) -> None:
    u = create_user(session)
    a = create_agent(session, team=u.team)
    doc = engine_document()
    doc["jobs"][0]["read"]["clat_ns"]["percentile"]["99.000000"] = 1e30
    run = create_run(session, agent=a.agent)
    run_service.dispatch(session, run_id=run.id)
    lid = client.post(f"/api/v1/agents/{a.agent.id}/lease?wait_s=0", headers=a.headers).json()["lease"][
        "lease_id"
    ]
    client.post(f"/api/v1/runs/{run.id}/start", json={"lease_id": lid}, headers=a.headers)
    up = {
        "lease_id": lid,
        "upload_id": str(uuid.uuid4()),
        "engine_result": doc,
        "engine_exit_code": 0,
        "started_at": "2026-11-21T10:00:00Z",
        "finished_at": "2026-11-21T10:00:06Z",
    }
    r = client.put(f"/api/v1/runs/{run.id}/result", json=up, headers=a.headers)
    assert r.status_code == 422, r.text
    assert r.json()["detail"][0]["field"].startswith("engine_result.jobs.0.read.clat_ns.percentile")
    doc["jobs"][0]["read"]["clat_ns"]["percentile"]["99.000000"] = 40960
    doc["jobs"][0]["iowatt"]["options"]["bs_bytes"] = 2**70  # beyond a bigint: stored as unknown
    r = client.put(f"/api/v1/runs/{run.id}/result", json={**up, "engine_result": doc}, headers=a.headers)
    assert r.status_code == 201, r.text
    assert client.get(f"/api/v1/runs/{run.id}", headers=u.headers).json()["jobs"][0]["bs_bytes"] is None


def test_energy_missing_long_after_the_upload_is_final_failed_with_a_reason(
    client: TestClient, session: Session
) -> None:
    """`pending` means "still coming" (clients poll); energy not computed within the deadline of
    its upload is `failed` with a reason (clients stop); when the repair computes it, it is `ok`."""
    u = create_user(session)
    a = create_agent(session, team=u.team)
    run_id, r = upload(client, session, u, a, power_doc())
    assert r.status_code == 201, r.text
    e = client.get(f"/api/v1/runs/{run_id}", headers=u.headers).json()["energy"]
    assert (e["status"], e["reason"]) == ("pending", "being computed")
    result = session.get(RunResult, run_id)
    assert result is not None
    result.uploaded_at = utcnow() - power_service.ENERGY_DEADLINE - timedelta(seconds=1)
    session.flush()
    e = client.get(f"/api/v1/runs/{run_id}", headers=u.headers).json()["energy"]
    assert e["status"] == "failed" and "not computed within 15 minutes" in e["reason"]
    assert e["tier"] == "inband" and e["total_j"] is None  # the meter is still shown, no figures
    listed = client.get("/api/v1/runs", headers=u.headers).json()["items"]
    assert next(i for i in listed if i["id"] == str(run_id))["energy"]["status"] == "failed"
    power_service.compute(session, run_id=run_id)  # the repair's task finally ran
    e = client.get(f"/api/v1/runs/{run_id}", headers=u.headers).json()["energy"]
    assert e["status"] == "ok" and e["reason"] is None


def test_a_meter_nobody_knows_is_unknown_not_an_in_band_sensor(client: TestClient, session: Session) -> None:
    """An agent that could not read a meter's spec reports driver "unknown" (older agents with tier
    "inband"): the badge says what is known, "unknown meter", never a sensor class (issue 12)."""
    u = create_user(session)
    a = create_agent(session, team=u.team)
    for tier in ("inband", "unknown"):
        meter = {
            "name": "mystery",
            "driver": "unknown",
            "tier": tier,
            "quantity": "power_avg",
            "nominal_interval_s": 0.1,
        }
        run_id, r = upload(client, session, u, a, power_doc(meter=meter))
        assert r.status_code == 201, r.text
        power_service.compute(session, run_id=run_id)
        e = client.get(f"/api/v1/runs/{run_id}", headers=u.headers).json()["energy"]
        assert (e["tier"], e["tier_label"]) == ("unknown", "unknown meter")
    # a known driver keeps its class
    run_id, r = upload(client, session, u, a, power_doc())
    power_service.compute(session, run_id=run_id)
    e = client.get(f"/api/v1/runs/{run_id}", headers=u.headers).json()["energy"]
    assert (e["tier"], e["tier_label"]) == ("inband", "in-band sensor")


def test_compare_csv_says_which_energy_is_estimated(client: TestClient, session: Session) -> None:
    """The page badges estimated energy; its CSV must too, or a spreadsheet loses the label."""
    u = create_user(session)
    a = create_agent(session, team=u.team)
    estimate = {
        "name": "datasheet",
        "driver": "estimate",
        "tier": "estimate",
        "quantity": "power",
        "accuracy_pct": None,
    }
    measured, _ = upload(client, session, u, a, power_doc(), target="/srv/m")
    guessed, _ = upload(client, session, u, a, power_doc(meter=estimate), target="/srv/e")
    for rid in (measured, guessed):
        power_service.compute(session, run_id=rid)
    r = client.get(f"/api/v1/compare?runs={measured},{guessed}&format=csv", headers=u.headers)
    assert r.status_code == 200
    rows = list(csv.reader(io.StringIO(r.text)))
    head = rows[0]
    m_col = next(i for i, h in enumerate(head) if h.endswith("(baseline) energy basis"))
    e_col = next(i for i, h in enumerate(head) if h.endswith("energy basis") and i != m_col)
    total = next(row for row in rows if row[0] == "(energy)" and row[head.index("unit")] == "J")
    assert (total[m_col], total[e_col]) == ("measured", "estimated")
    job_row = next(row for row in rows[1:] if row[0] != "(energy)")
    assert job_row[e_col] == ""  # I/O figures are not energy: no basis
