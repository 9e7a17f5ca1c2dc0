"""Who is calling: a user (with a role per team) or an agent (acting only for itself)."""

import uuid
from dataclasses import dataclass, field

from sqlalchemy.orm import Session

from backend.errors import Forbidden
from backend.models import Agent, Role


@dataclass(frozen=True)
class UserPrincipal:
    user_id: uuid.UUID
    roles: dict[uuid.UUID, Role] = field(default_factory=dict)
    # the token this request came with, and its kind ("session" from a login, "personal")
    token_id: uuid.UUID | None = None
    token_kind: str | None = None
    # what the token may do within the user's roles: read, write (all the roles allow) or upload
    scope: str = "write"
    # the user's e-mail when authentication read it: what the audit log records as the actor
    email: str | None = None

    @property
    def team_ids(self) -> list[uuid.UUID]:
        return list(self.roles)

    def teams_for(self, team_id: uuid.UUID | None) -> list[uuid.UUID]:
        """A list's teams: `team_id` alone (403 when the caller is not in it), or all the caller's."""
        if team_id is None:
            return self.team_ids
        if team_id not in self.roles:
            raise Forbidden(f"not a member of this team: {team_id}", code="not_a_member")
        return [team_id]

    def require(self, team_id: uuid.UUID, role: Role) -> None:
        held = self.roles.get(team_id)
        if held is None or held.rank < role.rank:
            raise Forbidden(f"this needs the {role.value} role in the team", code="forbidden")


@dataclass(frozen=True)
class AgentPrincipal:
    agent_id: uuid.UUID
    team_id: uuid.UUID
    # The agent's row as authentication read it, and whether a run was assigned to it or running
    # on it then (None: not read with it). In the session that read them (`read_in`), the agent's
    # heartbeat and long-poll look use them instead of reading the row again (docs/benchmarks.md
    # § A thousand agents on two cores).
    agent: Agent | None = field(default=None, compare=False, repr=False)
    holds_runs: bool | None = field(default=None, compare=False)

    def read_in(self, session: Session) -> tuple[Agent, bool] | None:
        """The agent's row and its held runs as read at authentication, if that was in `session`."""
        if self.agent is None or self.holds_runs is None or self.agent not in session:
            return None
        return self.agent, self.holds_runs

    def require_self(self, agent_id: uuid.UUID) -> None:
        if agent_id != self.agent_id:
            raise Forbidden("an agent token can only act for its own agent", code="wrong_agent")
