"""SeekModelWeigher and SeekModelFilter inside Cinder's scheduler.

Cinder's own HostManager finds both by entry point and enables them by
class name; its weight and filter handlers rank pool states built with
Cinder's own ``host_manager.PoolState``, and FilterScheduler builds the
request properties from a request spec as it does for ``volume
create``.  The iothrottle conductor answers in-process over
oslo.messaging's fake:// transport, on Cinder's own ``transport_url``
(the plugins' default).  The pools are the worked example of
``iothrottle/cinder/placement.py`` and ``doc/seekmodel.rst``.
"""

import logging
import os.path
import time
from unittest import mock

from cinder import context as cinder_context
from cinder import rpc as cinder_rpc
from cinder.scheduler import filter_scheduler
from cinder.scheduler import host_manager
import fixtures
from oslo_config import cfg
from oslo_config import fixture as config_fixture
from oslo_messaging import conffixture as messaging_conffixture
from oslo_utils import timeutils
import testtools

from iothrottle.cinder import client
from iothrottle.cinder import filter as seek_filter
from iothrottle.cinder import placement
from iothrottle.cinder import weigher as seek_weigher
from iothrottle.conductor import service
from iothrottle.controller import model
from iothrottle.db import api as db_api
from iothrottle.rpc import api as rpc_api
from iothrottle.seekmodel import profile
from tests.unit.db import base

CONF = cfg.CONF
PROFILES = os.path.join(os.path.dirname(__file__), '..', '..', 'etc',
                        'iothrottle', 'profiles')
HDD = profile.load(os.path.join(PROFILES, 'wd1600js.json'))
GIB = placement.GIB
A, B, C, D = 'c1@hdd#a', 'c1@hdd#b', 'c2@hdd#c', 'c2@lvm#d'
VOLUME_ID = '3f1b1c9e-8d3e-4c55-9a0e-6a4b9b2d1e01'
GOLD_TYPE = {'id': '9c0b5e47-4f0e-4b5e-8a4c-9f1d3c2b1a00', 'name': 'gold',
             'extra_specs': {'iothrottle:tier': 'gold'}}


def setUpModule():
    CONF([], project='cinder', default_config_files=[])


def pool_state(pool):
    """A pool as cinder-scheduler keeps it: equal capacities, so that
    only the seek model tells the pools apart."""
    host, pool_name = pool.split('#')
    state = host_manager.PoolState(host, None, None, pool_name)
    state.update_from_volume_capability({
        'total_capacity_gb': 1000, 'free_capacity_gb': 1000,
        'allocated_capacity_gb': 0, 'provisioned_capacity_gb': 0,
        'reserved_percentage': 0, 'thick_provisioning_support': True,
        'volume_backend_name': host.split('@')[1],
        'timestamp': timeutils.utcnow()})
    return state


