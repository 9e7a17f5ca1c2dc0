"""Procurement reviews over the API (issue 16): seed 001 and seed 000 as reviews, every 422 of the
issue naming its field, the decision's freeze (409 offering a new version), roles, CSV, audit."""

import csv
import io
import uuid
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select
from sqlalchemy.orm import Session

from backend.models import AuditEvent, Role
from tests.factories import UserCtx, create_user

GB = 10**9


def cents(v: str | None) -> Decimal:
    assert v is not None
    return Decimal(v).quantize(Decimal("0.01"), ROUND_HALF_UP)


def make_review(client: TestClient, u: UserCtx, **over: Any) -> dict[str, Any]:
    body = {
        "team_id": str(u.team.id),
        "name": "Content server HDDs",
        "question": "Which HDD for the content platform?",
        "currency": "USD",
        "horizon_years": "5",
        "duty_cycle": "0.5",
        "tariff_per_kwh": "0.12",
        "grid_g_per_kwh": "400",
        **over,
    }
    r = client.post("/api/v1/reviews", json=body, headers=u.headers)
    assert r.status_code == 201, r.text
    made: dict[str, Any] = r.json()
    return made


def candidate_body(
    name: str, price: str, gb: int, count: int, protection: str, rps: str, **over: Any
) -> dict[str, Any]:
    return {
        "name": name,
        "device": {"model": name.rsplit(" ", 1)[0], "capacity_bytes": gb * GB, "unit_price": price},
        "count": count,
        "protection": protection,
        "performance": {
            "source": "published",
            "metric": "rps",
            "value": rps,
            "reference": "seed 001 Table 3",
        },
        **over,
    }


# Seed 001's inputs (Table 3's file read rates as published figures) and the report's own Table 4
KEYS = (
    "cost_per_iops_single", "cost_per_iops_set", "cost_per_gb_raw", "cost_per_gb_usable", "price_total",
    "cost_per_gb_usable_per_iops",
)  # fmt: skip
SEED001 = [
    (
        "ENT 15K R1",
        "595",
        600,
        2,
        "raid1",
        "580.7",
        dict(zip(KEYS, ("1.02", "2.05", "0.99", "0.99", "1190", "2.1"), strict=True)),
    ),
    (
        "ENT 10K R1",
        "875",
        1800,
        2,
        "raid1",
        "455.5",
        dict(zip(KEYS, ("1.92", "3.84", "0.49", "0.49", "1750", "3.8"), strict=True)),
    ),
    (
        "ENT CAP R1",
        "399",
        2000,
        2,
        "raid1",
        "285.5",
        dict(zip(KEYS, ("1.40", "2.80", "0.20", "0.20", "798", "2.8"), strict=True)),
    ),
    (
        "ENT 10K R10",
        "875",
        1800,
        4,
        "raid10",
        "690.9",
        dict(zip(KEYS, ("1.27", "5.07", "0.49", "0.97", "3500", "5.1"), strict=True)),
    ),
]


# 2 drives' price over one drive's GB for a mirror; RAID 10's usable is half of four drives
CORRECT_USABLE = {"ENT 15K R1": Decimal("1.98"), "ENT 10K R1": Decimal("0.97"), "ENT CAP R1": Decimal("0.40")}


def seed001_review(client: TestClient, u: UserCtx) -> dict[str, Any]:
    rv = make_review(client, u, name="Seed 001 big files", weights={"cost_per_iops_set": "1"})
    for name, price, gb, n, prot, rps, reported in SEED001:
        r = client.post(
            f"/api/v1/reviews/{rv['id']}/candidates",
            json=candidate_body(name, price, gb, n, prot, rps, reported=reported),
            headers=u.headers,
        )
        assert r.status_code == 201, r.text
    got = client.get(f"/api/v1/reviews/{rv['id']}", headers=u.headers)
    assert got.status_code == 200, got.text
    read: dict[str, Any] = got.json()
    return read


