"""Checks within the interval in conductor mode: the watch the conductor
casts (compute RPC 1.3), its wire form, and the agent's checks on it."""

import logging
import types

import fixtures
import testtools

from iothrottle.rpc import threads

threads.setup()

from iothrottle.compute import agent as agent_mod  # noqa: E402
from iothrottle.compute import collector as collector_mod  # noqa: E402
from iothrottle.conductor import service  # noqa: E402
from iothrottle.controller import idle  # noqa: E402
from iothrottle.controller import model  # noqa: E402
from iothrottle.controller import policy as policy_mod  # noqa: E402
from iothrottle.rpc import agent as remote_mod  # noqa: E402
from iothrottle.rpc import api as rpc_api  # noqa: E402
from iothrottle.rpc import wire  # noqa: E402
from tests.unit.conductor import test_core  # noqa: E402
from tests.unit.conductor import test_service  # noqa: E402

STORE = model.Capacity(max_iops=95.0, max_bytes_sec=1e11)
KB16 = 16384.0
FLOOR = model.Guarantee(min_iops=15.0, tier='gold')
# idle's worked numbers: bursters capped at 30 and 20 requests/s of
# 16 KB, a paced guest at 25 requests/s and 60 ms that stops.
RATES = {'b1': 30.0, 'b2': 20.0, 'paced': 25.0}
CAPS = {'b1': 30.0, 'b2': 20.0}
DISKS = frozenset('%s/vda' % uuid for uuid in RATES)


def served(rates):
    return tuple(('%s/vda' % uuid, iops, iops * KB16, 0.06 if uuid ==
                  'paced' else 0.3) for uuid, iops in sorted(rates.items()))


def host_watch(floors_only=False, disks=DISKS, rates=RATES):
    return idle.HostWatch(STORE, disks, idle.Watch(
        served=served(rates), floors_only=floors_only, at_cap_fraction=0.9,
        lease_s=30.0))


class StopCollector:
    """The guests of ``RATES`` on one host: an interval's collection at
    ``rates``, a check's at ``check_rates`` over 0.25 s."""

    def __init__(self):
        self.rates = dict(RATES)
        self.check_rates = dict(RATES)
        self.checks = 0

    def _collection(self, rates, interval_s):
        instances = {u: types.SimpleNamespace(
            uuid=u, domain_name='d-' + u, name=u, flavor='m1.gold',
            disks=(), domain_id=1) for u in rates}
        return collector_mod.Collection(
            taken_at_s=0.0, snapshot=None, instances=instances,
            samples=tuple(model.DiskSample(
                instance_uuid=u, device='vda', storage_domain='store',
                interval_s=interval_s, write_iops=iops,
                write_bytes_sec=iops * KB16,
                latency_s=0.06 if iops else 0.0, instance_name=u,
                flavor='m1.gold') for u, iops in sorted(rates.items())))

    def collect(self):
        return self._collection(self.rates, 2.0)

    def check(self):
        self.checks += 1
        return self._collection(self.check_rates, 0.25)


def cap_dict(uuid, iops, guarantee=model.NO_GUARANTEE, owner='', epoch=0):
    return wire.decision_to_dict(
        model.Decision(uuid, 'vda', model.CAP, 'r',
                       model.Cap(iops, iops * KB16), lease_s=30.0),
        guarantee, 1000.0, owner, epoch)


class TestWire(testtools.TestCase):

    def test_round_trip(self):
        data = wire.watches('agent-1', 7, {'store': host_watch(True)},
                            'c1', 100)
        decoded = wire.decode_watches(data)
        self.assertEqual(('agent-1', 7, 'c1', 100, ()),
                         (decoded.agent_id, decoded.seq, decoded.owner,
                          decoded.epoch, decoded.rejected))
        self.assertEqual({'store': host_watch(True)}, decoded.domains)

    def test_a_malformed_envelope_is_refused_whole(self):
        data = wire.watches('agent-1', 7, {'store': host_watch()})
        for key, value, message in (
                ('agent_id', '', 'watch: agent_id must not be empty'),
                ('seq', -1, 'watch: seq must be an integer'),
                ('epoch', 'x', 'watch: epoch must be an integer'),
                ('domains', {}, 'watch: domains must be a list')):
            exc = self.assertRaises(ValueError, wire.decode_watches,
                                    dict(data, **{key: value}))
            self.assertIn(message, str(exc))

    def test_a_malformed_domain_costs_only_itself(self):
        good = wire.watches('a', 1, {'store': host_watch()})['domains'][0]
        cases = (
            ({'served': [['x/vda', 1.0, 1.0, 0.1]]},
             'a served entry must be [disk, iops, bytes_sec, latency_s] '
             'of one of its disks'),
            ({'served': [['b1/vda', float('nan'), 1.0, 0.1]]},
             'iops must be a finite number'),
            ({'capacity': {'max_iops': 0.0, 'max_bytes_sec': 1.0}},
             'capacity must be > 0 on both axes'),
            ({'at_cap_fraction': 0.0}, 'at_cap_fraction must be at least'),
            ({'at_cap_fraction': 1.5}, 'at_cap_fraction must be a finite'),
            ({'floors_only': 'yes'}, 'floors_only must be true or false'),
            ({'lease_s': float('inf')}, 'lease_s must be a finite'))
        for change, message in cases:
            bad = dict(good, storage_domain='bad', **change)
            decoded = wire.decode_watches({'agent_id': 'a', 'seq': 1,
                                           'domains': [bad, good]})
            self.assertEqual(['store'], list(decoded.domains))
            (rejected,) = decoded.rejected
            self.assertIn(message, rejected)
            self.assertIn('bad', rejected)


