import csv
import io
import uuid
from datetime import UTC, datetime

import iowatt_energy as ie
from sqlalchemy.orm import Session

from backend.audit import service as audit
from backend.auth.principal import UserPrincipal
from backend.environment import repository
from backend.environment import topology as topo
from backend.environment.schemas import (
    EnvironmentCreate,
    EnvironmentRead,
    EnvironmentSnapshot,
    EnvironmentTopology,
    EnvironmentUpdate,
    GridSeriesImported,
    RunEnvironment,
    TopologySuggestion,
)
from backend.errors import Conflict, Invalid, NotFound
from backend.jobs import enqueue
from backend.kit.repository import add_unique, update_unique
from backend.kit.schema import NUL
from backend.models import Environment, Role
from backend.run import deletion as run_deletion

MAX_CSV_ROWS = 24 * 366 * 5


def _get(session: Session, principal: UserPrincipal, env_id: uuid.UUID) -> Environment:
    env = repository.get(session, env_id)
    if env is None or env.team_id not in principal.team_ids:
        raise NotFound("environment not found")
    return env


def to_read(session: Session, envs: list[Environment]) -> list[EnvironmentRead]:
    counts = repository.hour_counts(session, [e.id for e in envs])
    out = []
    for e in envs:
        if e.grid_g_per_kwh is not None:
            g, src = e.grid_g_per_kwh, e.grid_source or "set by the team"
        else:
            d = ie.grid_intensity(e.region or ie.DEFAULT_REGION)
            g, src = d.g_per_kwh, f"{d.name} {d.year}: {d.source}"
        t = EnvironmentTopology.read(e.topology)
        out.append(
            EnvironmentRead(
                id=e.id,
                team_id=e.team_id,
                name=e.name,
                kind=e.kind,
                description=e.description,
                notes=e.notes,
                region=e.region,
                grid_g_per_kwh=e.grid_g_per_kwh,
                grid_source=e.grid_source,
                pue=e.pue,
                electricity_price_per_kwh=e.electricity_price_per_kwh,
                currency=e.currency,
                topology=t,
                protection=topo.protection(t),
                member_count=topo.member_count(t.raid),
                effective_g_per_kwh=g,
                effective_source=src,
                hourly_hours=counts.get(e.id, 0),
                created_at=e.created_at,
            )
        )
    return out


def create(session: Session, *, principal: UserPrincipal, body: EnvironmentCreate) -> Environment:
    principal.require(body.team_id, Role.member)
    topo.check(body.kind, body.topology)
    env = Environment(**body.model_dump(exclude={"topology"}), topology=body.topology.stored())
    add_unique(
        session,
        env,
        Conflict(f"an environment named {body.name!r} exists in this team", code="environment_name_taken"),
    )
    audit.record(
        session,
        team_id=env.team_id,
        action="environment.created",
        target_kind="environment",
        target_id=env.id,
        user_id=principal.user_id,
        details={"name": env.name},
    )
    return env


def update(
    session: Session, *, principal: UserPrincipal, env_id: uuid.UUID, body: EnvironmentUpdate
) -> Environment:
    env = _get(session, principal, env_id)
    principal.require(env.team_id, Role.member)
    values = body.model_dump(exclude_unset=True)
    for field, value in values.items():
        if field in ("name", "kind", "pue", "currency", "description", "notes", "topology") and value is None:
            raise Invalid(field, "cannot be null")
    if "topology" in values or "kind" in values:  # the topology as it will be, against the kind as it will be
        t = body.topology if body.topology is not None else EnvironmentTopology.read(env.topology)
        topo.check(values.get("kind", env.kind), t)
        if body.topology is not None:
            values["topology"] = body.topology.stored()
    update_unique(
        session,
        env,
        values,
        Conflict(
            f"an environment named {values.get('name')!r} exists in this team",
            code="environment_name_taken",
        ),
    )
    enqueue(session, "energy.recompute_environment", environment_id=str(env.id))
    return env


def list_environments(
    session: Session, *, principal: UserPrincipal, team_id: uuid.UUID | None = None
) -> list[Environment]:
    return repository.list_in_teams(session, principal.teams_for(team_id))


def import_grid_series(
    session: Session, *, principal: UserPrincipal, env_id: uuid.UUID, csv_text: str
) -> GridSeriesImported:
    """Replace the environment's hourly series from CSV `hour_utc,g_per_kwh` (ISO 8601 hours, UTC)."""
    env = _get(session, principal, env_id)
    principal.require(env.team_id, Role.member)
    if NUL in csv_text:
        raise Invalid("body", "must not contain a NUL character")
    try:  # newline="" as the csv module asks: a lone CR ends a line instead of raising
        rows = list(csv.reader(io.StringIO(csv_text, newline="")))
    except csv.Error as exc:
        raise Invalid("body", f"not a CSV document: {exc}") from None
    if rows and rows[0] and not rows[0][0][:1].isdigit():
        header = [h.strip().lower() for h in rows[0]]
        if header[:2] != ["hour_utc", "g_per_kwh"]:
            raise Invalid("body", "the CSV header must be: hour_utc,g_per_kwh")
        rows = rows[1:]
    if not rows:
        raise Invalid("body", "no rows: expected lines of hour_utc,g_per_kwh")
    if len(rows) > MAX_CSV_ROWS:
        raise Invalid("body", f"at most {MAX_CSV_ROWS} hours per import")
    series: dict[datetime, float] = {}
    for n, row in enumerate(rows, start=2 if csv_text[:1].isalpha() else 1):
        if len(row) != 2:
            raise Invalid(f"body.line.{n}", "expected two columns: hour_utc,g_per_kwh")
        try:
            hour = datetime.fromisoformat(row[0].strip().replace("Z", "+00:00"))
            g = float(row[1])
        except ValueError as exc:
            raise Invalid(f"body.line.{n}", f"cannot read {','.join(row)!r}: {exc}") from exc
        if hour.tzinfo is None:
            raise Invalid(f"body.line.{n}", "the hour needs a UTC offset, e.g. 2026-01-01T00:00:00Z")
        hour = hour.astimezone(UTC)
        if hour.minute or hour.second or hour.microsecond:
            raise Invalid(f"body.line.{n}", "hours must start on the hour")
        if not 0 <= g <= 2000:
            raise Invalid(f"body.line.{n}", "g_per_kwh must be between 0 and 2000")
        if hour in series:
            raise Invalid(f"body.line.{n}", f"hour {hour.isoformat()} appears twice")
        series[hour] = g
    repository.replace_series(session, env.id, series)
    enqueue(session, "energy.recompute_environment", environment_id=str(env.id))
    hours = sorted(series)
    return GridSeriesImported(
        environment_id=env.id, hours=len(hours), first_hour_utc=hours[0], last_hour_utc=hours[-1]
    )