def test_seed001_table4_as_a_review_to_the_cent_with_the_raid1_usable_gb_flagged(
    client: TestClient, session: Session
) -> None:
    u = create_user(session)
    rv = seed001_review(client, u)
    by = {c["name"]: c for c in rv["candidates"]}
    for name, _, gb, n, prot, _, rep in SEED001:
        c = by[name]
        assert cents(c["cost_per_iops_single"]) == Decimal(rep["cost_per_iops_single"]), name
        assert cents(c["cost_per_iops_set"]) == Decimal(rep["cost_per_iops_set"]), name
        assert cents(c["cost_per_gb_raw"]) == Decimal(rep["cost_per_gb_raw"]), name
        assert Decimal(c["price_total"]) == Decimal(rep["price_total"])
        assert Decimal(c["protection_overhead"]) == 1  # 100 %
        assert c["raw_bytes"] == n * gb * GB and c["usable_bytes"] == n * gb * GB // 2
        assert c["performance_source"] == "published" and c["performance_reference"] == "seed 001 Table 3"
        flagged = {d["field"]: d for d in c["discrepancies"]}
        # its "cost per usable GB per RPS" column is the set cost per RPS again (all four rows)
        per = flagged.pop("cost_per_gb_usable_per_iops")
        assert (
            "set cost per IOPS/RPS" in per["message"]
            and per["reported"] == rep["cost_per_gb_usable_per_iops"]
        )
        usable_gb = Decimal(n * gb) / 2
        exact = (
            Decimal(rep["price_total"]) / usable_gb / Decimal(SEED001[[x[0] for x in SEED001].index(name)][5])
        )
        assert Decimal(per["computed"]) == exact.quantize(Decimal("0.00000001"), ROUND_HALF_UP)
        assert c["cost_per_gb_usable_per_iops"] == per["computed"]
        if prot == "raid1":
            # the report's cost per usable GB ignores the mirror: ours is twice it, and it says why
            assert set(flagged) == {"cost_per_gb_usable"}, flagged
            d = flagged["cost_per_gb_usable"]
            assert cents(d["computed"]) == CORRECT_USABLE[name] and d["reported"] == rep["cost_per_gb_usable"]
            assert "ignores the protection" in d["message"]
        else:
            assert flagged == {}  # RAID 10's other figures all agree with the report
            assert cents(c["cost_per_gb_usable"]) == Decimal("0.97")
    # money is a decimal string on the wire, never a float
    assert isinstance(by["ENT 15K R1"]["price_total"], str) and isinstance(by["ENT 15K R1"]["tco"], str)
    assert rv["gb_bytes"] == GB and rv["hours_per_year"] == 8766
    # ranked on set cost per RPS alone: 15K R1 ($2.05) first, 10K R10 ($5.07) last
    assert [x["name"] for x in rv["ranking"]] == ["ENT 15K R1", "ENT CAP R1", "ENT 10K R1", "ENT 10K R10"]
    assert rv["leader"] == "ENT 15K R1"
    price = next(s for s in rv["sensitivity"] if s["parameter"] == "price")
    # 15K R1 stays cheapest per RPS until its price reaches CAP R1's $2.795/RPS: × 1.364
    assert price["new_leader"] == "ENT CAP R1"
    assert abs(
        Decimal(price["flip_at"]) - (Decimal(798) / Decimal("285.5")) / (Decimal(1190) / Decimal("580.7"))
    ) < Decimal("0.001")
    assert any("no flip in range" in s["message"] for s in rv["sensitivity"])  # tariff: no power given

    # Table 6: the small-file read rates of Table 5 into the same candidates (PATCH), to the cent
    table6 = {"ENT 15K R1": ("3415.7", "0.17", "0.35"), "ENT 10K R1": ("2203.4", "0.40", "0.79"),
              "ENT CAP R1": ("1063.1", "0.38", "0.75"),
              "ENT 10K R10": ("4590.5", "0.19", "0.76")}  # fmt: skip
    for c in rv["candidates"]:
        rps, single, multi = table6[c["name"]]
        perf = {"source": "published", "metric": "rps", "value": rps, "reference": "seed 001 Table 5"}
        r = client.patch(
            f"/api/v1/reviews/{rv['id']}/candidates/{c['id']}",
            json={
                "performance": perf,
                "reported": {"cost_per_iops_single": single, "cost_per_iops_set": multi},
            },
            headers=u.headers,
        )
        assert r.status_code == 200, r.text
        got = r.json()
        assert cents(got["cost_per_iops_single"]) == Decimal(single), c["name"]
        assert cents(got["cost_per_iops_set"]) == Decimal(multi), c["name"]
        assert got["discrepancies"] == [] and got["performance_reference"] == "seed 001 Table 5"