class SchedulerTestCase(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.log = self.useFixture(fixtures.FakeLogger(level=logging.INFO))
        self.conf = self.useFixture(config_fixture.Config(CONF))
        # Cinder's bus, here fake://, as Cinder's own tests set it up; then
        # what cinder-scheduler's service does at start.
        self.useFixture(messaging_conffixture.ConfFixture(
            CONF)).transport_url = 'fake:/'
        cinder_rpc.init(CONF)
        self.addCleanup(cinder_rpc.cleanup)
        client.options(CONF)
        self.conf.config(rpc_timeout_s=0.5, group='iothrottle_cinder')
        client.reset_shared()
        self.addCleanup(client.reset_shared)
        with mock.patch.object(host_manager.HostManager,
                               '_update_backend_state_map'):
            self.host_manager = host_manager.HostManager()
        self.backends = [pool_state(p) for p in (A, B, C, D)]
        self.ctxt = cinder_context.get_admin_context()

    def start_conductor(self):
        """The conductor with the worked example in its database."""
        engine = self.useFixture(base.SyncedDatabase()).engine
        db_api.create_tier(engine, model.Guarantee(min_iops=25,
                                                   tier='gold'))
        for pool, scheduler in ((A, 'mq-deadline'), (B, 'bfq'),
                                (C, 'mq-deadline')):
            db_api.set_pool_profile(engine, pool, HDD, scheduler)
        for pool in (A, B):
            for n in (1, 2):
                db_api.record_pool_volume(engine, pool, placement.Volume(
                    '%s-v%d' % (pool, n), 20 * GIB, min_iops=25))
        conf = cfg.ConfigOpts()
        conf([], project='iothrottle', default_config_files=[])
        transport = rpc_api.get_transport(conf, url='fake:/')
        self.addCleanup(transport.cleanup)
        conductor = service.Conductor(None, None, service.Store(engine),
                                      'none')
        server = rpc_api.get_server(transport, rpc_api.CONDUCTOR_TOPIC,
                                    'conductor', [service.Endpoint(conductor)])
        server.start()
        self.addCleanup(server.wait)
        self.addCleanup(server.stop)

    def properties(self, volume_type=GOLD_TYPE, qos_specs=None):
        """Filter/weight properties as FilterScheduler builds them."""
        return {'context': self.ctxt, 'size': 20,
                'volume_type': volume_type, 'resource_type': volume_type,
                'qos_specs': qos_specs,
                'request_spec': {'volume_id': VOLUME_ID,
                                 'volume_properties': {'size': 20}}}

    def ranking(self, weighed):
        return [(w.obj.host, round(w.weight, 3)) for w in weighed]


class TestLoading(SchedulerTestCase):

    def test_found_by_entry_point_and_class_name(self):
        self.assertIn(seek_weigher.SeekModelWeigher,
                      self.host_manager.weight_classes)
        self.assertIn(seek_filter.SeekModelFilter,
                      self.host_manager.filter_classes)
        self.assertEqual(
            [seek_weigher.SeekModelWeigher],
            self.host_manager._choose_backend_weighers(['SeekModelWeigher']))
        self.assertEqual(
            [seek_filter.SeekModelFilter],
            self.host_manager._choose_backend_filters(['SeekModelFilter']))

    def test_enabled_through_cinder_conf(self):
        self.conf.config(scheduler_default_filters=[
            'AvailabilityZoneFilter', 'CapacityFilter', 'CapabilitiesFilter',
            'SeekModelFilter'])
        with mock.patch.object(host_manager.HostManager,
                               '_update_backend_state_map'):
            manager = host_manager.HostManager()
        self.assertIn(seek_filter.SeekModelFilter, manager.enabled_filters)


class TestRanking(SchedulerTestCase):

    def setUp(self):
        super().setUp()
        self.start_conductor()

    def test_weigher_ranks_by_headroom_after_placement(self):
        weighed = self.host_manager.get_weighed_backends(
            self.backends, self.properties(), ['SeekModelWeigher'])
        # (headroom + 1) / 2: C 0.72, B 0.17, D unknown 0, A -0.10.
        self.assertEqual([(C, 0.862), (B, 0.585), (D, 0.5), (A, 0.448)],
                         self.ranking(weighed))
        self.assertIn('iothrottle: pool c2@lvm#d has no profile in the '
                      'conductor; neutral weight, it passes',
                      self.log.output)

    def test_with_capacity_weigher(self):
        weighed = self.host_manager.get_weighed_backends(
            self.backends, self.properties(),
            ['CapacityWeigher', 'SeekModelWeigher'])
        # Equal free capacity: CapacityWeigher normalises to 0 for all.
        self.assertEqual([C, B, D, A], [w.obj.host for w in weighed])

    def test_filter_drops_the_pool_whose_guarantees_break(self):
        passed = self.host_manager.get_filtered_backends(
            self.backends, self.properties(), ['SeekModelFilter'])
        self.assertEqual([B, C, D], [b.host for b in passed])
        self.assertIn(
            'SeekModelFilter: pool c1@hdd#a with volume %s (3 volume(s)): '
            'predicted 68.0 IOPS, 278338 B/s (now 71.2 IOPS); promised '
            '75.0 IOPS, 0 B/s; headroom -0.10 < 0.00' % VOLUME_ID,
            self.log.output)

    def test_filter_threshold_from_cinder_conf(self):
        self.conf.config(min_headroom_fraction=0.5, group='iothrottle_cinder')
        passed = self.host_manager.get_filtered_backends(
            self.backends, self.properties(), ['SeekModelFilter'])
        self.assertEqual([C, D], [b.host for b in passed])

    def test_no_guarantee_still_counts_the_new_stream(self):
        plain = {'name': 'plain', 'extra_specs': {}}
        passed = self.host_manager.get_filtered_backends(
            self.backends, self.properties(plain), ['SeekModelFilter'])
        # A keeps 50 IOPS of promises on 68.0 predicted: it passes.
        self.assertEqual([A, B, C, D], [b.host for b in passed])

    def test_invalid_volume_type_steps_aside(self):
        bad = {'name': 'bad', 'extra_specs': {'iothrottle:min_iops': 'lots'}}
        passed = self.host_manager.get_filtered_backends(
            self.backends, self.properties(bad), ['SeekModelFilter'])
        self.assertEqual([A, B, C, D], [b.host for b in passed])
        weighed = self.host_manager.get_weighed_backends(
            self.backends, self.properties(bad), ['SeekModelWeigher'])
        self.assertEqual({0.5}, {w.weight for w in weighed})
        self.assertEqual(1, self.log.output.count(
            "iothrottle:min_iops: must be a number >= 0, got 'lots'"))

    def test_filter_scheduler_end_to_end_with_qos_specs(self):
        """FilterScheduler builds the properties itself: the guarantee
        comes from the volume's QoS specs, as Cinder passes them."""
        self.conf.config(
            scheduler_default_filters=['CapacityFilter', 'SeekModelFilter'],
            scheduler_default_weighers=['SeekModelWeigher'])
        with mock.patch.object(host_manager.HostManager,
                               '_update_backend_state_map'), \
                mock.patch('cinder.volume.rpcapi.VolumeAPI'):
            scheduler = filter_scheduler.FilterScheduler()
        scheduler.host_manager.get_all_backend_states = (
            lambda ctxt: iter(self.backends))
        request_spec = {
            'volume_id': VOLUME_ID,
            'volume_type': {'name': 'qos-gold', 'extra_specs': {}},
            'volume_properties': {
                'size': 20, 'qos_specs': {'iothrottle:min_iops': '25',
                                          'total_iops_sec': '500'}}}
        weighed = scheduler._get_weighted_candidates(self.ctxt,
                                                     request_spec)
        self.assertEqual([(C, 0.862), (B, 0.585), (D, 0.5)],
                         self.ranking(weighed))


class TestConductorUnreachable(SchedulerTestCase):
    """No conductor listens: neutral weights, every pool passes, one log
    line, and later requests do not wait for it again."""

    def test_step_aside(self):
        start = time.monotonic()
        passed = self.host_manager.get_filtered_backends(
            self.backends, self.properties(), ['SeekModelFilter'])
        self.assertEqual([A, B, C, D], [b.host for b in passed])
        weighed = self.host_manager.get_weighed_backends(
            self.backends, self.properties(), ['SeekModelWeigher'])
        # All neutral: the middle of the fixed scale, (0 + 1) / 2.
        self.assertEqual({0.5}, {w.weight for w in weighed})
        self.assertEqual(1, self.log.output.count('no pool states'))
        self.assertIn('(MessagingTimeout: ', self.log.output)
        self.assertIn('SeekModelWeigher and SeekModelFilter step aside '
                      '(neutral weight, every pool passes)', self.log.output)
        self.assertLess(time.monotonic() - start, 0.5 * 2 + 1.0)
        again = time.monotonic()
        self.host_manager.get_filtered_backends(
            self.backends, self.properties(), ['SeekModelFilter'])
        self.assertLess(time.monotonic() - again, 0.4)

    def test_bad_transport_url_steps_aside(self):
        self.conf.config(transport_url='bogus://nowhere',
                         group='iothrottle_cinder')
        weighed = self.host_manager.get_weighed_backends(
            self.backends, self.properties(), ['SeekModelWeigher'])
        self.assertEqual({0.5}, {w.weight for w in weighed})
        self.assertEqual(1, self.log.output.count('no pool states'))
