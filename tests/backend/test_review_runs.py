"""Review candidates from measured runs (issue 16): performance, power and validity flags are read
from the run domain, never recomputed; an environment supplies tariff, grid intensity and PUE;
a decided review keeps its figures when its run is deleted."""

import uuid
from decimal import Decimal

from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from backend.power import service as power_service
from backend.review import formulas
from tests.backend.test_energy import power_doc, upload
from tests.backend.test_reviews import make_review
from tests.factories import create_agent, create_user


def _measured_run(client: TestClient, session: Session, u: object, a: object) -> uuid.UUID:
    run_id, r = upload(client, session, u, a, power_doc(idle_w=100.0, load_w=150.0))  # type: ignore[arg-type]
    assert r.status_code == 201, r.text
    power_service.compute(session, run_id=run_id)  # what the worker's energy.compute_run does
    return run_id


def _run_candidate(run_id: uuid.UUID, **perf: object) -> dict[str, object]:
    return {
        "name": "measured",
        "device": {"model": "test disk", "capacity_bytes": 4 * 10**12, "unit_price": "200", "media": "hdd"},
        "count": 4,
        "protection": "raid5",
        "performance": {"source": "run", "run_id": str(run_id), **perf},
    }


def test_a_run_gives_performance_power_and_validity_as_the_run_domain_reports_them(
    client: TestClient, session: Session
) -> None:
    u = create_user(session)
    a = create_agent(session, team=u.team)
    run_id = _measured_run(client, session, u, a)
    run = client.get(f"/api/v1/runs/{run_id}", headers=u.headers).json()
    system = client.get(f"/api/v1/runs/{run_id}/system", headers=u.headers).json()
    rv = make_review(client, u, duty_cycle="0.25", pue="1.5")
    r = client.post(f"/api/v1/reviews/{rv['id']}/candidates", json=_run_candidate(run_id), headers=u.headers)
    assert r.status_code == 201, r.text
    c = r.json()
    job = run["jobs"][0]
    iops = job["read"]["iops"] + (job["write"]["iops"] if job["write"] else 0)
    assert Decimal(c["performance_value"]) == Decimal(str(iops)) and c["performance_source"] == "run"
    assert c["run_id"] == str(run_id) and str(run_id) in c["performance_reference"]
    # power: the run's measured idle and mean load, labelled measured (the meter is not an estimate)
    e = run["energy"]
    assert e["status"] == "ok"
    assert c["power_source"] == "measured"
    assert Decimal(c["idle_w"]) == Decimal(str(e["idle_w"])) and Decimal(c["load_w"]) == Decimal(
        str(e["load_w_mean"])
    )
    # the run's validity flags as the run page shows them (this 3 s run is at least a short_run)
    assert "short_run" in [v["flag"] for v in system["validity"]]
    # ... and the review's own note: not a SNIA PTS run on a device that is not a hard disk, so no
    # steady-state figure (issue 29)
    assert [v["flag"] for v in c["validity"]] == [v["flag"] for v in system["validity"]] + ["no_steady_state"]
    # annual energy and its cost from those, as the formulas say (duty 0.25, 8,766 h, PUE 1.5)
    kwh = formulas.annual_energy_kwh(Decimal(c["idle_w"]), Decimal(c["load_w"]), Decimal("0.25"))
    assert abs(Decimal(c["energy_kwh_per_year"]) - kwh) < Decimal("0.001")
    assert Decimal(c["energy_cost_per_year"]) == formulas.money(kwh * Decimal("1.5") * Decimal("0.12"))
    # RAID 5 of 4: three drives of data; embodied carbon from the HDD default, with its source
    assert c["usable_bytes"] == 3 * 4 * 10**12 and Decimal(c["embodied_kg"]) == Decimal("120.000")
    assert "default for hdd" in c["embodied_source"]
    # MB/s instead of IOPS, from the same job
    r = client.post(
        f"/api/v1/reviews/{rv['id']}/candidates",
        json=_run_candidate(run_id, metric="mb_s"),
        headers=u.headers,
    )
    bw = job["read"]["bw_bytes"] + (job["write"]["bw_bytes"] if job["write"] else 0)
    assert Decimal(r.json()["performance_value"]) == Decimal(bw) / 10**6
    assert r.json()["iops_per_w"] is None and r.json()["mb_s_per_w"] is not None


def test_a_run_of_another_team_or_a_comparison_without_it_is_a_422(
    client: TestClient, session: Session
) -> None:
    u = create_user(session)
    other = create_user(session)
    foreign = _measured_run(client, session, other, create_agent(session, team=other.team))
    mine = _measured_run(client, session, u, create_agent(session, team=u.team))
    rv = make_review(client, u)
    r = client.post(f"/api/v1/reviews/{rv['id']}/candidates", json=_run_candidate(foreign), headers=u.headers)
    assert r.status_code == 422 and r.json()["detail"][0]["field"] == "performance.run_id"
    body = _run_candidate(mine)
    body["performance"] = {
        "source": "comparison",
        "run_ids": [str(foreign), str(uuid.uuid4())],
        "run_id": str(mine),
    }
    r = client.post(f"/api/v1/reviews/{rv['id']}/candidates", json=body, headers=u.headers)
    assert r.status_code == 422 and r.json()["detail"][0]["field"] == "performance.run_id"


