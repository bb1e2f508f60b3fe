"""Several conductors: who owns which storage domain (pure), the
membership shell over a fake tooz coordinator, and the conductor deciding
only its own domains."""

import logging

import fixtures
import testtools

from iothrottle.rpc import threads

threads.setup()   # tooz imports futurist: no eventlet

from iothrottle.conductor import coordination  # noqa: E402
from iothrottle.conductor import ownership  # noqa: E402
from iothrottle.conductor import service  # noqa: E402
from iothrottle.rpc import wire  # noqa: E402
from tests.unit.conductor import test_core  # noqa: E402

DOMAINS = ['pool-%03d' % i for i in range(300)]


def view(me, members, epoch=1):
    return ownership.View(me=me, members=frozenset(members), epoch=epoch)


class TestRing(testtools.TestCase):

    def test_each_domain_has_exactly_one_owner_among_the_members(self):
        members = ['c1', 'c2', 'c3']
        views = [view(m, members) for m in members]
        for domain in DOMAINS:
            owners = [v.me for v in views if v.owns(domain)]
            self.assertEqual(1, len(owners), domain)
        # Every member gets a share (300 domains, 3 members).
        for v in views:
            self.assertGreater(sum(1 for d in DOMAINS if v.owns(d)), 50)

    def test_same_members_same_ring_whatever_the_order(self):
        a = view('c1', ['c3', 'c1', 'c2'])
        b = view('c2', ['c2', 'c3', 'c1'])
        self.assertEqual([a.owner_of(d) for d in DOMAINS],
                         [b.owner_of(d) for d in DOMAINS])

    def test_a_member_leaving_moves_only_its_own_domains(self):
        before = view('c1', ['c1', 'c2', 'c3'])
        after = view('c1', ['c1', 'c3'])
        for domain in DOMAINS:
            if before.owner_of(domain) != 'c2':
                self.assertEqual(before.owner_of(domain),
                                 after.owner_of(domain), domain)
            else:
                self.assertIn(after.owner_of(domain), ('c1', 'c3'))

    def test_no_members_owns_nothing(self):
        nobody = view('c1', [])
        self.assertIsNone(nobody.owner_of('pool-1'))
        self.assertFalse(nobody.owns('pool-1'))

    def test_a_conductor_not_in_the_list_owns_nothing(self):
        outsider = view('c9', ['c1', 'c2'])
        self.assertFalse(any(outsider.owns(d) for d in DOMAINS))


class TestEpochs(testtools.TestCase):

    def test_unchanged_members_keep_the_view_and_its_epoch(self):
        first = ownership.next_view(None, 'c1', ['c1', 'c2'], 1000.0, 32)
        again = ownership.next_view(first, 'c1', ['c2', 'c1'], 9000.0, 32)
        self.assertIs(first, again)
        self.assertEqual(1000, again.epoch)

    def test_a_change_takes_the_clock_and_never_goes_back(self):
        first = ownership.next_view(None, 'c1', ['c1', 'c2'], 5000.0, 32)
        later = ownership.next_view(first, 'c1', ['c1'], 7000.0, 32)
        self.assertEqual(7000, later.epoch)
        # A clock stepped back still gives a newer epoch.
        back = ownership.next_view(later, 'c1', ['c1', 'c3'], 10.0, 32)
        self.assertEqual(7001, back.epoch)

    def test_survivor_epoch_is_above_the_deposed_owners(self):
        # c2 saw {c1, c2} at t=1000 and then died; c1 sees it gone when
        # the backend expires it, seconds later: c1's epoch is higher.
        deposed = ownership.next_view(None, 'c2', ['c1', 'c2'], 1000.0, 32)
        c1 = ownership.next_view(None, 'c1', ['c1', 'c2'], 1001.0, 32)
        survivor = ownership.next_view(c1, 'c1', ['c1'], 4000.0, 32)
        self.assertGreater(survivor.epoch, deposed.epoch)

    def test_gained_domains(self):
        both = view('c1', ['c1', 'c2'])
        alone = view('c1', ['c1'])
        gained = ownership.gained(both, alone, DOMAINS)
        self.assertEqual(sorted(d for d in DOMAINS if not both.owns(d)),
                         gained)
        self.assertEqual([], ownership.gained(alone, both, DOMAINS))
        self.assertEqual(sorted(DOMAINS),
                         ownership.gained(None, alone, DOMAINS))


