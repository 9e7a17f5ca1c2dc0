"""Alembic environment: the URL comes from backend settings (IOWATT_DATABASE_URL)."""

from logging.config import fileConfig

from alembic import context
from sqlalchemy import Connection, create_engine, pool

from backend.config import get_settings
from backend.models import Base
from backend.ops import migrate

config = context.config
if config.config_file_name is not None and config.attributes.get("configure_logger", True):
    fileConfig(config.config_file_name, disable_existing_loggers=False)

target_metadata = Base.metadata


def _url() -> str:
    return config.attributes.get("database_url") or get_settings().database_url


def run_migrations_offline() -> None:
    context.configure(url=_url(), target_metadata=target_metadata, literal_binds=True, compare_type=True)
    with context.begin_transaction():
        context.run_migrations()


def _run(conn: Connection) -> None:
    # a database a newer release upgraded is refused before any step; a downgrade step raises, so
    # the one transaction of every step rolls back (backend/ops/migrate.py, ADR 0043)
    migrate.refuse_unknown(config, conn)
    context.configure(
        connection=conn,
        target_metadata=target_metadata,
        compare_type=True,
        on_version_apply=migrate.on_version_apply(config),
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    engine = create_engine(_url(), poolclass=pool.NullPool)
    with engine.connect() as conn:
        _run(conn)


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
