"""SQL of the imports domain: the imported files, and the runs made of each."""

import uuid

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from backend.models import ImportFile, Run


def file_by_hash(session: Session, team_id: uuid.UUID, sha256: str) -> ImportFile | None:
    return session.scalar(
        select(ImportFile).where(ImportFile.team_id == team_id, ImportFile.sha256 == sha256)
    )


def file_by_id(session: Session, file_id: uuid.UUID) -> ImportFile | None:
    return session.get(ImportFile, file_id)


def add_file(session: Session, row: ImportFile) -> ImportFile | None:
    """Insert; None when the team imported the same bytes meanwhile (a concurrent request)."""
    try:
        with session.begin_nested():
            session.add(row)
            session.flush()
    except IntegrityError:  # uq_import_files_team_sha256
        return None
    return row


def runs_of_file(session: Session, team_id: uuid.UUID, file_id: uuid.UUID) -> list[Run]:
    return list(
        session.scalars(
            select(Run)
            .where(Run.team_id == team_id, Run.origin["file_id"].astext == str(file_id))
            .order_by(Run.created_at, Run.name)
        )
    )
