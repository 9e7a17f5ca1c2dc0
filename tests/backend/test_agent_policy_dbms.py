"""Issue 15 on the server's agent side: the reported policy's `allowed_dbms` (the host's consent to
TPC-H runs starting a DBMS) and the inventory's `capabilities` (the workload kinds the agent runs)
are stored, checked by libs/policy's one model and served; agents that report neither read as
none."""

from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from tests.factories import INVENTORY, create_agent, create_user

CAPS = {"workload_kinds": ["block", "postmark", "vdbench", "heap_btree", "tpch"], "tpch_dbms": ["postgresql"]}


def inventory(**policy_over: Any) -> dict[str, Any]:
    pol = {
        "targets": [{"path": "/srv/bench", "kind": "directory", "writable": True}],
        "meters": [],
        "default_meter": None,
        "limits": {},
        **policy_over,
    }
    return {**INVENTORY, "policy": pol, "capabilities": CAPS}


def test_allowed_dbms_and_capabilities_are_stored_and_served(client: TestClient, session: Session) -> None:
    u = create_user(session)
    a = create_agent(session, team=u.team, inventory={k: v for k, v in INVENTORY.items() if k != "policy"})
    r = client.put(
        f"/api/v1/agents/{a.agent.id}/inventory",
        json=inventory(allowed_dbms=["postgresql"]),
        headers=a.headers,
    )
    assert r.status_code == 200, r.text
    assert r.json()["policy"]["allowed_dbms"] == ["postgresql"]
    got = client.get(f"/api/v1/agents/{a.agent.id}", headers=u.headers).json()
    assert got["policy"]["allowed_dbms"] == ["postgresql"]
    # the defaults stored beside what the agent sent (an agent of wire protocol 1 sends no
    # protocol, engine version or features)
    assert got["inventory"]["capabilities"] == {
        **CAPS,
        "multi_target": False,
        "protocol": None,
        "engine_version": None,
        "engine_features": None,
    }
    # an agent before issue 15 reports neither: no consent, no capabilities
    r = client.put(f"/api/v1/agents/{a.agent.id}/inventory", json=inventory(), headers=a.headers)
    assert r.status_code == 200 and r.json()["policy"]["allowed_dbms"] == []
    old = {k: v for k, v in inventory().items() if k != "capabilities"}
    r = client.put(f"/api/v1/agents/{a.agent.id}/inventory", json=old, headers=a.headers)
    assert r.status_code == 200, r.text
    assert (
        client.get(f"/api/v1/agents/{a.agent.id}", headers=u.headers).json()["inventory"].get("capabilities")
        is None
    )


def test_a_bad_consent_list_is_422_naming_the_entry(client: TestClient, session: Session) -> None:
    u = create_user(session)
    a = create_agent(session, team=u.team)
    for bad, field in ((["postgresql", "postgresql"], "allowed_dbms.1"), (["a b"], "allowed_dbms.0")):
        r = client.put(
            f"/api/v1/agents/{a.agent.id}/inventory", json=inventory(allowed_dbms=bad), headers=a.headers
        )
        assert r.status_code == 422, r.text
        assert field in r.text, r.text
