"""Typed answers of the operations the `iowatt` command uses: a subset of each OpenAPI schema's
fields (other fields are kept, `extra="allow"`). Written by hand and checked against the
document: tests/client/test_client_package.py fails when a field here is missing from its schema,
or its required/nullable state differs (docs/adr/0034-python-client.md)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict


class Model(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)


class TeamRole(Model):  # schema TeamRole
    id: str
    name: str
    role: str


class User(Model):  # schema UserRead
    id: str
    email: str
    display_name: str
    teams: list[TeamRole]


class RunOriginFile(Model):  # schema RunOriginFile
    file_name: str
    sha256: str | None
    url: str


class RunOrigin(Model):  # schema RunOrigin
    kind: str
    tool: str
    version: str | None
    format: str
    label: str
    source_url: str | None = None
    files: list[RunOriginFile] = []


class Run(Model):  # schema RunRead
    id: str
    team_id: str
    name: str
    status: str
    agent_id: str
    agent_name: str
    target_path: str
    device_name: str | None
    preset: str | None
    source: str
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    error: str | None
    progress: dict[str, Any] | None
    tags: list[str]
    origin: RunOrigin | None = None  # an imported or published run's: where its figures come from
    # a multi-target run's targets (RunTargetRead: target_path, device, results), the first being
    # target_path; empty for a run on one target
    targets: list[dict[str, Any]] = []


class RunPage(Model):  # schema RunPage
    items: list[Run]
    total: int  # counted up to offset + 1,000: a lower bound when total_exact is false
    total_exact: bool


class Agent(Model):  # schema AgentRead
    id: str
    team_id: str
    name: str
    hostname: str
    online: bool
    state: str
    current_run_id: str | None
    policy: dict[str, Any] | None


class Workload(Model):  # schema WorkloadRead
    id: str
    name: str
    description: str
    builtin: bool


class ImportedRun(Model):  # schema ImportedRun
    name: str
    run_id: str | None
    url: str | None
    host: str
    device: str
    jobs: list[dict[str, Any]]
    absent: list[str]


class ImportResult(Model):  # schema ImportResult
    format: str
    tool: str
    version: str | None
    file_name: str
    sha256: str
    size_bytes: int
    dry_run: bool
    duplicate: bool
    runs: list[ImportedRun]
    warnings: list[str]


class ImportFormat(Model):  # schema ImportFormat
    format: str
    tool: str
    aliases: list[str]
    versions: list[str]
    file_kinds: list[str]


# model -> the OpenAPI schema it is checked against
SCHEMAS: dict[type[Model], str] = {
    TeamRole: "TeamRole",
    User: "UserRead",
    RunOriginFile: "RunOriginFile",
    RunOrigin: "RunOrigin",
    Run: "RunRead",
    RunPage: "RunPage",
    Agent: "AgentRead",
    Workload: "WorkloadRead",
    ImportedRun: "ImportedRun",
    ImportResult: "ImportResult",
    ImportFormat: "ImportFormat",
}