def test_seed000_as_a_review_energy_per_job_and_the_crossover(client: TestClient, session: Session) -> None:
    u = create_user(session)
    rv = make_review(client, u, name="Seed 000 PostMark", currency="KRW", tariff_per_kwh="120")
    levels = {"HDD": [("Low", "15", "264.18"), ("Medium", "153", "264.63"), ("High", "388", "281.26")],
              "DRAM-SSD": [("Low", "15", "476.55"), ("Medium", "34", "484.74"),
                           ("High", "74.33", "508.01")]}  # fmt: skip
    idle = {"HDD": "263.8", "DRAM-SSD": "475.7"}
    for name, pts in levels.items():
        body = candidate_body(name, "1000000", 1000, 1, "jbod", "100", power=None)
        body["performance"] = {
            "source": "published", "metric": "iops", "value": "1",
            "reference": "seed 000 Table 3 (run time per job)",
        }  # fmt: skip
        body["power"] = {
            "idle_w": idle[name],
            "load_w": pts[-1][2],
            "per": "set",
            "reference": "seed 000 Table 4",
        }
        body["job_points"] = [{"label": lab, "runtime_s": rt, "power_w": w} for lab, rt, w in pts]
        r = client.post(f"/api/v1/reviews/{rv['id']}/candidates", json=body, headers=u.headers)
        assert r.status_code == 201, r.text
    got = client.get(f"/api/v1/reviews/{rv['id']}", headers=u.headers).json()
    table5 = {"HDD": ["3962.7", "40488.39", "109128.88"], "DRAM-SSD": ["7148.25", "16481.16", "37760.38"]}
    for c in got["candidates"]:
        assert [cents(j["energy_j"]) for j in c["job_energy"]] == [Decimal(x) for x in table5[c["name"]]]
        assert c["power_source"] == "published"
    jc = got["job_crossover"]
    assert jc["labels"] == ["Low", "Medium", "High"]
    assert jc["winners"] == ["HDD", "DRAM-SSD", "DRAM-SSD"] and jc["crossover"] == "Medium"
    assert "from Medium on DRAM-SSD" in jc["message"]
    # KRW has no minor unit: totals are whole won
    assert Decimal(got["candidates"][0]["tco"]) == Decimal(got["candidates"][0]["tco"]).to_integral_value()


@pytest.mark.parametrize(
    ("where", "patch", "field"),
    [
        ("review", {"currency": "XYZ"}, "currency"),
        ("review", {"horizon_years": "0"}, "horizon_years"),
        ("review", {"duty_cycle": "1.5"}, "duty_cycle"),
        ("review", {"pue": "0.9"}, "pue"),
        ("review", {"tariff_per_kwh": "-0.1"}, "tariff_per_kwh"),
        ("review", {"tariff_per_kwh": None}, "tariff_per_kwh"),  # no tariff and no environment
        ("review", {"weights": {"tco": "0"}}, "weights"),
        ("review", {"weights": {"luck": "1"}}, "weights"),
        ("review", {"horizon_years": "NaN"}, "horizon_years"),
        ("candidate", {"device": {"model": "x", "capacity_bytes": GB, "unit_price": "-5"}},
         "device.unit_price"),
        ("candidate", {"protection": "raid10", "count": 3}, "count"),
        ("candidate", {"protection": "ec:4+2", "count": 5}, "count"),
        ("candidate", {"protection": "raid9"}, "protection"),
        ("candidate", {"protection": "raid5", "count": 4, "hot_spares": 4}, "hot_spares"),
        ("candidate", {"count": 0}, "count"),
        ("candidate", {"performance": {"source": "published", "metric": "rps", "value": "10"}},
         "performance.published.reference"),
        ("candidate", {"performance": {"source": "run", "run_id": str(uuid.uuid4())}}, "performance.run_id"),
        ("candidate", {"reported": {"nonsense": "1"}}, "reported.nonsense"),
        ("candidate", {"power": {"idle_w": "-1", "load_w": "5", "per": "drive", "reference": "x"}},
         "power.idle_w"),
    ],
)  # fmt: skip
def test_bad_input_is_a_422_naming_the_field(
    client: TestClient, session: Session, where: str, patch: dict[str, Any], field: str
) -> None:
    u = create_user(session)
    if where == "review":
        body = {"team_id": str(u.team.id), "name": "r", "currency": "EUR", "horizon_years": "5",
                "tariff_per_kwh": "0.2", **patch}  # fmt: skip
        body = {k: v for k, v in body.items() if v is not None}
        r = client.post("/api/v1/reviews", json=body, headers=u.headers)
    else:
        rv = make_review(client, u)
        body = {**candidate_body("ENT 15K R1", "595", 600, 2, "raid1", "580.7"), **patch}
        r = client.post(f"/api/v1/reviews/{rv['id']}/candidates", json=body, headers=u.headers)
    assert r.status_code == 422, r.text
    fields = [d["field"] for d in r.json()["detail"]]
    assert any(f == field or f.startswith(field) for f in fields), fields


