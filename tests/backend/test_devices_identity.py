"""Device identity (issue 10): what the agent's inventory reports decides the device, on real
PostgreSQL: zram0/zram1 and loop0/loop1 are distinct, one disk stays one device across runs (and
across a kernel rename when it has a serial), and devices keyed before issue 10 keep their runs."""

import copy
from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from backend.device.service import identify
from backend.models import Device, Run
from tests.factories import create_agent, create_run, create_user

SERIAL = "a" * 64
QUICK_JOB = {
    "name": "j",
    "rw": "randread",
    "bs_bytes": 4096,
    "size_bytes": 16 * 1024**2,
    "runtime_s": 2,
    "time_based": True,
}


def bdev(name: str, **over: Any) -> dict[str, Any]:
    return {
        "name": name,
        "model": None,
        "serial_sha256": None,
        "size_bytes": 1024**3,
        "interface": "unknown",
        **over,
    }


def inventory(*devs: dict[str, Any], mounts: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {"hostname": "host-z", "block_devices": list(devs), "mounts": mounts or [], "policy": None}


def mount(point: str, source: str) -> dict[str, Any]:
    return {"mountpoint": point, "source": source, "fstype": "ext4", "options": "rw"}


def devices(session: Session) -> int:
    return session.scalar(select(func.count()).select_from(Device)) or 0


def test_zram0_and_zram1_are_two_devices(session: Session) -> None:
    u = create_user(session)
    inv = inventory(bdev("zram0", interface="zram"), bdev("zram1", interface="zram"))
    a = create_agent(session, team=u.team, inventory=inv)
    r0 = create_run(session, agent=a.agent, target_path="/dev/zram0")
    r1 = create_run(session, agent=a.agent, target_path="/dev/zram1")
    d0, d1 = session.get(Device, r0.device_id), session.get(Device, r1.device_id)
    assert d0 is not None and d1 is not None and d0.id != d1.id
    assert (d0.key, d1.key) == ("block:zram0", "block:zram1")
    assert d0.media == "ram" and d1.facts["name"] == "zram1"


def test_loop_mounts_are_distinct_devices_and_a_loop_partition_is_its_loop(session: Session) -> None:
    u = create_user(session)
    inv = inventory(
        bdev("loop0"),
        bdev("loop1"),
        mounts=[mount("/mnt/l0", "/dev/loop0"), mount("/mnt/l1", "/dev/loop1p1")],
    )
    a = create_agent(session, team=u.team, inventory=inv)
    r0 = create_run(session, agent=a.agent, target_path="/mnt/l0/f")
    r1 = create_run(session, agent=a.agent, target_path="/mnt/l1/f")
    assert r0.device_id != r1.device_id
    d1 = session.get(Device, r1.device_id)
    assert d1 is not None and d1.key == "block:loop1" and d1.name == "loop1"


def test_two_runs_on_one_disk_are_one_device_whole_or_partition(session: Session) -> None:
    u = create_user(session)
    inv = inventory(
        bdev("nvme0n1", serial_sha256=SERIAL, model="Fast SSD", size_bytes=512 * 1024**3),
        mounts=[mount("/srv", "/dev/nvme0n1p2")],
    )
    a = create_agent(session, team=u.team, inventory=inv)
    before = devices(session)
    r0 = create_run(session, agent=a.agent, target_path="/srv/bench")
    r1 = create_run(session, agent=a.agent, target_path="/srv/other")
    r2 = create_run(session, agent=a.agent, target_path="/dev/nvme0n1p2")
    assert r0.device_id == r1.device_id == r2.device_id
    assert devices(session) == before + 1
    d = session.get(Device, r0.device_id)
    assert d is not None and d.key == f"block-serial:{SERIAL}" and d.capacity_bytes == 512 * 1024**3


def test_a_renamed_disk_with_a_serial_keeps_its_device(session: Session) -> None:
    u = create_user(session)
    a = create_agent(session, team=u.team, inventory=inventory(bdev("sdb", serial_sha256=SERIAL)))
    first = create_run(session, agent=a.agent, target_path="/dev/sdb")
    # after a reboot the kernel calls the same disk sdc, and a new disk without a serial is sdb
    a.agent.inventory = inventory(bdev("sdb"), bdev("sdc", serial_sha256=SERIAL))
    again = create_run(session, agent=a.agent, target_path="/dev/sdc")
    other = create_run(session, agent=a.agent, target_path="/dev/sdb")
    assert again.device_id == first.device_id
    assert other.device_id != first.device_id


def test_a_serial_two_disks_share_does_not_merge_them(session: Session) -> None:
    u = create_user(session)
    inv = inventory(bdev("sda", serial_sha256=SERIAL), bdev("sdb", serial_sha256=SERIAL))
    a = create_agent(session, team=u.team, inventory=inv)
    ra = create_run(session, agent=a.agent, target_path="/dev/sda")
    rb = create_run(session, agent=a.agent, target_path="/dev/sdb")
    assert ra.device_id != rb.device_id


def test_a_device_target_by_id_maps_to_the_disk_the_policy_names(session: Session) -> None:
    u = create_user(session)
    link = "/dev/disk/by-id/ata-Fast_SSD_X1"
    inv = inventory(bdev("sda", serial_sha256=SERIAL), mounts=[mount("/srv", "/dev/sda1")])
    inv["policy"] = {"targets": [{"path": link, "kind": "device", "writable": True, "serial_sha256": SERIAL}]}
    a = create_agent(session, team=u.team, inventory=inv)
    by_id = create_run(session, agent=a.agent, target_path=link)
    by_mount = create_run(session, agent=a.agent, target_path="/srv/x")
    assert by_id.device_id == by_mount.device_id


def test_a_device_keyed_before_issue_10_keeps_its_runs_and_the_next_run(session: Session) -> None:
    u = create_user(session)
    inv = inventory(bdev("sda", serial_sha256=SERIAL), bdev("zram0"), bdev("zram1"))
    a = create_agent(session, team=u.team, inventory=inv)
    # rows as the name-regex wrote them: one disk by kernel name, zram0/zram1 folded into "zram"
    old_disk = Device(
        team_id=u.team.id,
        agent_id=a.agent.id,
        key="block:sda",
        name="sda",
        kind="block",
        facts=copy.deepcopy(inv["block_devices"][0]),
    )
    old_zram = Device(
        team_id=u.team.id,
        agent_id=a.agent.id,
        key="block:zram",
        name="zram",
        kind="block",
        facts={"name": "zram"},
    )
    session.add_all([old_disk, old_zram])
    session.flush()
    old_runs = [create_run(session, agent=a.agent, target_path="/tmp/unused") for _ in range(2)]
    for run, d in zip(old_runs, (old_disk, old_zram), strict=True):
        run.device_id = d.id
    session.flush()
    new_disk_run = create_run(session, agent=a.agent, target_path="/dev/sda")
    new_zram_run = create_run(session, agent=a.agent, target_path="/dev/zram1")
    assert new_disk_run.device_id == old_disk.id  # the same disk, now keyed by its serial
    assert session.get(Device, old_disk.id).key == f"block-serial:{SERIAL}"  # type: ignore[union-attr]
    assert new_zram_run.device_id != old_zram.id
    for run in old_runs:
        session.expire(run)
        stored = session.get(Run, run.id)
        assert stored is not None and stored.device_id in (old_disk.id, old_zram.id)


def test_an_agent_without_inventory_keeps_the_name_rules() -> None:
    assert identify(None, "/dev/sda3")[0] == "block:sda"
    assert identify(None, "/dev/nvme1n1p2")[0] == "block:nvme1n1"
    assert identify({}, "/dev/zram1")[0] == "block:zram1"
    assert identify({}, "/dev/loop7")[0] == "block:loop7"
    assert identify({}, "/dev/md127")[0] == "block:md127"


def test_runs_created_through_the_api_on_two_loop_mounts_name_two_devices(
    client: TestClient, session: Session
) -> None:
    u = create_user(session)
    inv = inventory(
        bdev("loop0"), bdev("loop1"), mounts=[mount("/mnt/l0", "/dev/loop0"), mount("/mnt/l1", "/dev/loop1")]
    )
    inv["policy"] = {
        "targets": [{"path": p, "kind": "directory", "writable": True} for p in ("/mnt/l0", "/mnt/l1")],
        "meters": [],
    }
    a = create_agent(session, team=u.team, inventory=inv)
    ids = []
    for path in ("/mnt/l0", "/mnt/l1", "/mnt/l1"):
        body = {"agent_id": str(a.agent.id), "target_path": path, "workload": {"jobs": [QUICK_JOB]}}
        r = client.post("/api/v1/runs", json=body, headers=u.headers)
        assert r.status_code == 201, r.text
        ids.append(r.json()["device_id"])
    assert ids[0] != ids[1] and ids[1] == ids[2]
    names = {d["id"]: d["name"] for d in client.get("/api/v1/devices", headers=u.headers).json()["items"]}
    assert (names[ids[0]], names[ids[1]]) == ("loop0", "loop1")
