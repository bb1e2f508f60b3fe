"""Alembic environment of iothrottle's migrations.

Run through :mod:`iothrottle.db.migration` (``iothrottle-manage db
sync``), which passes an open connection in ``config.attributes``; with
the plain ``alembic`` command, ``sqlalchemy.url`` of the config is used.
"""

from alembic import context
import sqlalchemy as sa

from iothrottle.db import models


def _run(connection):
    context.configure(connection=connection,
                      target_metadata=models.Base.metadata,
                      # SQLite alters tables by copying them.
                      render_as_batch=True)
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_offline():
    context.configure(url=context.config.get_main_option('sqlalchemy.url'),
                      target_metadata=models.Base.metadata,
                      literal_binds=True)
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online():
    connection = context.config.attributes.get('connection')
    if connection is not None:
        _run(connection)
        return
    engine = sa.create_engine(
        context.config.get_main_option('sqlalchemy.url'),
        poolclass=sa.pool.NullPool)
    with engine.connect() as connection:
        _run(connection)
    engine.dispose()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
