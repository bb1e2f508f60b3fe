"""The conductor's follower of Cinder's volumes: payloads in, records out.

Payloads are shaped as Cinder 29's ``volume_utils._usage_from_volume``
builds them (see ``tests/functional/test_cinder_notifications.py``).
"""

import fixtures
import testtools

from iothrottle.cinder import placement
from iothrottle.conductor import volumes
from iothrottle.controller import model
from iothrottle.db import api
from tests.unit.db import base

GIB = placement.GIB
POOL_A = 'cinder-1@lvm#a'
POOL_B = 'cinder-2@lvm#b'
GOLD = model.Guarantee(min_iops=100, min_bytes_sec=1000, tier='gold')


def payload(**values):
    """A payload of ``volume_utils._usage_from_volume`` (Cinder 29)."""
    body = {'tenant_id': 'p1', 'host': POOL_A, 'user_id': 'u1',
            'availability_zone': 'nova', 'volume_id': 'v1',
            'volume_type': 'type-gold-id', 'display_name': 'data',
            'launched_at': '2026-01-01T00:00:00', 'created_at':
            '2026-01-01T00:00:00', 'status': 'available',
            'snapshot_id': None, 'size': 20, 'replication_status': None,
            'replication_extended_status': None,
            'replication_driver_data': None, 'metadata': [],
            'volume_attachment': []}
    body.update(values)
    return body


class TestFromNotification(testtools.TestCase):

    def test_create_places_the_volume_on_the_payload_host_pool(self):
        self.assertEqual(
            volumes.Placed('v1', POOL_A, 20.0, 'type-gold-id'),
            volumes.from_notification('volume.create.end', payload()))

    def test_retype_resize_and_manage_place_again(self):
        for event in ('volume.retype', 'volume.resize.end',
                      'volume.manage_existing.end'):
            self.assertEqual(POOL_B, volumes.from_notification(
                event, payload(host=POOL_B)).pool, event)

    def test_delete_and_unmanage_need_only_the_id(self):
        for event in ('volume.delete.end', 'volume.unmanage.end'):
            self.assertEqual(volumes.Gone('v1'), volumes.from_notification(
                event, payload(host=None, size=None)), event)

    def test_other_events_and_failed_volumes_move_nothing(self):
        self.assertIsNone(volumes.from_notification('volume.create.start',
                                                    payload()))
        self.assertIsNone(volumes.from_notification('volume.attach.end',
                                                    payload()))
        self.assertIsNone(volumes.from_notification(
            'volume.create.end', payload(status='error')))

    def test_bad_fields_are_named(self):
        cases = [(payload(host='cinder@lvm'), 'payload.host'),
                 (payload(host=None), 'payload.host'),
                 (payload(size=float('nan')), 'payload.size'),
                 (payload(size=True), 'payload.size'),
                 (payload(size=0), 'payload.size'),
                 (payload(size='20'), 'payload.size'),
                 (payload(volume_id=''), 'payload.volume_id'),
                 (payload(volume_id='x' * 300), 'payload.volume_id'),
                 (payload(volume_type=7), 'payload.volume_type'),
                 (payload(status=['a']), 'payload.status')]
        for body, field in cases:
            exc = self.assertRaises(ValueError, volumes.from_notification,
                                    'volume.create.end', body)
            self.assertIn(field, str(exc))
            self.assertNotIn('\n', str(exc))
        exc = self.assertRaises(ValueError, volumes.from_notification,
                                'volume.delete.end', ['v1'])
        self.assertIn('payload must be a mapping', str(exc))


class TestFromApi(testtools.TestCase):

    def record(self, **values):
        body = {'id': 'v1', 'os-vol-host-attr:host': POOL_A, 'size': 10,
                'volume_type': 'gold', 'status': 'in-use',
                'migration_status': None}
        body.update(values)
        return body

    def test_a_volume_on_a_pool(self):
        self.assertEqual(volumes.Placed('v1', POOL_A, 10.0, 'gold'),
                         volumes.from_api(self.record()))

    def test_volumes_holding_no_place_are_left_out(self):
        for values in ({'os-vol-host-attr:host': None},
                       {'status': 'error'}, {'status': 'deleting'},
                       {'migration_status': 'target:v0'}):
            self.assertIsNone(volumes.from_api(self.record(**values)),
                              values)

    def test_bad_records_are_named(self):
        exc = self.assertRaises(ValueError, volumes.from_api,
                                self.record(size=-1))
        self.assertIn('volume v1: size', str(exc))
        exc = self.assertRaises(ValueError, volumes.from_api,
                                self.record(id=None))
        self.assertIn('volume: id', str(exc))