class TestCoreDecidesOwnedDomains(testtools.TestCase):

    def test_only_owned_domains_are_decided_every_floor_counts(self):
        the_core = test_core.make_core()
        the_core.owns = lambda domain: domain == 'a'
        report = test_core.report(
            'h1', test_core.sample('u1', 'a'), test_core.sample('u2', 'b'))
        the_core.add_report(report, 0.0)
        round_ = the_core.decide(0.0)
        self.assertEqual(['a'], [v.storage_domain
                                 for v in the_core.policy.views])
        self.assertEqual({'a'}, set(round_.loads))
        # The host's floors come from all of its instances: one
        # conductor casts them whole (ownership.host_key).
        self.assertEqual({'u1', 'u2'}, set(round_.floors['h1']))

    def test_host_keys_are_apart_from_domain_keys(self):
        self.assertEqual('host:cmp-1', ownership.host_key('cmp-1'))


class FakeResult:
    def __init__(self, value=None, error=None):
        self.value, self.error = value, error

    def get(self, timeout=None):
        if self.error is not None:
            raise self.error
        return self.value


class FakeCoordinator:
    """tooz's coordinator API as Membership uses it."""

    def __init__(self, members):
        self.members = set(members)
        self.joined = []
        self.left = []
        self.error = None
        self.started = False

    def start(self, start_heart=False):
        self.started = start_heart

    def stop(self):
        self.started = False

    def join_group_create(self, group):
        self.joined.append(group)

    def leave_group(self, group):
        self.left.append(group)
        return FakeResult()

    def get_members(self, group):
        return FakeResult({m.encode() for m in self.members}, self.error)


