"""Environments as a model (issue 27 part 3, ADR 0035): the topology is typed and checked (422s
name the field), a run records its environment as it was (editing it rewrites no run), compare
and views group and filter by any topology field, and the server suggests a topology from what
an agent reports."""

import uuid
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from backend.environment import topology as topo
from backend.environment.schemas import EnvironmentTopology
from tests.backend.test_compare import _entered
from tests.backend.test_result_upload import FIO
from tests.factories import UserCtx, create_agent, create_user

RAID10 = {
    "raid": {"level": "raid10", "implementation": "hardware", "members": [{"model": "PM1733", "count": 4}]},
    "controller": {"model": "MegaRAID 9560", "cache_policy": "write_back", "cache_protected": True},
    "fabric": {"transport": "sas", "link_speed_bps": 12_000_000_000},
    "filesystem": {"fstype": "xfs", "mount_options": "rw,noatime"},
}


def _env(client: TestClient, u: UserCtx, name: str, kind: str = "das", **over: Any) -> dict[str, Any]:
    r = client.post(
        "/api/v1/environments",
        headers=u.headers,
        json={"team_id": str(u.team.id), "name": name, "kind": kind, **over},
    )
    assert r.status_code == 201, r.text
    return dict(r.json())


def _field(r: Any) -> str:
    assert r.status_code == 422, r.text
    return str(r.json()["detail"][0]["field"])


def test_topology_is_typed_checked_and_read_back(client: TestClient, session: Session) -> None:
    u = create_user(session)
    env = _env(client, u, "rack 3", topology=RAID10)
    assert env["topology"]["raid"]["level"] == "raid10" and env["member_count"] == 4
    assert env["protection"] == "raid10" and env["topology"]["nas"] is None  # served with every field
    assert env["topology"]["fabric"]["link_speed_bps"] == 12_000_000_000
    plain = _env(client, u, "old style", kind="raid")  # a label as before: kind kept, nothing known
    assert plain["kind"] == "raid" and plain["topology"]["raid"] is None and plain["protection"] is None
    url = f"/api/v1/environments/{env['id']}"
    bad = {**RAID10, "raid": {"level": "raid10", "member_count": 3, "members": [{"model": "x", "count": 3}]}}
    assert (
        _field(client.patch(url, json={"topology": bad}, headers=u.headers)) == "topology.raid.member_count"
    )
    mismatch = {"raid": {"level": "raid1", "member_count": 3, "members": [{"model": "x", "count": 2}]}}
    assert (
        _field(client.patch(url, json={"topology": mismatch}, headers=u.headers))
        == "topology.raid.member_count"
    )
    slow = {"fabric": {"transport": "fc", "link_speed_bps": -1}}
    assert (
        _field(client.patch(url, json={"topology": slow}, headers=u.headers))
        == "topology.fabric.link_speed_bps"
    )
    assert _field(
        client.patch(url, json={"topology": {"fabric": {"transport": "scsi"}}}, headers=u.headers)
    ) == ("topology.fabric.transport")
    nas = {"nas": {"protocol": "nfs", "version": "4.2"}}
    assert _field(client.patch(url, json={"topology": nas}, headers=u.headers)) == "topology.nas"
    assert _field(client.patch(url, json={"topology": None}, headers=u.headers)) == "topology"
    # the kind and the topology are checked together: NAS with its protocol is fine ...
    ok = client.patch(url, json={"kind": "nas", "topology": nas}, headers=u.headers)
    assert ok.status_code == 200 and ok.json()["topology"]["nas"]["version"] == "4.2", ok.text
    # ... and a kind the protocol does not fit is refused, naming the topology's field
    assert _field(client.patch(url, json={"kind": "local"}, headers=u.headers)) == "topology.nas"
    cleared = client.patch(url, json={"kind": "local", "topology": {}}, headers=u.headers).json()
    assert cleared["topology"]["nas"] is None and cleared["kind"] == "local"