def vol(volume_id, size_gib, min_iops=0.0, **stream):
    return placement.Volume(volume_id=volume_id, size_bytes=size_gib * GIB,
                            min_iops=min_iops, **stream)


class TestReconcile(testtools.TestCase):

    def test_the_diff_places_moves_corrects_and_forgets(self):
        wanted = {'same': (POOL_A, vol('same', 1)),
                  'new': (POOL_A, vol('new', 2)),
                  'moved': (POOL_B, vol('moved', 3)),
                  'grown': (POOL_A, vol('grown', 8)),
                  'retyped': (POOL_A, vol('retyped', 4, min_iops=50))}
        recorded = {'same': (POOL_A, vol('same', 1, read_fraction=0.5,
                                         offset_bytes=0)),
                    'moved': (POOL_A, vol('moved', 3)),
                    'grown': (POOL_A, vol('grown', 4)),
                    'retyped': (POOL_A, vol('retyped', 4)),
                    'deleted': (POOL_B, vol('deleted', 5))}
        diff = volumes.reconcile(wanted, recorded)
        self.assertEqual(['grown', 'moved', 'new', 'retyped'],
                         sorted(diff.place))
        self.assertEqual(wanted['moved'], diff.place['moved'])
        self.assertEqual(('deleted',), diff.forget)

    def test_nothing_to_do_when_in_step(self):
        both = {'v': (POOL_A, vol('v', 1))}
        self.assertEqual(volumes.Diff(place={}, forget=()),
                         volumes.reconcile(both, dict(both)))


