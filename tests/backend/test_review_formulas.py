"""Procurement-review formulas (issue 16): capacity properties, seed 001's cost tables from their
inputs, seed 000's energy per job, the methodology table naming real functions."""

from decimal import ROUND_HALF_UP, Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from backend.review import compute, formulas
from backend.review.formulas import Protection, ProtectionError, check_protection, parse_protection

CAP = st.integers(min_value=1, max_value=30 * 10**12)


def cents(v: Decimal | None) -> Decimal:
    assert v is not None
    return v.quantize(Decimal("0.01"), ROUND_HALF_UP)


def _schemes(n: int) -> list[Protection]:
    out = [Protection("jbod"), Protection("raid0")]
    if n >= 2:
        out.append(Protection("raid1"))
    if n >= 3:
        out.append(Protection("raid5"))
    if n >= 4:
        out.append(Protection("raid6"))
    if n >= 4 and n % 2 == 0:
        out.append(Protection("raid10"))
    return out


@given(cap=CAP, n=st.integers(1, 64), spares=st.integers(0, 4), op=st.decimals(0, "0.5", places=3))
def test_no_scheme_gives_more_usable_than_raw(cap: int, n: int, spares: int, op: Decimal) -> None:
    count = n + spares
    for p in _schemes(n):
        check_protection(p, count, spares)  # formable
        usable = formulas.usable_bytes(p, cap, count, spares, op)
        assert 0 <= usable <= formulas.raw_bytes(cap, count)


@given(cap=CAP, pairs=st.integers(2, 32))
def test_raid10_usable_is_half_of_raw(cap: int, pairs: int) -> None:
    n = 2 * pairs
    p = parse_protection("raid10")
    check_protection(p, n)
    assert formulas.usable_bytes(p, cap, n) * 2 == formulas.raw_bytes(cap, n)


@given(cap=CAP, k=st.integers(1, 16), m=st.integers(1, 6), extra=st.integers(0, 20))
def test_erasure_coding_usable_is_k_over_k_plus_m(cap: int, k: int, m: int, extra: int) -> None:
    n = k + m + extra
    p = parse_protection(f"ec:{k}+{m}")
    check_protection(p, n)
    usable = formulas.usable_bytes(p, cap, n)
    raw = formulas.raw_bytes(cap, n)
    assert usable == raw * k // (k + m)  # exactly k/(k+m), rounded down to a byte
    assert usable <= raw


@given(cap=CAP, copies=st.integers(2, 5), extra=st.integers(0, 10))
def test_replication_usable_is_raw_over_n(cap: int, copies: int, extra: int) -> None:
    n = copies + extra
    p = parse_protection(f"replica:{copies}")
    assert formulas.usable_bytes(p, cap, n) == formulas.raw_bytes(cap, n) // copies


@pytest.mark.parametrize(
    ("protection", "count", "spares", "field"),
    [
        ("raid10", 3, 0, "count"),
        ("raid10", 6, 1, "count"),  # 5 data drives: odd
        ("ec:4+2", 5, 0, "count"),  # k+m larger than the count
        ("raid6", 3, 0, "count"),
        ("raid1", 1, 0, "count"),
        ("replica:3", 2, 0, "count"),
        ("raid5", 3, 3, "hot_spares"),
        ("raid7", 8, 0, "protection"),
        ("ec:0+2", 8, 0, "protection"),
        ("replica:1", 8, 0, "protection"),
    ],
)
def test_protections_a_count_cannot_form(protection: str, count: int, spares: int, field: str) -> None:
    with pytest.raises(ProtectionError) as e:
        check_protection(parse_protection(protection), count, spares)
    assert e.value.field == field


def test_hot_spares_and_over_provisioning_reduce_usable() -> None:
    # 8 × 4 TB in RAID 6 with one hot spare and 10 % kept free: 7 data drives, 5 of them data
    got = formulas.usable_bytes(parse_protection("raid6"), 4 * 10**12, 8, 1, Decimal("0.1"))
    assert got == int(7 * 4 * 10**12 * 5 / 7 * 0.9)
    assert formulas.protection_overhead(32 * 10**12, 16 * 10**12) == Decimal(1)


# Seed 001 (Server StorageIO lab report): drive prices and capacities, the protection, and the
# average file read rates of Tables 3 and 5 in; Tables 4 and 6 out, to the cent.
SEED001 = [
    # name, unit price, GB, drives, protection, Table 3 RPS, Table 5 RPS
    ("ENT 15K R1", "595", 600, 2, "raid1", "580.7", "3415.7"),
    ("ENT 10K R1", "875", 1800, 2, "raid1", "455.5", "2203.4"),
    ("ENT CAP R1", "399", 2000, 2, "raid1", "285.5", "1063.1"),
    ("ENT 10K R10", "875", 1800, 4, "raid10", "690.9", "4590.5"),
]
# Table 4 / Table 6: single-drive cost per RPS, multi-drive cost per RPS, cost per GB, drive cost
TABLE4 = [("1.02", "2.05", "0.99", "1190"), ("1.92", "3.84", "0.49", "1750"), ("1.40", "2.80", "0.20", "798"),
          ("1.27", "5.07", "0.49", "3500")]  # fmt: skip
