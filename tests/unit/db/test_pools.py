"""Cinder pools in the database: profiles and placed volumes."""

import datetime
import os.path

import testtools

from iothrottle.cinder import placement
from iothrottle.db import api
from iothrottle.seekmodel import profile
from tests.unit.db import base

PROFILES = os.path.join(os.path.dirname(__file__), '..', '..', '..', 'etc',
                        'iothrottle', 'profiles')
HDD = profile.load(os.path.join(PROFILES, 'wd1600js.json'))
FLASH = profile.load(os.path.join(PROFILES, 'nvme-seed002.json'))
POOL = 'cinder-1@hdd#a'
T0 = datetime.datetime(2026, 1, 1, 12, 0, 0)


def volume(volume_id, gib=20, **fields):
    return placement.Volume(volume_id, gib * placement.GIB, **fields)


class TestPools(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.engine = self.useFixture(base.SyncedDatabase()).engine

    def test_profile_set_replaced_listed_and_deleted(self):
        api.set_pool_profile(self.engine, POOL, HDD, 'bfq')
        api.set_pool_profile(self.engine, 'cinder-2@ssd#b', FLASH)
        [a, b] = api.pool_profiles(self.engine)
        self.assertEqual((POOL, HDD, 'bfq', ()),
                         (a.pool, a.profile, a.scheduler, a.volumes))
        self.assertEqual(('cinder-2@ssd#b', FLASH, None),
                         (b.pool, b.profile, b.scheduler))
        api.set_pool_profile(self.engine, POOL, FLASH)
        self.assertEqual(FLASH, api.pool_profiles(self.engine)[0].profile)
        self.assertIsNone(api.pool_profiles(self.engine)[0].scheduler)
        self.assertEqual(0, api.delete_pool(self.engine, POOL))
        self.assertEqual(['cinder-2@ssd#b'],
                         [r.pool for r in api.pool_profiles(self.engine)])
        exc = self.assertRaises(api.NotFound, api.delete_pool, self.engine,
                                POOL)
        self.assertEqual("no pool 'cinder-1@hdd#a'", str(exc))

    def test_bad_pool_name_or_scheduler(self):
        exc = self.assertRaises(ValueError, api.set_pool_profile,
                                self.engine, 'cinder-1', HDD)
        self.assertEqual("pool: must be a Cinder pool name host@backend#pool,"
                         " got 'cinder-1'", str(exc))
        exc = self.assertRaises(ValueError, api.set_pool_profile,
                                self.engine, POOL, HDD, 'cfq')
        self.assertIn("scheduler: unknown scheduler 'cfq'", str(exc))
        self.assertRaises(ValueError, api.record_pool_volume, self.engine,
                          'x#y', volume('v1'))

    def test_volumes_in_placement_order(self):
        api.set_pool_profile(self.engine, POOL, HDD, 'mq-deadline')
        later = T0 + datetime.timedelta(seconds=1)
        api.record_pool_volume(self.engine, POOL, volume('b', min_iops=5),
                               recorded_at=later)
        api.record_pool_volume(self.engine, POOL,
                               volume('a', 10, min_bytes_sec=1e6,
                                      offset_bytes=0, read_fraction=0.5,
                                      outstanding_requests=4),
                               recorded_at=T0)
        api.record_pool_volume(self.engine, 'cinder-9@x#y', volume('c'))
        states = api.pool_states(self.engine, [POOL, 'cinder-9@x#y',
                                               'cinder-8@x#z'])
        # A pool without a profile is unknown, even with volumes.
        self.assertEqual([POOL], list(states))
        self.assertEqual(placement.PoolState(
            POOL, HDD, (volume('a', 10, min_bytes_sec=1e6, offset_bytes=0,
                               read_fraction=0.5, outstanding_requests=4),
                        volume('b', min_iops=5)), 'mq-deadline'),
            states[POOL])
        exc = self.assertRaises(api.Exists, api.record_pool_volume,
                                self.engine, 'cinder-9@x#y', volume('a'))
        self.assertEqual("volume 'a' is recorded on pool 'cinder-1@hdd#a'",
                         str(exc))
        self.assertEqual(POOL, api.forget_pool_volume(self.engine, 'a'))
        self.assertEqual(('b',), tuple(
            v.volume_id for v in api.pool_states(
                self.engine, [POOL])[POOL].volumes))
        exc = self.assertRaises(api.NotFound, api.forget_pool_volume,
                                self.engine, 'a')
        self.assertEqual("no volume 'a' recorded on any pool", str(exc))

    def test_delete_drops_the_volumes_too(self):
        api.record_pool_volume(self.engine, POOL, volume('a'))
        api.record_pool_volume(self.engine, POOL, volume('b'))
        self.assertEqual(2, api.delete_pool(self.engine, POOL))
        self.assertEqual({}, api.pool_states(self.engine, [POOL]))
        api.record_pool_volume(self.engine, POOL, volume('a'))
