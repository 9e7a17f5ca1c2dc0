"""The compare workspace: statistics, ratios, baselines, comparability, validity, CSV, campaigns."""

import csv
import io
import math
import uuid
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from backend.compare.service import ENERGY_METRICS, METRICS
from backend.compare.stats import describe, repeats_for, within_noise
from backend.models import ResultJob, Run
from backend.power.schemas import EnergyRead
from tests.factories import INVENTORY, MiB, create_agent, create_result, create_run, create_user

MB = 1_000_000


def test_statistics_of_known_inputs() -> None:
    s = describe([10.0, 12.0, 14.0])
    assert s is not None
    assert (s.n, s.mean, s.stdev) == (3, 12.0, 2.0)
    assert s.cv == pytest.approx(2 / 12)
    # a positive quantity: the interval is mean ×/÷ exp(t · se / mean) (ADR 0015)
    spread = math.exp(4.303 * (2 / math.sqrt(3)) / 12)
    assert s.ci_method == "log"
    assert s.ci95_low == pytest.approx(12 / spread) and s.ci95_high == pytest.approx(12 * spread)
    one = describe([5.0])
    assert one is not None and one.stdev is None and one.ci95_low is None
    assert within_noise(describe([10, 11, 12]), describe([11, 12, 13])) is True
    assert within_noise(describe([10, 11, 12]), describe([100, 101, 102])) is False
    assert within_noise(one, describe([1, 2])) is None
    assert repeats_for(0.10) > repeats_for(0.05) >= 2


# The P3608 report's Table 1 (MB/s, decimal): Samsung 840 Pro vs Intel P3608 and its Ratio column.
P3608 = [
    ("seq-read", "read", 1 * MiB, 516.4, 1611.0, 3.1),
    ("seq-write", "write", 1 * MiB, 494.3, 1313.4, 2.7),
    ("rand-read-4k", "randread", 4096, 30.3, 41.3, 1.4),
    ("rand-write-4k", "randwrite", 4096, 63.8, 195.3, 3.1),
    ("rand-read-512k", "randread", 512 * 1024, 465.5, 1211.8, 2.6),
    ("rand-write-512k", "randwrite", 512 * 1024, 475.7, 1317.9, 2.8),
]


def _entered(session: Session, agent: Any, target: str, col: int, **over: Any) -> Run:
    run = create_run(session, agent=agent, target_path=target, **over)
    jobs = []
    for name, rw, bs, samsung, intel, _ in P3608:
        side = "read" if "read" in rw else "write"
        mbs = (samsung, intel)[col]
        jobs.append(
            {
                "name": name,
                "rw": rw,
                "bs_bytes": bs,
                f"{side}_bw_bytes": int(mbs * MB),
                f"{side}_iops": mbs * MB / bs,
            }
        )
    create_result(session, run=run, jobs=jobs)
    return run


def test_p3608_table1_gives_the_reports_ratio_column(client: TestClient, session: Session) -> None:
    u = create_user(session)
    a = create_agent(session, team=u.team)
    samsung = _entered(session, a.agent, "/srv/samsung", 0)
    intel = _entered(session, a.agent, "/dev/shm/intel", 1)
    r = client.get(f"/api/v1/compare?runs={samsung.id},{intel.id}", headers=u.headers)
    assert r.status_code == 200, r.text
    c = r.json()
    assert c["comparability"]["verdict"] == "comparable" and c["baseline"] == str(samsung.id)
    ratios = []
    for job in c["jobs"]:
        bw = next(m for m in job["metrics"] if m["key"].endswith("_bw_bytes"))
        assert bw["unit"] == "B/s" and bw["ratios"][0] == 1.0
        ratios.append(round(bw["ratios"][1], 1))
    assert ratios == [row[5] for row in P3608]
    # switch the baseline: the ratio column inverts
    r = client.get(
        f"/api/v1/compare?runs={samsung.id},{intel.id}&baseline={intel.id}", headers=u.headers
    ).json()
    bw = next(m for m in r["jobs"][0]["metrics"] if m["key"] == "read_bw_bytes")
    assert r["baseline"] == str(intel.id) and bw["ratios"][0] == pytest.approx(516.4 / 1611.0)
    bad = client.get(f"/api/v1/compare?runs={samsung.id}&baseline={intel.id}", headers=u.headers)
    assert bad.status_code == 422 and bad.json()["detail"][0]["field"] == "baseline"