class TestAgentChecks(testtools.TestCase):
    """A RemoteAgent's checks on the watch of its latest report."""

    def setUp(self):
        super().setUp()
        self.log = self.useFixture(fixtures.FakeLogger(level=logging.INFO))
        self.collector = StopCollector()
        self.actuator = test_service.FakeActuator()
        agent = agent_mod.Agent(test_service.conf_with(interval_s=2.0),
                                self.collector, self.actuator, None, None,
                                None)
        agent.observe()
        self.reports = []
        self.remote = remote_mod.RemoteAgent(
            agent, None, 'h1', 2.0, wall_clock=lambda: 1000.0,
            reporter=types.SimpleNamespace(submit=self.reports.append,
                                           stop=lambda: None))

    def decide(self, guarantees=None, owner='', epoch=0):
        """The conductor's caps on the bursters, then a report."""
        self.remote.apply([cap_dict(uuid, iops,
                                    (guarantees or {}).get(uuid,
                                                           model.NO_GUARANTEE),
                                    owner, epoch)
                           for uuid, iops in sorted(CAPS.items())])
        self.remote.step()

    def watch(self, domains=None, seq=None, owner='', epoch=0):
        return self.remote.watch(wire.watches(
            self.remote.agent_id,
            self.remote.reports if seq is None else seq,
            domains or {'store': host_watch()}, owner, epoch))

    def grown(self):
        return {disk_id: round(cap.iops, 6)
                for disk_id, cap in self.actuator.caps.items()}

    def test_a_stopped_disk_grows_this_hosts_caps_at_theirs(self):
        self.decide()
        self.watch()
        self.collector.check_rates['paced'] = 0.0
        # 0.25 s without a completion is 6.25 of its requests: not yet.
        self.assertEqual((), self.remote.check())
        grown = self.remote.check()
        self.assertEqual(['b1/vda', 'b2/vda'],
                         sorted(d.disk_id for d in grown))
        self.assertEqual({'b1/vda': 45.0, 'b2/vda': 30.0}, self.grown())
        self.assertIn('cap b1/vda on store: early: paced stopped',
                      self.log.output)
        # Its load is handed out once: the next check grows nothing
        # (the bursters are still watched: one of them may stop).
        self.assertEqual((), self.remote.check())
        self.assertEqual(3, self.collector.checks)
        self.assertEqual(2, self.remote.grown)

    def test_without_a_watch_the_host_is_not_sampled(self):
        self.decide()
        self.assertEqual((), self.remote.check())
        self.assertEqual(0, self.collector.checks)

    def test_a_watch_of_an_earlier_report_is_dropped(self):
        self.decide()
        self.watch(seq=self.remote.reports - 1)
        self.assertEqual(1, self.remote.stale_watches)
        self.remote.check()
        self.assertEqual(0, self.collector.checks)

    def test_the_next_report_ends_the_watch(self):
        self.decide()
        self.watch()
        self.remote.step()
        self.collector.check_rates['paced'] = 0.0
        self.assertEqual((), self.remote.check())
        self.assertEqual(0, self.collector.checks)

    def test_a_grown_cap_keeps_its_guarantees_ceiling(self):
        self.decide({'b1': model.Guarantee(max_iops=40.0)})
        self.watch()
        self.collector.check_rates['paced'] = 0.0
        self.remote.check()
        self.remote.check()
        self.assertEqual({'b1/vda': 40.0, 'b2/vda': 30.0}, self.grown())

    def test_on_an_overbooked_domain_only_the_floors_grow(self):
        self.decide({'b2': FLOOR})
        self.watch({'store': host_watch(floors_only=True)})
        self.collector.check_rates['paced'] = 0.0
        self.remote.check()
        self.remote.check()
        # b2 takes the paced guest's whole load: 20 x (1 + 25 / 20).
        self.assertEqual({'b1/vda': 30.0, 'b2/vda': 45.0}, self.grown())

    def test_a_deposed_conductors_watch_grows_nothing(self):
        self.decide(owner='c2', epoch=200)
        self.watch(owner='c1', epoch=100)
        self.collector.check_rates['paced'] = 0.0
        self.remote.check()
        self.assertEqual((), self.remote.check())
        self.assertEqual({'b1/vda': 30.0, 'b2/vda': 20.0}, self.grown())
        self.assertEqual(2, self.remote.deposed)

    def test_a_disk_of_another_host_is_not_watched_here(self):
        # The watch names only this host's disks: a disk it does not
        # name that stops here is left to the next decision.
        self.decide()
        self.watch({'store': host_watch(
            disks=frozenset({'b1/vda', 'b2/vda'}),
            rates={'b1': 30.0, 'b2': 20.0})})
        self.collector.check_rates['paced'] = 0.0
        self.remote.check()
        self.assertEqual((), self.remote.check())

    def test_a_malformed_watch_is_one_line_and_costs_nothing(self):
        self.decide()
        (message,) = self.remote.watch({'agent_id': 5})
        self.assertEqual('watch: agent_id must be a string, got int',
                         message)
        self.assertIn('malformed watch ignored: watch: agent_id must be a '
                      'string, got int', self.log.output)
        self.assertEqual({'b1/vda': 30.0, 'b2/vda': 20.0}, self.grown())


