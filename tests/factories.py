"""Typed factories for test data (they flush, never commit)."""

import uuid
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from sqlalchemy.orm import Session

from backend.auth import service as auth_service
from backend.kit.security import AGENT_TOKEN_PREFIX, new_token, token_hash
from backend.kit.time import utcnow
from backend.models import Agent, Membership, Role, Run, RunStatus, Team, User  # noqa: F401
from backend.workload.builtin import QUICK

MiB = 1024 * 1024

INVENTORY: dict[str, Any] = {
    "hostname": "host-a",
    "block_devices": [
        {"name": "vda", "model": "virtio disk", "rotational": True, "size_bytes": 256 * 1024**3}
    ],
    "mounts": [
        {"mountpoint": "/", "source": "/dev/vda", "fstype": "ext4", "options": "rw,relatime"},
        {"mountpoint": "/dev/shm", "source": "tmpfs", "fstype": "tmpfs", "options": "rw,nosuid,nodev"},
    ],
    # the host's policy (ADR 0009): the targets runs may name, exactly as listed
    "policy": {
        "targets": [
            *({"path": p, "kind": "directory", "writable": True} for p in ("/srv/bench", "/srv/a", "/srv/b")),
            *({"path": p, "kind": "directory", "writable": True} for p in ("/dev/shm/x", "/dev/shm/b")),
        ],
        "meters": [{"name": "plug", "driver": "shelly", "tier": "plug"}],
    },
    # what the agent build runs (issue 15): the server refuses other kinds at queue time
    "capabilities": {
        "workload_kinds": ["block", "postmark", "vdbench", "tpch", "heap_btree"],
        "tpch_dbms": ["postgresql", "mariadb"],
    },
}


@dataclass
class UserCtx:
    user: User
    team: Team
    token: str

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}


@dataclass
class AgentCtx:
    agent: Agent
    token: str

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}


def create_user(
    session: Session,
    *,
    role: Role = Role.admin,
    team: Team | None = None,
    email: str | None = None,
    password: str = "correct horse",
    email_verified: bool = True,
    instance_admin: bool = False,
) -> UserCtx:
    email = email or f"u-{uuid.uuid4().hex[:8]}@example.test"
    user = auth_service.create_user(
        session,
        email=email,
        password=password,
        display_name="Test User",
        email_verified=email_verified,
        instance_admin=instance_admin,
    )
    if team is None:
        team = Team(name=f"team-{uuid.uuid4().hex[:8]}")
        session.add(team)
        session.flush()
    session.add(Membership(user_id=user.id, team_id=team.id, role=role))
    raw, _ = auth_service.issue_token(session, user_id=user.id, name="test", kind="personal", ttl_s=None)
    session.flush()
    return UserCtx(user=user, team=team, token=raw)


def create_agent(
    session: Session,
    *,
    team: Team,
    name: str | None = None,
    online: bool = True,
    inventory: dict[str, Any] | None = None,
) -> AgentCtx:
    raw = new_token(AGENT_TOKEN_PREFIX)
    agent = Agent(
        team_id=team.id,
        name=name or f"agent-{uuid.uuid4().hex[:6]}",
        hostname="host-a",
        token_hash=token_hash(raw),
        token_expires_at=utcnow() + timedelta(days=30),
        agent_version="test",
        state="idle",
        inventory=INVENTORY if inventory is None else inventory,
        online=online,
        last_heartbeat_at=utcnow() if online else None,
    )
    session.add(agent)
    session.flush()
    return AgentCtx(agent=agent, token=raw)


def create_run(
    session: Session,
    *,
    agent: Agent,
    status: RunStatus = RunStatus.queued,
    target_path: str = "/srv/bench",
    **overrides: Any,
) -> Run:
    from backend.device.service import resolve

    device = resolve(session, agent=agent, target_path=target_path)
    run = Run(
        team_id=agent.team_id,
        name=overrides.pop("name", "test run"),
        status=status,
        agent_id=agent.id,
        device_id=device.id,
        workload_spec=QUICK.model_dump(mode="json"),
        target_path=target_path,
        **overrides,
    )
    session.add(run)
    session.flush()
    return run