def test_csv_has_every_metric_with_units_and_ratios(client: TestClient, session: Session) -> None:
    u = create_user(session)
    a = create_agent(session, team=u.team)
    samsung = _entered(session, a.agent, "/srv/samsung", 0, name="samsung")
    intel = _entered(session, a.agent, "/dev/shm/intel", 1, name="intel")
    r = client.get(f"/api/v1/compare?runs={samsung.id},{intel.id}&format=csv", headers=u.headers)
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/csv")
    rows = list(csv.reader(io.StringIO(r.text)))
    assert rows[0][:6] == [
        "job",
        "metric",
        "unit",
        "better",
        "samsung (baseline) mean",
        "samsung (baseline) ratio",
    ]
    seq = next(row for row in rows if row[0] == "seq-read" and row[1] == "Read bandwidth")
    head = rows[0]
    assert seq[2] == "B/s" and float(seq[head.index("intel mean")]) == pytest.approx(1611.0 * MB)
    assert float(seq[head.index("intel ratio")]) == pytest.approx(1611.0 / 516.4, rel=1e-5)
    # the direction-aware change beside the ratio: 3.12× more bandwidth is better
    assert seq[head.index("better")] == "higher"
    assert (seq[head.index("intel change")], seq[head.index("intel verdict")]) == ("3.12× faster", "better")
    assert float(seq[head.index("intel change %")]) == pytest.approx((1611.0 / 516.4 - 1) * 100, rel=1e-5)
    assert seq[head.index("samsung (baseline) change")] == ""


def _repeats(session: Session, agent: Any, target: str, iops: list[float], bs: int = 4096) -> list[Run]:
    runs = []
    for v in iops:
        run = create_run(session, agent=agent, target_path=target)
        create_result(
            session,
            run=run,
            jobs=[
                {"name": "rr", "rw": "randread", "bs_bytes": bs, "read_iops": v, "read_bw_bytes": int(v * bs)}
            ],
        )
        runs.append(run)
    return runs


def test_repeats_grouped_by_device_with_statistics_and_suggestions(
    client: TestClient, session: Session
) -> None:
    u = create_user(session)
    a = create_agent(session, team=u.team)
    disk = _repeats(session, a.agent, "/srv/a", [100.0, 120.0, 80.0])
    ram = _repeats(session, a.agent, "/dev/shm/b", [1000.0, 1010.0, 990.0])
    ids = ",".join(str(r.id) for r in disk + ram)
    c = client.get(f"/api/v1/compare?runs={ids}&group_by=device", headers=u.headers).json()
    assert [len(col["run_ids"]) for col in c["columns"]] == [3, 3]
    assert c["columns"][0]["is_baseline"] and c["columns"][0]["device_name"] == "vda"
    iops = next(m for m in c["jobs"][0]["metrics"] if m["key"] == "read_iops")
    assert iops["values"] == [100.0, 1000.0] and iops["ratios"] == [1.0, 10.0]
    assert iops["changes"][0] is None  # the baseline column
    assert iops["changes"][1] == {
        "ratio": 10.0,
        "pct_change": 900.0,
        "factor": 10.0,
        "verdict": "better",
        "phrase": "10× faster",
    }
    assert iops["stats"][0]["ci_method"] == "log" and 0 < iops["stats"][0]["ci95_low"] < 100.0
    disk_stats = iops["stats"][0]
    assert (
        disk_stats["n"] == 3
        and disk_stats["stdev"] == pytest.approx(20.0)
        and disk_stats["cv"] == pytest.approx(0.2)
    )
    assert iops["within_noise"] == [True, False]
    assert any("varies by 20 %" in s for s in c["suggestions"])


