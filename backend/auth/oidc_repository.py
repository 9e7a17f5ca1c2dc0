"""The queries of sign-in with OpenID Connect."""

import uuid

from sqlalchemy import select
from sqlalchemy.orm import Session

from backend.models import User


def user_by_identity(session: Session, *, issuer: str, subject: str) -> User | None:
    """The account linked to this provider's subject (unique per issuer and subject)."""
    return session.scalar(select(User).where(User.oidc_issuer == issuer, User.oidc_subject == subject))


def user_by_email_for_update(session: Session, email: str) -> User | None:
    """The account with this e-mail, locked until the transaction ends (two sign-ins at once link
    it once)."""
    return session.scalar(select(User).where(User.email == email.lower()).with_for_update())


def user_by_id_for_update(session: Session, user_id: uuid.UUID) -> User | None:
    return session.scalar(select(User).where(User.id == user_id).with_for_update())
