"""``iothrottle-manage`` on a SQLite file: output and exit codes."""

import datetime
import os.path

import fixtures
import testtools

from iothrottle.cmd import manage
from iothrottle.conductor import instances
from iothrottle.controller import model
from iothrottle.db import api
from iothrottle import tier_use
from tests import cli
from tests.unit.api import fixtures as api_fixtures

UUID2 = '0b9e2c3a-1d4f-4e5a-8b6c-7d8e9f0a1b2c'


class ManageTestCase(testtools.TestCase):
    """Runs iothrottle-manage on a SQLite file of its own."""

    def setUp(self):
        super().setUp()
        self.dir = self.useFixture(fixtures.TempDir()).path
        # A directory that does not exist yet: db sync makes it.
        self.db_dir = os.path.join(self.dir, 'lib', 'iothrottle')
        self.conf_file = os.path.join(self.dir, 'iothrottle.conf')
        with open(self.conf_file, 'w') as stream:
            stream.write('[database]\nconnection = sqlite:///%s/db.sqlite\n'
                         % self.db_dir)

    def run_manage(self, *argv):
        return cli.run_main(self, manage.main,
                            ['--config-file', self.conf_file] + list(argv))

    def assertFails(self, message, *argv):
        code, out, err = self.run_manage(*argv)
        self.assertEqual(1, code)
        self.assertEqual('', out)
        self.assertEqual('iothrottle-manage: %s\n' % message, err)


class TestManage(ManageTestCase):

    def test_sync_version_and_tiers(self):
        self.assertEqual((0, 'database at revision 0006\n', ''),
                         self.run_manage('db', 'sync'))
        self.assertTrue(os.path.isdir(self.db_dir))
        self.assertEqual((0, '0006 (newest)\n', ''),
                         self.run_manage('db', 'version'))
        self.assertEqual((0, 'tier gold created\n', ''), self.run_manage(
            'tier', 'create', 'gold', '--min-iops', '100',
            '--min-bytes-sec', '6553600', '--weight', '4'))
        self.assertEqual((0, 'tier silver created\n', ''), self.run_manage(
            'tier', 'create', 'silver', '--min-iops', '40', '--max-iops',
            '400', '--weight', '2.5', '--min-memory-mb', '1024'))
        code, out, err = self.run_manage('tier', 'list')
        self.assertEqual(0, code)
        self.assertEqual(
            ['name    min_iops  min_bytes_sec  max_iops  max_bytes_sec  '
             'weight  min_memory_mb',
             'gold    100       6553600        0         0              '
             '4       0',
             'silver  40        0              400       0              '
             '2.5     1024'],
            out.splitlines())
        # No [nova] credentials: the command says Nova was not asked.
        self.assertEqual(
            (0, 'tier gold deleted\n',
             'tier gold deleted; %s\n' % tier_use.NOT_CHECKED),
            self.run_manage('tier', 'delete', 'gold'))
        self.assertFails("no tier 'gold'", 'tier', 'delete', 'gold')
        self.assertFails("tier 'silver' exists", 'tier', 'create', 'silver')

    def test_tier_delete_checks_instances_and_says_nova_was_not_asked(self):
        self.run_manage('db', 'sync')
        self.run_manage('tier', 'create', 'gold', '--min-iops', '100')
        engine = api.create_engine('sqlite:///%s/db.sqlite' % self.db_dir)
        self.addCleanup(engine.dispose)
        api.record_instances(engine, [api.InstanceRecord(UUID2, 'proj',
                                                         'gold')])
        self.assertFails(
            "tier 'gold' is used by 1 instance(s): %s (Nova's flavors not "
            "checked: no [nova] credentials in this service's "
            "configuration); --force deletes it anyway" % UUID2,
            'tier', 'delete', 'gold')
        self.assertEqual(
            (0, 'tier gold deleted\n',
             'tier gold deleted by force while 1 recorded instance(s) used '
             'it: %s\n' % UUID2),
            self.run_manage('tier', 'delete', 'gold', '--force'))

    def test_tier_delete_asks_nova_for_flavors(self):
        with open(self.conf_file, 'a') as stream:
            stream.write('[nova]\nauth_type = password\n')
        self.useFixture(fixtures.MockPatchObject(
            instances, 'nova_client',
            side_effect=lambda conf: api_fixtures.FakeNova()))
        self.run_manage('db', 'sync')
        self.run_manage('tier', 'create', 'tin')
        self.assertFails("tier 'tin' is used by 1 flavor(s): m1.tin (f-tin); "
                         "--force deletes it anyway", 'tier', 'delete', 'tin')
        self.assertEqual((0, 'tier tin deleted\n', ''), self.run_manage(
            'tier', 'delete', 'tin', '--force'))

    def test_bad_tier_values(self):
        self.run_manage('db', 'sync')
        self.assertFails("--min-iops: must be a number >= 0, got 'abc'",
                         'tier', 'create', 'x', '--min-iops', 'abc')
        self.assertFails("--max-bytes-sec: must be a number >= 0, got '-5'",
                         'tier', 'create', 'x', '--max-bytes-sec=-5')
        self.assertFails('--min-iops (500) exceeds --max-iops (100)',
                         'tier', 'create', 'x', '--min-iops', '500',
                         '--max-iops', '100')
        self.assertFails('--weight: must be > 0, got 0',
                         'tier', 'create', 'x', '--weight', '0')
        self.assertFails("--min-memory-mb: must be a number >= 0, got "
                         "'1G'", 'tier', 'create', 'x', '--min-memory-mb',
                         '1G')
        code, out, err = self.run_manage('tier', 'create', 'a b')
        self.assertEqual(1, code)
        self.assertTrue(err.startswith(
            'iothrottle-manage: tier name: must be a tier name'), err)
        self.assertEqual((0, 'name  min_iops  min_bytes_sec  max_iops  '
                             'max_bytes_sec  weight  min_memory_mb\n', ''),
                         self.run_manage('tier', 'list'))

    def test_not_synced(self):
        self.assertFails("no database: %s does not exist (run "
                         "'iothrottle-manage db sync')" % self.db_dir,
                         'tier', 'list')
        os.makedirs(self.db_dir)
        self.assertEqual(
            (0, "none (not synced; newest is 0006: run 'iothrottle-manage "
                "db sync')\n", ''),
            self.run_manage('db', 'version'))
        self.assertFails("database schema at revision None, expected 0006: "
                         "run 'iothrottle-manage db sync'", 'tier', 'list')

    def test_unusable_connection(self):
        with open(self.conf_file, 'w') as stream:
            stream.write('[database]\nconnection = bogus://x\n')
        code, out, err = self.run_manage('db', 'version')
        self.assertEqual(1, code)
        self.assertTrue(err.startswith('iothrottle-manage: [database] '
                                       'connection: '), err)
        self.assertEqual(1, len(err.splitlines()))

    def test_unreadable_database_is_one_line(self):
        os.makedirs(self.db_dir)
        with open(os.path.join(self.db_dir, 'db.sqlite'), 'w') as stream:
            stream.write('not a database' * 100)
        code, out, err = self.run_manage('db', 'sync')
        self.assertEqual(1, code)
        self.assertTrue(err.startswith('iothrottle-manage: database error: '),
                        err)
        self.assertEqual(1, len(err.splitlines()))


