"""The conductor's database on the real MariaDB server of this machine.

MariaDB listens at 127.0.0.1:3306 (root, no password).  If it does not
answer, the test starts it - ``start-stop-daemon --start --oknodo
--background --exec /usr/sbin/mariadbd`` - and waits for it with a
deadline; it never skips.  Each test creates a uniquely named database,
syncs it with ``iothrottle-manage db sync``, exercises the api and drops
the database.
"""

import datetime
import uuid

from alembic import autogenerate
from alembic import migration as alembic_migration
import fixtures
import sqlalchemy as sa
import testtools

from iothrottle.bench import services
from iothrottle.cmd import manage
from iothrottle.controller import model
from iothrottle.db import api
from iothrottle.db import migration
from iothrottle.db import models
from iothrottle import tier_use
from tests import cli

T0 = datetime.datetime(2025, 3, 1, 12, 0, 0, 123456)
UUID = '6f1c9c0e-0d43-4c33-9d8e-8b2d9f1e0a11'


class ThrowAwayDatabase(fixtures.Fixture):
    """A uniquely named MariaDB database, dropped at cleanup."""

    def _setUp(self):
        services.ensure_mariadb()
        self.name = 'iothrottle_test_%s' % uuid.uuid4().hex[:12]
        services.create_database(self.name)
        self.addCleanup(services.drop_database, self.name)
        self.url = services.mariadb_url(self.name)


