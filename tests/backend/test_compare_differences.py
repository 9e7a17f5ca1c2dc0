"""Compare's list of what differs between unlike workloads: one row per field; a list of plain
values (an imported job's `unstated` settings) is one field, a list of jobs one row per job's field."""

from backend.compare.fingerprint import differences


def test_a_list_of_plain_values_is_one_field() -> None:
    docs = {
        "a": {"workload": [{"rw": "read", "unstated": ["iodepth", "numjobs"]}]},
        "b": {"workload": [{"rw": "read", "unstated": ["size_bytes"]}]},
        "c": {"workload": [{"rw": "write", "unstated": ["iodepth", "numjobs"]}]},
    }
    assert differences(docs) == [
        ("workload.0.rw", {"a": "read", "b": "read", "c": "write"}),
        ("workload.0.unstated", {"a": "iodepth,numjobs", "b": "size_bytes", "c": "iodepth,numjobs"}),
    ]
    # the same list on every run is no difference; a list of jobs is still one row per job's field
    same = {k: {"workload": [{"unstated": ["iodepth"]}, {"bs": 4096 * (k == "b") or 512}]} for k in "ab"}
    assert differences(same) == [("workload.1.bs", {"a": 512, "b": 4096})]