class TestTypes(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.now = [0.0]
        self.fetches = []
        self.specs = volumes.type_specs(
            [{'id': 'type-gold-id', 'name': 'gold', 'qos_specs_id': None,
              'extra_specs': {'iothrottle:tier': 'gold'}},
             {'id': 'type-qos-id', 'name': 'qos', 'qos_specs_id': 'q1',
              'extra_specs': {}},
             {'id': 'type-bad-id', 'name': 'bad',
              'extra_specs': {'iothrottle:min_iops': 'nan'}},
             'garbage'],
            [{'id': 'q1', 'specs': {'iothrottle:min_iops': '7'}},
             {'id': 'q2'}])

        def fetch():
            self.fetches.append(self.now[0])
            return self.specs
        self.types = volumes.Types(fetch, lambda: {'gold': GOLD},
                                   refresh_s=60,
                                   clock=lambda: self.now[0])

    def test_a_type_by_id_or_name_gets_its_specs_guarantee(self):
        self.assertEqual(100, self.types.guarantee('type-gold-id').min_iops)
        self.assertEqual(100, self.types.guarantee('gold').min_iops)
        self.assertEqual(7, self.types.guarantee('type-qos-id').min_iops)

    def test_unknown_invalid_or_no_type_gives_no_guarantee(self):
        for key in ('nope', 'type-bad-id', None):
            self.assertEqual(model.NO_GUARANTEE,
                             self.types.guarantee(key), key)

    def test_unknown_types_are_asked_for_at_most_every_refresh(self):
        self.types.guarantee('nope')
        self.types.guarantee('nope')
        self.now[0] = 61
        self.types.guarantee('nope')
        self.types.guarantee('gold')
        self.assertEqual([0.0, 61], self.fetches)

    def test_no_api_no_guarantee_and_no_fetch(self):
        types = volumes.Types(None, dict, refresh_s=60)
        self.assertEqual(model.NO_GUARANTEE, types.guarantee('gold'))


class TestFollower(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.engine = self.useFixture(base.SyncedDatabase()).engine
        api.create_tier(self.engine, GOLD)
        specs = volumes.type_specs(
            [{'id': 'type-gold-id', 'name': 'gold',
              'extra_specs': {'iothrottle:tier': 'gold'}}], [])
        self.types = volumes.Types(lambda: specs,
                                   lambda: api.list_tiers(self.engine),
                                   refresh_s=60)
        self.follower = volumes.Follower(self.engine, self.types)
        self.logger = self.useFixture(fixtures.FakeLogger())

    def recorded(self):
        return {volume_id: (pool, volume.size_bytes / GIB, volume.min_iops)
                for volume_id, (pool, volume)
                in api.pool_volumes(self.engine).items()}

    def test_create_retype_and_delete(self):
        self.follower.notified('volume.create.end',
                               payload(volume_type=None))
        self.assertEqual({'v1': (POOL_A, 20.0, 0.0)}, self.recorded())
        self.follower.notified('volume.retype',
                               payload(host=POOL_B,
                                       volume_type='type-gold-id'))
        self.assertEqual({'v1': (POOL_B, 20.0, 100.0)}, self.recorded())
        self.follower.notified('volume.delete.end', payload())
        self.assertEqual({}, self.recorded())
        # A second delete (redelivery) is harmless.
        self.follower.notified('volume.delete.end', payload())

    def test_resize_on_the_same_pool_keeps_the_operators_stream(self):
        api.place_volume(self.engine, POOL_A, 'v1',
                         {'size_gib': 20, 'offset_bytes': 4096,
                          'read_fraction': 0.25})
        self.follower.notified('volume.resize.end', payload(size=30))
        (pool, volume), = api.pool_volumes(self.engine).values()
        self.assertEqual((POOL_A, 30 * GIB, 4096, 0.25),
                         (pool, volume.size_bytes, volume.offset_bytes,
                          volume.read_fraction))

    def test_a_bad_payload_is_dropped_with_one_warning(self):
        self.follower.notified('volume.create.end', payload(size=-3))
        self.assertEqual({}, self.recorded())
        self.assertIn('Cinder notification dropped: volume.create.end: '
                      'payload.size', self.logger.output)

    def test_a_database_failure_is_logged_not_raised(self):
        self.engine.dispose()
        follower = volumes.Follower(api.create_engine('sqlite:///nowhere/x'),
                                    self.types)
        follower.notified('volume.create.end', payload())
        self.assertIn('not recorded', self.logger.output)

    def test_reconcile_makes_the_record_match_cinder(self):
        api.place_volume(self.engine, POOL_A, 'gone', {'size_gib': 1})
        api.place_volume(self.engine, POOL_A, 'moved', {'size_gib': 2})
        listed = [{'id': 'moved', 'os-vol-host-attr:host': POOL_B,
                   'size': 2, 'volume_type': 'gold', 'status': 'available'},
                  {'id': 'new', 'os-vol-host-attr:host': POOL_A, 'size': 5,
                   'volume_type': None, 'status': 'in-use'},
                  {'id': 'bad', 'os-vol-host-attr:host': 'nohash',
                   'size': 5},
                  {'id': 'tmp', 'os-vol-host-attr:host': POOL_B, 'size': 2,
                   'status': 'available', 'migration_status': 'target:x'}]
        diff = self.follower.reconcile(listed)
        self.assertEqual({'moved': (POOL_B, 2.0, 100.0),
                          'new': (POOL_A, 5.0, 0.0)}, self.recorded())
        self.assertEqual(('gone',), diff.forget)
        self.assertIn('volume bad: os-vol-host-attr:host',
                      self.logger.output)


class FakeResponse:

    def __init__(self, body):
        self.body = body

    def json(self):
        return self.body


class FakeSession:

    def __init__(self, pages):
        self.pages = pages
        self.urls = []

    def get(self, url, endpoint_filter, raise_exc):
        self.urls.append((url, endpoint_filter['service_type']))
        return FakeResponse(self.pages[url])


class TestCinderAPI(testtools.TestCase):

    def test_volumes_follow_the_next_links(self):
        first = '/volumes/detail?all_tenants=1&limit=1000'
        second = 'http://cinder/v3/p/volumes/detail?marker=a'
        session = FakeSession({
            first: {'volumes': [{'id': 'a'}], 'volumes_links': [
                {'rel': 'next', 'href': second}]},
            second: {'volumes': [{'id': 'b'}]}})
        cinder = volumes.CinderAPI(session, 'internal')
        self.assertEqual(['a', 'b'],
                         [v['id'] for v in cinder.volumes()])
        self.assertEqual([(first, 'volumev3'), (second, 'volumev3')],
                         session.urls)

    def test_an_answer_without_the_list_is_an_error(self):
        session = FakeSession({'/types?is_public=None': {'x': 1}})
        exc = self.assertRaises(ValueError,
                                volumes.CinderAPI(session, 'public')
                                .type_specs)
        self.assertIn("no list 'volume_types'", str(exc))


class TestVolumes(testtools.TestCase):

    def test_reconcile_once_never_raises(self):
        class Broken:
            def volumes(self):
                raise RuntimeError('cinder down')
        logger = self.useFixture(fixtures.FakeLogger())
        the_volumes = volumes.Volumes(volumes.Follower(None, None),
                                      api=Broken())
        self.assertIsNone(the_volumes.reconcile_once())
        self.assertIn('not reconciled with Cinder: cinder down',
                      logger.output)
