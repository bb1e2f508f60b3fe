"""Migrations: upgrade creates every table, and agrees with the models."""

from alembic import autogenerate
from alembic import migration as alembic_migration
import sqlalchemy as sa
import testtools

from iothrottle.db import api
from iothrottle.db import migration
from iothrottle.db import models

TABLES = {'tiers', 'flavor_guarantees', 'storage_domains', 'decisions',
          'instances',
          'pool_profiles', 'pool_volumes'}


def schema_diff(engine):
    """What alembic's autogenerate would change to reach the models."""
    with engine.connect() as connection:
        return autogenerate.compare_metadata(
            alembic_migration.MigrationContext.configure(connection),
            models.Base.metadata)


class TestMigrations(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.engine = api.create_engine('sqlite://')
        self.addCleanup(self.engine.dispose)

    def test_fresh_database_has_no_revision(self):
        self.assertIsNone(migration.current_revision(self.engine))

    def test_upgrade_head_creates_every_table(self):
        migration.upgrade(self.engine)
        self.assertEqual(migration.head_revision(),
                         migration.current_revision(self.engine))
        tables = set(sa.inspect(self.engine).get_table_names())
        self.assertTrue(TABLES <= tables, tables)
        self.assertEqual(TABLES, set(models.Base.metadata.tables))

    def test_models_and_migrations_agree(self):
        migration.upgrade(self.engine)
        self.assertEqual([], schema_diff(self.engine))

    def test_a_model_change_without_migration_shows(self):
        # The check above can fail: a table missing from the migrations.
        migration.upgrade(self.engine)
        with self.engine.begin() as connection:
            connection.execute(sa.text('DROP TABLE decisions'))
        diff = schema_diff(self.engine)
        self.assertIn('add_table', [entry[0] for entry in diff
                                    if isinstance(entry, tuple)])

    def test_0003_gives_existing_tiers_no_memory_floor(self):
        migration.upgrade(self.engine, '0002')
        with self.engine.begin() as connection:
            connection.execute(sa.text(
                "INSERT INTO tiers (name, min_iops, min_bytes_sec, max_iops, "
                "max_bytes_sec, weight, created_at, updated_at) VALUES "
                "('gold', 100, 0, 0, 0, 4, '2026-01-01', '2026-01-01')"))
        migration.upgrade(self.engine)
        self.assertEqual('0006', migration.current_revision(self.engine))
        gold = api.get_tier(self.engine, 'gold')
        self.assertEqual((100, 0), (gold.min_iops, gold.min_memory_mb))

    def test_upgrade_twice_is_harmless(self):
        migration.upgrade(self.engine)
        migration.upgrade(self.engine)
        self.assertEqual(migration.head_revision(),
                         migration.current_revision(self.engine))