class TestThrottleWhy(ManageTestCase):
    """``throttle why`` reads the decisions the conductor stored."""

    UUID = '6d0f7a4e-8b5c-4bd3-9a55-3f1c1a0b2c3d'

    def test_capped_instance_and_its_reason(self):
        uuid = self.UUID
        self.assertEqual(0, self.run_manage('db', 'sync')[0])
        engine = api.create_engine('sqlite:///%s/db.sqlite' % self.db_dir)
        self.addCleanup(engine.dispose)
        api.record_decisions(engine, 'nbd+unix:///s.sock', [model.Decision(
            uuid, 'vda', model.CAP, 'vm2 below its guarantee',
            cap=model.Cap(20, 0), lease_s=600)], 'guarantee')
        code, out, err = self.run_manage('throttle', 'why', uuid)
        self.assertEqual((0, ''), (code, err))
        lines = out.splitlines()
        self.assertEqual('instance %s:' % uuid, lines[0])
        self.assertIn('vda: capped at 20 IOPS until', lines[1])
        self.assertIn('by policy guarantee: vm2 below its guarantee',
                      lines[1])

    def test_bad_arguments_name_the_culprit(self):
        self.assertEqual(0, self.run_manage('db', 'sync')[0])
        self.assertFails("INSTANCE_UUID: 'vm1' is not a UUID",
                         'throttle', 'why', 'vm1')
        self.assertFails("--limit: '0' is not a whole number >= 1",
                         'throttle', 'why', self.UUID, '--limit', '0')

    def test_never_throttled(self):
        self.assertEqual(0, self.run_manage('db', 'sync')[0])
        self.assertEqual(
            (0, 'instance %s: no decisions stored (never throttled, or the '
                'history was purged)\n' % self.UUID, ''),
            self.run_manage('throttle', 'why', self.UUID))


