"""The database functions the operator API added: tier update and
in-use check, instance records, decision queries, one pool, placing a
volume from raw values."""

import datetime

from iothrottle.cinder import placement
from iothrottle.controller import model
from iothrottle.db import api
from iothrottle import tiers
from tests.unit.db import test_api
from tests.unit.db import test_pools

T0 = datetime.datetime(2026, 1, 1, 12, 0, 0)
UUID_A = '6f1c9c0e-0d43-4c33-9d8e-8b2d9f1e0a11'
UUID_B = '0b9e2c3a-1d4f-4e5a-8b6c-7d8e9f0a1b2c'


class TestTierUpdateAndUse(test_api.DatabaseTestCase):

    def test_update_replaces_values(self):
        api.create_tier(self.engine, test_api.GOLD)
        better = model.Guarantee(min_iops=300, weight=2, tier='gold')
        api.update_tier(self.engine, better)
        self.assertEqual(better, api.get_tier(self.engine, 'gold'))

    def test_update_unknown(self):
        self.assertRaises(api.NotFound, api.update_tier, self.engine,
                          test_api.GOLD)

    def test_delete_refuses_while_an_instance_uses_it(self):
        api.create_tier(self.engine, test_api.GOLD)
        api.record_instances(self.engine, [
            api.InstanceRecord(UUID_A, 'p1', tier='gold')])
        exc = self.assertRaises(api.InUse, api.delete_tier, self.engine,
                                'gold')
        self.assertEqual("tier 'gold' is used by 1 instance(s): %s"
                         % UUID_A, str(exc))
        self.assertIn('gold', api.list_tiers(self.engine))
        api.record_instances(self.engine, [
            api.InstanceRecord(UUID_A, 'p1', tier='')])
        api.delete_tier(self.engine, 'gold')
        self.assertEqual({}, api.list_tiers(self.engine))


class TestInstances(test_api.DatabaseTestCase):

    def test_record_replace_and_get(self):
        api.record_instances(self.engine, [
            api.InstanceRecord(UUID_A, 'p1', tier='gold'),
            api.InstanceRecord(UUID_B, 'p2')], seen_at=T0)
        self.assertEqual(api.InstanceRecord(UUID_A, 'p1', 'gold', T0),
                         api.get_instance(self.engine, UUID_A))
        later = T0 + datetime.timedelta(hours=1)
        api.record_instances(self.engine, [
            api.InstanceRecord(UUID_A, 'p3')], seen_at=later)
        self.assertEqual(api.InstanceRecord(UUID_A, 'p3', '', later),
                         api.get_instance(self.engine, UUID_A))
        self.assertEqual('p2', api.get_instance(self.engine,
                                                UUID_B).project_id)

    def test_unknown_and_malformed(self):
        self.assertRaises(api.NotFound, api.get_instance, self.engine,
                          UUID_A)
        self.assertRaises(ValueError, api.record_instances, self.engine,
                          [api.InstanceRecord(UUID_A, '')])
        self.assertRaises(ValueError, api.record_instances, self.engine,
                          [api.InstanceRecord('x' * 37, 'p1')])

    def test_forget_by_age(self):
        api.record_instances(self.engine, [api.InstanceRecord(UUID_A, 'p')],
                             seen_at=T0)
        api.record_instances(self.engine, [api.InstanceRecord(UUID_B, 'p')],
                             seen_at=T0 + datetime.timedelta(days=2))
        self.assertEqual(1, api.forget_instances(
            self.engine, T0 + datetime.timedelta(days=1)))
        self.assertRaises(api.NotFound, api.get_instance, self.engine,
                          UUID_A)


def _cap(uuid, iops, device='vda'):
    return model.Decision(uuid, device, model.CAP, 'over its share',
                          model.Cap(iops=iops, bytes_sec=0), lease_s=30)