class TestMariaDB(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.db = self.useFixture(ThrowAwayDatabase())
        self.conf_file = self.useFixture(fixtures.TempDir()).join('i.conf')
        with open(self.conf_file, 'w') as stream:
            stream.write('[database]\nconnection = %s\n' % self.db.url)
        self.engine = api.create_engine(self.db.url)
        self.addCleanup(self.engine.dispose)

    def manage(self, *argv):
        return cli.run_main(self, manage.main,
                            ['--config-file', self.conf_file] + list(argv))

    def sync(self):
        self.assertEqual((0, 'database at revision 0006\n', ''),
                         self.manage('db', 'sync'))

    def test_sync_creates_the_schema_the_models_describe(self):
        self.assertEqual(0, self.manage('db', 'version')[0])
        self.sync()
        self.assertEqual((0, '0006 (newest)\n', ''),
                         self.manage('db', 'version'))
        self.assertEqual(migration.head_revision(),
                         migration.current_revision(self.engine))
        tables = set(sa.inspect(self.engine).get_table_names())
        self.assertTrue(set(models.Base.metadata.tables) <= tables, tables)
        with self.engine.connect() as connection:
            diff = autogenerate.compare_metadata(
                alembic_migration.MigrationContext.configure(connection),
                models.Base.metadata)
        self.assertEqual([], diff)
        with self.engine.connect() as connection:
            engines = set(connection.execute(sa.text(
                'SELECT ENGINE FROM information_schema.TABLES '
                'WHERE TABLE_SCHEMA = :name AND TABLE_NAME != '
                "'alembic_version'"), {'name': self.db.name}).scalars())
        self.assertEqual({'InnoDB'}, engines)
        # A second sync changes nothing.
        self.sync()

    def test_tiers_through_manage_and_api(self):
        self.sync()
        self.assertEqual((0, 'tier gold created\n', ''), self.manage(
            'tier', 'create', 'gold', '--min-iops', '100',
            '--min-bytes-sec', '123456789', '--weight', '4'))
        code, out, err = self.manage('tier', 'create', 'bad', '--min-iops',
                                     'abc')
        self.assertEqual((1, ''), (code, out))
        self.assertEqual("iothrottle-manage: --min-iops: must be a number "
                         ">= 0, got 'abc'\n", err)
        # Doubles, not MySQL's single-precision FLOAT: bytes/s stay exact.
        self.assertEqual(
            {'gold': model.Guarantee(min_iops=100, min_bytes_sec=123456789,
                                     weight=4, tier='gold')},
            api.list_tiers(self.engine))
        self.assertRaises(api.Exists, api.create_tier, self.engine,
                          model.Guarantee(tier='gold'))
        # No [nova] credentials here: only recorded instances are
        # checked, and the warning says so (iothrottle/tier_use.py).
        self.assertEqual(
            (0, 'tier gold deleted\n',
             'tier gold deleted; %s\n' % tier_use.NOT_CHECKED),
            self.manage('tier', 'delete', 'gold'))
        self.assertEqual({}, api.list_tiers(self.engine))

    def test_flavors_domains_decisions(self):
        self.sync()
        gold = model.Guarantee(min_iops=100, weight=4, tier='gold')
        api.cache_flavor(self.engine, 'f1', 'm1.large', guarantee=gold,
                         fetched_at=T0)
        api.cache_flavor(self.engine, 'f2', 'm1.bad',
                         error="iothrottle:tier: unknown tier 'x'",
                         fetched_at=T0)
        self.assertEqual(
            api.CachedFlavor('f1', 'm1.large', gold, None, T0),
            api.cached_flavor(self.engine, 'm1.large'))
        self.assertIsNone(api.cached_flavor(self.engine, 'm1.bad').guarantee)

        key = 'file:compute1:/dev/sdb'
        api.learn_peak(self.engine, key, iops=150, bytes_sec=60e6)
        domain = api.declare_capacity(self.engine, key, max_iops=200,
                                      max_bytes_sec=100e6)
        self.assertEqual([domain], api.storage_domains(self.engine))
        self.assertEqual(model.Capacity(200, 100e6), domain.capacity())

        decisions = [model.Decision(UUID, 'vda', model.CAP, 'saturated',
                                    cap=model.Cap(200, 0), lease_s=30)]
        api.record_decisions(self.engine, key, decisions, 'guarantee',
                             decided_at=T0)
        later = T0 + datetime.timedelta(microseconds=1)
        api.record_decisions(self.engine, key, decisions, 'guarantee',
                             decided_at=later, heartbeat_s=0)
        records = api.decisions_for_instance(self.engine, UUID)
        # Microseconds survive (DATETIME(6)), so the order is right.
        self.assertEqual([later, T0], [r.decided_at for r in records])
        self.assertEqual(T0 + datetime.timedelta(seconds=30),
                         records[1].lease_expires_at)
        # An unchanged cap is not stored again: its newest row's lease
        # is extended.
        renewed = T0 + datetime.timedelta(seconds=5)
        self.assertEqual(0, api.record_decisions(
            self.engine, key, decisions, 'guarantee', decided_at=renewed))
        records = api.decisions_for_instance(self.engine, UUID)
        self.assertEqual([later, T0], [r.decided_at for r in records])
        self.assertEqual(renewed + datetime.timedelta(seconds=30),
                         records[0].lease_expires_at)
        self.assertEqual(1, api.purge_decisions(self.engine, later))
        # T0 is long past: the purge takes the rest and both flavors.
        self.assertEqual(
            (0, 'purged 1 decision(s), 2 flavor cache entries and 0 '
                'instance record(s) older than 1d\n', ''),
            self.manage('db', 'purge', '--older-than', '1d'))

        api.learn_peak(self.engine, key, iops=1e12, bytes_sec=1)
        code, out, err = self.manage('domain', 'reset-capacity', key)
        self.assertEqual((0, ''), (code, err))
        domain = api.get_storage_domain(self.engine, key)
        self.assertEqual((0, 0), (domain.peak_iops, domain.peak_bytes_sec))
        self.assertEqual(model.Capacity(200, 100e6), domain.capacity())

    def test_too_long_key_is_refused_before_the_server(self):
        self.sync()
        self.assertRaises(ValueError, api.learn_peak, self.engine,
                          'k' * 256, iops=1, bytes_sec=1)
        self.assertEqual([], api.storage_domains(self.engine))