class TestPurge(ManageTestCase):
    """``db purge`` drops old decisions and flavor cache entries."""

    def test_purge_counts(self):
        self.assertEqual(0, self.run_manage('db', 'sync')[0])
        engine = api.create_engine('sqlite:///%s/db.sqlite' % self.db_dir)
        self.addCleanup(engine.dispose)
        now = datetime.datetime.now(datetime.timezone.utc)
        for days, uuid in ((40, TestThrottleWhy.UUID), (1, UUID2)):
            api.record_decisions(engine, 'rbd:ceph/volumes', [
                model.Decision(uuid, 'vda', model.RELEASE, 'calm')],
                'guarantee', decided_at=now - datetime.timedelta(days=days))
            api.cache_flavor(engine, 'f%d' % days, 'm1.f%d' % days,
                             error='bad', fetched_at=now - datetime.timedelta(
                                 days=days))
            api.record_instances(engine, [api.InstanceRecord(uuid, 'p1')],
                                 seen_at=now - datetime.timedelta(days=days))
        self.assertEqual(
            (0, 'purged 1 decision(s), 1 flavor cache entry and 1 instance '
                'record(s) older than 30d\n', ''),
            self.run_manage('db', 'purge', '--older-than', '30d'))
        self.assertEqual([], api.decisions_for_instance(
            engine, TestThrottleWhy.UUID))
        self.assertRaises(api.NotFound, api.get_instance, engine,
                          TestThrottleWhy.UUID)
        self.assertEqual('p1', api.get_instance(engine, UUID2).project_id)
        self.assertEqual(1, len(api.decisions_for_instance(engine, UUID2)))
        self.assertIsNone(api.cached_flavor(engine, 'm1.f40'))
        self.assertIsNotNone(api.cached_flavor(engine, 'm1.f1'))

    def test_bad_durations_name_the_option(self):
        self.assertEqual(0, self.run_manage('db', 'sync')[0])
        for text in ('30', 'd', '1.5d', '-1d', '3w', '1e3s', ''):
            self.assertFails(
                "--older-than: %r is not a duration (a whole number and "
                "s, m, h or d, e.g. 30d)" % text,
                'db', 'purge', '--older-than=' + text)
        for text in ('0s', '999999999d'):
            self.assertFails("--older-than: %r is not between 1s and 3650d"
                             % text, 'db', 'purge', '--older-than=' + text)


class TestDomains(ManageTestCase):
    """``domain list/show/reset-capacity``."""

    KEY = 'rbd:ceph/volumes'

    def setUp(self):
        super().setUp()
        self.assertEqual(0, self.run_manage('db', 'sync')[0])
        self.engine = api.create_engine('sqlite:///%s/db.sqlite'
                                        % self.db_dir)
        self.addCleanup(self.engine.dispose)

    def test_list_show_reset(self):
        api.declare_capacity(self.engine, 'nbd:a', 200, 100e6)
        api.learn_peak(self.engine, self.KEY, iops=1e12, bytes_sec=60e6)
        api.record_domain_load(self.engine, self.KEY, model.DomainLoad(
            iops=1800, bytes_sec=2.5e7, load=0.456, saturated=False,
            disks=3, caps=1), measured_at=datetime.datetime(2026, 12, 3))
        code, out, err = self.run_manage('domain', 'list')
        self.assertEqual((0, ''), (code, err))
        lines = out.splitlines()
        self.assertEqual(['key', 'max_iops', 'max_bytes_sec', 'source',
                          'peak_iops', 'peak_bytes_sec', 'updated', 'load',
                          'saturated', 'load_iops', 'load_bytes_sec',
                          'disks', 'caps', 'load_at'],
                         lines[0].split())
        self.assertEqual(['nbd:a', '200', '100000000', 'config', '0', '0'],
                         lines[1].split()[:6])
        # A load no round has stored yet.
        self.assertEqual(['-'] * 7, lines[1].split()[9:])
        self.assertEqual([self.KEY, '1000000000000', '60000000', 'learned',
                          '1000000000000', '60000000'],
                         lines[2].split()[:6])
        self.assertEqual(['0.46', 'no', '1800', '25000000', '3', '1',
                          '2026-12-03', '00:00:00', 'UTC'],
                         lines[2].split()[9:])
        code, out, err = self.run_manage('domain', 'show', self.KEY)
        self.assertEqual((0, ''), (code, err))
        self.assertIn('peak_iops:       1000000000000', out.splitlines())
        self.assertIn('saturated:       no', out.splitlines())
        code, out, err = self.run_manage('domain', 'reset-capacity',
                                         self.KEY)
        self.assertEqual((0, ''), (code, err))
        lines = out.splitlines()
        self.assertEqual('storage domain %s: learned peak reset' % self.KEY,
                         lines[0])
        self.assertIn('peak_iops:       0', lines)
        self.assertIn('max_iops:        0', lines)
        self.assertEqual(0, api.get_storage_domain(self.engine,
                                                   self.KEY).peak_iops)

    def test_unknown_key(self):
        for action in ('show', 'reset-capacity'):
            self.assertFails("no storage domain 'nope'", 'domain', action,
                             'nope')
