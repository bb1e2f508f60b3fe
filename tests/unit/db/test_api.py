"""The database api on SQLite."""

import dataclasses
import datetime
import types

import sqlalchemy as sa
import testtools

from iothrottle.controller import model
from iothrottle.db import api
from iothrottle.db import models
from tests.unit.db import base

GOLD = model.Guarantee(min_iops=100, min_bytes_sec=6553600, weight=4,
                       tier='gold')
SILVER = model.Guarantee(min_iops=40, max_iops=400, weight=2, tier='silver')
T0 = datetime.datetime(2025, 3, 1, 12, 0, 0, 123456)
UUID = '6f1c9c0e-0d43-4c33-9d8e-8b2d9f1e0a11'


class DatabaseTestCase(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.engine = self.useFixture(base.SyncedDatabase()).engine


class TestTiers(DatabaseTestCase):

    def test_create_list_get_delete(self):
        api.create_tier(self.engine, SILVER)
        api.create_tier(self.engine, GOLD)
        self.assertEqual({'gold': GOLD, 'silver': SILVER},
                         api.list_tiers(self.engine))
        self.assertEqual(['gold', 'silver'],
                         list(api.list_tiers(self.engine)))
        self.assertEqual(GOLD, api.get_tier(self.engine, 'gold'))
        api.delete_tier(self.engine, 'gold')
        self.assertEqual({'silver': SILVER}, api.list_tiers(self.engine))

    def test_memory_floor_round_trip(self):
        db = model.Guarantee(min_iops=10, min_memory_mb=2048.5, tier='db')
        api.create_tier(self.engine, db)
        self.assertEqual(db, api.get_tier(self.engine, 'db'))
        self.assertEqual({'db': db}, api.list_tiers(self.engine))

    def test_duplicate(self):
        api.create_tier(self.engine, GOLD)
        exc = self.assertRaises(api.Exists, api.create_tier, self.engine,
                                GOLD)
        self.assertEqual("tier 'gold' exists", str(exc))

    def test_missing(self):
        exc = self.assertRaises(api.NotFound, api.delete_tier, self.engine,
                                'gold')
        self.assertEqual("no tier 'gold'", str(exc))
        self.assertRaises(api.NotFound, api.get_tier, self.engine, 'gold')

    def test_bad_names(self):
        for name in ('', 'a b', 'x' * 65):
            exc = self.assertRaises(ValueError, api.create_tier, self.engine,
                                    model.Guarantee(min_iops=1, tier=name))
            self.assertTrue(str(exc).startswith('tier name: must be a tier '
                                                'name'), str(exc))
        self.assertEqual({}, api.list_tiers(self.engine))


class TestFlavorCache(DatabaseTestCase):

    def test_guarantee_and_refresh(self):
        api.cache_flavor(self.engine, 'f1', 'm1.large', guarantee=GOLD,
                         fetched_at=T0)
        cached = api.cached_flavor(self.engine, 'm1.large')
        self.assertEqual(api.CachedFlavor('f1', 'm1.large', GOLD, None, T0),
                         cached)
        later = T0 + datetime.timedelta(seconds=60)
        api.cache_flavor(self.engine, 'f1', 'm1.large', guarantee=SILVER,
                         fetched_at=later)
        self.assertEqual(SILVER,
                         api.cached_flavor(self.engine, 'm1.large').guarantee)

    def test_invalid_flavor_keeps_its_error(self):
        error = 'iothrottle:min_iops: must be a number >= 0, got \'abc\''
        api.cache_flavor(self.engine, 'f2', 'm1.bad', error=error,
                         fetched_at=T0)
        cached = api.cached_flavor(self.engine, 'm1.bad')
        self.assertIsNone(cached.guarantee)
        self.assertEqual(error, cached.error)

    def test_explicit_guarantee_without_tier(self):
        bare = model.Guarantee(min_iops=5)
        api.cache_flavor(self.engine, 'f3', 'bare', guarantee=bare)
        self.assertEqual(bare,
                         api.cached_flavor(self.engine, 'bare').guarantee)

    def test_memory_floor_is_cached(self):
        floor = model.Guarantee(min_memory_mb=1024)
        api.cache_flavor(self.engine, 'f4', 'db.small', guarantee=floor)
        self.assertEqual(floor,
                         api.cached_flavor(self.engine, 'db.small').guarantee)

    def test_stale_entry_is_not_returned(self):
        api.cache_flavor(self.engine, 'f1', 'm1.large', guarantee=GOLD,
                         fetched_at=T0)
        now = T0 + datetime.timedelta(seconds=601)
        self.assertIsNone(api.cached_flavor(self.engine, 'm1.large',
                                            max_age_s=600, now=now))
        self.assertIsNotNone(api.cached_flavor(self.engine, 'm1.large',
                                               max_age_s=700, now=now))
        self.assertIsNone(api.cached_flavor(self.engine, 'unknown'))

    def test_aware_times_are_stored_as_utc(self):
        aware = datetime.datetime(2025, 3, 1, 14, 0, tzinfo=datetime.timezone(
            datetime.timedelta(hours=2)))
        api.cache_flavor(self.engine, 'f1', 'm1.large', guarantee=GOLD,
                         fetched_at=aware)
        self.assertEqual(datetime.datetime(2025, 3, 1, 12, 0),
                         api.cached_flavor(self.engine,
                                           'm1.large').fetched_at)

    def test_forget(self):
        api.cache_flavor(self.engine, 'f1', 'old', guarantee=GOLD,
                         fetched_at=T0)
        api.cache_flavor(self.engine, 'f2', 'new', guarantee=GOLD,
                         fetched_at=T0 + datetime.timedelta(days=2))
        self.assertEqual(1, api.forget_flavors(
            self.engine, T0 + datetime.timedelta(days=1)))
        self.assertIsNone(api.cached_flavor(self.engine, 'old'))
        self.assertIsNotNone(api.cached_flavor(self.engine, 'new'))

    def test_bad_input(self):
        self.assertRaises(ValueError, api.cache_flavor, self.engine, 'f1',
                          'x', guarantee=GOLD, error='both')
        self.assertRaises(ValueError, api.cache_flavor, self.engine, 'f1',
                          'x')
        self.assertRaises(ValueError, api.cache_flavor, self.engine,
                          'f' * 256, 'x', guarantee=GOLD)


class TestStorageDomains(DatabaseTestCase):

    KEY = 'nbd:127.0.0.1:10809/store'

    def test_learned_capacity_follows_the_peak(self):
        domain = api.learn_peak(self.engine, self.KEY, iops=150,
                                bytes_sec=60e6)
        self.assertEqual(models.CAPACITY_LEARNED, domain.capacity_source)
        self.assertEqual(model.Capacity(150, 60e6), domain.capacity())
        # A peak is one interval's total: the next replaces it whole
        # (the conductor records one only when its load grew).
        domain = api.learn_peak(self.engine, self.KEY, iops=120,
                                bytes_sec=80e6)
        self.assertEqual((120, 80e6), (domain.peak_iops,
                                       domain.peak_bytes_sec))
        self.assertEqual(model.Capacity(120, 80e6), domain.capacity())

    def test_declared_capacity_wins_peaks_still_recorded(self):
        api.learn_peak(self.engine, self.KEY, iops=150, bytes_sec=60e6)
        api.declare_capacity(self.engine, self.KEY, max_iops=200,
                             max_bytes_sec=100e6)
        domain = api.learn_peak(self.engine, self.KEY, iops=300,
                                bytes_sec=1e6)
        self.assertEqual(models.CAPACITY_CONFIG, domain.capacity_source)
        self.assertEqual(model.Capacity(200, 100e6), domain.capacity())
        self.assertEqual(300, domain.peak_iops)
        self.assertEqual([domain], api.storage_domains(self.engine))
        self.assertEqual(domain,
                         api.get_storage_domain(self.engine, self.KEY))

    def test_unknown_capacity(self):
        domain = api.learn_peak(self.engine, self.KEY, iops=10, bytes_sec=0)
        self.assertIsNone(domain.capacity())
        self.assertRaises(api.NotFound, api.get_storage_domain, self.engine,
                          'other')

    def test_bad_input(self):
        for iops in ('abc', -1, float('nan'), None):
            self.assertRaises(ValueError, api.learn_peak, self.engine,
                              self.KEY, iops=iops, bytes_sec=1)
        self.assertRaises(ValueError, api.declare_capacity, self.engine,
                          self.KEY, max_iops=0, max_bytes_sec=1)
        self.assertRaises(ValueError, api.learn_peak, self.engine, '',
                          iops=1, bytes_sec=1)
        self.assertEqual([], api.storage_domains(self.engine))

    def test_non_finite_or_negative_names_the_field(self):
        for bad in (float('inf'), float('-inf'), float('nan'), -1, 1e300):
            exc = self.assertRaises(ValueError, api.learn_peak, self.engine,
                                    self.KEY, iops=1, bytes_sec=bad)
            self.assertTrue(str(exc).startswith('bytes_sec '), exc)
            exc = self.assertRaises(ValueError, api.declare_capacity,
                                    self.engine, self.KEY, max_iops=bad,
                                    max_bytes_sec=1)
            self.assertIn('max_iops', str(exc))
        self.assertEqual([], api.storage_domains(self.engine))

    def test_reset_peak(self):
        api.learn_peak(self.engine, self.KEY, iops=1e12, bytes_sec=60e6)
        domain = api.reset_peak(self.engine, self.KEY)
        self.assertEqual((0, 0, 0, 0), (
            domain.peak_iops, domain.peak_bytes_sec, domain.max_iops,
            domain.max_bytes_sec))
        self.assertIsNone(domain.capacity())
        domain = api.learn_peak(self.engine, self.KEY, iops=150,
                                bytes_sec=60e6)
        self.assertEqual(model.Capacity(150, 60e6), domain.capacity())
        exc = self.assertRaises(api.NotFound, api.reset_peak, self.engine,
                                'other')
        self.assertEqual("no storage domain 'other'", str(exc))

    def test_reset_peak_keeps_a_declared_capacity(self):
        api.declare_capacity(self.engine, self.KEY, max_iops=200,
                             max_bytes_sec=100e6)
        api.learn_peak(self.engine, self.KEY, iops=1e12, bytes_sec=1)
        domain = api.reset_peak(self.engine, self.KEY)
        self.assertEqual((0, 0), (domain.peak_iops, domain.peak_bytes_sec))
        self.assertEqual(model.Capacity(200, 100e6), domain.capacity())


def load(fraction=0.5, saturated=False, disks=2, caps=0, iops=50.0):
    return model.DomainLoad(iops=iops, bytes_sec=iops * 65536,
                            load=fraction, saturated=saturated, disks=disks,
                            caps=caps)


class TestDomainLoad(DatabaseTestCase):

    KEY = 'rbd:ceph/volumes'

    def record(self, value, seconds):
        return api.record_domain_load(
            self.engine, self.KEY, value,
            measured_at=T0 + datetime.timedelta(seconds=seconds))

    def test_unknown_until_recorded_then_shown(self):
        api.declare_capacity(self.engine, self.KEY, 100, 1e9)
        before = api.get_storage_domain(self.engine, self.KEY)
        self.assertEqual((None, None, None), (before.load_fraction,
                                              before.saturated,
                                              before.load_at))
        self.assertTrue(self.record(load(0.95, True, caps=1, iops=90), 0))
        domain = api.get_storage_domain(self.engine, self.KEY)
        self.assertEqual((90.0, 90 * 65536.0, 0.95, True, 2, 1, T0),
                         (domain.load_iops, domain.load_bytes_sec,
                          domain.load_fraction, domain.saturated,
                          domain.load_disks, domain.load_caps,
                          domain.load_at))
        # The capacity's time is not the load's.
        self.assertEqual(before.updated_at, domain.updated_at)
        self.assertEqual(model.Capacity(100, 1e9), domain.capacity())

    def test_the_policy_capacity_is_stored_and_a_move_of_it_is_a_change(
            self):
        learned = model.Capacity(105.0, 1e9)
        value = dataclasses.replace(load(0.5), capacity=learned)
        self.assertTrue(self.record(value, 0))
        domain = api.get_storage_domain(self.engine, self.KEY)
        self.assertEqual((105.0, 1e9), (domain.policy_max_iops,
                                        domain.policy_max_bytes_sec))
        # The same load against a capacity learned 10 % lower: stored.
        lower = dataclasses.replace(value, capacity=model.Capacity(94.5, 9e8))
        self.assertTrue(self.record(lower, 5))
        self.assertEqual(94.5, api.get_storage_domain(
            self.engine, self.KEY).policy_max_iops)
        # A policy that learns none: NULL again.
        self.assertTrue(self.record(load(0.5), 10))
        self.assertIsNone(api.get_storage_domain(
            self.engine, self.KEY).policy_max_iops)
        bad = dataclasses.replace(value, capacity=model.Capacity(1.0, 1.0))
        object.__setattr__(bad.capacity, 'max_iops', float('nan'))
        self.assertRaises(ValueError, self.record, bad, 20)

    def test_unknown_domain_is_created_without_capacity(self):
        self.assertTrue(self.record(load(), 0))
        domain = api.get_storage_domain(self.engine, self.KEY)
        self.assertEqual(models.CAPACITY_LEARNED, domain.capacity_source)
        self.assertIsNone(domain.capacity())
        self.assertEqual(0.5, domain.load_fraction)

    def test_stored_only_when_changed_or_at_the_heartbeat(self):
        self.assertTrue(self.record(load(0.50), 0))
        # Within one percentage point of the capacity: not stored.
        self.assertFalse(self.record(load(0.509, iops=51), 5))
        self.assertEqual(T0, api.get_storage_domain(
            self.engine, self.KEY).load_at)
        self.assertTrue(self.record(load(0.52), 10))
        self.assertTrue(self.record(load(0.52, saturated=True), 15))
        self.assertTrue(self.record(load(0.52, True, caps=1), 20))
        self.assertTrue(self.record(load(0.52, True, disks=3, caps=1), 25))
        self.assertFalse(self.record(load(0.52, True, disks=3, caps=1),
                                     25 + api.HEARTBEAT_S - 1))
        self.assertTrue(self.record(load(0.52, True, disks=3, caps=1),
                                    25 + api.HEARTBEAT_S))
        domain = api.get_storage_domain(self.engine, self.KEY)
        self.assertEqual(
            T0 + datetime.timedelta(seconds=25 + api.HEARTBEAT_S),
            domain.load_at)

    def test_bad_values_name_the_field(self):
        for value, field in ((load(float('nan')), 'load '),
                             (load(iops=-1), 'iops '),
                             (load(disks=-1), 'disks '),
                             (load(caps=1.5), 'caps ')):
            exc = self.assertRaises(ValueError, api.record_domain_load,
                                    self.engine, self.KEY, value)
            self.assertTrue(str(exc).startswith(field), exc)
        self.assertEqual([], api.storage_domains(self.engine))

    def test_a_round_of_domains_in_one_call(self):
        keys = ['pool-%04d' % i for i in range(api.LOAD_BATCH + 3)]
        self.assertEqual(len(keys), api.record_domain_loads(
            self.engine, {k: load(0.5) for k in keys}, measured_at=T0))
        later = T0 + datetime.timedelta(seconds=5)
        # Only the domains whose load moved are stored again.
        loads = {k: load(0.5) for k in keys}
        loads[keys[0]] = load(0.9, True)
        loads[keys[-1]] = load(0.5, caps=1)
        self.assertEqual(2, api.record_domain_loads(self.engine, loads,
                                                    measured_at=later))
        stored = {d.key: d for d in api.storage_domains(self.engine)}
        self.assertEqual((0.9, later), (stored[keys[0]].load_fraction,
                                        stored[keys[0]].load_at))
        self.assertEqual((0.5, T0), (stored[keys[1]].load_fraction,
                                     stored[keys[1]].load_at))
        self.assertEqual(1, stored[keys[-1]].load_caps)

    def test_a_bad_load_in_a_round_names_its_domain_and_stores_none(self):
        exc = self.assertRaises(ValueError, api.record_domain_loads,
                                self.engine, {'a': load(), 'b': load(
                                    iops=float('inf'))})
        self.assertTrue(str(exc).startswith('storage domain b: iops '), exc)
        self.assertEqual([], api.storage_domains(self.engine))


class TestDecisions(DatabaseTestCase):

    KEY = 'rbd:ceph/volumes'

    def decisions(self):
        return [
            model.Decision(UUID, 'vda', model.CAP,
                           'domain saturated; vm1 above its guarantee',
                           cap=model.Cap(iops=200, bytes_sec=0),
                           lease_s=30),
            model.Decision(UUID, 'vdb', model.RELEASE, 'calm for 3 '
                           'intervals'),
        ]

    def test_a_round_in_one_call(self):
        stored = api.record_round(
            self.engine, {self.KEY: self.decisions()},
            {'other': (80.0, 8e6)},
            {self.KEY: load(0.95, True, caps=1), 'other': load(0.2)},
            'guarantee', when=T0)
        self.assertEqual(2, stored)
        self.assertEqual(2, len(api.decisions_for_instance(self.engine,
                                                           UUID)))
        domains = {d.key: d for d in api.storage_domains(self.engine)}
        self.assertEqual((0.95, True), (domains[self.KEY].load_fraction,
                                        domains[self.KEY].saturated))
        self.assertEqual((80.0, 8e6), (domains['other'].peak_iops,
                                       domains['other'].peak_bytes_sec))
        # Unchanged the next interval: only the lease is renewed.
        self.assertEqual(0, api.record_round(
            self.engine, {self.KEY: self.decisions()[:1]}, {}, {},
            'guarantee', when=T0 + datetime.timedelta(seconds=5)))

    def test_a_learned_domain_shows_the_capacity_derived_from_its_peak(
            self):
        # The peak pair (95 requests/s of 16 KB) is no capacity: the
        # conductor uses the default's shape scaled until the peak fills
        # it, and that is what the API and CLI show.
        learned = model.Capacity(max_iops=97.1, max_bytes_sec=72.8e6)
        api.record_round(self.engine, {}, {'other': (95.0, 1.56e6)}, {},
                         'guarantee', when=T0, learned={'other': learned})
        domain = api.get_storage_domain(self.engine, 'other')
        self.assertEqual(learned, domain.capacity())
        self.assertEqual((95.0, 1.56e6), (domain.peak_iops,
                                          domain.peak_bytes_sec))
        # A declared capacity stays what the operator said.
        api.declare_capacity(self.engine, 'other', max_iops=200,
                             max_bytes_sec=100e6)
        api.record_round(self.engine, {}, {'other': (99.0, 2e6)}, {},
                         'guarantee', learned={'other': learned})
        self.assertEqual(model.Capacity(200, 100e6), api.get_storage_domain(
            self.engine, 'other').capacity())

    def test_a_bad_learned_capacity_is_named_and_writes_nothing(self):
        exc = self.assertRaises(
            ValueError, api.record_round, self.engine,
            {self.KEY: self.decisions()}, {'other': (80.0, 8e6)}, {},
            'guarantee', learned={'other': types.SimpleNamespace(
                max_iops=float('nan'), max_bytes_sec=1e6)})
        self.assertIn("'other'", str(exc))
        self.assertIn('max_iops', str(exc))
        self.assertEqual([], api.decisions_for_instance(self.engine, UUID))
        self.assertEqual([], api.storage_domains(self.engine))

    def test_a_bad_round_writes_nothing(self):
        exc = self.assertRaises(
            ValueError, api.record_round, self.engine,
            {self.KEY: self.decisions()}, {'other': (-1.0, 0.0)}, {},
            'guarantee')
        self.assertIn('iops', str(exc))
        self.assertEqual([], api.decisions_for_instance(self.engine, UUID))

    def test_record_and_ask_why(self):
        self.assertEqual(2, api.record_decisions(
            self.engine, self.KEY, self.decisions(), 'guarantee',
            decided_at=T0))
        later = T0 + datetime.timedelta(seconds=5)
        api.record_decisions(self.engine, self.KEY, self.decisions()[:1],
                             'guarantee', decided_at=later, heartbeat_s=0)
        records = api.decisions_for_instance(self.engine, UUID)
        self.assertEqual([later, T0, T0],
                         [record.decided_at for record in records])
        newest = records[0]
        self.assertEqual(
            api.DecisionRecord(
                decided_at=later, storage_domain=self.KEY,
                instance_uuid=UUID, device='vda', action=model.CAP,
                cap_iops=200, cap_bytes_sec=0,
                lease_expires_at=later + datetime.timedelta(seconds=30),
                reason='domain saturated; vm1 above its guarantee',
                policy='guarantee'),
            newest)
        release = [r for r in records if r.action == model.RELEASE][0]
        self.assertIsNone(release.cap_iops)
        self.assertIsNone(release.lease_expires_at)
        self.assertEqual(1, len(api.decisions_for_instance(self.engine, UUID,
                                                           limit=1)))
        self.assertEqual([], api.decisions_for_instance(self.engine, 'x'))

    def test_long_reason_is_cut(self):
        decision = model.Decision(UUID, 'vda', model.RELEASE, 'r' * 5000)
        api.record_decisions(self.engine, self.KEY, [decision], 'paper')
        record, = api.decisions_for_instance(self.engine, UUID)
        self.assertEqual(models.REASON_LENGTH, len(record.reason))

    def test_bad_decision_stores_nothing(self):
        bad = model.Decision(UUID, 'vda', 'explode', 'why not')
        self.assertRaises(ValueError, api.record_decisions, self.engine,
                          self.KEY, self.decisions() + [bad], 'guarantee')
        self.assertEqual([], api.decisions_for_instance(self.engine, UUID))

    def test_purge(self):
        api.record_decisions(self.engine, self.KEY, self.decisions(),
                             'guarantee', decided_at=T0)
        api.record_decisions(self.engine, self.KEY, self.decisions(),
                             'guarantee',
                             decided_at=T0 + datetime.timedelta(days=8))
        self.assertEqual(2, api.purge_decisions(
            self.engine, T0 + datetime.timedelta(days=7)))
        self.assertEqual(2, len(api.decisions_for_instance(self.engine,
                                                           UUID)))


class TestDecisionRetention(DatabaseTestCase):
    """Only changes are stored, plus a heartbeat."""

    KEY = 'rbd:ceph/volumes'

    def round_(self, cap_iops=200, disks=3, lease_s=600):
        return [model.Decision('%08d-0000-4000-8000-000000000000' % i,
                               'vda', model.CAP, 'vm%d at %d IOPS' % (i, i),
                               cap=model.Cap(iops=cap_iops, bytes_sec=0),
                               lease_s=lease_s)
                for i in range(disks)]

    def rows(self):
        with api._session(self.engine) as session:
            return session.scalar(sa.select(sa.func.count())
                                  .select_from(models.Decision))

    def record(self, decisions, seconds, **kwargs):
        return api.record_decisions(
            self.engine, self.KEY, decisions, 'guarantee',
            decided_at=T0 + datetime.timedelta(seconds=seconds), **kwargs)

    def test_identical_rounds_store_one_row_per_disk(self):
        for i in range(100):
            self.record(self.round_(), 5 * i, heartbeat_s=1000)
        self.assertEqual(3, self.rows())

    def test_unchanged_cap_renews_the_stored_lease(self):
        self.record(self.round_(disks=1), 0)
        self.assertEqual(0, self.record(self.round_(disks=1), 100))
        record, = api.decisions_for_instance(
            self.engine, self.round_(disks=1)[0].instance_uuid)
        self.assertEqual(T0, record.decided_at)
        self.assertEqual(T0 + datetime.timedelta(seconds=700),
                         record.lease_expires_at)

    def test_a_cap_decided_after_its_lease_ended_is_a_new_cap(self):
        self.record(self.round_(disks=1, lease_s=30), 0)
        self.assertEqual(1, self.record(self.round_(disks=1, lease_s=30),
                                        31))
        self.assertEqual(0, self.record(self.round_(disks=1, lease_s=30),
                                        35))
        self.assertEqual(2, self.rows())

    def disk(self, i=0):
        return '%08d-0000-4000-8000-000000000000/vda' % i

    def newest(self, i=0):
        return api.decisions_for_instance(self.engine,
                                          self.disk(i).split('/')[0])[0]

    def test_end_caps_ends_a_running_lease_at_once(self):
        self.record(self.round_(disks=2), 0)
        ended_at = T0 + datetime.timedelta(seconds=5)
        self.assertEqual(1, api.end_caps(self.engine, [self.disk(0)],
                                         ended_at))
        self.assertEqual(ended_at, self.newest(0).lease_expires_at)
        self.assertEqual(T0 + datetime.timedelta(seconds=600),
                         self.newest(1).lease_expires_at)
        # Ended already, unknown, malformed: nothing to end.
        self.assertEqual(0, api.end_caps(
            self.engine, [self.disk(0), self.disk(7), 'no-slash'],
            ended_at))
        # Capped again: a new row, not the old lease revived.
        self.assertEqual(1, self.record(self.round_(disks=1), 6))
        self.assertEqual(T0 + datetime.timedelta(seconds=6),
                         self.newest(0).decided_at)

    def test_a_cap_never_ends_before_it_was_stored(self):
        self.record(self.round_(disks=1), 10)
        self.assertEqual(1, api.end_caps(self.engine, [self.disk(0)], T0))
        self.assertEqual(T0 + datetime.timedelta(seconds=10),
                         self.newest(0).lease_expires_at)

    def test_end_caps_leaves_a_release_and_an_ended_lease(self):
        self.record(self.round_(disks=1, lease_s=30), 0)
        self.assertEqual(0, api.end_caps(
            self.engine, [self.disk(0)], T0 + datetime.timedelta(
                seconds=40)))
        self.assertEqual(T0 + datetime.timedelta(seconds=30),
                         self.newest(0).lease_expires_at)
        released = model.Decision(self.disk(0).split('/')[0], 'vda',
                                  model.RELEASE, 'calm')
        api.record_decisions(self.engine, self.KEY, [released], 'guarantee',
                             decided_at=T0 + datetime.timedelta(seconds=50))
        self.assertEqual(0, api.end_caps(
            self.engine, [self.disk(0)], T0 + datetime.timedelta(
                seconds=60)))
        self.assertEqual('release', self.newest(0).action)

    def test_changed_cap_or_action_is_stored(self):
        self.record(self.round_(cap_iops=200), 0)
        # Within the tolerance: the same cap.
        self.assertEqual(0, self.record(self.round_(cap_iops=201), 5))
        self.assertEqual(3, self.record(self.round_(cap_iops=150), 10))
        released = [model.Decision(d.instance_uuid, d.device, model.RELEASE,
                                   'calm') for d in self.round_()]
        self.assertEqual(3, self.record(released, 15))
        self.assertEqual(0, self.record(released, 20))
        self.assertEqual(9, self.rows())

    def test_heartbeat(self):
        self.record(self.round_(), 0)
        self.assertEqual(0, self.record(self.round_(), 299))
        self.assertEqual(3, self.record(self.round_(), 300))
        self.assertEqual(0, self.record(self.round_(), 301))

    def test_bad_heartbeat(self):
        for heartbeat_s in (-1, float('nan'), float('inf'), 'x'):
            exc = self.assertRaises(ValueError, self.record, self.round_(),
                                    0, heartbeat_s=heartbeat_s)
            self.assertIn('heartbeat_s', str(exc))


class TestPurge(DatabaseTestCase):

    def test_purge_decisions_and_flavors(self):
        now = T0 + datetime.timedelta(days=40)
        decision = model.Decision(UUID, 'vda', model.RELEASE, 'calm')
        for days in (0, 39):
            api.record_decisions(
                self.engine, 'k', [decision], 'guarantee', heartbeat_s=0,
                decided_at=T0 + datetime.timedelta(days=days))
            api.cache_flavor(self.engine, 'f%d' % days, 'm%d' % days,
                             guarantee=GOLD, fetched_at=T0 + datetime.
                             timedelta(days=days))
        self.assertEqual(api.Purged(decisions=1, flavors=1),
                         api.purge(self.engine, 30 * 86400, now=now))
        self.assertEqual(api.Purged(decisions=0, flavors=0),
                         api.purge(self.engine, 30 * 86400, now=now))
        self.assertIsNotNone(api.cached_flavor(self.engine, 'm39'))
        for bad in (-1, float('nan'), float('inf'), None):
            exc = self.assertRaises(ValueError, api.purge, self.engine, bad)
            self.assertIn('older_than_s', str(exc))
