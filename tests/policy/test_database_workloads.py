"""check_run for issue 15's workloads: heap vs B-tree (an engine mode, like the file workloads) and
TPC-H (a private DBMS the agent starts: only one the host consented to, `allowed_dbms`)."""

from __future__ import annotations

from typing import Any

import pytest
from iowatt_policy import (
    DBMS_NOT_ALLOWED,
    Limits,
    MeterInfo,
    Policy,
    PolicyError,
    ReportedPolicy,
    Target,
    Violation,
    check_run,
    job_value,
)

DEV = "/dev/disk/by-id/nvme-Example_SSD_S123"
TPCH = {"mode": "tpch", "dbms": "postgresql", "scale_factor": "0.01"}
HEAP_BTREE = {
    "mode": "heap-btree",
    "records": "20000",
    "queries": "1000",
    "cache_fractions": "0.1,0.5,1",
    "randseed": "7",
    "structure": "both",
}


def policy(*dbms: str, **limits: Any) -> ReportedPolicy:
    return ReportedPolicy(
        targets=(
            Target.directory("/data/bench"),
            Target.file("/data/rw.img", allow_write=True),
            Target.device(DEV, destructive=True),
        ),
        meters=(MeterInfo("wall", "shelly", "plug"),),
        limits=Limits(**limits),
        allowed_dbms=dbms,
    )


def check(
    job: dict[str, Any],
    pol: ReportedPolicy,
    target: str = "/data/bench",
    facts: dict[str, Any] | None = None,
) -> list[Violation]:
    return check_run(pol, target_path=target, engine_job=job, meter=None, destructive=False, file_facts=facts)


def tpch_facts(written: int) -> dict[str, Any]:
    return {"mode": "tpch", "bytes_written_max": written, "runtime_s_max": None}


def test_tpch_needs_the_hosts_consent_to_start_that_dbms() -> None:
    [v] = check(TPCH, policy())
    assert (v.rule, v.field) == (DBMS_NOT_ALLOWED, "workload.tpch.dbms")
    assert v.fix == "iowatt-agent targets allow-dbms postgresql"
    assert "allowed DBMSs: none" in v.message
    assert check(TPCH, policy("postgresql")) == []
    # consent is per DBMS
    [v] = check({**TPCH, "dbms": "mariadb"}, policy("postgresql"))
    assert v.rule == DBMS_NOT_ALLOWED and "allowed DBMSs: postgresql" in v.message
    assert v.fix == "iowatt-agent targets allow-dbms mariadb"


@pytest.mark.parametrize("dbms", ["oracle", "postgresql; rm -rf /", "$(reboot)", "", 7, None])
def test_a_dbms_outside_the_known_ones_is_refused_by_name(dbms: object) -> None:
    job = {**TPCH, "dbms": dbms}
    found = check(job, policy("postgresql", "mariadb"))
    assert [(v.rule, v.field) for v in found] == [("option.not_allowed", "workload.tpch.dbms")]
    assert "rm -rf" not in found[0].fix


def test_tpch_and_heap_btree_need_a_directory_target() -> None:
    for job in (TPCH, HEAP_BTREE):
        for target in (DEV, "/data/rw.img"):
            [v] = check(job, policy("postgresql"), target)
            assert (v.rule, v.field) == ("target.kind", "target_path")
            assert "/data/bench" in v.fix
        [v] = check(job, policy("postgresql"), "/data/elsewhere")
        assert v.rule == "target.not_allowed"


@pytest.mark.parametrize(
    ("job", "field"),
    [
        ({**TPCH, "exec": "sh"}, "workload.exec"),
        ({**TPCH, "scale_factor": "1e9"}, "workload.tpch.scale_factor"),
        ({**TPCH, "scale_factor": "0"}, "workload.tpch.scale_factor"),
        ({**TPCH, "scale_factor": "nan"}, "workload.tpch.scale_factor"),
        ({**TPCH, "scale_factor": "1; reboot"}, "workload.tpch.scale_factor"),
        ({**TPCH, "scale_factor": True}, "workload.tpch.scale_factor"),
        ({"mode": "tpch", "dbms": "postgresql"}, "workload.tpch.scale_factor"),
        ({**TPCH, "streams": "65"}, "workload.tpch.streams"),
        ({**TPCH, "streams": "2.5"}, "workload.tpch.streams"),
        ({**TPCH, "query_timeout_s": "0"}, "workload.tpch.query_timeout_s"),
        ({**TPCH, "buffer_pool_bytes": "1000"}, "workload.tpch.buffer_pool_bytes"),
        ({**HEAP_BTREE, "keep": "1"}, "workload.keep"),
        ({**HEAP_BTREE, "directory": "/etc"}, "workload.directory"),
        ({**HEAP_BTREE, "records": "0"}, "workload.heap_btree.records"),
        ({**HEAP_BTREE, "records": "3000000000"}, "workload.heap_btree.records"),
        ({**HEAP_BTREE, "records": "--keep"}, "workload.heap_btree.records"),
        ({**HEAP_BTREE, "cache_fractions": "0.1,1.5"}, "workload.heap_btree.cache_fractions"),
        ({**HEAP_BTREE, "cache_fractions": "0.1 --keep"}, "workload.heap_btree.cache_fractions"),
        ({**HEAP_BTREE, "cache_fractions": ",".join(["0.5"] * 65)}, "workload.heap_btree.cache_fractions"),
        ({**HEAP_BTREE, "structure": "all"}, "workload.heap_btree.structure"),
        ({**HEAP_BTREE, "randseed": "-1"}, "workload.heap_btree.randseed"),
        ({"mode": "heap-btree"}, "workload.heap_btree.records"),
        ({"mode": "sqlite", "records": "1"}, "workload.kind"),
    ],
)
def test_extra_keys_and_values_that_are_not_plain_are_refused(job: dict[str, Any], field: str) -> None:
    found = check(job, policy("postgresql"))
    assert ("option.not_allowed", field) in [(v.rule, v.field) for v in found], found