def test_unlike_workloads_need_force_and_list_differences(client: TestClient, session: Session) -> None:
    u = create_user(session)
    a = create_agent(session, team=u.team)
    r1 = create_run(session, agent=a.agent, target_path="/srv/a")
    r2 = create_run(session, agent=a.agent, target_path="/srv/b")
    r2.workload_spec = {
        "jobs": [{**r1.workload_spec["jobs"][0], "bs_bytes": 8192}, *r1.workload_spec["jobs"][1:]]
    }
    for r in (r1, r2):
        create_result(
            session,
            run=r,
            jobs=[{"name": "randread-4k", "rw": "randread", "bs_bytes": 4096, "read_iops": 5.0}],
        )
    c = client.get(f"/api/v1/compare?runs={r1.id},{r2.id}", headers=u.headers).json()
    assert c["comparability"]["verdict"] == "not_comparable" and c["jobs"] == []
    diff = {d["field"]: d["values"] for d in c["comparability"]["differences"]}
    assert diff["workload.0.bs_bytes"] == {str(r1.id): 4096, str(r2.id): 8192}
    forced = client.get(f"/api/v1/compare?runs={r1.id},{r2.id}&force=true", headers=u.headers).json()
    assert forced["comparability"]["verdict"] == "forced" and forced["jobs"]


def test_validity_flags(client: TestClient, session: Session) -> None:
    u = create_user(session)
    inv = {**INVENTORY, "virtualization": "kvm", "mem_bytes": 24 * 1024**3}
    a = create_agent(session, team=u.team, inventory=inv)
    run = create_run(session, agent=a.agent)  # the quick workload: 3 s jobs, direct I/O
    create_result(
        session, run=run, jobs=[{"name": "randread-4k", "rw": "randread", "bs_bytes": 4096, "read_iops": 1.0}]
    )
    c = client.get(f"/api/v1/compare?runs={run.id}", headers=u.headers).json()
    flags = {f["flag"] for f in c["validity"][str(run.id)]}
    assert {"virtualized", "short_run"} <= flags and "working_set_below_ram" not in flags


def test_latency_curves_from_merged_histograms(client: TestClient, session: Session) -> None:
    u = create_user(session)
    a = create_agent(session, team=u.team)
    runs = []
    for target, bins in (("/srv/a", {"1000": 90, "5000": 10}), ("/srv/b", {"1000": 50, "9000": 50})):
        run = create_run(session, agent=a.agent, target_path=target)
        create_result(
            session,
            run=run,
            jobs=[{"name": "rr", "rw": "randread", "bs_bytes": 4096, "read_iops": 1.0}],
            bins={"rr:read": bins},
        )
        runs.append(run)
    ids = f"{runs[0].id},{runs[1].id}"
    per_run = client.get(f"/api/v1/compare/latency?runs={ids}&job=rr", headers=u.headers).json()
    first = {p["percentile"]: p["latency_ns"] for p in per_run["curves"][0]["points"]}
    assert first[50.0] == 1000 and first[95.0] == 5000 and per_run["curves"][0]["samples"] == 100
    merged = client.get(
        f"/api/v1/compare/latency?runs={ids}&job=rr&group_by=device", headers=u.headers
    ).json()
    assert len(merged["curves"]) == 1 and merged["curves"][0]["samples"] == 200
    pts = {p["percentile"]: p["latency_ns"] for p in merged["curves"][0]["points"]}
    assert pts[70.0] == 1000 and pts[80.0] == 9000  # 140 of 200 at 1 µs, then 9 µs