def test_a_run_keeps_its_environment_as_it_was(client: TestClient, session: Session) -> None:
    u = create_user(session)
    env = _env(client, u, "lab", topology=RAID10, pue=1.4)
    # uploaded from CI: the snapshot is taken when the run is stored
    r = client.post(
        "/api/v1/results",
        headers=u.headers,
        json={
            "team_id": str(u.team.id),
            "upload_id": f"ci-{uuid.uuid4().hex[:8]}",
            "host": "ci-runner-1",
            "device": {"model": "PM1733"},
            "environment_id": env["id"],
            "name": "nightly",
            "engine_result": FIO,
            "started_at": "2026-11-21T10:00:00Z",
            "finished_at": "2026-11-21T10:00:02Z",
        },
    )
    assert r.status_code == 201, r.text
    run_id = r.json()["run_id"]
    before = client.get(f"/api/v1/runs/{run_id}/environment", headers=u.headers).json()
    assert before["snapshot"]["topology"]["raid"]["level"] == "raid10" and before["changed"] == []
    new_topology = {**RAID10, "raid": {"level": "raid1", "members": [{"model": "PM1733", "count": 2}]}}
    patched = client.patch(
        f"/api/v1/environments/{env['id']}",
        json={"name": "lab (rebuilt)", "pue": 1.2, "topology": new_topology},
        headers=u.headers,
    )
    assert patched.status_code == 200, patched.text
    after = client.get(f"/api/v1/runs/{run_id}/environment", headers=u.headers).json()
    snap = after["snapshot"]
    assert (snap["name"], snap["pue"], snap["topology"]["raid"]["level"]) == ("lab", 1.4, "raid10")
    assert snap["topology"]["raid"]["members"][0]["count"] == 4
    assert {"name", "pue", "topology.raid.level", "topology.raid.members"} <= set(after["changed"])
    other = create_user(session)
    assert client.get(f"/api/v1/runs/{run_id}/environment", headers=other.headers).status_code == 404


def test_compare_groups_and_filters_by_topology(client: TestClient, session: Session) -> None:
    u = create_user(session)
    a = create_agent(session, team=u.team)
    r10 = _env(client, u, "r10", topology=RAID10)
    r1 = _env(client, u, "r1", topology={"raid": {"level": "raid1", "member_count": 2}})
    san = _env(
        client, u, "san", kind="san", topology={"fabric": {"transport": "fc", "link_speed_bps": 32 * 10**9}}
    )
    runs = [
        _entered(session, a.agent, "/srv/a", 0, environment_id=uuid.UUID(r10["id"])),
        _entered(session, a.agent, "/srv/a", 0, environment_id=uuid.UUID(r10["id"])),
        _entered(session, a.agent, "/srv/b", 1, environment_id=uuid.UUID(r1["id"])),
        _entered(session, a.agent, "/srv/c", 1, environment_id=uuid.UUID(san["id"])),
    ]
    ids = ",".join(str(r.id) for r in runs)
    c = client.get(f"/api/v1/compare?runs={ids}&group_by=env.raid_level", headers=u.headers)
    assert c.status_code == 200, c.text
    cols = {col["label"]: len(col["run_ids"]) for col in c.json()["columns"]}
    assert cols == {"RAID level: raid10": 2, "RAID level: raid1": 1, "RAID level: not set": 1}
    kinds = client.get(f"/api/v1/compare?runs={ids}&group_by=env.kind", headers=u.headers).json()
    assert [col["label"] for col in kinds["columns"]] == ["kind: das", "kind: san"]
    # filtered: only the RAID sets (the SAN's run is left out and said so)
    f = client.get(
        f"/api/v1/compare?runs={ids}&group_by=env.raid_level&env=raid_level:raid10&env=raid_level:raid1",
        headers=u.headers,
    ).json()
    assert len(f["columns"]) == 2 and f["filtered_out"] == [str(runs[3].id)]
    only_san = client.get(
        f"/api/v1/compare?runs={ids}&env=kind:san&env=transport:fc", headers=u.headers
    ).json()
    assert [r["id"] for r in only_san["runs"]] == [str(runs[3].id)]
    assert _field(client.get(f"/api/v1/compare?runs={ids}&env=colour:red", headers=u.headers)) == "env.0"
    assert _field(client.get(f"/api/v1/compare?runs={ids}&env=kind:nas", headers=u.headers)) == "env"
    assert (
        _field(client.get(f"/api/v1/compare?runs={ids}&group_by=env.colour", headers=u.headers)) == "group_by"
    )


