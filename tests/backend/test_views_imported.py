"""An imported CrystalDiskMark (5-9) or KDiskMark text result in the CrystalDiskMark views (issue 26;
docs/views.md § Imported results): the import catalogue says the format stands for the
`crystaldiskmark` preset; each imported test is the preset's test of the same shape, named by the
preset's definition; what the file lacks is absent (None: the page's "—"), never 0 nor derived.

The mapping is checked on every sample of tests/imports (the document the import stores, built by
the import service from the parsed file), the API on one imported and one measured run."""

from __future__ import annotations

import uuid
from decimal import Decimal
from types import SimpleNamespace as NS
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from backend.imports import catalog
from backend.imports.formats import registry
from backend.imports.service import engine_document
from backend.views.builders.crystaldiskmark import _imported_tests, _preset_tests
from backend.workload.builtin import BUILTINS
from tests.backend.test_views import cells_by, real_run, rows_by, view
from tests.factories import create_user
from tests.imports.other_tools import sample

PRESET_TESTS = ["SEQ1M_Q8T1", "SEQ1M_Q1T1", "RND4K_Q32T1", "RND4K_Q32T16", "RND4K_Q1T1"]


def mbs(text: str) -> float:
    return float(Decimal(text) * 10**6)


def imported(name: str, preset: str = "crystaldiskmark") -> Any:
    """The document the import stores for a sample, as the views load it (Loaded's fields used)."""
    fmt = "kdiskmark" if name.startswith("kdm") else "crystaldiskmark"
    parsed = registry.parse(name, sample("crystaldiskmark", name), fmt)
    doc = engine_document(parsed, parsed.runs[0], {"file_name": name})
    return NS(imported=doc, info=NS(preset=catalog.preset_of(fmt)))


def mapped(name: str, *others: Any) -> dict[str, dict[str, Any]]:
    run = imported(name)
    shapes, order = _preset_tests([*others, run])
    return _imported_tests(run, shapes, order)


def test_the_catalogue_names_real_formats_and_presets() -> None:
    assert set(catalog.STANDS_FOR) <= set(registry.names())
    assert set(catalog.STANDS_FOR.values()) <= set(BUILTINS)
    assert catalog.preset_of("kdiskmark") == catalog.preset_of("crystaldiskmark") == "crystaldiskmark"
    assert catalog.preset_of("fio-json") is None


def test_cdm8_default_maps_to_the_presets_rows_with_every_figure() -> None:
    t = mapped("cdm8_default.txt")
    # the preset's own names and order (RND4K Q32T16 is not in CDM 8's default profile)
    assert list(t) == [x for x in PRESET_TESTS if x != "RND4K_Q32T16"]
    for sides in t.values():
        assert set(sides) == {"read", "write"}
        for s in sides.values():
            assert s.best_bw and s.best_iops and s.lat_ns  # all printed by CDM 8
            assert (s.median_bw, s.spread_pct, s.median_iops, s.passes) == (None, None, None, None)
    text = sample("crystaldiskmark", "cdm8_default.txt").decode()
    line = next(x for x in text.splitlines() if "SEQ    1MiB (Q=  8" in x)
    figure = line.split(":")[1].split("MB/s")[0].strip()
    assert t["SEQ1M_Q8T1"]["read"].best_bw == mbs(figure)  # exact: 10^6 B per MB


@pytest.mark.parametrize("name", ["cdm5_utf16.txt", "cdm6_utf16.txt"])
def test_cdm5_and_6_lack_latency_and_sequential_iops(name: str) -> None:
    t = mapped(name)
    assert "RND4K_Q32T1" in t and "RND4K_Q1T1" in t
    assert list(t)[:2] == [x for x in PRESET_TESTS if x in t][:2]  # the preset's tests first
    # the queued sequential test is 128 KiB: no preset row has that shape, it keeps the tool's name
    assert "SEQ128K_Q32T1" in t
    for test, sides in t.items():
        for s in sides.values():
            assert s.lat_ns is None  # not printed: absent, never 0
            if test.startswith("SEQ"):
                assert s.best_iops is None and s.best_bw  # the import's derived IOPS is not shown
            else:
                assert s.best_iops and s.best_bw
    if name == "cdm5_utf16.txt":
        assert t["SEQ1M_Q1T1"]["read"].best_bw == mbs("510.440")  # CDM 5's "Sequential (T= 1)"
    else:
        assert "RND4K_Q8T8" in t and "SEQ1M_Q1T1" not in t