def delete(session: Session, *, principal: UserPrincipal, env_id: uuid.UUID, force: bool) -> None:
    """An admin deletes an environment (ADR 0021). Runs or campaigns that name it: 409 saying what
    ("used by 12 runs and 1 campaign", ids in the body), unless `force`, which detaches the runs
    (they keep their results and the energy figures computed so far) and leaves the
    campaigns' recorded requests as they were. Its hourly grid series goes with it."""
    env = _get(session, principal, env_id)
    principal.require(env.team_id, Role.admin)
    used = run_deletion.usage(session, column="environment_id", value=env.id)
    campaigns = repository.campaigns_naming(session, env.team_id, env.id)
    if (used.total or campaigns) and not force:
        parts = [f"{used.total} run{'s' if used.total != 1 else ''}"] if used.total else []
        if campaigns:
            parts.append(f"{len(campaigns)} campaign{'s' if len(campaigns) != 1 else ''}")
        raise Conflict(
            f"used by {' and '.join(parts)}; delete them first, or add ?force=true to keep them "
            "without this environment",
            code="environment_in_use",
            detail={
                "run_count": used.total,
                "runs": used.run_ids,
                "campaign_count": len(campaigns),
                "campaigns": campaigns,
            },
        )
    detached = run_deletion.detach(session, column="environment_id", value=env.id) if used.total else 0
    audit.record(
        session,
        team_id=env.team_id,
        action="environment.deleted",
        target_kind="environment",
        target_id=env.id,
        user_id=principal.user_id,
        details={"name": env.name, "detached_runs": detached, "campaigns": campaigns},
    )
    session.delete(env)
    session.flush()


def _changed(snapshot: dict[str, object], env: Environment | None) -> list[str]:
    """The fields whose value the environment has now differs from the snapshot's (dotted paths)."""
    if env is None:
        return []
    now = env.snapshot(datetime.now(UTC))

    def flat(prefix: str, value: object) -> dict[str, object]:
        if isinstance(value, dict):
            out: dict[str, object] = {}
            for k, v in value.items():
                out.update(flat(f"{prefix}.{k}" if prefix else str(k), v))
            return out or {prefix: {}}
        return {prefix: value}

    skip = {"recorded_at", "version"}
    a = {k: v for k, v in flat("", snapshot).items() if k not in skip}
    b = {k: v for k, v in flat("", now).items() if k not in skip}
    return sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k) and k != "topology")


def run_environment(session: Session, *, principal: UserPrincipal, run_id: uuid.UUID) -> RunEnvironment:
    """A run's environment as it was when the run was stored, and what has changed since."""
    run = repository.run_in_teams(session, run_id, principal.team_ids)
    if run is None:
        raise NotFound("run not found")
    snap = None
    if run.environment_snapshot:
        try:
            snap = EnvironmentSnapshot.model_validate(run.environment_snapshot)
        except ValueError:
            snap = None
    env = repository.get(session, run.environment_id) if run.environment_id else None
    if env is not None and snap is not None and env.id != snap.environment_id:
        env = None
    return RunEnvironment(
        run_id=run.id,
        environment_id=run.environment_id,
        snapshot=snap,
        changed=_changed(run.environment_snapshot or {}, env) if snap else [],
    )


def suggest_topology(
    session: Session,
    *,
    principal: UserPrincipal,
    env_id: uuid.UUID,
    agent_id: uuid.UUID | None,
    target_path: str | None,
) -> TopologySuggestion:
    """What the agent's inventory shows under a target: the named agent and path, else those of the
    environment's newest run. Nothing is stored: the team edits the environment with it."""
    env = _get(session, principal, env_id)
    if agent_id is None or target_path is None:
        latest = repository.latest_run_target(session, env.id)
        if latest is None:
            raise Invalid(
                "agent_id", "no agent has run in this environment yet: name an agent_id and a target_path"
            )
        agent_id, target_path = agent_id or latest[0], target_path or latest[1]
    if not target_path.startswith("/"):
        raise Invalid("target_path", "an absolute path on the agent's host")
    agent = repository.agent_in_team(session, agent_id, env.team_id)
    if agent is None:
        raise Invalid("agent_id", "no such agent in the environment's team")
    topology, evidence = topo.suggest(
        agent.inventory if isinstance(agent.inventory, dict) else None, target_path
    )
    if not (agent.inventory or {}).get("topology"):
        evidence.append(f"{agent.name} reports no topology (an agent older than this server): mounts only")
    return TopologySuggestion(
        environment_id=env.id,
        agent_id=agent.id,
        agent_name=agent.name,
        target_path=target_path,
        topology=topology,
        evidence=evidence,
    )
