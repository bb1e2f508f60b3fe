"""The plugins' shell without Cinder: cache, stepping aside, logging."""

import logging
import os.path

import fixtures
from oslo_config import cfg
import testtools

from iothrottle.rpc import threads

threads.setup()

from iothrottle.cinder import client  # noqa: E402
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
GIB = placement.GIB
A = 'c1@hdd#a'
C = 'c2@hdd#c'
UNKNOWN = 'c3@lvm#d'
STATES = {
    A: placement.PoolState(A, HDD, (
        placement.Volume('v1', 20 * GIB, min_iops=25),
        placement.Volume('v2', 20 * GIB, min_iops=25)), 'mq-deadline'),
    C: placement.PoolState(C, HDD, (), 'mq-deadline'),
}
GOLD = model.Guarantee(min_iops=25, tier='gold')
REQUEST = {'size': 20, 'qos_specs': None,
           'volume_type': {'extra_specs': {'iothrottle:tier': 'gold'}},
           'request_spec': {'volume_id': 'new'}}


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


class FakeConductor:
    """fetch(pools) answering from STATES, or failing on demand."""

    def __init__(self):
        self.calls = []
        self.failure = None
        self.reply = None

    def __call__(self, pools):
        self.calls.append(list(pools))
        if self.failure is not None:
            raise self.failure
        if self.reply is not None:
            return self.reply
        return wire.pool_state_reply(
            {p: s for p, s in STATES.items() if p in pools}, {'gold': GOLD})