class TestDecisionQueries(test_api.DatabaseTestCase):

    def setUp(self):
        super().setUp()
        api.record_decisions(self.engine, 'dom-a', [_cap(UUID_A, 50)],
                             'guarantee', decided_at=T0)
        api.record_decisions(self.engine, 'dom-b', [_cap(UUID_B, 70)],
                             'guarantee',
                             decided_at=T0 + datetime.timedelta(seconds=10))
        api.record_decisions(self.engine, 'dom-a', [_cap(UUID_A, 20)],
                             'guarantee',
                             decided_at=T0 + datetime.timedelta(seconds=20))

    def test_filters(self):
        every = api.list_decisions(self.engine)
        self.assertEqual([20, 70, 50], [d.cap_iops for d in every])
        self.assertEqual([20, 50], [d.cap_iops for d in api.list_decisions(
            self.engine, storage_domain='dom-a')])
        self.assertEqual([70], [d.cap_iops for d in api.list_decisions(
            self.engine, instance_uuid=UUID_B)])
        self.assertEqual([20, 70], [d.cap_iops for d in api.list_decisions(
            self.engine, since=T0 + datetime.timedelta(seconds=5))])
        self.assertEqual([20], [d.cap_iops for d in api.list_decisions(
            self.engine, limit=1)])

    def test_latest_per_disk(self):
        latest = api.latest_decisions(self.engine, 'dom-a')
        self.assertEqual([(UUID_A, 20)],
                         [(d.instance_uuid, d.cap_iops) for d in latest])
        self.assertEqual(2, len(api.latest_decisions(self.engine)))


class TestPlaceVolume(test_api.DatabaseTestCase):

    def setUp(self):
        super().setUp()
        api.set_pool_profile(self.engine, test_pools.POOL, test_pools.HDD)
        api.create_tier(self.engine, test_api.GOLD)

    def test_tier_and_override(self):
        volume = api.place_volume(self.engine, test_pools.POOL, 'v1',
                                  {'size_gib': 20, 'min_bytes_sec': '1000'},
                                  tier='gold')
        self.assertEqual((20 * placement.GIB, 100, 1000),
                         (volume.size_bytes, volume.min_iops,
                          volume.min_bytes_sec))
        record = api.get_pool(self.engine, test_pools.POOL)
        self.assertEqual((volume,), record.volumes)

    def test_errors_name_the_field(self):
        for values, tier, message in (
                ({}, None, 'size_gib: required'),
                ({'size_gib': -1}, None,
                 'size_gib: must be a number >= 0, got -1'),
                ({'size_gib': 1, 'read_fraction': 1e16}, None,
                 'read_fraction: must be at most 1e+15, got 1e+16'),
                ({'size_gib': 1}, 'tin',
                 "tier: unknown tier 'tin' (known: gold)")):
            exc = self.assertRaises(ValueError, api.place_volume,
                                    self.engine, test_pools.POOL, 'v1',
                                    values, tier=tier)
            self.assertEqual(message, str(exc))
        self.assertEqual((), api.get_pool(self.engine,
                                          test_pools.POOL).volumes)

    def test_get_pool_unknown(self):
        self.assertRaises(api.NotFound, api.get_pool, self.engine,
                          'h@b#none')


class TestParseGuarantee(test_api.DatabaseTestCase):

    def test_names_the_culprit(self):
        for values, message in (
                ({'min_iops': 'x'}, "min_iops: must be a number >= 0, "
                                    "got 'x'"),
                ({'weight': 0}, 'weight: must be > 0, got 0'),
                ({'min_iops': 5, 'max_iops': 3},
                 'min_iops (5) exceeds max_iops (3)')):
            exc = self.assertRaises(ValueError, tiers.parse_guarantee,
                                    values)
            self.assertEqual(message, str(exc))
        self.assertEqual(model.Guarantee(min_iops=5, tier='t'),
                         tiers.parse_guarantee({'min_iops': '5'}, tier='t'))