def test_plain_values_pass_as_strings_or_numbers() -> None:
    pol = policy("postgresql", "mariadb")
    full = {**TPCH, "streams": "3", "query_timeout_s": "600", "buffer_pool_bytes": str(16 << 20)}
    assert check(full, pol) == []
    assert check({**TPCH, "scale_factor": 5, "streams": 2, "buffer_pool_bytes": 16 << 20}, pol) == []
    assert check(HEAP_BTREE, pol) == []
    assert check({"mode": "heap-btree", "records": 1000, "cache_fractions": "1"}, pol) == []
    assert job_value({"streams": 2.0}, "streams") == "2"
    assert job_value({"scale_factor": 5}, "scale_factor") == "5"
    assert job_value({"scale_factor": "0.01"}, "scale_factor") == "0.01"


def test_limits_from_the_facts() -> None:
    pol = policy("postgresql", max_bytes_written=1 << 30, max_runtime_s=60, max_threads=1)
    # TPC-H: bytes written against the one bound; its run time is unbounded (the agent's timeout
    # caps it) and its threads are the DBMS's, so neither refuses it
    assert check(TPCH, pol, facts=tpch_facts(100 << 20)) == []
    [v] = check({**TPCH, "scale_factor": "1000"}, pol, facts=tpch_facts(1_500_000 << 20))
    assert (v.rule, v.field) == ("limit.bytes_written", "workload.tpch.scale_factor")
    assert v.fix == f"iowatt-agent targets limits --max-bytes-written {1_500_000 << 20}"
    # heap-btree: the engine's bounds, like a file workload
    bounds = {
        "mode": "heap-btree",
        "threads": 1,
        "max_block_bytes": 8192,
        "bytes_written_max": 2 << 30,
        "runtime_s_max": None,
        "dataset_bytes": 1 << 20,
        "files": 1,
        "directories": 0,
    }
    [v] = check(HEAP_BTREE, pol, facts=bounds)
    assert (v.rule, v.field) == ("limit.bytes_written", "workload.heap_btree.records")
    assert check(HEAP_BTREE, pol, facts={**bounds, "bytes_written_max": 1 << 20}) == []
    # facts of another mode are not these
    [v] = check(HEAP_BTREE, pol, facts={**bounds, "mode": "vdbench"})
    assert v.rule == "option.not_allowed"


def test_policy_file_and_report_carry_allowed_dbms() -> None:
    pol = Policy(targets=(Target.directory("/data/bench"),)).with_dbms("postgresql").with_dbms("postgresql")
    assert pol.allowed_dbms == ("postgresql",)
    assert Policy.from_dict(pol.to_dict()) == pol
    assert pol.without_dbms("postgresql").allowed_dbms == ()
    reported = ReportedPolicy.from_policy(pol)
    assert reported.to_dict()["allowed_dbms"] == ["postgresql"]
    assert ReportedPolicy.from_dict(reported.to_dict()) == reported
    # an older file or report has none: nothing is allowed to start
    assert Policy.from_dict({"targets": []}).allowed_dbms == ()
    assert ReportedPolicy.from_dict({}).allowed_dbms == ()
    with pytest.raises(PolicyError) as exc:
        Policy.from_dict({"allowed_dbms": ["oracle"]})
    assert exc.value.field == "allowed_dbms.0"
    with pytest.raises(PolicyError) as exc:
        ReportedPolicy.from_dict({"allowed_dbms": ["postgresql", "postgresql"]})
    assert exc.value.field == "allowed_dbms.1"
    with pytest.raises(PolicyError):
        ReportedPolicy.from_dict({"allowed_dbms": ["a b"]})