def test_a_decision_freezes_the_review_and_a_new_version_reopens_it(
    client: TestClient, session: Session
) -> None:
    admin = create_user(session)
    member = create_user(session, role=Role.member, team=admin.team)
    viewer = create_user(session, role=Role.viewer, team=admin.team)
    rv = seed001_review(client, member)
    rid, cid = rv["id"], rv["candidates"][0]["id"]
    decide = {"candidate_id": cid, "reason": "lowest cost per RPS; capacity is enough"}
    # members edit but do not decide; viewers only read
    assert (
        client.post(f"/api/v1/reviews/{rid}/decision", json=decide, headers=member.headers).status_code == 403
    )
    assert client.get(f"/api/v1/reviews/{rid}", headers=viewer.headers).status_code == 200
    r = client.post(f"/api/v1/reviews/{rid}/candidates", json=candidate_body("X 1", "1", 1, 1, "jbod", "1"),
                    headers=viewer.headers)  # fmt: skip
    assert r.status_code == 403
    r = client.post(f"/api/v1/reviews/{rid}/decision", json=decide, headers=admin.headers)
    assert r.status_code == 200, r.text
    d = r.json()["decision"]
    assert (
        d["candidate_id"] == cid and d["decided_by"] == str(admin.user.id) and d["reason"] == decide["reason"]
    )
    # frozen: every edit is a 409 that names the new-version route
    edits = [
        client.patch(f"/api/v1/reviews/{rid}", json={"name": "changed"}, headers=member.headers),
        client.post(f"/api/v1/reviews/{rid}/candidates", json=candidate_body("X 1", "1", 1, 1, "jbod", "1"),
                    headers=member.headers),
        client.patch(f"/api/v1/reviews/{rid}/candidates/{cid}", json={"count": 4}, headers=member.headers),
        client.delete(f"/api/v1/reviews/{rid}/candidates/{cid}", headers=member.headers),
        client.post(f"/api/v1/reviews/{rid}/decision", json=decide, headers=admin.headers),
    ]  # fmt: skip
    for e in edits:
        assert e.status_code == 409, e.text
        assert e.json()["error"] == "review_decided"
        assert e.json()["detail"]["new_version"] == f"/api/v1/reviews/{rid}/versions"
    # the frozen one stays readable, and discussing it is not editing it
    frozen = client.get(f"/api/v1/reviews/{rid}", headers=viewer.headers).json()
    assert frozen["decision"]["candidate_name"] == "ENT 15K R1" and len(frozen["candidates"]) == 4
    c = client.post(f"/api/v1/reviews/{rid}/comments", json={"body": "agreed"}, headers=member.headers)
    assert c.status_code == 201 and c.json()["author_name"] == "Test User"
    said = client.get(f"/api/v1/reviews/{rid}/comments", headers=viewer.headers).json()["items"]
    assert [x["body"] for x in said] == ["agreed"]
    assert (
        client.post(f"/api/v1/reviews/{rid}/comments", json={"body": "x"}, headers=viewer.headers).status_code
        == 403
    )
    # a new version: same candidates, undecided, editable
    nv = client.post(f"/api/v1/reviews/{rid}/versions", headers=member.headers)
    assert nv.status_code == 201, nv.text
    v2 = nv.json()
    assert v2["version"] == 2 and v2["parent_id"] == rid and v2["decision"] is None
    assert [c["name"] for c in v2["candidates"]] == [c["name"] for c in rv["candidates"]]
    r = client.patch(f"/api/v1/reviews/{v2['id']}", json={"name": "v2"}, headers=member.headers)
    assert r.status_code == 200 and r.json()["name"] == "v2"
    listed = client.get("/api/v1/reviews", headers=viewer.headers).json()
    assert {i["id"] for i in listed["items"]} == {rid, v2["id"]} and listed["total"] == 2
    actions = set(session.scalars(select(AuditEvent.action).where(AuditEvent.team_id == admin.team.id)))
    assert {"review.created", "review.decided", "review.versioned"} <= actions