class Watching(policy_mod.Policy):
    """Caps every burster (uuid ``b*``) at its rate and leaves a watch
    of every disk, as ``guarantee`` does when it sets caps."""

    @classmethod
    def from_conf(cls, conf):
        return cls()

    def decide(self, view, state):
        decisions = tuple(
            model.Decision(d.sample.instance_uuid, d.sample.device,
                           model.CAP, 'test', model.Cap(
                               d.sample.iops, d.sample.bytes_sec),
                           lease_s=10.0)
            for d in view.disks if d.sample.instance_uuid.startswith('b'))
        return policy_mod.Outcome(decisions, state=idle.watch_of(
            view.disks, 0.9, 10.0))

    def watch(self, state):
        return state


class TestCoreWatches(testtools.TestCase):

    def test_each_host_with_a_cap_gets_its_own_part(self):
        core = test_core.make_core(policy=Watching())
        sample = test_core.sample
        core.add_report(wire.Report(
            host='h1', interval_s=2.0, agent_id='a1', seq=4,
            samples=(sample('b1', 'store', 30.0), sample('p1', 'store',
                                                         20.0)),
            caps={}), 0.0)
        core.add_report(wire.Report(
            host='h2', interval_s=2.0, agent_id='a2', seq=9,
            samples=(sample('p2', 'store', 10.0),), caps={}), 0.0)
        round_ = core.decide(0.1)
        # h2 has no cap a check could grow: no watch for it.
        self.assertEqual(['h1'], list(round_.watches))
        part = round_.watches['h1']['store']
        self.assertEqual(frozenset({'b1/vda', 'p1/vda'}), part.disks)
        self.assertEqual(['b1/vda', 'p1/vda'],
                         [entry[0] for entry in part.watch.served])
        self.assertEqual(test_core.CAPACITY, part.capacity)
        self.assertEqual({'h1': 4, 'h2': 9}, round_.seqs)

    def test_a_policy_that_leaves_no_watch_casts_none(self):
        core = test_core.make_core()
        core.add_report(test_core.report(
            'h1', test_core.sample('b1', 'store', 30.0)), 0.0)
        self.assertEqual({}, core.decide(0.1).watches)


class TestOverFakeTransport(testtools.TestCase):
    """The conductor's watch reaches the agent's checks on the bus."""

    def setUp(self):
        super().setUp()
        self.log = self.useFixture(fixtures.FakeLogger(level=logging.INFO))
        self.conf = test_service.conf_with(interval_s=0.5)
        self.transport = rpc_api.get_transport(self.conf, url='fake:/')
        self.addCleanup(self.transport.cleanup)

    def host(self, name):
        """A host name of this test (queues of a real broker outlive
        tests)."""
        return name

    def start_conductor(self, version_cap=None):
        return test_service.start_conductor(
            self, self.transport, service.Store(None), policy=Watching(),
            version_cap=version_cap)

    def start_checking_agent(self, check_s):
        collector = StopCollector()
        # A guest that stops whenever a check looks.
        collector.check_rates['paced'] = 0.0
        actuator = test_service.FakeActuator()
        agent = agent_mod.Agent(self.conf, collector, actuator, None, None,
                                None)
        agent.observe()
        remote = remote_mod.RemoteAgent(
            agent, rpc_api.ConductorAPI(self.transport), self.host('h1'),
            0.5, check_s=check_s)
        test_service.serve(self, self.transport, self.host('h1'), remote)
        return remote, actuator

    def test_the_checks_grow_caps_between_rounds(self):
        self.start_conductor()
        remote, actuator = self.start_checking_agent(0.1)
        test_service.wait_for(lambda: remote.grown > 0, 'a grown cap')
        self.assertIn('early: paced stopped', self.log.output)

    def test_agents_held_at_1_2_get_no_watch(self):
        conductor = self.start_conductor(version_cap='1.2')
        remote, actuator = self.start_checking_agent(0.1)
        test_service.wait_for(lambda: conductor.rounds >= 3
                              and 'b1/vda' in actuator.caps,
                              'three rounds and a cap')
        self.assertEqual((0, 0), (remote.checks, remote.grown))