def test_a_decided_review_keeps_its_figures_when_the_run_is_deleted(
    client: TestClient, session: Session
) -> None:
    u = create_user(session)
    a = create_agent(session, team=u.team)
    run_id = _measured_run(client, session, u, a)
    rv = make_review(client, u)
    c = client.post(
        f"/api/v1/reviews/{rv['id']}/candidates", json=_run_candidate(run_id), headers=u.headers
    ).json()
    d = client.post(
        f"/api/v1/reviews/{rv['id']}/decision",
        json={"candidate_id": c["id"], "reason": "measured"},
        headers=u.headers,
    )
    assert d.status_code == 200, d.text
    assert client.delete(f"/api/v1/runs/{run_id}", headers=u.headers).status_code == 204
    frozen = client.get(f"/api/v1/reviews/{rv['id']}", headers=u.headers).json()
    assert frozen["candidates"][0]["performance_value"] == c["performance_value"]
    assert frozen["candidates"][0]["tco"] == c["tco"] and frozen["decision"]["candidate_name"] == "measured"
    # a new version reads the run live: it is gone, and says so
    v2 = client.post(f"/api/v1/reviews/{rv['id']}/versions", headers=u.headers).json()
    assert v2["candidates"][0]["performance_value"] is None
    assert v2["candidates"][0]["validity"][0]["flag"] == "run_missing"


def test_the_environment_supplies_tariff_grid_and_pue(client: TestClient, session: Session) -> None:
    u = create_user(session)
    env = client.post(
        "/api/v1/environments",
        json={"team_id": str(u.team.id), "name": "dc-1", "kind": "local", "grid_g_per_kwh": 250,
              "grid_source": "utility 2025 report", "pue": 1.4, "electricity_price_per_kwh": 0.18,
              "currency": "EUR"},
        headers=u.headers,
    ).json()  # fmt: skip
    body = {"team_id": str(u.team.id), "name": "r", "currency": "EUR", "horizon_years": 5,
            "environment_id": env["id"]}  # fmt: skip
    r = client.post("/api/v1/reviews", json=body, headers=u.headers)
    assert r.status_code == 201, r.text
    rv = r.json()
    assert Decimal(rv["tariff_per_kwh"]) == Decimal("0.18") and "dc-1" in rv["tariff_source"]
    assert Decimal(rv["grid_g_per_kwh"]) == 250 and "utility 2025 report" in rv["grid_source"]
    assert Decimal(rv["pue"]) == Decimal("1.4") and rv["environment_id"] == env["id"]
    # overridden where given
    r = client.post(
        "/api/v1/reviews", json={**body, "grid_g_per_kwh": "50", "grid_source": "PPA"}, headers=u.headers
    )
    assert Decimal(r.json()["grid_g_per_kwh"]) == 50 and r.json()["grid_source"] == "PPA"
    # the environment's price is in another currency: say so rather than mix them
    r = client.post("/api/v1/reviews", json={**body, "currency": "USD"}, headers=u.headers)
    assert r.status_code == 422 and r.json()["detail"][0]["field"] == "tariff_per_kwh"
    assert "EUR" in r.json()["message"]


def test_a_comparisons_run_and_an_estimated_meter_are_labelled_so(
    client: TestClient, session: Session
) -> None:
    u = create_user(session)
    a = create_agent(session, team=u.team)
    measured = _measured_run(client, session, u, a)
    meter = {"spec": "estimate:datasheet", "driver": "estimate", "tier": "estimate", "quantity": "power_avg",
             "nominal_interval_s": 0.1}  # fmt: skip
    run_id, r = upload(client, session, u, a, power_doc(idle_w=5.0, load_w=9.0, meter=meter))
    assert r.status_code == 201, r.text
    power_service.compute(session, run_id=run_id)
    rv = make_review(client, u)
    body = _run_candidate(run_id)
    body["performance"] = {
        "source": "comparison",
        "run_ids": [str(measured), str(run_id)],
        "run_id": str(run_id),
    }
    r = client.post(f"/api/v1/reviews/{rv['id']}/candidates", json=body, headers=u.headers)
    assert r.status_code == 201, r.text
    c = r.json()
    assert c["performance_source"] == "comparison" and c["run_id"] == str(run_id)
    assert set(c["run_ids"]) == {str(measured), str(run_id)}
    e = client.get(f"/api/v1/runs/{run_id}", headers=u.headers).json()["energy"]
    assert e["estimated"] is True and c["power_source"] == "estimated"
    assert Decimal(c["load_w"]) == Decimal(str(e["load_w_mean"])) and abs(e["load_w_mean"] - 9.0) < 1e-6
