"""The conductor answers Cinder's scheduler plugins: ``pool_state`` over
oslo.messaging's fake:// transport."""

import logging
import os.path
import time

import fixtures
from oslo_config import cfg
import testtools

from iothrottle.rpc import threads

threads.setup()

import oslo_messaging as messaging  # noqa: E402

from iothrottle.cinder import placement  # noqa: E402
from iothrottle.conductor import service  # noqa: E402
from iothrottle.controller import model  # noqa: E402
from iothrottle.db import api as db_api  # noqa: E402
from iothrottle.rpc import api as rpc_api  # noqa: E402
from iothrottle.rpc import wire  # noqa: E402
from iothrottle.seekmodel import profile  # noqa: E402
from tests.unit.db import base  # noqa: E402

PROFILES = os.path.join(os.path.dirname(__file__), '..', '..', '..', 'etc',
                        'iothrottle', 'profiles')
HDD = profile.load(os.path.join(PROFILES, 'wd1600js.json'))
POOL = 'cinder-1@hdd#a'
GOLD = model.Guarantee(min_iops=25, tier='gold')
V1 = placement.Volume('v1', 20 * placement.GIB, min_iops=25,
                      offset_bytes=0, outstanding_requests=2)


class TestPoolState(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.log = self.useFixture(fixtures.FakeLogger(level=logging.INFO))
        conf = cfg.ConfigOpts()
        conf([], project='iothrottle', default_config_files=[])
        self.transport = rpc_api.get_transport(conf, url='fake:/')
        self.addCleanup(self.transport.cleanup)
        self.api = rpc_api.ConductorAPI(self.transport)

    def serve(self, store):
        conductor = service.Conductor(None, None, store, 'none')
        server = rpc_api.get_server(self.transport, rpc_api.CONDUCTOR_TOPIC,
                                    'c', [service.Endpoint(conductor)])
        server.start()
        self.addCleanup(server.wait)
        self.addCleanup(server.stop)

    def test_profiles_volumes_and_tiers(self):
        engine = self.useFixture(base.SyncedDatabase()).engine
        db_api.set_pool_profile(engine, POOL, HDD, 'bfq')
        db_api.record_pool_volume(engine, POOL, V1)
        db_api.record_pool_volume(engine, 'cinder-2@x#y',
                                  placement.Volume('v2', 1.0))
        db_api.create_tier(engine, GOLD)
        self.serve(service.Store(engine))
        data = self.api.pool_state([POOL, 'cinder-2@x#y', POOL])
        reply = wire.decode_pool_state_reply(data)
        self.assertIsNone(reply.error)
        self.assertEqual({POOL: placement.PoolState(POOL, HDD, (V1,), 'bfq')},
                         reply.pools)
        self.assertEqual({'gold': GOLD}, reply.tiers)

    def test_unreachable_database_is_an_error_reply(self):
        engine = db_api.create_engine(
            'sqlite:////nonexistent-dir/iothrottle.sqlite')
        self.serve(service.Store(engine))
        reply = wire.decode_pool_state_reply(self.api.pool_state([POOL]))
        self.assertEqual('the conductor cannot read its database',
                         reply.error)
        self.assertEqual({}, reply.pools)
        self.assertIn('database unreachable', self.log.output)

    def test_no_conductor_times_out(self):
        start = time.monotonic()
        self.assertRaises(messaging.MessagingTimeout, self.api.pool_state,
                          [POOL], timeout_s=0.2)
        self.assertLess(time.monotonic() - start, 5.0)


class TestWire(testtools.TestCase):

    def test_round_trip(self):
        state = placement.PoolState(POOL, HDD, (V1,), None)
        data = wire.pool_state_reply({POOL: state}, {'gold': GOLD})
        self.assertEqual(wire.PoolStateReply({POOL: state}, {'gold': GOLD}),
                         wire.decode_pool_state_reply(data))

    def test_malformed_replies_name_the_pool(self):
        data = wire.pool_state_reply({POOL: placement.PoolState(POOL, HDD)})
        data['pools'][POOL]['profile']['distance_curve']['points'] = []
        exc = self.assertRaises(ValueError, wire.decode_pool_state_reply,
                                data)
        self.assertEqual("pool 'cinder-1@hdd#a': distance_curve: points "
                         "must not be empty", str(exc))
        data = wire.pool_state_reply({POOL: placement.PoolState(
            POOL, HDD, (V1,))})
        data['pools'][POOL]['volumes'][0]['size_bytes'] = -1
        exc = self.assertRaises(ValueError, wire.decode_pool_state_reply,
                                data)
        self.assertEqual("pool 'cinder-1@hdd#a': volume 'v1': size_bytes "
                         "must be a finite number >= 0, got -1", str(exc))
        del data['pools'][POOL]['volumes']
        exc = self.assertRaises(ValueError, wire.decode_pool_state_reply,
                                data)
        self.assertEqual("pool 'cinder-1@hdd#a': malformed: "
                         "KeyError('volumes')", str(exc))

    def test_conductor_refuses_a_bad_request(self):
        conductor = service.Conductor(None, None, service.Store(None), 'x')
        self.assertEqual('pools must be a list',
                         conductor.pool_state(5)['error'])
        self.assertEqual('the conductor cannot read its database',
                         conductor.pool_state([POOL])['error'])