def test_strangers_cannot_see_a_review(client: TestClient, session: Session) -> None:
    u = create_user(session)
    stranger = create_user(session)
    rv = make_review(client, u)
    assert client.get(f"/api/v1/reviews/{rv['id']}", headers=stranger.headers).status_code == 404
    assert client.get("/api/v1/reviews", headers=stranger.headers).json()["total"] == 0
    r = client.post("/api/v1/reviews", json={"team_id": str(u.team.id), "name": "x", "currency": "EUR",
                    "horizon_years": 1, "tariff_per_kwh": 1}, headers=stranger.headers)  # fmt: skip
    assert r.status_code == 403


def test_csv_has_one_row_per_candidate_with_the_issues_columns(client: TestClient, session: Session) -> None:
    u = create_user(session)
    rv = seed001_review(client, u)
    r = client.get(f"/api/v1/reviews/{rv['id']}", params={"format": "csv"}, headers=u.headers)
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(r.text)))
    assert len(rows) == 4
    for col in ("candidate", "drives", "protection", "raw_bytes", "usable_bytes", "price_total",
                "cost_per_iops_single", "cost_per_iops_set", "cost_per_gb_raw", "cost_per_gb_usable",
                "protection_overhead", "energy_kwh_per_year", "tco", "co2e_kg_lifetime"):  # fmt: skip
        assert col in rows[0], col
    first = rows[0]
    assert first["candidate"] == "ENT 15K R1" and first["drives"] == "2" and first["protection"] == "raid1"
    assert first["raw_bytes"] == str(1200 * GB) and first["usable_bytes"] == str(600 * GB)
    assert cents(first["cost_per_iops_set"]) == Decimal("2.05") and first["gb_bytes"] == str(GB)
    assert first["currency"] == "USD" and first["rank"] == "1"


