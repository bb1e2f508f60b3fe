"""Schema migrations, driven from Python (no alembic.ini needed).

``iothrottle-manage db sync`` calls :func:`upgrade`, ``db version``
:func:`current_revision`.  The plain ``alembic`` command works too with
``-c`` pointing at a file that sets ``script_location =
iothrottle.db:migrations`` and ``sqlalchemy.url``.
"""

import os.path

from alembic import command
from alembic import config as alembic_config
from alembic import migration
from alembic import script

MIGRATIONS_DIR = os.path.join(os.path.dirname(__file__), 'migrations')


def _config(connection=None):
    config = alembic_config.Config()
    config.set_main_option('script_location', MIGRATIONS_DIR)
    if connection is not None:
        config.attributes['connection'] = connection
    return config


def head_revision():
    """The newest revision the migrations know."""
    return script.ScriptDirectory.from_config(_config()).get_current_head()


def current_revision(engine):
    """The revision the database at ``engine`` is at; None if it has
    never been synced."""
    with engine.connect() as connection:
        return migration.MigrationContext.configure(
            connection).get_current_revision()


def upgrade(engine, revision='head'):
    """Create or upgrade the schema at ``engine`` to ``revision``."""
    with engine.begin() as connection:
        command.upgrade(_config(connection), revision)