def test_campaign_queues_targets_times_repeats_interleaved(client: TestClient, session: Session) -> None:
    u = create_user(session)
    a = create_agent(session, team=u.team)
    quick = next(
        w for w in client.get("/api/v1/workloads", headers=u.headers).json()["items"] if w["name"] == "quick"
    )
    body = {
        "name": "disk vs ram",
        "workload_id": quick["id"],
        "repeats": 3,
        "targets": [
            {"agent_id": str(a.agent.id), "target_path": "/srv/a"},
            {"agent_id": str(a.agent.id), "target_path": "/dev/shm/b"},
        ],
    }
    r = client.post("/api/v1/campaigns", json=body, headers=u.headers)
    assert r.status_code == 201, r.text
    camp = r.json()
    assert len(camp["run_ids"]) == 6 and camp["counts"] == {"queued": 6} and not camp["done"]
    runs = [client.get(f"/api/v1/runs/{rid}", headers=u.headers).json() for rid in camp["run_ids"]]
    assert [x["target_path"] for x in runs] == ["/srv/a", "/dev/shm/b"] * 3
    assert camp["compare_url"].endswith("group_by=device_environment")
    bad = {**body, "targets": [body["targets"][0], {"agent_id": str(uuid.uuid4()), "target_path": "/x"}]}
    before = client.get("/api/v1/runs", headers=u.headers).json()["total"]
    r = client.post("/api/v1/campaigns", json=bad, headers=u.headers)
    assert r.status_code == 422 and r.json()["detail"][0]["field"] == "targets.1.agent_id"
    assert client.get("/api/v1/runs", headers=u.headers).json()["total"] == before  # nothing half-created


def test_a_spec_stored_without_newer_defaults_fingerprints_the_same() -> None:
    from backend.compare.fingerprint import fingerprint
    from backend.workload.builtin import QUICK

    full = QUICK.model_dump(mode="json")
    old = {
        "jobs": [{k: v for k, v in j.items() if k not in ("invalidate", "readahead")} for j in full["jobs"]]
    }
    assert fingerprint(old) == fingerprint(full)


def test_new_job_fields_keep_the_fingerprints_of_specs_that_do_not_use_them() -> None:
    from backend.compare.fingerprint import canonical_workload, fingerprint
    from backend.workload.builtin import QUICK

    spec = QUICK.model_dump(mode="json")
    # QUICK's fingerprint from before end_fsync and io_size_bytes existed
    assert fingerprint(spec) == "d209edce0daa9d1ca79e8042b683ed27c830a785c4215d4814fad3c107520d9c"
    assert not {"end_fsync", "io_size_bytes"} & {k for j in canonical_workload(spec) for k in j}
    explicit = {"jobs": [{**j, "end_fsync": False, "io_size_bytes": None} for j in spec["jobs"]]}
    assert fingerprint(explicit) == fingerprint(spec)
    synced = {"jobs": [{**j, "end_fsync": True} for j in spec["jobs"]]}
    partial = {"jobs": [{**j, "io_size_bytes": 1 << 20} for j in spec["jobs"]]}
    assert len({fingerprint(spec), fingerprint(synced), fingerprint(partial)}) == 3


def test_io_uring_kernel_worker_cpu_compares_and_a_run_without_it_reads_null(
    client: TestClient, session: Session
) -> None:
    """A psync run (no io-wq figure) next to io_uring repeats: its column is null, never 0, and the
    statistics of the other column are unaffected."""
    u = create_user(session)
    a = create_agent(session, team=u.team)
    job = {"name": "rr", "rw": "randread", "bs_bytes": 4096, "read_iops": 1000.0}
    psync = create_run(session, agent=a.agent, target_path="/srv/a")
    create_result(session, run=psync, jobs=[job])
    uring = []
    for cpu in (80.0, 90.0, 100.0):
        run = create_run(session, agent=a.agent, target_path="/dev/shm/b")
        create_result(session, run=run, jobs=[{**job, "kernel_worker_cpu_pct": cpu, "target_nowait": False}])
        uring.append(run)
    ids = ",".join(str(r.id) for r in [psync, *uring])
    r = client.get(f"/api/v1/compare?runs={ids}&group_by=device", headers=u.headers)
    assert r.status_code == 200, r.text
    m = next(m for m in r.json()["jobs"][0]["metrics"] if m["key"] == "kernel_worker_cpu_pct")
    assert (m["label"], m["unit"], m["higher_is_better"]) == ("CPU io_uring kernel workers", "%", False)
    assert m["values"] == [None, pytest.approx(90.0)]
    assert m["ratios"] == [None, None]  # the baseline has no figure to divide by
    assert m["stats"][0] is None and m["stats"][1]["n"] == 3 and m["within_noise"] == [None, None]
    # the io_uring runs as baseline: the psync column still has no value and no ratio
    r = client.get(f"/api/v1/compare?runs={ids}&group_by=device&baseline={uring[0].id}", headers=u.headers)
    m = next(m for m in r.json()["jobs"][0]["metrics"] if m["key"] == "kernel_worker_cpu_pct")
    assert m["values"] == [None, pytest.approx(90.0)] and m["ratios"] == [None, 1.0]
    csv_text = client.get(f"/api/v1/compare?runs={ids}&group_by=device&format=csv", headers=u.headers).text
    rows = list(csv.reader(io.StringIO(csv_text)))
    row = next(row for row in rows if row[1] == "CPU io_uring kernel workers")
    means = [i for i, h in enumerate(rows[0]) if h.endswith(" mean")]
    assert row[means[0]] == "" and float(row[means[1]]) == pytest.approx(90.0)
    # no run with the figure: the metric is left out, as write metrics are for read-only jobs
    only = client.get(f"/api/v1/compare?runs={psync.id}", headers=u.headers).json()
    assert "kernel_worker_cpu_pct" not in {m["key"] for m in only["jobs"][0]["metrics"]}