def test_cdm7_and_kdiskmark_map_to_the_presets_rows() -> None:
    for name, peak in (("cdm7_default.txt", "RND4K_Q32T16"), ("kdm3_default.txt", "RND4K_Q32T1")):
        t = mapped(name)
        assert list(t) == ["SEQ1M_Q8T1", "SEQ1M_Q1T1", peak, "RND4K_Q1T1"], name
        assert all(s.best_iops and s.lat_ns for sides in t.values() for s in sides.values())
    kdm = mapped("kdm3_default.txt")
    assert kdm["SEQ1M_Q8T1"]["read"].best_bw == float(Decimal("508.897") * 1_024_000)  # KDiskMark's "MB"


def test_profiles_and_mix_tests_are_rows_of_their_own_or_the_presets() -> None:
    t = mapped("cdm9_nvme_mix.txt")  # NVMe profile with Mix
    assert list(t) == ["SEQ1M_Q8T1", "RND4K_Q32T16", "RND4K_Q1T1", "SEQ128K_Q32T1"]
    for sides in t.values():
        assert set(sides) == {"read", "write", "mix"}
    mix = t["RND4K_Q1T1"]["mix"]
    assert mix.best_bw == mbs("110.221") and mix.best_iops == 26909.4 and mix.lat_ns == 37050.0
    assert mix.note is not None and "read 70 % / write 30 %" in mix.note
    peak = mapped("cdm8_peak_mix.txt")
    assert list(peak) == ["SEQ1M_Q8T1", "RND4K_Q32T16"] and "mix" in peak["RND4K_Q32T16"]
    kdm = mapped("kdm2_peak_mix.txt")
    assert all(set(s) <= {"read", "write", "mix"} and s for s in kdm.values()) and "RND4K_Q32T16" in kdm


def test_beside_a_legacy_run_the_rows_take_the_legacy_names() -> None:
    legacy = NS(imported=None, info=NS(preset="crystaldiskmark-legacy"))
    t = mapped("cdm8_default.txt", legacy)
    # the measured run's preset names the shapes it has; the stand-for preset the rest
    assert {"Seq", "4K", "4K_QD32", "SEQ1M_Q8T1"} == set(t)


def test_an_imported_cdm_run_beside_a_measured_one_in_both_views(
    client: TestClient, session: Session
) -> None:
    u = create_user(session)
    text = sample("crystaldiskmark", "cdm7_default.txt") + f"\n{uuid.uuid4()}\n".encode()
    r = client.post(
        "/api/v1/imports",
        params={"team_id": str(u.team.id), "file_name": "cdm7.txt", "device": "CDM disk"},
        content=text,
        headers={**u.headers, "Content-Type": "application/octet-stream"},
    )
    assert r.status_code == 201, r.text
    imp = uuid.UUID(r.json()["runs"][0]["run_id"])
    measured = real_run(client, session, u, "crystaldiskmark")

    cat = client.get(f"/api/v1/views?runs={measured},{imp}", headers=u.headers).json()
    assert [x["preset"] for x in cat["runs"]] == ["crystaldiskmark", "crystaldiskmark"]
    assert {"crystaldiskmark", "crystaldiskmark-table"} <= set(cat["applicable"])

    t = view(client, u, "crystaldiskmark", [measured, imp])
    label = next(x["label"] for x in t["runs"] if x["id"] == str(imp))
    assert label.endswith("(imported from CrystalDiskMark 7)")
    assert next(x["origin"] for x in t["runs"] if x["id"] == str(imp))["kind"] == "imported"
    rows, cells = rows_by(t, "key"), cells_by(t)
    mine = [(r, c) for r, c in zip(rows, cells, strict=True) if r["run"] == label]
    assert [r["test"] for r, _ in mine] == ["SEQ1M Q8T1", "SEQ1M Q1T1", "RND4K Q32T16", "RND4K Q1T1"]
    first, first_cells = mine[0]
    assert first["read_best_mbps"] == mbs("548.627") and first["read_best_iops"] == 523.2
    assert first["read_best_lat"] == pytest.approx(14567.32 * 1000)
    assert first_cells["read_best_lat"]["unit"] == "ns"
    for absent in ("read_median_mbps", "read_spread_pct", "read_median_iops", "read_passes"):
        assert first[absent] is None, absent  # not in the file: "—", never 0
    # the measured run's rows are as before, with its best pass's latency
    theirs = [r for r in rows if r["run"] != label]
    assert len(theirs) == 5 and all(r["read_median_mbps"] and r["read_best_lat"] for r in theirs)
    assert any("imported" in n.lower() for n in t["notes"])

    table = view(client, u, "crystaldiskmark-table", [measured, imp])
    by_test = {r["test"]: r for r in rows_by(table, "key") if r["unit"] == "MB/s"}
    assert by_test["SEQ1M Q8T1 Read"]["run_1"] == mbs("548.627")
    assert by_test["RND4K Q32T1 Read"]["run_1"] is None and by_test["RND4K Q32T1 Read"]["run_0"]
