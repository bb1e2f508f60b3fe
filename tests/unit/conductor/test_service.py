"""Conductor and agent over oslo.messaging's fake:// transport, and the
database going away."""

import datetime
import logging
import threading
import time
import types

import fixtures
from oslo_config import cfg
import testtools

from iothrottle.rpc import threads

threads.setup()

import futurist  # noqa: E402

from iothrottle.compute import agent as agent_mod  # noqa: E402
from iothrottle.compute import collector as collector_mod  # noqa: E402
from iothrottle.conductor import core  # noqa: E402
from iothrottle.conductor import service  # noqa: E402
from iothrottle import conf as iothrottle_conf  # noqa: E402
from iothrottle.controller import model  # noqa: E402
from iothrottle.db import api as db_api  # noqa: E402
from iothrottle.db import migration  # noqa: E402
from iothrottle.rpc import agent as remote_mod  # noqa: E402
from iothrottle.rpc import api as rpc_api  # noqa: E402
from iothrottle.rpc import reporter as reporter_mod  # noqa: E402
from iothrottle import throttle_status  # noqa: E402
from tests.unit.conductor import test_core  # noqa: E402

DEADLINE_S = 10.0


def serve(test, transport, host, remote, endpoint=remote_mod.Endpoint):
    """Serve ``remote`` (a RemoteAgent) on ``host``'s compute topic and
    run its report thread, both stopped when ``test`` ends."""
    server = rpc_api.get_server(transport, rpc_api.compute_topic(host),
                                host, [endpoint(remote)])
    server.start()
    stop = threading.Event()
    thread = remote_mod.start_thread(remote, stop)
    test.addCleanup(lambda: (server.stop(), server.wait()))
    test.addCleanup(thread.join, 10)
    test.addCleanup(stop.set)


def start_conductor(test, transport, store, guarantee=test_core.GOLD,
                    policy=None, version_cap=None):
    """A conductor of ``policy`` (default: test_core.Recorder) deciding
    every 0.5 s on ``transport``, stopped when ``test`` ends."""
    the_core = core.Core(policy or test_core.Recorder(),
                         test_core.Flavors({'m1.gold': guarantee}),
                         core.Capacities(test_core.CAPACITY),
                         interval_s=0.5)
    conductor = service.Conductor(
        the_core, rpc_api.ComputeAPI(transport, version_cap=version_cap),
        store, 'recorder')
    server = rpc_api.get_server(transport, rpc_api.CONDUCTOR_TOPIC, 'c',
                                [service.Endpoint(conductor)])
    stop = threading.Event()
    thread = threading.Thread(target=rpc_serve,
                              args=(conductor, server, stop))
    thread.start()
    test.addCleanup(thread.join, 10)
    test.addCleanup(stop.set)
    return conductor


def sqlite_engine(test):
    """A migrated SQLite database of ``test``'s own, removed after it."""
    tmp = test.useFixture(fixtures.TempDir())
    engine = db_api.create_engine('sqlite:///%s'
                                  % tmp.join('iothrottle.sqlite'))
    migration.upgrade(engine)
    return engine


class FakeCollector:
    """Two VMs, one disk each, on domain 'store'."""

    def __init__(self, uuids):
        self.uuids = uuids

    def collect(self):
        instances = {u: types.SimpleNamespace(uuid=u, domain_name='d-' + u,
                                              name=u, flavor='m1.gold',
                                              disks=(), domain_id=1)
                     for u in self.uuids}
        return collector_mod.Collection(
            taken_at_s=0.0, snapshot=None, instances=instances,
            samples=tuple(test_core.sample(u, 'store', 40.0)
                          for u in self.uuids))


class FakeActuator:
    def __init__(self):
        self.caps = {}

    def baseline(self, uuid, device):
        from iothrottle.compute import iotune
        return iotune.IoTune()

    def set_cap(self, uuid, device, cap, baseline):
        self.caps['%s/%s' % (uuid, device)] = cap

    def restore(self, uuid, device, baseline):
        self.caps.pop('%s/%s' % (uuid, device), None)

    def reconcile(self, instances, leased):
        return [], []