def test_csv_cells_that_a_spreadsheet_would_run_are_neutralised(client: TestClient, session: Session) -> None:
    u = create_user(session)
    a = create_agent(session, team=u.team)
    evil = _entered(session, a.agent, "/srv/samsung", 0, name='=HYPERLINK("http://x","y")')
    plus = _entered(session, a.agent, "/dev/shm/intel", 1, name="+cmd|' /C calc'!A0")
    r = client.get(f"/api/v1/compare?runs={evil.id},{plus.id}&format=csv", headers=u.headers)
    assert r.status_code == 200, r.text
    head = next(csv.reader(io.StringIO(r.text)))
    assert head[4].startswith("'=HYPERLINK(") and any(h.startswith("'+cmd|") for h in head)
    assert not any(h[:1] in ("=", "+", "-", "@", "\t", "\r") for h in head)


def test_csv_neutralises_strings_but_keeps_negative_numbers_numeric() -> None:
    from backend.kit import csv as safe_csv

    buf = io.StringIO()
    w = safe_csv.writer(buf)
    w.writerow(["=1+2", "+1", "-x", "@SUM(A1)", "\tTAB", "\rCR", "plain", -3.5, -2, 0.0, None, "a=b"])
    row = next(csv.reader(io.StringIO(buf.getvalue())))
    assert row == [
        "'=1+2",
        "'+1",
        "'-x",
        "'@SUM(A1)",
        "'\tTAB",
        "'\rCR",
        "plain",
        "-3.5",
        "-2",
        "0.0",
        "",
        "a=b",
    ]


def test_every_metric_carries_its_kind_and_better_from_the_one_table(
    client: TestClient, session: Session
) -> None:
    """Clients chart and colour metrics by `kind`, `better`, `direction` and `percentile`, never by
    guessing from a key or unit; every key in the table names a stored figure."""
    keys = [m.key for m in METRICS + ENERGY_METRICS]
    assert len(keys) == len(set(keys))
    assert {m.key for m in METRICS} <= set(ResultJob.__table__.columns.keys())
    assert {m.key for m in ENERGY_METRICS} <= set(EnergyRead.model_fields)
    u = create_user(session)
    a = create_agent(session, team=u.team)
    run = create_run(session, agent=a.agent, target_path="/srv/a")
    figures = {m.key: 1000 for m in METRICS if m.kind != "cpu"}  # the factory sets usr/sys CPU
    create_result(session, run=run, jobs=[{"name": "rw", "rw": "randrw", "bs_bytes": 4096, **figures}])
    r = client.get(f"/api/v1/compare?runs={run.id}", headers=u.headers)
    assert r.status_code == 200, r.text
    got = {m["key"]: m for m in r.json()["jobs"][0]["metrics"]}
    assert set(got) == {*figures, "usr_cpu_pct", "sys_cpu_pct"}
    shape = {k: (m["kind"], m["better"], m["direction"], m["percentile"]) for k, m in got.items()}
    assert shape["read_iops"] == ("iops", "higher", "read", None)
    assert shape["write_bw_bytes"] == ("bandwidth", "higher", "write", None)
    assert shape["read_clat_p99_ns"] == ("latency", "lower", "read", 99.0)
    assert shape["write_clat_p999_ns"] == ("latency", "lower", "write", 99.9)
    assert shape["read_lat_mean_ns"] == ("latency", "lower", "read", None)
    assert shape["sys_cpu_pct"] == ("cpu", "lower", None, None)
    assert all(m["higher_is_better"] == (m["better"] == "higher") for m in got.values())  # deprecated
    by_key = {m.key: m for m in ENERGY_METRICS}
    assert (by_key["iops_per_w"].kind, by_key["iops_per_w"].better) == ("efficiency", "higher")
    assert (by_key["j_per_gb"].kind, by_key["j_per_gb"].better) == ("efficiency", "lower")
    assert (by_key["total_j"].kind, by_key["operational_gco2e"].kind) == ("energy", "carbon")