class TestMembership(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.log = self.useFixture(fixtures.FakeLogger(level=logging.INFO))
        self.now = [0.0]
        self.coordinator = FakeCoordinator({'c1', 'c2'})
        self.membership = coordination.Membership(
            'fake://', 'g', 'c1', refresh_s=3600.0, stale_after_s=5.0,
            clock=lambda: self.now[0], wall_clock=lambda: self.now[0],
            coordinator=self.coordinator)
        self.membership.start()
        self.addCleanup(self.membership.stop)

    def test_joins_with_a_heart_and_reads_the_members(self):
        self.assertTrue(self.coordinator.started)
        self.assertEqual([b'g'], self.coordinator.joined)
        self.assertEqual(frozenset({'c1', 'c2'}),
                         self.membership.current().members)

    def test_a_stale_view_owns_nothing_and_a_fresh_one_a_new_epoch(self):
        first = self.membership.current()
        self.coordinator.error = ConnectionError('redis down')
        self.now[0] = 6.0
        self.assertRaises(ConnectionError, self.membership.refresh)
        self.assertFalse(any(self.membership.current().owns(d)
                             for d in DOMAINS))
        self.coordinator.error = None
        self.now[0] = 7.0
        self.membership.refresh()
        back = self.membership.current()
        self.assertEqual(first.members, back.members)
        self.assertGreater(back.epoch, first.epoch)

    def test_expired_from_the_group_it_joins_again(self):
        self.coordinator.members = {'c2'}
        self.membership.refresh()
        self.assertEqual([b'g', b'g'], self.coordinator.joined)
        self.assertIn('c1', self.membership.current().members)
        self.assertIn('no longer in group', self.log.output)

    def test_stop_leaves_the_group(self):
        self.membership.stop()
        self.assertEqual([b'g'], self.coordinator.left)

    def test_member_ids_are_unique(self):
        self.assertNotEqual(coordination.member_id('h'),
                            coordination.member_id('h'))
        self.assertTrue(coordination.member_id('h').startswith('h-'))


class FixedMembership:
    def __init__(self, view):
        self.view = view
        self.stopped = False

    def current(self):
        return self.view

    def stop(self):
        self.stopped = True


class Casts:
    def __init__(self):
        self.casts = []

    def apply(self, host, decisions):
        self.casts.append((host, decisions))


class TestConductorDecidesItsOwn(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.useFixture(fixtures.FakeLogger(level=logging.INFO))

    def conductor(self, the_view):
        self.casts = Casts()
        self.core = test_core.make_core()
        return service.Conductor(self.core, self.casts,
                                 service.Store(None), 'recorder',
                                 membership=FixedMembership(the_view))

    def report_all(self, conductor, seq=1):
        samples = [test_core.sample('u%d' % i, d)
                   for i, d in enumerate(DOMAINS[:40])]
        conductor.report(wire.report('h1', 2.0, samples, {},
                                     agent_id='a', seq=seq))

    def test_two_conductors_split_the_domains_without_overlap(self):
        decided = []
        for me in ('c1', 'c2'):
            conductor = self.conductor(view(me, ['c1', 'c2'], epoch=77))
            self.report_all(conductor)
            conductor.publish(conductor.wait_round())
            decided.append({v.storage_domain
                            for v in self.core.policy.views})
            for _, decisions in self.casts.casts:
                self.assertEqual({(me, 77)}, {(d['owner'], d['epoch'])
                                              for d in decisions})
        self.assertEqual(set(), decided[0] & decided[1])
        self.assertEqual(set(DOMAINS[:40]), decided[0] | decided[1])

    def test_without_membership_decisions_carry_no_owner(self):
        conductor = service.Conductor(test_core.make_core(), Casts(),
                                      service.Store(None), 'recorder')
        casts = conductor.compute_api
        self.report_all(conductor)
        conductor.publish(conductor.wait_round())
        self.assertEqual(40, len(casts.casts[0][1]))
        self.assertEqual({('', 0)}, {(d['owner'], d['epoch'])
                                     for d in casts.casts[0][1]})

    def test_a_regained_domain_starts_from_a_fresh_policy_state(self):
        membership = FixedMembership(view('c1', ['c1']))
        conductor = self.conductor(None)
        conductor.membership = membership
        domain = DOMAINS[0]
        self.report_all(conductor, seq=1)
        conductor.wait_round()
        self.assertEqual(1, self.core._states[domain])   # Recorder counts
        # Lost (c1 out of the group): not decided, its state untouched.
        membership.view = view('c1', ['c2'], epoch=3)
        self.report_all(conductor, seq=2)
        conductor.wait_round()
        self.assertEqual(1, self.core._states[domain])
        # Regained: it starts from the policy's initial state again.
        membership.view = view('c1', ['c1'], epoch=4)
        self.report_all(conductor, seq=3)
        conductor.wait_round()
        self.assertEqual(1, self.core._states[domain])

    def test_stop_leaves_the_group(self):
        membership = FixedMembership(view('c1', ['c1']))
        conductor = self.conductor(None)
        conductor.membership = membership
        conductor.stop()
        self.assertTrue(membership.stopped)


class Inbox:
    def __init__(self):
        self.reports = []

    def report(self, ctxt, report):
        self.reports.append(report)


class TestReportFanout(testtools.TestCase):
    """[agent] report_fanout: every conductor gets every report."""

    def received(self, fanout):
        from iothrottle.rpc import api as rpc_api
        from tests.unit.conductor import test_service
        conf = test_service.conf_with()
        transport = rpc_api.get_transport(conf, url='fake:/')
        self.addCleanup(transport.cleanup)
        inboxes = [Inbox(), Inbox()]
        for name, inbox in zip(('c1', 'c2'), inboxes):
            server = rpc_api.get_server(transport, rpc_api.CONDUCTOR_TOPIC,
                                        name, [inbox])
            server.start()
            self.addCleanup(server.wait)
            self.addCleanup(server.stop)
        api = rpc_api.ConductorAPI(transport, fanout=fanout)
        for seq in range(4):
            api.report({'seq': seq})
        test_service.wait_for(
            lambda: sum(len(i.reports) for i in inboxes)
            >= (8 if fanout else 4), 'reports')
        return [sorted(r['seq'] for r in i.reports) for i in inboxes]

    def test_fanout_reaches_every_conductor(self):
        self.assertEqual([[0, 1, 2, 3], [0, 1, 2, 3]], self.received(True))

    def test_without_fanout_each_report_reaches_one(self):
        got = self.received(False)
        self.assertEqual([0, 1, 2, 3], sorted(got[0] + got[1]))
