"""``iothrottle-manage pool``: Cinder pool profiles and placed volumes."""

import json
import os.path

from tests.unit.db import test_manage

PROFILES = os.path.join(os.path.dirname(__file__), '..', '..', '..', 'etc',
                        'iothrottle', 'profiles')
HDD_FILE = os.path.join(PROFILES, 'wd1600js.json')
FLASH_FILE = os.path.join(PROFILES, 'nvme-seed002.json')
POOL = 'cinder-1@hdd#a'


class TestManagePools(test_manage.ManageTestCase):

    def setUp(self):
        super().setUp()
        self.assertEqual(0, self.run_manage('db', 'sync')[0])

    def write(self, name, document):
        path = os.path.join(self.dir, name)
        with open(path, 'w') as stream:
            json.dump(document, stream)
        return path

    def test_profiles_and_volumes(self):
        self.assertEqual(
            (0, "pool cinder-1@hdd#a: profile 'WD1600JS (seed 003)' (hdd) "
                "set\n", ''),
            self.run_manage('pool', 'set-profile', POOL, HDD_FILE,
                            '--scheduler', 'bfq'))
        self.run_manage('pool', 'set-profile', 'cinder-2@ssd#b', FLASH_FILE)
        self.run_manage('tier', 'create', 'gold', '--min-iops', '25')
        self.assertEqual(
            (0, 'volume v1 recorded on pool cinder-1@hdd#a (20 GiB, '
                'min_iops 25, min_bytes_sec 0)\n', ''),
            self.run_manage('pool', 'add-volume', POOL, 'v1',
                            '--size-gib', '20', '--tier', 'gold'))
        self.assertEqual(
            (0, 'volume v2 recorded on pool cinder-1@hdd#a (20 GiB, '
                'min_iops 30, min_bytes_sec 1000000)\n', ''),
            self.run_manage('pool', 'add-volume', POOL, 'v2',
                            '--size-gib', '20', '--tier', 'gold',
                            '--min-iops', '30', '--min-bytes-sec', '1e6',
                            '--outstanding-requests', '2'))
        code, out, err = self.run_manage('pool', 'list')
        self.assertEqual((0, ''), (code, err))
        self.assertEqual(
            ['pool            kind   scheduler  volumes  min_iops  '
             'min_bytes_sec  profile',
             'cinder-1@hdd#a  hdd    bfq        2        55        '
             '1000000        WD1600JS (seed 003)',
             'cinder-2@ssd#b  flash  -          0        0         '
             '0              NVMe SSD (seed 002, bare metal)'],
            out.splitlines())
        self.assertEqual((0, 'volume v1 removed from pool cinder-1@hdd#a\n',
                          ''),
                         self.run_manage('pool', 'remove-volume', 'v1'))
        self.assertEqual((0, 'pool cinder-1@hdd#a deleted (1 volume '
                             'record(s))\n', ''),
                         self.run_manage('pool', 'delete', POOL))
        self.assertFails("no pool 'cinder-1@hdd#a'", 'pool', 'delete', POOL)
        self.assertFails("no volume 'v1' recorded on any pool",
                         'pool', 'remove-volume', 'v1')

    def test_bad_profiles_named_by_field(self):
        flat = self.write('rising.json', {
            'kind': 'hdd', 'distance_curve': {
                'kind': 'table', 'points': [[1e9, 100.0], [2e9, 200.0]]}})
        self.assertFails(
            '%s: distance_curve: points[1]: bandwidth must not increase '
            'with distance (200.0 B/s at 2000000000.0 B after 100.0 B/s at '
            '1000000000.0 B)' % flat, 'pool', 'set-profile', POOL, flat)
        empty = self.write('empty.json', {
            'kind': 'hdd', 'distance_curve': {'kind': 'table',
                                              'points': []}})
        self.assertFails('%s: distance_curve: points must not be empty'
                         % empty, 'pool', 'set-profile', POOL, empty)
        alpha = self.write('alpha.json', {
            'kind': 'hdd', 'alpha_by_scheduler': {'bfq': 1.5},
            'distance_curve': {'kind': 'table', 'points': [[1e9, 1e5]]}})
        code, out, err = self.run_manage('pool', 'set-profile', POOL, alpha)
        self.assertEqual(1, code)
        self.assertIn('alpha_by_scheduler[bfq]: alpha must be in [0, 1], '
                      'got 1.5', err)
        negative = self.write('negative.json', {
            'kind': 'hdd', 'distance_curve': {'kind': 'table',
                                              'points': [[-1, 1e5]]}})
        code, out, err = self.run_manage('pool', 'set-profile', POOL,
                                         negative)
        self.assertIn('distance_bytes must be a number in [0, 1.15292e+18], '
                      'got -1',
                      err)
        missing = os.path.join(self.dir, 'missing.json')
        self.assertFails('%s: cannot read: No such file or directory'
                         % missing, 'pool', 'set-profile', POOL, missing)
        self.assertFails("pool: must be a Cinder pool name host@backend#pool,"
                         " got 'cinder-1'", 'pool', 'set-profile',
                         'cinder-1', HDD_FILE)
        code, out, err = self.run_manage('pool', 'set-profile', POOL,
                                         HDD_FILE, '--scheduler', 'cfq')
        self.assertIn("scheduler: unknown scheduler 'cfq'", err)
        self.assertEqual((0, 'pool  kind  scheduler  volumes  min_iops  '
                             'min_bytes_sec  profile\n', ''),
                         self.run_manage('pool', 'list'))

    def test_bad_volumes(self):
        self.assertFails("--size-gib: must be a number >= 0, got '-2'",
                         'pool', 'add-volume', POOL, 'v', '--size-gib=-2')
        self.assertFails("--tier: unknown tier 'gold' (known: none)",
                         'pool', 'add-volume', POOL, 'v', '--size-gib', '1',
                         '--tier', 'gold')
        self.assertFails("volume 'v': read_fraction must be a finite number "
                         ">= 0 and <= 1, got 2.0", 'pool', 'add-volume',
                         POOL, 'v', '--size-gib', '1', '--read-fraction',
                         '2')
        self.assertFails("pool: must be a Cinder pool name host@backend#pool,"
                         " got 'nope'", 'pool', 'add-volume', 'nope', 'v',
                         '--size-gib', '1')
        self.run_manage('pool', 'add-volume', POOL, 'v', '--size-gib', '1')
        self.assertFails("volume 'v' is recorded on pool 'cinder-1@hdd#a'",
                         'pool', 'add-volume', 'c@h#p', 'v', '--size-gib',
                         '1')