def test_short_run_is_judged_by_the_measured_duration(client: TestClient, session: Session) -> None:
    """A size-bound job is as long as it took: 64 MiB on a slow disk for a minute is not short,
    64 MiB read from RAM in 5 s is; a 10 s time-based job the engine timed at 9,999 ms is not."""
    from sqlalchemy import update

    u = create_user(session)
    a = create_agent(session, team=u.team)
    size_bound = {
        "jobs": [
            {
                "name": "seq-read-64m",
                "rw": "read",
                "bs_bytes": MiB,
                "size_bytes": 64 * MiB,
                "runtime_s": None,
                "time_based": False,
                "direct": True,
            }
        ]
    }

    def flags(seconds: float, spec: dict[str, Any]) -> set[str]:
        run = create_run(session, agent=a.agent)
        run.workload_spec = spec
        create_result(
            session,
            run=run,
            jobs=[{"name": spec["jobs"][0]["name"], "rw": "read", "bs_bytes": MiB, "read_iops": 1.0}],
        )
        session.execute(
            update(ResultJob).where(ResultJob.run_id == run.id).values(runtime_ns=int(seconds * 1e9))
        )
        session.flush()
        c = client.get(f"/api/v1/compare?runs={run.id}", headers=u.headers).json()
        system = client.get(f"/api/v1/runs/{run.id}/system", headers=u.headers)
        got = {f["flag"] for f in c["validity"][str(run.id)]}
        if system.status_code == 200 and "validity" in system.json():  # the run page shows the same flags
            assert {f["flag"] for f in system.json()["validity"]} == got
        return got

    assert "short_run" not in flags(60.0, size_bound)
    assert "short_run" in flags(5.0, size_bound)
    timed = {"jobs": [{**size_bound["jobs"][0], "runtime_s": 10, "time_based": True}]}
    assert "short_run" not in flags(9.999, timed)
    assert "short_run" in flags(3.0, timed)


def test_a_virtual_disk_is_virtual_whatever_its_rotational_flag_says() -> None:
    from backend.device.service import media_of

    # QEMU's virtio disk says rotational=1: it is the hypervisor's disk, not an HDD
    assert media_of("block", {"name": "vda", "interface": "virtio", "rotational": True}) == "virtual"
    assert media_of("block", {"name": "sda", "model": "QEMU HARDDISK", "rotational": 1}) == "virtual"
    assert media_of("block", {"name": "sdb", "model": "VBOX HARDDISK", "interface": "sata"}) == "virtual"
    assert (
        media_of("block", {"name": "sda", "model": "ST4000NM0035", "interface": "sata", "rotational": 1})
        == "hdd"
    )
    assert media_of("block", {"name": "nvme0n1", "interface": "nvme", "rotational": False}) == "ssd"
    assert media_of("block", {"name": "zram0", "interface": "zram", "rotational": False}) == "ram"
    assert media_of("block", {"name": "sdc"}) == "unknown"
