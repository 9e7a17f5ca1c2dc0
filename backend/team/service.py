"""Teams and their members: create, rename, read; change a member's role, remove or leave.

The last admin of a team can neither leave nor be demoted or removed (409 `last_admin`): every
change of a role or a membership locks the team's memberships first, so two admins acting at the
same time take turns and the second sees the first's change (docs/adr/0019). An admin who is
demoted, removed or leaves loses the pending invitations they made (revoked then).

Who may create a team is the instance's choice (IOWATT_TEAM_CREATORS: instance administrators by
default). A team's name is unique among the teams of whoever names it, not on the server, so a
refusal never tells anyone that a team they are not in uses a name (docs/adr/0026)."""

import uuid

from sqlalchemy.orm import Session

from backend.audit import service as audit
from backend.auth import repository as auth_repo
from backend.auth import service as auth_service
from backend.auth.principal import UserPrincipal
from backend.auth.schemas import TeamRole
from backend.errors import Conflict, Forbidden, NotFound
from backend.invitation import service as invitation_service
from backend.models import Membership, Role, Team
from backend.team import repository
from backend.team.schemas import MemberRead, TeamRead


def list_teams(session: Session, *, principal: UserPrincipal) -> list[TeamRole]:
    """The caller's teams with the caller's role in each."""
    return [TeamRole(id=t.id, name=t.name, role=r) for t, r in auth_repo.teams_of(session, principal.user_id)]


def _read(session: Session, team: Team, role: Role) -> TeamRead:
    return TeamRead(
        id=team.id,
        name=team.name,
        created_at=team.created_at,
        member_count=repository.member_count(session, team.id),
        role=role,
    )


def _name_free(
    session: Session, principal: UserPrincipal, name: str, team_id: uuid.UUID | None = None
) -> None:
    """The name is not one of the caller's other teams' (case-insensitively): only teams the
    caller is in are looked at, so the answer says nothing about anyone else's."""
    taken = any(
        t.name.lower() == name.lower() and t.id != team_id
        for t, _ in auth_repo.teams_of(session, principal.user_id)
    )
    if taken:
        raise Conflict(f"one of your teams is named {name!r}: choose another name", code="team_name_taken")


def _visible(session: Session, principal: UserPrincipal, team_id: uuid.UUID) -> Team:
    """The team, if the caller is a member (a stranger gets the same 404 as a missing team)."""
    team = repository.by_id(session, team_id) if team_id in principal.roles else None
    if team is None:
        raise NotFound("team not found")
    return team


def create(session: Session, *, principal: UserPrincipal, name: str) -> TeamRead:
    """Create a team (who may: IOWATT_TEAM_CREATORS); its creator is its first admin."""
    user = auth_repo.user_by_id(session, principal.user_id)
    if user is None or not auth_service.may_create_teams(user):
        raise Forbidden(
            "on this server only instance administrators create teams: ask one, or ask a team admin "
            "for an invitation",
            code="team_creation_restricted",
        )
    _name_free(session, principal, name)
    team = Team(name=name)
    session.add(team)
    session.flush()
    repository.add_member(session, team_id=team.id, user_id=principal.user_id, role=Role.admin)
    audit.record(
        session,
        team_id=team.id,
        action="team.created",
        target_kind="team",
        target_id=team.id,
        user_id=principal.user_id,
        details={"name": name},
    )
    return _read(session, team, Role.admin)


def get(session: Session, *, principal: UserPrincipal, team_id: uuid.UUID) -> TeamRead:
    team = _visible(session, principal, team_id)
    return _read(session, team, principal.roles[team_id])


def rename(session: Session, *, principal: UserPrincipal, team_id: uuid.UUID, name: str) -> TeamRead:
    team = _visible(session, principal, team_id)
    principal.require(team_id, Role.admin)
    if team.name != name:
        _name_free(session, principal, name, team.id)
        old, team.name = team.name, name
        session.flush()
        audit.record(
            session,
            team_id=team.id,
            action="team.renamed",
            target_kind="team",
            target_id=team.id,
            user_id=principal.user_id,
            details={"from": old, "to": name},
        )
    return _read(session, team, principal.roles[team_id])


def members(session: Session, *, principal: UserPrincipal, team_id: uuid.UUID) -> list[MemberRead]:
    """Any member sees who is in the team."""
    _visible(session, principal, team_id)
    return [
        MemberRead(
            user_id=u.id, email=u.email, display_name=u.display_name, role=m.role, joined_at=m.created_at
        )
        for m, u in repository.members(session, team_id)
    ]


def _locked_member(session: Session, team_id: uuid.UUID, user_id: uuid.UUID) -> tuple[Membership, int]:
    """Lock the team's memberships; the member's row and how many admins the team has."""
    rows = repository.lock_memberships(session, team_id)
    target = next((m for m in rows if m.user_id == user_id), None)
    if target is None:
        raise NotFound("no such member in this team")
    return target, sum(1 for m in rows if m.role is Role.admin)


def _last_admin(what: str) -> Conflict:
    return Conflict(
        f"{what}: this is the team's last admin; make another member admin first",
        code="last_admin",
    )


def change_role(
    session: Session, *, principal: UserPrincipal, team_id: uuid.UUID, user_id: uuid.UUID, role: Role
) -> MemberRead:
    _visible(session, principal, team_id)
    principal.require(team_id, Role.admin)
    member, admins = _locked_member(session, team_id, user_id)
    old = member.role
    if old is Role.admin and role is not Role.admin and admins <= 1:
        raise _last_admin("cannot demote")
    user = auth_repo.user_by_id(session, user_id)
    assert user is not None  # the membership's foreign key
    if old is not role:
        member.role = role
        session.flush()
        if old is Role.admin:
            invitation_service.revoke_pending_of(
                session, team_id=team_id, user_id=user_id, by=principal.user_id
            )
        audit.record(
            session,
            team_id=team_id,
            action="member.role_changed",
            target_kind="member",
            target_id=user_id,
            user_id=principal.user_id,
            details={"email": user.email, "from": old.value, "to": role.value},
        )
    return MemberRead(
        user_id=user.id,
        email=user.email,
        display_name=user.display_name,
        role=member.role,
        joined_at=member.created_at,
    )


def remove(session: Session, *, principal: UserPrincipal, team_id: uuid.UUID, user_id: uuid.UUID) -> None:
    """An admin removes a member; any member removes themselves (leaves)."""
    _visible(session, principal, team_id)
    leaving = user_id == principal.user_id
    if not leaving and principal.roles.get(team_id) is not Role.admin:
        raise Forbidden(
            "this needs the admin role in the team (anyone may remove themselves: leave)", code="forbidden"
        )
    member, admins = _locked_member(session, team_id, user_id)
    if member.role is Role.admin and admins <= 1:
        raise _last_admin("cannot leave" if leaving else "cannot remove")
    role = member.role
    user = auth_repo.user_by_id(session, user_id)
    session.delete(member)
    session.flush()
    if role is Role.admin:
        invitation_service.revoke_pending_of(session, team_id=team_id, user_id=user_id, by=principal.user_id)
    audit.record(
        session,
        team_id=team_id,
        action="member.left" if leaving else "member.removed",
        target_kind="member",
        target_id=user_id,
        user_id=principal.user_id,
        # the e-mail keeps the entry readable after the account is deleted
        details={"email": user.email if user else None, "role": role.value},
    )