TABLE6 = [
    ("0.17", "0.35", "0.99"),
    ("0.40", "0.79", "0.49"),
    ("0.38", "0.75", "0.20"),
    ("0.19", "0.76", "0.49"),
]
# the report's cost per usable GB: right for RAID 10 (0.97), the raw figure again for its RAID 1 rows
REPORTED_USABLE = ["0.99", "0.49", "0.20", "0.97"]
CORRECT_USABLE = ["1.98", "0.97", "0.40", "0.97"]


@pytest.mark.parametrize("i", range(4))
def test_seed001_tables_4_and_6_to_the_cent(i: int) -> None:
    name, price, gb, n, prot, rps_big, rps_small = SEED001[i]
    unit = Decimal(price)
    total = formulas.price_total(unit, n)
    assert total == Decimal(TABLE4[i][3])
    usable = formulas.usable_bytes(parse_protection(prot), gb * formulas.GB, n)
    for rps, row in ((rps_big, TABLE4[i]), (rps_small, TABLE6[i])):
        assert cents(formulas.cost_per_perf_single(unit, Decimal(rps))) == Decimal(row[0]), name
        assert cents(formulas.cost_per_perf_set(total, Decimal(rps))) == Decimal(row[1]), name
        assert cents(formulas.cost_per_gb(unit, gb * formulas.GB)) == Decimal(row[2]), name
    assert formulas.protection_overhead(formulas.raw_bytes(gb * formulas.GB, n), usable) == Decimal(
        1
    )  # 100 %
    correct = cents(formulas.cost_per_gb(total, usable))
    assert correct == Decimal(CORRECT_USABLE[i])
    # the report's RAID 1 rows divide by one drive's GB twice over: half the true cost per usable GB
    assert (correct == Decimal(REPORTED_USABLE[i])) == (prot == "raid10")


def test_seed000_energy_per_job_is_runtime_times_power() -> None:
    # Table 3 run times (s) × Table 4 power (W) = Table 5 (J)
    rows = [("15", "264.18", "3962.7"), ("153", "264.63", "40488.39"), ("388", "281.26", "109128.88"),
            ("15", "476.55", "7148.25"), ("34", "484.74", "16481.16"),
            ("74.33", "508.01", "37760.38")]  # fmt: skip
    for runtime, power, table5 in rows:
        assert cents(formulas.energy_per_job_j(Decimal(runtime), Decimal(power))) == Decimal(table5)


def test_annual_energy_uses_8766_hours_and_pue_multiplies_cost_and_carbon() -> None:
    kwh = formulas.annual_energy_kwh(Decimal(10), Decimal(20), Decimal("0.25"))
    assert kwh == Decimal("12.5") * Decimal("8.766")
    facility = formulas.facility_energy_kwh(kwh, Decimal("1.5"))
    assert formulas.energy_cost(facility, Decimal("0.2")) == facility * Decimal("0.2")
    assert formulas.operational_kg(facility, Decimal(400)) == facility * Decimal("0.4")
    assert formulas.replacements(10, Decimal("0.01"), Decimal(5)) == Decimal("0.5")
    assert formulas.tco(Decimal(1000), Decimal(10), Decimal("0.5"), Decimal(100), Decimal(5)) == Decimal(1100)


def test_every_methodology_row_names_a_documented_function() -> None:
    for m in formulas.METHODOLOGY:
        fn = getattr(formulas, m.name)
        assert callable(fn) and fn.__doc__ and m.formula and m.source, m.name


def _cand(name: str, price: str, perf: str, load: str, idle: str) -> compute.Candidate:
    import uuid

    return compute.Candidate(
        id=uuid.uuid4(), name=name, unit_price=Decimal(price), capacity_bytes=10**12, count=1, hot_spares=0,
        over_provisioning=Decimal(0), protection=Protection("jbod"), afr=Decimal(0),
        embodied_kg_per_drive=None,
        performance=Decimal(perf), metric="iops", mb_s=None, idle_w=Decimal(idle), load_w=Decimal(load),
    )  # fmt: skip


def test_sensitivity_finds_where_the_tariff_flips_the_ranking_and_says_no_flip_otherwise() -> None:
    # cheap but power-hungry vs dear but frugal, ranked on TCO alone: the tariff decides
    a = _cand("cheap", "100", "100", "100", "100")
    b = _cand("frugal", "200", "100", "10", "10")
    ctx = compute.Context(Decimal(5), Decimal(1), Decimal("0.01"), Decimal(300), Decimal(1))
    w = {"tco": Decimal(1)}
    assert compute.leader(ctx, [a, b], w) == 0
    rows = {s.parameter: s for s in compute.sensitivity(ctx, [a, b], w)}
    # TCO equal when 100 + 90 W × 8.766 h × 5 y × t = 200 → t = 0.02535 /kWh
    flip = rows["tariff"].flip_at
    assert flip is not None and abs(flip - Decimal(100) / (Decimal("0.09") * 8766 * 5)) < Decimal("0.0002")
    assert rows["tariff"].new_leader == "frugal"
    assert rows["grid_intensity"].flip_at is None and "no flip in range" in rows["grid_intensity"].message


def test_the_user_guide_states_every_formula_of_the_code() -> None:
    from pathlib import Path

    guide = (Path(__file__).resolve().parents[2] / "docs" / "reviews.md").read_text()
    for m in formulas.METHODOLOGY:
        assert f"| `{m.name}` | {m.formula} | {m.source} |" in guide, m.name