def conf_with(**controller):
    conf = cfg.ConfigOpts()
    iothrottle_conf.register_opts(conf)
    conf([], project='iothrottle', default_config_files=[])
    for name, value in controller.items():
        conf.set_override(name, value, 'controller')
    return conf


def wait_for(predicate, what):
    deadline = time.monotonic() + DEADLINE_S
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError('timed out waiting for %s' % what)
        time.sleep(0.02)


class TestOverFakeTransport(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.log = self.useFixture(fixtures.FakeLogger(level=logging.INFO))
        self.conf = conf_with(interval_s=0.5)
        self.transport = rpc_api.get_transport(self.conf, url='fake:/')
        self.addCleanup(self.transport.cleanup)

    def host(self, name):
        """A host name of this test (queues of a real broker outlive
        tests)."""
        return name

    def start_conductor(self, store, guarantee=test_core.GOLD,
                        policy=None, version_cap=None):
        return start_conductor(self, self.transport, store, guarantee,
                               policy, version_cap)

    def start_agent(self, host, uuids, balloon=None, endpoint=None):
        actuator = FakeActuator()
        agent = agent_mod.Agent(self.conf, FakeCollector(uuids), actuator,
                                None, None, None, balloon=balloon)
        # Its first collection: the disks it takes decisions for.
        agent.observe()
        remote = remote_mod.RemoteAgent(
            agent, rpc_api.ConductorAPI(self.transport), host, 0.5)
        serve(self, self.transport, host, remote,
              endpoint or remote_mod.Endpoint)
        return remote, actuator

    def test_two_hosts_get_their_own_caps(self):
        engine = sqlite_engine(self)
        conductor = self.start_conductor(service.Store(engine))
        r1, a1 = self.start_agent('h1', ['u1'])
        r2, a2 = self.start_agent('h2', ['u2'])
        wait_for(lambda: 'u1/vda' in a1.caps and 'u2/vda' in a2.caps,
                 'caps on both hosts')
        self.assertEqual(['u1/vda'], list(a1.caps))
        self.assertEqual(['u2/vda'], list(a2.caps))
        self.assertEqual(20.0, a1.caps['u1/vda'].iops)
        wait_for(lambda: db_api.decisions_for_instance(engine, 'u2'),
                 'a stored decision')
        record = db_api.decisions_for_instance(engine, 'u2')[0]
        self.assertEqual(('store', 'cap', 'test', 'recorder'),
                         (record.storage_domain, record.action,
                          record.reason, record.policy))
        self.assertGreater(conductor.rounds, 0)
        wait_for(lambda: db_api.get_storage_domain(engine,
                                                   'store').load_at,
                 'a stored load')
        domain = db_api.get_storage_domain(engine, 'store')
        self.assertGreater(domain.load_iops, 0)
        self.assertGreaterEqual(domain.load_disks, 1)

    def test_unreachable_database_does_not_stop_decisions(self):
        engine = db_api.create_engine(
            'sqlite:////nonexistent-dir/iothrottle.sqlite')
        store = service.Store(engine)
        conductor = self.start_conductor(store)
        self.start_agent('h1', ['u1'])
        wait_for(lambda: conductor.rounds >= 4, 'four rounds')
        self.assertFalse(store.healthy)
        self.assertEqual(1, self.log.output.count('database unreachable'))

    def test_caps_lapse_when_the_conductor_is_gone(self):
        conf = self.conf
        conf.set_override('lease_s', 1.0, 'controller')
        remote, actuator = self.start_agent(self.host('h1'), ['u1'])
        remote.apply([{'instance_uuid': 'u1', 'device': 'vda',
                       'action': 'cap', 'reason': 'r',
                       'cap': {'iops': 5.0, 'bytes_sec': 0.0},
                       'lease_s': 1.0, 'guarantee': {}}])
        self.assertIn('u1/vda', actuator.caps)
        wait_for(lambda: 'u1/vda' not in actuator.caps, 'the lease to lapse')

    def test_caps_lapse_while_a_report_hangs_on_the_bus(self):
        # A cast to a stopped broker takes seconds to fail; the loop that
        # lifts expired caps must not wait for it (it did: the full fault
        # matrix's rabbitmq-restart saw a cap outlive its lease by 3.8 s).
        hung = threading.Event()
        self.addCleanup(hung.set)
        started = []

        def report(report):
            started.append(report['seq'])
            hung.wait()
        actuator = FakeActuator()
        agent = agent_mod.Agent(self.conf, FakeCollector(['u1']), actuator,
                                None, None, None)
        agent.observe()
        remote = remote_mod.RemoteAgent(
            agent, types.SimpleNamespace(report=report), 'h1', 0.5)
        remote.apply([{'instance_uuid': 'u1', 'device': 'vda',
                       'action': 'cap', 'reason': 'r',
                       'cap': {'iops': 5.0, 'bytes_sec': 0.0},
                       'lease_s': 1.0, 'guarantee': {}}])
        self.assertIn('u1/vda', actuator.caps)
        stop = threading.Event()
        thread = remote_mod.start_thread(remote, stop)
        self.addCleanup(thread.join, 10)
        self.addCleanup(stop.set)
        wait_for(lambda: 'u1/vda' not in actuator.caps,
                 'the lease to lapse while the first report hangs')
        # Still the first cast in flight; the newer reports wait in one
        # slot, each replacing the last.
        self.assertEqual([1], started)
        wait_for(lambda: remote.reporter.superseded >= 1,
                 'a report superseded')

    def test_memory_floors_reach_the_balloon_loop(self):
        self.start_conductor(service.Store(None), guarantee=model.Guarantee(
            min_iops=30.0, min_memory_mb=1024.0))
        balloon = FakeBalloon()
        remote, actuator = self.start_agent(self.host('h1'), ['u1', 'u2'],
                                            balloon=balloon)
        wait_for(lambda: balloon.floors, 'memory floors')
        self.assertEqual([{'u1': 1024.0, 'u2': 1024.0}], balloon.floors)

    def test_agents_held_at_1_0_get_caps_and_no_floors(self):
        conductor = self.start_conductor(
            service.Store(None), version_cap='1.0',
            guarantee=model.Guarantee(min_iops=30.0, min_memory_mb=1024.0))
        balloon = FakeBalloon()
        remote, actuator = self.start_agent(self.host('h1'), ['u1'],
                                            balloon=balloon)
        wait_for(lambda: conductor.rounds >= 3 and 'u1/vda' in actuator.caps,
                 'three rounds and a cap')
        self.assertEqual([], balloon.floors)

    def test_an_agent_of_the_previous_release_keeps_its_caps(self):
        # Its endpoint serves compute RPC 1.0 only: the floors cast is
        # refused there, the decisions (sent at 1.0) still apply.
        conductor = self.start_conductor(service.Store(None))
        remote, actuator = self.start_agent(self.host('h1'), ['u1'],
                                            endpoint=OldEndpoint)
        wait_for(lambda: conductor.rounds >= 3 and 'u1/vda' in actuator.caps,
                 'three rounds and a cap')
        self.assertIn('u1', conductor._floors_sent[self.host('h1')][1])
        wait_for(lambda: 'does not support RPC version 1.1'
                 in self.log.output, 'the old agent refusing the floors')

    def test_a_cap_the_agent_lifted_ends_in_the_database_at_once(self):
        engine = sqlite_engine(self)
        self.start_conductor(service.Store(engine), policy=CapOnce())
        remote, actuator = self.start_agent(self.host('h1'), ['u1'])

        def state():
            records = db_api.decisions_for_instance(engine, 'u1')
            return records and throttle_status.disk_status(
                records[0], datetime.datetime.now(datetime.timezone.utc))
        wait_for(lambda: state() == throttle_status.CAPPED
                 and 'u1/vda' in actuator.caps, 'a cap in force')
        # The agent lifts it (as a restarted agent or guest would) long
        # before its 600 s lease ends; the conductor decides nothing.
        remote.agent.release_all()
        wait_for(lambda: state() == throttle_status.LAPSED,
                 'the recorded cap to end')
        record, = db_api.decisions_for_instance(engine, 'u1')
        self.assertLess(record.lease_expires_at - record.decided_at,
                        datetime.timedelta(seconds=60))

    def test_malformed_messages_are_ignored(self):
        remote, actuator = self.start_agent(self.host('h1'), ['u1'])
        remote.apply([{'action': 'explode'}])
        self.assertEqual({}, actuator.caps)
        conductor = service.Conductor(None, None, None, 'x')
        conductor.report({'host': ''})
        self.assertIn('malformed report ignored', self.log.output)


class FakeBalloon:
    """A balloon loop that keeps the floors the conductor sends."""

    def __init__(self):
        self.floors = []

    def maybe_step(self, collection, now_s):
        return None

    def set_conductor_floors(self, floors):
        self.floors.append(floors)


class OldEndpoint:
    """The agent's endpoint as the release before memory floors had it:
    no target (compute RPC 1.0), apply only."""

    def __init__(self, remote):
        self._remote = remote

    def apply(self, ctxt, decisions):
        self._remote.apply(decisions)


class CapOnce(test_core.Recorder):
    """Caps each disk once, for 600 s, and decides nothing after."""

    def __init__(self):
        super().__init__()
        self.capped = set()

    def decide(self, view, state):
        from iothrottle.controller import policy as policy_mod
        fresh = [d for d in view.disks if d.disk_id not in self.capped]
        self.capped.update(d.disk_id for d in fresh)
        return policy_mod.Outcome(decisions=tuple(
            model.Decision(d.sample.instance_uuid, d.sample.device,
                           model.CAP, 'once', model.Cap(5.0, 0.0),
                           lease_s=600.0) for d in fresh), state=state)


def rpc_serve(conductor, server, stop):
    from iothrottle.cmd import conductor as cmd
    cmd.serve(conductor, server, stop)


class TestOwnedCollector(testtools.TestCase):

    def test_prefixes_select_instances_and_samples(self):
        collector = remote_mod.OwnedCollector(FakeCollector(['u1', 'u2']),
                                              ['d-u2'])
        collection = collector.collect()
        self.assertEqual(['u2'], list(collection.instances))
        self.assertEqual(['u2'],
                         [s.instance_uuid for s in collection.samples])
        everything = remote_mod.OwnedCollector(FakeCollector(['u1']), [])
        self.assertEqual(1, len(everything.collect().samples))

    def test_decisions_round_trip(self):
        from iothrottle.rpc import wire
        decision = model.Decision('u', 'vda', model.CAP, 'why',
                                  model.Cap(1.0, 2.0), lease_s=3.0)
        self.assertEqual((decision, test_core.GOLD), wire.decision_from_dict(
            wire.decision_to_dict(decision, test_core.GOLD)))
        s = test_core.sample('u', 'k')
        report = wire.decode_report(wire.report('h', 2.0, [s], {
            'u/vda': model.Cap(1.0, 0.0)}))
        self.assertEqual(((s,), {'u/vda': model.Cap(1.0, 0.0)}),
                         (report.samples, report.caps))


class BlockedStore:
    """A database that hangs until ``release`` is set."""

    def __init__(self):
        self.release = threading.Event()
        self.calls = []

    def call(self, what, func, *args, **kwargs):
        self.release.wait(DEADLINE_S)
        self.calls.append(what)


class TestStaleAndSlow(testtools.TestCase):
    """Issue 9 items 11 and 12: stale messages, a hung database."""

    def setUp(self):
        super().setUp()
        self.log = self.useFixture(fixtures.FakeLogger(level=logging.INFO))

    def test_stale_report_is_dropped(self):
        from iothrottle.rpc import wire
        the_core = test_core.make_core()
        conductor = service.Conductor(
            the_core, None, service.Store(None), 'x',
            wall_clock=lambda: 1000.0, max_report_age_s=10.0)
        s = test_core.sample('u1', 'store')
        conductor.report(wire.report('h1', 2.0, [s], {}, agent_id='a',
                                     seq=1, sent_at=900.0))
        self.assertFalse(the_core.due(0.0))
        self.assertIn('dropped as stale', self.log.output)
        conductor.report(wire.report('h1', 2.0, [s], {}, agent_id='a',
                                     seq=2, sent_at=995.0))
        self.assertTrue(the_core.due(conductor.clock()))

    def test_warning_table_holds_only_recent_hosts(self):
        # Issue 9: host-keyed tables grew with every name a report made
        # up.  A malformed report per made-up host, 10 minutes apart.
        now = [0.0]
        conductor = service.Conductor(
            test_core.make_core(), None, service.Store(None), 'x',
            clock=lambda: now[0])
        for i in range(50):
            now[0] = i * 600.0
            conductor._drop('host-%d' % i, 'bad report')
        self.assertEqual(['host-49'], list(conductor._warnings.last_s))
        self.assertEqual(50, conductor.dropped_reports)

    def test_stale_decision_is_dropped_by_the_agent(self):
        applied = []
        agent = types.SimpleNamespace(
            apply_decisions=lambda pairs: applied.extend(pairs) or ())
        remote = remote_mod.RemoteAgent(agent, None, 'h1', 2.0,
                                        max_decision_age_s=10.0,
                                        wall_clock=lambda: 1000.0)
        decision = {'instance_uuid': 'u1', 'device': 'vda',
                    'action': 'cap', 'reason': 'r',
                    'cap': {'iops': 5.0, 'bytes_sec': 0.0},
                    'lease_s': 30.0, 'guarantee': {}}
        remote.apply([dict(decision, issued_at=900.0),
                      dict(decision, issued_at=995.0)])
        self.assertEqual(1, len(applied))
        self.assertEqual(1, remote.stale)

    def test_a_report_claims_only_decisions_taken_in_before_its_caps(self):
        sent = []
        remote = None

        def observe():
            # A batch arrives while the caps are read: the next report
            # may claim it, not this one.
            remote.apply([{'action': 'explode', 'issued_at': 990.0}])
            return types.SimpleNamespace(samples=(), caps={}, unreadable=False)
        agent = types.SimpleNamespace(observe=observe,
                                      apply_decisions=lambda pairs: ())
        remote = remote_mod.RemoteAgent(
            agent, None, 'h1', 2.0, wall_clock=lambda: 1000.0,
            reporter=reporter_mod.Reporter(sent.append,
                                           futurist.SynchronousExecutor()))
        remote.apply([{'action': 'cap', 'issued_at': 900.0}])
        self.assertEqual(900.0, remote.decided_through)
        remote.step()
        remote.step()
        self.assertEqual([900.0, 990.0],
                         [r['decided_through'] for r in sent])

    def test_bad_floors_cost_only_themselves(self):
        balloon = FakeBalloon()
        remote = remote_mod.RemoteAgent(
            types.SimpleNamespace(balloon=balloon), None, 'h1', 2.0)
        self.assertEqual(1, len(remote.set_memory_floors(
            {'u1': 512.0, 'u2': -5.0})))
        self.assertEqual(1, len(remote.set_memory_floors(['u1', 512.0])))
        self.assertEqual([{'u1': 512.0}], balloon.floors)
        self.assertIn('memory floor ignored: memory floor of u2',
                      self.log.output)
        self.assertIn('malformed memory floors ignored', self.log.output)
        # Without a balloon loop there is nothing to hand them to.
        remote = remote_mod.RemoteAgent(
            types.SimpleNamespace(balloon=None), None, 'h1', 2.0)
        self.assertEqual((), remote.set_memory_floors({'u1': 512.0}))

    def test_a_hung_database_never_holds_the_loop(self):
        store = BlockedStore()
        conductor = service.Conductor(test_core.make_core(), None, store,
                                      'x')
        round_ = core.Round(now_s=0.0, hosts=(), by_host={},
                            by_domain={'store': []}, peaks={}, errors=())
        for _ in range(service.MAX_PENDING_WRITES + 5):
            conductor.publish(round_)   # returns: the writer is blocked
        self.assertGreater(conductor.dropped_writes, 0)
        store.release.set()
        conductor.stop()
        self.assertIn('database writes are', self.log.output)


class SlowGuarantees:
    """A guarantee resolver that hangs (a database read under
    ``guarantees = db``) until ``release`` is set."""

    def __init__(self):
        self.entered = threading.Event()
        self.release = threading.Event()

    def covers(self, flavor):
        self.entered.set()
        self.release.wait(DEADLINE_S)
        return False

    def guarantee_for(self, flavor):
        return model.NO_GUARANTEE


class TestLockAndStop(testtools.TestCase):

    def test_reports_are_taken_while_a_round_waits_on_its_resolver(self):
        from iothrottle.rpc import wire
        slow = SlowGuarantees()
        the_core = core.Core(test_core.Recorder(), slow,
                             core.Capacities(test_core.CAPACITY),
                             interval_s=2.0)
        conductor = service.Conductor(the_core, None, service.Store(None),
                                      'x')
        s = test_core.sample('u1', 'store')
        conductor.report(wire.report('h1', 2.0, [s], {}))
        rounds = []
        loop = threading.Thread(
            target=lambda: rounds.append(conductor.wait_round()))
        loop.start()
        self.assertTrue(slow.entered.wait(DEADLINE_S))
        # The round is inside the resolver; a report handler must not
        # wait for it (it held the lock until this fix).
        handler = threading.Thread(target=conductor.report, args=(
            wire.report('h2', 2.0, [test_core.sample('u2', 'store')], {}),))
        handler.start()
        handler.join(DEADLINE_S / 2)
        self.assertFalse(handler.is_alive())
        slow.release.set()
        loop.join(DEADLINE_S)
        self.assertEqual(['h1'], list(rounds[0].hosts))
        self.assertEqual(['h2'], list(the_core.take()))

    def test_a_load_is_written_only_when_it_changed(self):
        engine = sqlite_engine(self)
        conductor = service.Conductor(test_core.make_core(), None,
                                      service.Store(engine), 'x')
        for iops, fraction in ((10.0, 0.10), (50.0, 0.50), (50.5, 0.505)):
            conductor.publish(core.Round(
                now_s=0.0, hosts=(), by_host={}, by_domain={}, peaks={},
                errors=(), loads={'store': model.DomainLoad(
                    iops=iops, bytes_sec=0.0, load=fraction,
                    saturated=False, disks=1, caps=0)}))
        conductor.stop()
        domain = db_api.get_storage_domain(engine, 'store')
        # The second round changed the load; the third did not.
        self.assertEqual((50.0, 0.5), (domain.load_iops,
                                       domain.load_fraction))

    def test_a_domain_decided_on_is_logged_with_what_it_carried(self):
        engine = sqlite_engine(self)
        conductor = service.Conductor(test_core.make_core(), None,
                                      service.Store(engine), 'x')
        log = self.useFixture(fixtures.FakeLogger(
            name='iothrottle.conductor.service', level=logging.INFO))
        learned = model.DomainLoad(
            iops=94.8, bytes_sec=6.07e6, load=0.97, saturated=True,
            disks=4, caps=1, capacity=model.Capacity(97.7, 6.4e6))
        release = model.Decision('u1', 'vda', model.RELEASE, 'test')
        conductor.publish(core.Round(
            now_s=0.0, hosts=(), by_host={}, by_domain={
                'store': [release], 'idle': []}, peaks={}, errors=(),
            loads={'store': learned, 'idle': learned}))
        conductor.stop()
        lines = log.output.splitlines()
        self.assertEqual(
            'domain store: completed 94.8 IOPS, 6.07 MB/s: load 0.97 of '
            'the learned capacity 97.7 IOPS, 6.40 MB/s; saturated; 1 of 4 '
            'disk(s) capped', lines[0])
        self.assertTrue(lines[1].startswith('release u1/vda on store'))
        # A domain with no decision has no line.
        self.assertNotIn('domain idle', log.output)
        told = model.DomainLoad(iops=10.0, bytes_sec=0.0, load=0.1,
                                saturated=False, disks=1, caps=0)
        self.assertIn('load 0.10 of its capacity; not saturated',
                      service.describe_load(told))

    def test_a_decided_domain_s_line_says_what_the_policy_learned(self):
        class Describing(test_core.Recorder):
            def describe(self, state):
                return 'learned %r' % (state,)

        engine = sqlite_engine(self)
        conductor = service.Conductor(test_core.make_core(Describing()),
                                      None, service.Store(engine), 'x')
        log = self.useFixture(fixtures.FakeLogger(
            name='iothrottle.conductor.service', level=logging.INFO))
        load = model.DomainLoad(iops=10.0, bytes_sec=0.0, load=0.1,
                                saturated=False, disks=1, caps=0)
        conductor.publish(core.Round(
            now_s=0.0, hosts=(), by_host={}, by_domain={
                'store': [model.Decision('u1', 'vda', model.RELEASE, 'x')]},
            peaks={}, errors=(), loads={'store': load}))
        conductor.stop()
        # No round decided it yet: the policy is asked of no state.
        self.assertIn('0 of 1 disk(s) capped; learned None\n', log.output)

    def test_a_domain_not_decided_on_is_logged_at_debug(self):
        engine = sqlite_engine(self)
        conductor = service.Conductor(test_core.make_core(), None,
                                      service.Store(engine), 'x')
        log = self.useFixture(fixtures.FakeLogger(
            name='iothrottle.conductor.service', level=logging.DEBUG))
        load = model.DomainLoad(iops=10.0, bytes_sec=0.0, load=0.1,
                                saturated=False, disks=2, caps=0)
        release = model.Decision('u1', 'vda', model.RELEASE, 'test')
        conductor.publish(core.Round(
            now_s=0.0, hosts=(), by_host={}, by_domain={
                'store': [release], 'idle': []}, peaks={}, errors=(),
            loads={'store': load, 'idle': load, 'quiet': load}))
        conductor.stop()
        for domain in ('idle', 'quiet'):
            self.assertIn('domain %s: completed 10.0 IOPS' % domain,
                          log.output)
        self.assertIn('not saturated; 0 of 2 disk(s) capped; no decision',
                      log.output)
        self.assertNotIn('domain store: completed 10.0 IOPS, 0.00 MB/s: '
                         'load 0.10 of its capacity; not saturated; 0 of 2 '
                         'disk(s) capped; no decision', log.output)

    def test_a_round_stops_casting_at_the_first_failed_cast(self):
        # A cast to a stopped broker fails after its connection attempts
        # (2-4 s on RabbitMQ); casting on held the round that long per
        # host.  One failure ends the round's casts, floors included.
        class DownBus:
            sends_memory_floors = True

            def __init__(self):
                self.calls = []

            def apply(self, host, decisions):
                self.calls.append(host)
                raise ConnectionError('broker down')

            def set_memory_floors(self, host, floors):
                self.calls.append('floors ' + host)

        bus = DownBus()
        conductor = service.Conductor(test_core.make_core(), bus,
                                      service.Store(None), 'x')
        self.addCleanup(conductor.stop)
        log = self.useFixture(fixtures.FakeLogger(
            name='iothrottle.conductor.service', level=logging.INFO))
        cap = model.Decision('u1', 'vda', model.CAP, 'test',
                             cap=model.Cap(10.0, 0.0), lease_s=30.0)
        hosts = ['h%d' % i for i in range(5)]
        conductor.publish(core.Round(
            now_s=0.0, hosts=tuple(hosts),
            by_host={h: [(cap, test_core.GOLD)] for h in hosts},
            by_domain={'store': [cap]}, peaks={}, errors=(),
            floors={h: {'u1': 256} for h in hosts}))
        self.assertEqual(['h0'], bus.calls)
        self.assertIn('casting 1 decision(s) to h0 failed: broker down; '
                      'the bus is down: 4 more host(s) not cast this round '
                      '(h1, h2, h3, ...)', log.output)

    def test_stop_keeps_the_queued_writes(self):
        store = BlockedStore()
        conductor = service.Conductor(test_core.make_core(), None, store,
                                      'x')
        round_ = core.Round(now_s=0.0, hosts=(), by_host={},
                            by_domain={'store': []}, peaks={}, errors=())
        for _ in range(3):
            conductor.publish(round_)
        store.release.set()
        conductor.stop()
        self.assertEqual(3, store.calls.count('recording decisions'))
