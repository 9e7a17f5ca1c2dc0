"""Deleting a team and deleting one's own account (ADR 0021).

A team: an admin types its name again (`confirm_name`, 422 otherwise); every row of the team goes
by the database's cascades (runs and their results, agents, devices, environments, workloads,
campaigns, comments, share links, invitations, its audit log). Its people keep their accounts.
Runs still assigned or running: 409 (cancel them first), so no agent is cut off mid-run.

An account: the user confirms with their password (or, without one, their e-mail). The last admin
of a team that has other members must hand over first (409 naming the teams); a team whose only
member they are must be deleted first (409), so no data is left without anyone who can reach it.
Their comments stay, shown with the author "deleted user"; what they created stays with the team."""

import uuid

from sqlalchemy.orm import Session

from backend.audit import service as audit
from backend.auth import throttle
from backend.auth.principal import UserPrincipal
from backend.erase import repository
from backend.erase.schemas import AccountDelete, TeamDelete
from backend.errors import Conflict, Invalid, NotFound, TooManyRequests
from backend.kit.security import burn_password_check, verify_password
from backend.logs import log
from backend.models import Role


def delete_team(session: Session, *, principal: UserPrincipal, team_id: uuid.UUID, body: TeamDelete) -> None:
    if team_id not in principal.team_ids:
        raise NotFound("team not found")
    principal.require(team_id, Role.admin)
    team = repository.team(session, team_id)
    if team is None:
        raise NotFound("team not found")
    if body.confirm_name != team.name:
        raise Invalid("confirm_name", "type the team's name exactly to confirm its deletion")
    active = repository.active_runs(session, team.id)
    if active:
        raise Conflict(
            f"{len(active)} run(s) of the team are assigned or running: cancel them first",
            code="team_active",
            detail={"runs": active},
        )
    # the team's own audit log goes with it: the server log keeps the line
    log.info("team.deleted", team_id=str(team.id), name=team.name, by=str(principal.user_id))
    session.delete(team)
    session.flush()


def delete_account(session: Session, *, principal: UserPrincipal, body: AccountDelete, client: str) -> None:
    user = repository.user(session, principal.user_id)
    if user is None:
        raise NotFound("account not found")
    if user.password_hash is not None:
        if body.password is None:
            raise Invalid("password", "confirm with your password")
        # the login's throttle (ADR 0010): a stolen session must not guess the password here
        blocked = throttle.check(user.email, client)
        if blocked is not None:
            raise TooManyRequests(
                f"too many wrong passwords from this {blocked.scope}: try again in {blocked.retry_after_s} s",
                retry_after_s=blocked.retry_after_s,
                code="login_throttled",
            )
        ok, _ = verify_password(body.password, user.password_hash)
        if not ok:
            throttle.record_failure(user.email, client)
            raise Invalid("password", "is not this account's password")
    else:
        if body.password is not None:
            burn_password_check(body.password)
        if (body.confirm_email or "").strip().lower() != user.email.lower():
            raise Invalid("confirm_email", "type this account's e-mail to confirm (it has no password)")
    teams = repository.memberships_of(session, user.id)
    last_admin = [
        t for t, role, members, admins in teams if role == Role.admin and admins == 1 and members > 1
    ]
    alone = [t for t, _, members, _ in teams if members == 1]
    if last_admin:
        raise Conflict(
            "you are the last admin of "
            + ", ".join(repr(t.name) for t in last_admin)
            + ": make another member an admin first",
            code="last_admin",
            detail={"teams": [str(t.id) for t in last_admin]},
        )
    if alone:
        raise Conflict(
            "you are the only member of "
            + ", ".join(repr(t.name) for t in alone)
            + ": delete the team first (its export is offered there)",
            code="sole_member",
            detail={"teams": [str(t.id) for t in alone]},
        )
    for t, _, _, _ in teams:
        audit.record(
            session,
            team_id=t.id,
            action="user.deleted",
            target_kind="user",
            target_id=user.id,
            user_id=user.id,
        )
    session.flush()
    session.delete(user)
    session.flush()