def test_topology_suggestion_from_an_agents_inventory(client: TestClient, session: Session) -> None:
    u = create_user(session)
    inventory = {
        "hostname": "h",
        "block_devices": [
            {
                "name": "nvme0n1",
                "model": "PM1733",
                "size_bytes": 3_840_000_000_000,
                "rotational": False,
                "interface": "nvme",
            },
            {
                "name": "nvme1n1",
                "model": "PM1733",
                "size_bytes": 3_840_000_000_000,
                "rotational": False,
                "interface": "nvme",
            },
        ],  # fmt: skip
        "mounts": [{"mountpoint": "/srv/pool", "source": "/dev/nvme0n1", "fstype": "btrfs", "options": "rw"}],
        "topology": {
            "mounts": [
                {
                    "mountpoint": "/srv/pool",
                    "source": "/dev/nvme0n1",
                    "fstype": "btrfs",
                    "options": "rw,noatime,space_cache=v2",
                    "major": 0,
                    "minor": 40,
                    "disk": None,
                }
            ],  # fmt: skip
            "btrfs": [
                {
                    "uuid": "u1",
                    "label": None,
                    "data_profile": "raid1",
                    "metadata_profile": "raid1",
                    "devices": ["nvme0n1", "nvme1n1"],
                }
            ],  # fmt: skip
        },
    }
    a = create_agent(session, team=u.team, inventory=inventory)
    env = _env(client, u, "pool")
    url = f"/api/v1/environments/{env['id']}/topology-suggestion"
    assert _field(client.get(url, headers=u.headers)) == "agent_id"  # no run yet: name one
    r = client.get(f"{url}?agent_id={a.agent.id}&target_path=/srv/pool/bench", headers=u.headers)
    assert r.status_code == 200, r.text
    t = r.json()["topology"]
    assert (t["raid"]["level"], t["raid"]["implementation"]) == ("raid1", "btrfs")
    assert t["raid"]["members"] == [
        {"model": "PM1733", "count": 2, "capacity_bytes": 3_840_000_000_000, "media": "nvme"}
    ]
    assert (
        t["fabric"]["transport"] == "nvme" and t["filesystem"]["mount_options"] == "rw,noatime,space_cache=v2"
    )
    # what it suggests is a valid topology for the environment as it is
    assert (
        client.patch(f"/api/v1/environments/{env['id']}", json={"topology": t}, headers=u.headers).status_code
        == 200
    )
    other = create_user(session)
    assert (
        client.get(f"{url}?agent_id={a.agent.id}&target_path=/srv", headers=other.headers).status_code == 404
    )


@pytest.mark.parametrize(
    ("snapshot", "facet", "value"),
    [
        (None, "kind", "none"),
        ({"kind": "san", "topology": {}}, "kind", "san"),
        ({"kind": "das", "topology": RAID10}, "member_count", "4"),
        ({"kind": "das", "topology": RAID10}, "member_model", "PM1733"),
        ({"kind": "das", "topology": RAID10}, "link_speed_bps", "12000000000"),
        ({"kind": "nas", "topology": {"nas": {"protocol": "nfs", "version": "3"}}}, "nas_version", "nfs 3"),
        ({"kind": "das", "topology": {"raid": "not a raid"}}, "raid_level", "none"),  # unreadable: unknown
        ({"kind": "das", "pue": 1.5, "topology": {}}, "pue", "1.5"),
    ],
)
def test_facets(snapshot: dict[str, Any] | None, facet: str, value: str) -> None:
    assert topo.facet_value(snapshot, facet) == value
    assert topo.matches(snapshot, [(facet, value.upper())])