def test_extreme_inputs_are_computed_not_a_500_and_the_candidate_cap_is_a_409(
    client: TestClient, session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    u = create_user(session)
    rv = make_review(client, u, horizon_years="50", tariff_per_kwh="1000", grid_g_per_kwh="5000")
    big = candidate_body("x", "1000000000000", 1, 100_000, "replica:5", "0.000001")
    big["device"] |= {"capacity_bytes": 1, "afr": "1", "embodied_kg": "100000"}
    big["power"] = {"idle_w": "10000000", "load_w": "10000000", "per": "drive", "reference": "x"}
    big["job_points"] = [{"label": "a", "runtime_s": "1000000000", "power_w": "10000000"}]
    tiny = candidate_body("y", "0.0001", 10**9, 1, "jbod", "1000000000000", over_provisioning="0.9")
    for body in (big, tiny):
        r = client.post(f"/api/v1/reviews/{rv['id']}/candidates", json=body, headers=u.headers)
        assert r.status_code == 201, r.text
    got = client.get(f"/api/v1/reviews/{rv['id']}", headers=u.headers)
    assert got.status_code == 200, got.text
    x = got.json()["candidates"][0]
    assert Decimal(x["cost_per_iops_single"]) == Decimal(10**18)  # $10^12 over 10^-6 IOPS, exactly
    assert (
        client.get(f"/api/v1/reviews/{rv['id']}", params={"format": "csv"}, headers=u.headers).status_code
        == 200
    )
    # values finer than the columns keep are stored rounded, never refused by the database
    body = {"team_id": str(u.team.id), "name": "r", "currency": "EUR", "horizon_years": "0.1000001",
            "tariff_per_kwh": "1e-900", "pue": "4.99999999", "duty_cycle": "0.999999999"}  # fmt: skip
    assert client.post("/api/v1/reviews", json=body, headers=u.headers).status_code == 201
    from backend.review import service

    monkeypatch.setattr(service, "MAX_CANDIDATES", 2)
    r = client.post(f"/api/v1/reviews/{rv['id']}/candidates", json=tiny, headers=u.headers)
    assert r.status_code == 409 and r.json()["error"] == "too_many_candidates"


def test_a_team_goes_with_its_reviews_and_a_deleted_author_leaves_them(
    client: TestClient, session: Session
) -> None:
    from backend.models.review import Review, ReviewCandidate, ReviewComment

    admin = create_user(session)
    member = create_user(session, role=Role.member, team=admin.team)
    rv = seed001_review(client, member)
    client.post(f"/api/v1/reviews/{rv['id']}/comments", json={"body": "ok"}, headers=member.headers)
    r = client.request(
        "DELETE", "/api/v1/auth/me", json={"password": "correct horse"}, headers=member.headers
    )
    assert r.status_code == 204, r.text
    kept = client.get(f"/api/v1/reviews/{rv['id']}", headers=admin.headers).json()
    assert kept["created_by"] is None and len(kept["candidates"]) == 4
    comments = client.get(f"/api/v1/reviews/{rv['id']}/comments", headers=admin.headers).json()["items"]
    assert [(c["author_name"], c["body"]) for c in comments] == [("deleted user", "ok")]
    r = client.request(
        "DELETE",
        f"/api/v1/teams/{admin.team.id}",
        json={"confirm_name": admin.team.name},
        headers=admin.headers,
    )
    assert r.status_code == 204, r.text
    rid = uuid.UUID(rv["id"])
    assert session.scalar(select(Review.id).where(Review.id == rid)) is None
    assert session.scalar(select(ReviewCandidate.id).where(ReviewCandidate.review_id == rid)) is None
    assert session.scalar(select(ReviewComment.id).where(ReviewComment.review_id == rid)) is None


@pytest.mark.parametrize(
    ("typed", "shown"), [("250", "250"), ("250.00", "250"), ("1200", "1200"), ("0.50", "0.5")]
)
def test_a_price_reads_as_a_plain_decimal_never_in_exponent_form(
    client: TestClient, session: Session, typed: str, shown: str
) -> None:
    u = create_user(session)
    rv = make_review(client, u)
    r = client.post(
        f"/api/v1/reviews/{rv['id']}/candidates",
        json=candidate_body("HDD 2TB", typed, 2000, 2, "raid1", "100"),
        headers=u.headers,
    )
    assert r.status_code == 201, r.text
    got = client.get(f"/api/v1/reviews/{rv['id']}", headers=u.headers).json()["candidates"][0]
    assert got["unit_price"] == shown  # Decimal("250").normalize() is 2.5E+2: the wire said "2.5E+2"


def test_the_context_reads_as_typed_not_as_the_columns_scale(client: TestClient, session: Session) -> None:
    u = create_user(session)
    rv = make_review(client, u, tariff_per_kwh="0.18", duty_cycle="0.40", pue="1.2")
    got = client.get(f"/api/v1/reviews/{rv['id']}", headers=u.headers).json()
    # NUMERIC(…, 6) columns read back as 0.180000: the page printed "0.180000 USD/kWh"
    assert (got["tariff_per_kwh"], got["duty_cycle"], got["pue"], got["grid_g_per_kwh"]) == (
        "0.18",
        "0.4",
        "1.2",
        "400",
    )
    assert got["horizon_years"] == "5"
