"""Device identity (issue 10): what the agent's inventory reports decides the device, on real
PostgreSQL: zram0/zram1 and loop0/loop1 are distinct, one disk stays one device across runs (and
across a kernel rename when it has a serial), and devices keyed before issue 10 keep their runs."""

import copy
import json
import shutil
import subprocess
import tempfile
import uuid
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from iowatt_agent.inventory import collect
from sqlalchemy import func, select, text
from sqlalchemy.orm import Session

from backend.device.schemas import OpenedTarget
from backend.device.service import identify, media_of
from backend.models import Device, Run
from backend.run import service as run_service
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


# --- what the engine opened (iowatt.target) decides, in preference to the path ---------------

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def engine_bin() -> Path:
    subprocess.run(["make", "-s", "-C", str(REPO / "agent" / "engine"), "all"], check=True, timeout=300)
    return REPO / "agent" / "engine" / "build" / "iowatt-engine"


def run_engine(engine_bin: Path, filename: str) -> dict[str, Any]:
    out = subprocess.run(
        [str(engine_bin), "--name=j", f"--filename={filename}", "--rw=write", "--bs=4k", "--size=256k"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    doc: dict[str, Any] = json.loads(out.stdout)
    return doc


def opened(path: str, device: dict[str, Any] | None, fs: dict[str, Any] | None = None) -> OpenedTarget:
    return OpenedTarget.model_validate(
        {"path": path, "kind": "file" if fs else "blockdev", "device": device, "fs": fs}
    )


def engine_dev(name: str, disk: str | None = None, **over: Any) -> dict[str, Any]:
    return {"name": name, "disk": disk or name, "model": None, "disk_size_bytes": 1024**3, **over}


def upload_result(client: TestClient, session: Session, a: Any, run: Run, doc: dict[str, Any]) -> None:
    run_service.dispatch(session, run_id=run.id)
    lease = client.post(f"/api/v1/agents/{a.agent.id}/lease?wait_s=0", headers=a.headers).json()["lease"]
    assert lease is not None and lease["run_id"] == str(run.id)
    start = client.post(
        f"/api/v1/runs/{run.id}/start", json={"lease_id": lease["lease_id"]}, headers=a.headers
    )
    assert start.status_code == 200, start.text
    body = {
        "lease_id": lease["lease_id"],
        "upload_id": str(uuid.uuid4()),
        "engine_result": doc,
        "engine_exit_code": 0,
        "started_at": "2026-11-22T10:00:00Z",
        "finished_at": "2026-11-22T10:00:01Z",
    }
    r = client.put(f"/api/v1/runs/{run.id}/result", json=body, headers=a.headers)
    assert r.status_code == 201, r.text
    session.expire_all()


def test_the_real_engine_moves_a_run_its_path_misnamed_to_the_file_system_it_opened(
    client: TestClient, session: Session, engine_bin: Path, tmp_path: Path
) -> None:
    """A directory reached through a symbolic link into /dev/shm: the path says the root disk,
    the engine (which resolved the file it opened) says tmpfs /dev/shm, and the engine wins."""
    shm = Path(tempfile.mkdtemp(prefix="iowatt-devid-", dir="/dev/shm"))
    try:
        (tmp_path / "link").symlink_to(shm)
        target = str(tmp_path / "link" / "data")
        inv = collect().model_dump(mode="json")  # the agent's real inventory of this host
        u = create_user(session)
        a = create_agent(session, team=u.team, inventory=inv)
        run = create_run(session, agent=a.agent, target_path=target)
        guessed = session.get(Device, run.device_id)
        assert guessed is not None and guessed.kind != "ram"  # the path alone: the disk holding /
        guessed_id = guessed.id
        upload_result(client, session, a, run, run_engine(engine_bin, target))
        moved = session.get(Run, run.id)
        assert moved is not None and moved.status.value == "succeeded"
        device = session.get(Device, moved.device_id)
        assert device is not None and device.key == "tmpfs:/dev/shm" and device.kind == "ram"
        assert device.media == "ram"
        assert session.get(Device, guessed_id) is None  # the guess had no other run: gone
        # the next run on that path is still created on the guess (the path is all it has);
        # a run already stored keeps the device it was stored with
        again = create_run(session, agent=a.agent, target_path=target)
        assert again.device_id != device.id and moved.device_id == device.id
    finally:
        shutil.rmtree(shm, ignore_errors=True)


def test_the_real_engine_names_the_disk_under_a_file_when_the_inventory_has_no_mounts(
    client: TestClient, session: Session, engine_bin: Path, tmp_path: Path
) -> None:
    real = collect()
    doc = run_engine(engine_bin, str(tmp_path / "data"))
    facts = doc["iowatt"]["target"]
    if facts["device"] is None:
        pytest.skip(f"{tmp_path} is on a file system without a block device ({facts['fs']})")
    u = create_user(session)
    # an agent that listed its disks but no mounts: the path names nothing
    inv = {**real.model_dump(mode="json"), "mounts": []}
    a = create_agent(session, team=u.team, inventory=inv)
    kept = create_run(session, agent=a.agent, target_path=str(tmp_path / "other"))
    run = create_run(session, agent=a.agent, target_path=str(tmp_path / "data"))
    guess = session.get(Device, run.device_id)
    assert guess is not None and guess.key.startswith("path:") and kept.device_id != guess.id
    upload_result(client, session, a, run, doc)
    stored = session.get(Run, run.id)
    device = session.get(Device, stored.device_id) if stored and stored.device_id else None
    assert device is not None and device.kind == "block"
    disk = facts["device"]["disk"]
    expected = identify(inv, "/dev/" + disk)
    assert device.key == expected.key and device.facts["fstype"] == facts["fs"]["type"]
    # the same device named by the path (the inventory's mounts) carries the same facts
    by_path = identify(real.model_dump(mode="json"), str(tmp_path / "data"))
    by_engine = identify(real.model_dump(mode="json"), str(tmp_path / "data"), OpenedTarget.of(doc))
    assert by_path == by_engine
    assert session.get(Device, kept.device_id) is not None  # a guess other runs still use stays


def test_engine_facts_decide_partition_by_id_and_unlisted_disks() -> None:
    inv = inventory(bdev("sda", serial_sha256=SERIAL, model="Disk"), bdev("sdb"))
    # a by-id link the policy does not describe: the path guesses a disk named after the link
    link = "/dev/disk/by-id/ata-Disk_123"
    assert identify(inv, link).key == "block:ata-Disk_123"
    assert identify(inv, link, opened(link, engine_dev("sda"))).key == f"block-serial:{SERIAL}"
    # a partition the engine opened is its disk
    assert identify(inv, "/dev/sdb2", opened("/dev/sdb2", engine_dev("sdb2", "sdb"))).key == "block:sdb"
    # a disk the inventory does not list (hot-plugged since): the engine's facts describe it
    found = identify(inv, "/dev/sdz", opened("/dev/sdz", engine_dev("sdz", model="New", rotational=1)))
    assert found.key == "block:sdz" and found.facts["model"] == "New" and found.facts["rotational"] is True
    assert media_of(found.kind, found.facts) == "hdd"
    # a file on tmpfs, NFS: by the mount point the engine found
    nfs = {"type": "nfs4", "mount_point": "/mnt/nas", "source": "nas:/vol", "mount_options": "rw"}
    assert identify(inv, "/mnt/nas/x/f", opened("/mnt/nas/x/f", None, nfs)) == (
        "nfs4:/mnt/nas",
        "nfs4 /mnt/nas",
        "network",
        {"mountpoint": "/mnt/nas", "fstype": "nfs4", "mount_options": "rw"},
    )
    # a target block that does not parse changes nothing
    assert OpenedTarget.of({"iowatt": {"target": {"path": 3}}}) is None
    assert OpenedTarget.of({"jobs": []}) is None


def test_device_mapper_targets_are_their_mapper_name_with_the_disks_beneath() -> None:
    hdd = {"rotational": True, "model": "Big HDD"}
    inv = inventory(
        bdev("sda", serial_sha256=SERIAL, **hdd),
        bdev("sdb", serial_sha256="b" * 64, **hdd),
        bdev("dm-3", dm_name="vg0-data", slaves=["sda", "sdb"], rotational=False),
        bdev("dm-4", dm_name="vg0-logs", slaves=["sda"]),
        mounts=[mount("/data", "/dev/mapper/vg0-data")],
    )
    by_mapper = identify(inv, "/dev/mapper/vg0-data")
    by_dm = identify(inv, "/dev/dm-3")
    by_mount = identify(inv, "/data/bench")
    assert by_mapper.key == by_dm.key == by_mount.key == "block:vg0-data"
    assert by_mapper.name == "vg0-data" and by_mount.facts["fstype"] == "ext4"
    assert [s["serial_sha256"] for s in by_mapper.facts["slaves"]] == [SERIAL, "b" * 64]
    assert media_of(by_mapper.kind, by_mapper.facts) == "hdd"  # the disks beneath, not dm's flag
    assert identify(inv, "/dev/mapper/vg0-logs").key == "block:vg0-logs"
    # the engine reports dm-3 (after a reboot the same volume may be dm-0): mapped by name
    fs = {"type": "xfs", "mount_point": "/data", "source": "/dev/mapper/vg0-data", "mount_options": "rw"}
    assert identify(inv, "/data/f", opened("/data/f", engine_dev("dm-3"), fs)).key == "block:vg0-data"
    # an agent too old to report mapper names: the mapper path or the mount source names it
    old = inventory(bdev("sda"), bdev("dm-0"))
    assert identify(old, "/data/f", opened("/data/f", engine_dev("dm-0"), fs)).key == "block:vg0-data"
    mapper = "/dev/mapper/crypt"
    assert identify(old, mapper, opened(mapper, engine_dev("dm-0"))).key == "block:crypt"
    assert identify(old, "/dev/dm-0", opened("/dev/dm-0", engine_dev("dm-0"))).key == "block:dm-0"


def test_a_disk_with_a_serial_is_one_device_across_bare_metal_agents_only(session: Session) -> None:
    u = create_user(session)
    disk = bdev("sdb", serial_sha256=SERIAL, model="Lab SSD", size_bytes=960 * 1024**3)
    metal = {**inventory(disk), "virtualization": "none"}
    first = create_agent(session, team=u.team, inventory=metal)
    # the same disk moved to another host (names change; serial, model and size do not)
    second = create_agent(
        session, team=u.team, inventory={**inventory({**disk, "name": "sdc"}), "virtualization": "none"}
    )
    r1 = create_run(session, agent=first.agent, target_path="/dev/sdb")
    r2 = create_run(session, agent=second.agent, target_path="/dev/sdc")
    assert r1.device_id == r2.device_id
    # virtual machines cloned from one image repeat serials: never merged
    vm = create_agent(session, team=u.team, inventory={**inventory(disk), "virtualization": "kvm"})
    assert create_run(session, agent=vm.agent, target_path="/dev/sdb").device_id != r1.device_id
    # nor a disk of the same serial that is not the same model and size
    other = {**inventory({**disk, "size_bytes": 1024**3}), "virtualization": "none"}
    third = create_agent(session, team=u.team, inventory=other)
    assert create_run(session, agent=third.agent, target_path="/dev/sdb").device_id != r1.device_id
    # nor across teams
    v = create_user(session)
    elsewhere = create_agent(session, team=v.team, inventory=metal)
    assert create_run(session, agent=elsewhere.agent, target_path="/dev/sdb").device_id != r1.device_id


def test_a_known_device_is_one_statement_a_new_one_two(session: Session) -> None:
    """A run's or an upload's device: a known one is one SELECT, a new one a SELECT and its INSERT
    (both were an INSERT .. ON CONFLICT DO NOTHING, then a SELECT of the row, for every run created
    and every upload)."""
    from backend.device import service as device_service
    from tests.sql import captured_sql

    u = create_user(session)
    host = create_agent(session, team=u.team, inventory=None).agent
    with captured_sql(session.connection()) as statements:
        made = device_service.resolve_declared(
            session, agent=host, model="Lab SSD", serial=None, capacity_bytes=2 * 10**12, media=None
        )
        assert [q.split()[0] for q in statements] == ["SELECT", "INSERT"], statements
        assert (made.key, made.capacity_bytes, made.agent_id) == (
            "declared:Lab SSD:2000000000000",
            2 * 10**12,
            host.id,
        )
        statements.clear()
        again = device_service.resolve_declared(
            session, agent=host, model="Lab SSD", serial=None, capacity_bytes=2 * 10**12, media=None
        )
        assert [q.split()[0] for q in statements] == ["SELECT"], statements
        assert again is made
    assert session.scalar(select(func.count()).select_from(Device).where(Device.agent_id == host.id)) == 1


def test_a_device_another_transaction_makes_meanwhile_is_the_one_used(engine: Any) -> None:
    """Two transactions making one new device: the second's INSERT waits for the first's row, which
    its statement's snapshot does not see once committed; the device is then read again, not missed.
    Real concurrent transactions on the real database (committed, then cleaned up)."""
    import threading

    from backend.device import service as device_service
    from backend.models import Agent, Team, User
    from tests.sql import blocked_on_locks
    from tests.waiting import wait_until

    with Session(engine) as s:
        u = create_user(s)
        host = create_agent(s, team=u.team, inventory=None).agent
        team_id, user_id, host_id = u.team.id, u.user.id, host.id
        s.commit()
    ident = device_service.Identity("declared:race:?", "race", "block", {"model": "race"})
    first = Session(engine)
    found: list[uuid.UUID] = []
    try:
        first.add(Device(team_id=team_id, agent_id=host_id, key=ident.key, name="race", kind="block"))
        first.flush()
        first_id = first.scalars(select(Device.id).where(Device.agent_id == host_id)).one()

        def second() -> None:
            with Session(engine) as s:
                found.append(device_service._device(s, agent=s.get(Agent, host_id), ident=ident).id)
                s.commit()

        t = threading.Thread(target=second)
        t.start()

        wait_until(
            lambda: blocked_on_locks(engine),
            timeout=30,
            message="the second transaction waits for the first's device",
        )
        first.commit()
        t.join(60)
        assert found == [first_id]
    finally:
        first.close()
        with Session(engine) as s:
            s.execute(Device.__table__.delete().where(Device.agent_id == host_id))
            s.delete(s.get(Agent, host_id))
            s.execute(text("DELETE FROM audit_events WHERE team_id = :t"), {"t": team_id})
            s.delete(s.get(Team, team_id))
            s.delete(s.get(User, user_id))
            s.commit()