def test_protection_for_procurement() -> None:
    assert topo.protection(EnvironmentTopology.model_validate(RAID10)) == "raid10"
    assert topo.protection(EnvironmentTopology.model_validate({"raid": {"level": "raid1c3"}})) == "replica:3"
    assert topo.protection(EnvironmentTopology.model_validate({"raid": {"level": "raidz2"}})) is None
    assert topo.protection(EnvironmentTopology()) is None


def test_views_group_and_filter_by_topology(client: TestClient, session: Session) -> None:
    """The TPC-H view's environment rows (the report's Local and SAN) named by a topology field, and
    only the runs of one kind; a run given its environment after it was stored records that one."""
    from backend.models import Run
    from tests.backend.test_db_results import tpch_doc, tpch_doc_b, tpch_spec
    from tests.backend.test_file_results import upload_run, view

    u = create_user(session)
    local = _env(client, u, "rack", kind="local", topology={"raid": {"level": "raid1", "member_count": 2}})
    san = _env(client, u, "array", kind="san", topology={"fabric": {"transport": "fc"}})
    ids: list[uuid.UUID] = []
    for name, doc in (("hdd-host", tpch_doc()), ("ram-host", tpch_doc_b())):
        a = create_agent(session, team=u.team, name=name)
        for env in (local, san):
            rid = upload_run(client, session, a, tpch_spec(), doc, preset="tpch-smoke", target="/srv/bench")
            run = session.get(Run, rid)
            assert run is not None and run.environment_snapshot is None
            run.environment_id = uuid.UUID(env["id"])
            session.flush()
            assert run.environment_snapshot is not None and run.environment_snapshot["name"] == env["name"]
            ids.append(rid)
    t = view(client, u, "tpch-qphh", ids, group_by="kind")
    groups = [row["group"] for row in t["rows"]]
    assert groups[:2] == ["qphh:kind: local", "qphh:kind: san"], groups
    only = view(client, u, "tpch-qphh", ids, env="raid_level:raid1")
    assert [row["group"] for row in only["rows"]] == ["qphh:rack"]
    r = client.get(
        "/api/v1/views/table",
        params={"view": "tpch-qphh", "runs": ",".join(map(str, ids)), "env": "raid_level:raid10"},
        headers=u.headers,
    )
    assert _field(r) == "env"


def _paths(doc: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    if isinstance(doc, dict):
        return [prefix] + [p for k, v in doc.items() for p in _paths(v, (*prefix, k))]
    if isinstance(doc, list):
        return [prefix] + [p for i, v in enumerate(doc) for p in _paths(v, (*prefix, i))]
    return [prefix]


def test_hostile_topologies_are_4xx_never_500(client: TestClient, session: Session) -> None:
    """Every field of a full topology, down to the member list's items, replaced by hostile values."""
    import copy

    u = create_user(session)
    full = {**RAID10, "nas": {"protocol": "nfs", "version": "4.2"}}
    hostile: list[Any] = [None, -1, 2**70, "x" * 5000, "\x00", {}]
    for path in _paths(full):
        for value in hostile:
            doc: Any = copy.deepcopy({"topology": full})
            node = doc
            for key in ("topology", *path)[:-1]:
                node = node[key]
            node[("topology", *path)[-1]] = value
            r = client.post(
                "/api/v1/environments",
                headers=u.headers,
                json={"team_id": str(u.team.id), "name": f"h-{uuid.uuid4().hex[:8]}", "kind": "nas", **doc},
            )
            assert r.status_code in (201, 422), (path, value, r.status_code, r.text[:300])


def test_one_list_of_fields_in_every_tier() -> None:
    """The facets: topology.FACETS, the schema's Facet, compare's group_by values and the UI's list."""
    import re
    import typing
    from pathlib import Path

    from backend.compare.schemas import GroupBy

    names = set(topo.FACETS)
    assert set(topo.FACET_NAMES) == names
    assert {g[4:] for g in typing.get_args(GroupBy) if g.startswith("env.")} == names
    ts = (Path(__file__).parents[2] / "frontend/src/lib/envFacets.ts").read_text()
    block = ts[ts.index("export const ENV_FACETS = [") : ts.index("] as const;")]
    assert set(re.findall(r'"([a-z_]+)"', block)) == names
