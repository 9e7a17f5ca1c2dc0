"""Who is calling: a user (with a role per team) or an agent (acting only for itself)."""

import uuid
from dataclasses import dataclass, field

from backend.errors import Forbidden
from backend.models import Role


@dataclass(frozen=True)
class UserPrincipal:
    user_id: uuid.UUID
    roles: dict[uuid.UUID, Role] = field(default_factory=dict)
    # the token this request came with, and its kind ("session" from a login, "personal")
    token_id: uuid.UUID | None = None
    token_kind: str | None = None
    # what the token may do within the user's roles: read, write (all the roles allow) or upload
    scope: str = "write"

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

    def require_self(self, agent_id: uuid.UUID) -> None:
        if agent_id != self.agent_id:
            raise Forbidden("an agent token can only act for its own agent", code="wrong_agent")