def engine_document(
    *,
    jobs: int = 1,
    bs: int = 4096,
    ios: int = 1000,
    series_points: int = 3,
    ioengine: str = "psync",
    kernel_worker_cpu: float = 87.527341,
    target_nowait: bool = False,
) -> dict[str, Any]:
    """A fio-shaped engine document with internally consistent numbers.

    io_uring jobs carry the engine's `iowatt.io_uring` object (the io-wq kernel workers' CPU, % of
    one CPU, and whether the target has nowait support); other ioengines have none, as the engine.
    """
    out = []
    for i in range(jobs):
        runtime_ms = 1000 * series_points
        read = {
            "io_bytes": ios * bs,
            "io_kbytes": ios * bs // 1024,
            "bw_bytes": ios * bs * 1000 // runtime_ms,
            "bw": ios * bs // runtime_ms,
            "iops": ios * 1000 / runtime_ms,
            "runtime": runtime_ms,
            "total_ios": ios,
            "short_ios": 0,
            "drop_ios": 0,
            "clat_ns": {
                "min": 1000,
                "max": 90000,
                "mean": 5000.0,
                "stddev": 10.0,
                "N": ios,
                "percentile": {"50.000000": 4096, "99.000000": 40960, "99.900000": 81920},
            },
            "lat_ns": {"min": 1100, "max": 90100, "mean": 5100.0, "stddev": 10.0, "N": ios},
        }
        empty = {k: 0 for k in ("io_bytes", "io_kbytes", "bw_bytes", "bw", "iops", "runtime", "total_ios")}
        out.append(
            {
                "jobname": f"job{i}",
                "groupid": 0,
                "error": 0,
                "job options": {"rw": "randread", "bs": str(bs)},
                "read": read,
                "write": empty,
                "usr_cpu": 5.0,
                "sys_cpu": 20.0,
                "job_runtime": runtime_ms,
                "iowatt": {
                    "ioengine": ioengine,
                    "runtime_ns": runtime_ms * 1_000_000,
                    "options": {"rw": "randread", "bs_bytes": bs, "ioengine": ioengine},
                    "series": [
                        {
                            "t_ns": (k + 1) * 1_000_000_000,
                            "read_iops": ios / series_points,
                            "read_bw_bytes": ios * bs // series_points,
                            "read_clat_p99_ns": 40960,
                            "write_iops": 0.0,
                            "write_bw_bytes": 0,
                            "write_clat_p99_ns": None,
                        }
                        for k in range(series_points)
                    ],
                    **(
                        {
                            "io_uring": {
                                "target_nowait": target_nowait,
                                "force_async_every": 0,
                                "registered_ring_fd": True,
                                "kernel_worker_cpu_ns": int(kernel_worker_cpu / 100 * runtime_ms * 1e6),
                                "kernel_worker_cpu": kernel_worker_cpu,
                            }
                        }
                        if ioengine == "io_uring"
                        else {}
                    ),
                },
            }
        )
    return {"fio version": "iowatt-engine-test", "jobs": out}


def create_result(
    session: Session, *, run: Run, jobs: list[dict[str, Any]], bins: dict[str, dict[str, int]] | None = None
) -> None:
    """Results entered directly (as published figures would be): key figures per job, no series.

    Each job dict: name, rw, bs_bytes and any ResultJob column (read_bw_bytes, read_iops, ...).
    """
    from datetime import UTC, datetime

    from backend.models import ResultJob, RunResult

    doc_jobs = []
    for j in jobs:
        entry: dict[str, Any] = {"jobname": j["name"]}
        for side in ("read", "write"):
            b = (bins or {}).get(f"{j['name']}:{side}")
            if b:
                entry[side] = {"clat_ns": {"bins": b}}
        doc_jobs.append(entry)
    now = datetime.now(UTC)
    session.add(
        RunResult(
            run_id=run.id,
            upload_id=uuid.uuid4(),
            engine_result={"jobs": doc_jobs},
            engine_exit_code=0,
            agent_version="test",
            started_at=now,
            finished_at=now,
            uploaded_at=now,
        )
    )
    runtime_s = 5
    for i, j in enumerate(jobs):
        cols = {k: v for k, v in j.items() if k != "name"}
        bs = j["bs_bytes"]
        for side in ("read", "write"):  # fill the rest of a side from whichever figure was given
            if f"{side}_bw_bytes" in j or f"{side}_iops" in j:
                iops = cols.setdefault(f"{side}_iops", j.get(f"{side}_bw_bytes", 0) / bs)
                bw = cols.setdefault(f"{side}_bw_bytes", int(iops * bs))
                cols.setdefault(f"{side}_io_bytes", bw * runtime_s)
                cols.setdefault(f"{side}_total_ios", max(1, int(iops * runtime_s)))
        session.add(
            ResultJob(
                run_id=run.id,
                job_index=i,
                name=j["name"],
                runtime_ns=runtime_s * 10**9,
                usr_cpu_pct=1.0,
                sys_cpu_pct=2.0,
                **cols,
            )
        )
    run.status = RunStatus.succeeded
    session.flush()