class ClientTestCase(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.log = self.useFixture(fixtures.FakeLogger(level=logging.INFO))
        self.clock = Clock()
        self.conductor = FakeConductor()
        self.client = client.PoolStateClient(self.conductor, cache_s=30.0,
                                             retry_s=60.0, clock=self.clock)


class TestPoolStateClient(ClientTestCase):

    def test_one_call_then_cached(self):
        lookup = self.client.lookup([C, A, UNKNOWN])
        self.assertEqual(client.Lookup({A: STATES[A], C: STATES[C]},
                                       {'gold': GOLD}), lookup)
        self.assertEqual([[A, C, UNKNOWN]], self.conductor.calls)
        self.clock.now += 29.0
        self.assertEqual(lookup, self.client.lookup([A, C, UNKNOWN]))
        self.assertEqual(1, len(self.conductor.calls))
        self.clock.now += 2.0
        self.client.lookup([A])
        self.assertEqual([A], self.conductor.calls[-1])

    def test_unreachable_steps_aside_logs_once_and_backs_off(self):
        self.conductor.failure = RuntimeError('MessagingTimeout: no reply')
        self.assertIsNone(self.client.lookup([A]))
        self.assertIsNone(self.client.lookup([A]))
        self.assertEqual(1, len(self.conductor.calls))
        self.clock.now += 61.0
        self.assertIsNone(self.client.lookup([A]))
        self.assertEqual(2, len(self.conductor.calls))
        self.assertEqual(1, self.log.output.count('no pool states'))
        self.assertIn('(RuntimeError: MessagingTimeout: no reply); '
                      'SeekModelWeigher and SeekModelFilter step aside '
                      '(neutral weight, every pool passes) and ask again in '
                      '60 s', self.log.output)
        self.conductor.failure = None
        self.clock.now += 61.0
        self.assertEqual({A: STATES[A]}, self.client.lookup([A]).states)
        self.assertIn('the conductor answers again', self.log.output)

    def test_error_reply_and_malformed_reply_step_aside(self):
        self.conductor.reply = wire.pool_state_reply(error='db down')
        self.assertIsNone(self.client.lookup([A]))
        self.assertIn('RuntimeError: db down', self.log.output)
        self.clock.now += 61.0
        self.conductor.reply = {'pools': {A: {'profile': {}}}, 'tiers': {}}
        self.assertIsNone(self.client.lookup([A]))
        self.assertEqual(2, len(self.conductor.calls))
        # One line per outage, however it fails.
        self.assertEqual(1, len(self.log.output.splitlines()))


class TestAdvise(ClientTestCase):

    def test_assessments_and_an_unknown_pool(self):
        advice = client.advise([A, C, UNKNOWN], REQUEST, client=self.client)
        self.assertEqual([A, C, UNKNOWN], list(advice))
        self.assertFalse(advice[A].passes)
        self.assertAlmostEqual(-0.10, advice[A].weight, places=2)
        self.assertAlmostEqual(0.72, advice[C].weight, places=2)
        self.assertIsNone(advice[UNKNOWN])
        client.advise([UNKNOWN], REQUEST, client=self.client)
        self.assertEqual(1, self.log.output.count(
            'iothrottle: pool c3@lvm#d has no profile in the conductor; '
            'neutral weight, it passes'))

    def test_threshold_is_passed_on(self):
        advice = client.advise([C], REQUEST, 0.8, client=self.client)
        self.assertFalse(advice[C].passes)

    def test_unusable_volume_type_steps_aside(self):
        request = dict(REQUEST, volume_type={
            'extra_specs': {'iothrottle:tier': 'platinum'}})
        for _ in range(2):
            self.assertEqual({A: None, C: None}, client.advise(
                [A, C], request, client=self.client))
        self.assertEqual(1, self.log.output.count(
            "iothrottle: unusable volume request (iothrottle:tier: unknown "
            "tier 'platinum' (known: gold)); stepping aside for it"))

    def test_conductor_gone(self):
        self.conductor.failure = RuntimeError('gone')
        self.assertEqual({A: None}, client.advise([A], REQUEST,
                                                  client=self.client))

    def test_anything_unexpected_steps_aside(self):
        class Broken:
            def lookup(self, pools):
                raise KeyError('bug')
        self.assertEqual({A: None}, client.advise([A], REQUEST,
                                                  client=Broken()))
        self.assertIn('assessing pools failed; stepping aside',
                      self.log.output)

    def test_pool_name_is_the_host_of_a_pool_state(self):
        class PoolState:
            host = 'c1@hdd#a'
        self.assertEqual(A, client.pool_name(PoolState()))
        self.assertEqual('', client.pool_name(object()))


class TestOverFakeTransport(testtools.TestCase):
    """conductor_fetch and shared() on a private ConfigOpts."""

    def setUp(self):
        super().setUp()
        self.log = self.useFixture(fixtures.FakeLogger(level=logging.INFO))
        self.conf = cfg.ConfigOpts()
        self.conf([], project='iothrottle', default_config_files=[])
        client.options(self.conf)
        self.conf.set_override('transport_url', 'fake:/', 'iothrottle_cinder')
        self.conf.set_override('rpc_timeout_s', 0.2, 'iothrottle_cinder')
        client.reset_shared()
        self.addCleanup(client.reset_shared)

    def test_conductor_answers(self):
        engine = self.useFixture(base.SyncedDatabase()).engine
        db_api.set_pool_profile(engine, C, HDD, 'mq-deadline')
        db_api.create_tier(engine, GOLD)
        pool_client = client.shared(self.conf)
        self.assertIs(pool_client, client.shared(self.conf))
        fetch = pool_client._fetch
        conductor = service.Conductor(None, None, service.Store(engine), 'x')
        # The client's own transport: its first call made it.
        self.assertIsNone(pool_client.lookup([C]))
        transport = rpc_api.get_transport(self.conf, url='fake:/')
        self.addCleanup(transport.cleanup)
        server = rpc_api.get_server(transport, rpc_api.CONDUCTOR_TOPIC, 'c',
                                    [service.Endpoint(conductor)])
        server.start()
        self.addCleanup(server.wait)
        self.addCleanup(server.stop)
        reply = wire.decode_pool_state_reply(fetch([C, UNKNOWN]))
        self.assertEqual({C: STATES[C]}, reply.pools)
        self.assertEqual({'gold': GOLD}, reply.tiers)
