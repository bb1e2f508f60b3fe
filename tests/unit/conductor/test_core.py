"""The conductor's pure core and guarantee resolution."""

import dataclasses
import logging

import fixtures
import testtools

from iothrottle.conductor import core
from iothrottle.conductor import guarantees
from iothrottle.controller import cost
from iothrottle.controller import guarantee as guarantee_mod
from iothrottle.controller import model
from iothrottle.controller import policy as policy_mod
from iothrottle import extra_specs
from iothrottle.rpc import wire

CAPACITY = model.Capacity(max_iops=100.0, max_bytes_sec=1e9)
GOLD = model.Guarantee(min_iops=30.0, tier='gold')


def sample(uuid, domain, iops=10.0, flavor='m1.gold', device='vda',
           latency_s=0.01):
    return model.DiskSample(instance_uuid=uuid, device=device,
                            storage_domain=domain, interval_s=2.0,
                            write_iops=iops, write_bytes_sec=iops * 65536,
                            latency_s=latency_s, flavor=flavor)


def report(host, *samples, caps=None):
    return wire.Report(host=host, interval_s=2.0, samples=samples,
                       caps=caps or {})


class Recorder(policy_mod.Policy):
    """Caps every disk at half its IOPS; remembers its views."""

    def __init__(self):
        self.views = []

    @classmethod
    def from_conf(cls, conf):
        return cls()

    def initial_state(self):
        return 0

    def decide(self, view, state):
        self.views.append(view)
        return policy_mod.Outcome(decisions=tuple(
            model.Decision(d.sample.instance_uuid, d.sample.device,
                           model.CAP, 'test', model.Cap(
                               d.sample.iops / 2, 0.0), lease_s=10.0)
            for d in view.disks), state=state + 1)


class Flavors:
    def __init__(self, table):
        self.table = table

    def covers(self, flavor):
        return flavor in self.table

    def guarantee_for(self, flavor):
        return self.table[flavor]


def make_core(policy=None, aliases=None, declared=None, table=None):
    return core.Core(policy or Recorder(),
                     Flavors(table or {'m1.gold': GOLD}),
                     core.Capacities(CAPACITY, declared),
                     core.DomainMap(aliases), interval_s=2.0)


class TestAliases(testtools.TestCase):

    def test_split_at_the_last_equals_sign(self):
        self.assertEqual({'nbd+unix:///run/a.sock': 'store',
                          'rbd:ceph/a=b': 'pool'},
                         core.parse_aliases(['nbd+unix:///run/a.sock=store',
                                             'rbd:ceph/a=b = pool']))

    def test_malformed_and_twice_are_named(self):
        exc = self.assertRaises(ValueError, core.parse_aliases, ['nokey'])
        self.assertIn("'nokey'", str(exc))
        exc = self.assertRaises(ValueError, core.parse_aliases,
                                ['a=x', 'a=y'])
        self.assertIn("'a' is given twice", str(exc))


class TestRound(testtools.TestCase):

    def test_disks_of_two_hosts_form_one_domain(self):
        policy = Recorder()
        c = make_core(policy, aliases={'keyA': 'store', 'keyB': 'store'})
        c.add_report(report('h1', sample('u1', 'keyA', 20.0)), 0.0)
        c.add_report(report('h2', sample('u2', 'keyB', 40.0),
                            caps={'u2/vda': model.Cap(50.0, 0.0)}), 0.1)
        self.assertTrue(c.due(0.1))
        r = c.decide(0.1)
        self.assertEqual(1, len(policy.views))
        view = policy.views[0]
        self.assertEqual('store', view.storage_domain)
        self.assertEqual(['u1/vda', 'u2/vda'],
                         sorted(d.disk_id for d in view.disks))
        by_id = {d.disk_id: d for d in view.disks}
        self.assertEqual(model.Cap(50.0, 0.0), by_id['u2/vda'].cap)
        self.assertEqual(GOLD, by_id['u1/vda'].guarantee)
        self.assertEqual(['u1/vda'], [d.disk_id for d, _ in r.by_host['h1']])
        self.assertEqual(['u2/vda'], [d.disk_id for d, _ in r.by_host['h2']])
        self.assertEqual(GOLD, r.by_host['h2'][0][1])
        self.assertEqual(2, len(r.by_domain['store']))
        # One interval's total is not yet a peak (PEAK_HELD_INTERVALS).
        self.assertEqual({}, r.peaks)

    def test_a_round_says_what_a_grown_peak_is_worth(self):
        c = make_core()
        rounds = []
        for t in range(core.PEAK_HELD_INTERVALS):
            c.add_report(report('h1', sample('u1', 'store', 40.0)), t)
            rounds.append(c.decide(t))
        self.assertEqual([{}] * (core.PEAK_HELD_INTERVALS - 1),
                         [r.learned for r in rounds[:-1]])
        peak = (40.0, 40.0 * 65536)
        self.assertEqual({'store': peak}, rounds[-1].peaks)
        self.assertEqual({'store': core.peak_capacity(CAPACITY, *peak)},
                         rounds[-1].learned)
        self.assertEqual(rounds[-1].learned['store'],
                         c.capacities.capacity_of('store'))

    def test_policy_state_is_kept_per_domain(self):
        policy = Recorder()
        c = make_core(policy)
        for t in range(3):
            c.add_report(report('h1', sample('u1', 'a'), sample('u2', 'b')),
                         t)
            c.decide(t)
        self.assertEqual({'a': 3, 'b': 3}, c._states)

    def test_round_waits_for_every_live_host(self):
        c = make_core()
        c.add_report(report('h1', sample('u1', 'a')), 0.0)
        c.add_report(report('h2', sample('u2', 'a')), 0.0)
        c.decide(0.0)
        c.add_report(report('h1', sample('u1', 'a')), 2.0)
        self.assertFalse(c.due(2.0))
        self.assertAlmostEqual(1.0, c.next_deadline(2.0))
        self.assertTrue(c.due(3.0))           # waited wait_s for h2
        r = c.decide(3.0)
        self.assertEqual(('h1',), r.hosts)
        # h2 is silent for longer than host_timeout_s: not waited for.
        c.add_report(report('h1', sample('u1', 'a')), 8.0)
        self.assertTrue(c.due(8.0))

    def test_nothing_pending_is_not_due(self):
        c = make_core()
        self.assertFalse(c.due(0.0))
        self.assertIsNone(c.next_deadline(0.0))

    def test_unknown_flavor_gets_no_guarantee(self):
        policy = Recorder()
        c = make_core(policy)
        c.add_report(report('h1', sample('u1', 'a', flavor='m1.none')), 0)
        c.decide(0)
        self.assertEqual(model.NO_GUARANTEE,
                         policy.views[0].disks[0].guarantee)

    def test_a_failing_policy_costs_one_domain(self):
        class Broken(Recorder):
            def decide(self, view, state):
                if view.storage_domain == 'bad':
                    raise RuntimeError('boom')
                return super().decide(view, state)
        c = make_core(Broken())
        c.add_report(report('h1', sample('u1', 'bad'), sample('u2', 'ok')),
                     0)
        r = c.decide(0)
        self.assertEqual(['ok'], list(r.by_domain))
        self.assertIn('policy failed on storage domain bad: boom', r.errors)

    def test_a_disk_reported_twice_is_kept_once(self):
        c = make_core()
        c.add_report(report('h1', sample('u1', 'a')), 0)
        c.add_report(report('h2', sample('u1', 'a')), 0)
        r = c.decide(0)
        self.assertEqual(['h1'], list(r.by_host))
        self.assertEqual(1, len(r.errors))


class SharedStoreCase(testtools.TestCase):
    """h1 and h2 share the storage domain ``store`` (keys keyA and keyB);
    h2 also has a domain of its own."""

    def setUp(self):
        super().setUp()
        self.policy = Recorder()
        self.core = make_core(self.policy,
                              aliases={'keyA': 'store', 'keyB': 'store'})
        self.now = 0.0

    def decide(self):
        """The Round at ``now`` and what it decided: {domain: [disk]}."""
        seen = len(self.policy.views)
        r = self.core.decide(self.now)
        return r, {v.storage_domain: sorted(d.disk_id for d in v.disks)
                   for v in self.policy.views[seen:]}


class TestBlindHost(SharedStoreCase):
    """A host whose agent could not read libvirt (restarting) keeps the
    domains its disks share from being decided on the others' alone."""

    def round(self, h1_blind=False):
        self.now += 2.0
        h1 = (wire.Report(host='h1', interval_s=2.0, samples=(), caps={},
                          unreadable=True) if h1_blind
              else report('h1', sample('u1', 'keyA', 20.0)))
        self.core.add_report(h1, self.now)
        self.core.add_report(report('h2', sample('u2', 'keyB', 40.0),
                                    sample('u3', 'other', 5.0)), self.now)
        return self.decide()

    def test_its_shared_domain_waits_a_round_and_resumes(self):
        self.round()
        r, views = self.round(h1_blind=True)
        # Without h1's disk the store would be decided on u2 alone.
        self.assertNotIn('store', views)
        self.assertEqual(['u3/vda'], views['other'])
        self.assertNotIn('store', r.by_domain)
        self.assertIn('h1 could not read its disks: store not decided',
                      r.errors[0])
        r, views = self.round()
        self.assertEqual(['u1/vda', 'u2/vda'], views['store'])
        # The held round did not advance the store's policy state.
        self.assertEqual(2, self.core._states['store'])
        self.assertEqual(3, self.core._states['other'])

    def test_it_holds_two_rounds_a_window_at_most(self):
        # A host trusted for its own instances only must not stall the
        # control of the others for longer than a libvirtd restart.
        self.round()
        rounds = [self.round(h1_blind=True) for _ in range(4)]
        self.assertEqual([True, True, False, False],
                         ['store' not in views for _, views in rounds])
        self.assertEqual(['u2/vda'], rounds[2][1]['store'])
        self.assertIn('decided without its disks', rounds[2][0].errors[0])
        # Said once, not every round it stays blind.
        self.assertEqual((), rounds[3][0].errors)


class TestLateHost(SharedStoreCase):
    """A live host whose report missed a round (the round ran after
    ``wait_s`` without it) keeps the domains it shares from being
    decided on the others' disks alone, from a blind host's budget."""

    def round(self, h1=True, h2_alone=False):
        self.now += 2.0
        if h1:
            self.core.add_report(report('h1', sample('u1', 'keyA', 20.0),
                                        sample('u4', 'own', 5.0)),
                                 self.now)
        self.core.add_report(report(
            'h2', *((sample('u3', 'other', 5.0),) if h2_alone else
                    (sample('u2', 'keyB', 40.0),
                     sample('u3', 'other', 5.0)))), self.now)
        if not h1:
            # The round runs once h2's report has waited wait_s.
            self.now += self.core.wait_s
            self.assertTrue(self.core.due(self.now))
        return self.decide()

    def test_its_shared_domain_waits_for_it(self):
        self.round()
        r, views = self.round(h1=False)
        # Decided on u2 alone, the store would read h1's 20 IOPS as
        # room; the domain only h2 reports is decided as usual.
        self.assertNotIn('store', views)
        self.assertEqual(['u3/vda'], views['other'])
        self.assertEqual(['h1 has not reported this round: store not '
                          'decided this round (caps keep their leases)'],
                         list(r.errors))
        r, views = self.round()
        self.assertEqual(['u1/vda', 'u2/vda'], views['store'])
        self.assertEqual(['u4/vda'], views['own'])

    def test_only_the_domains_others_report_are_held(self):
        # h2 no longer reports a disk in the store: nothing to hold,
        # and no budget spent.
        self.round()
        r, views = self.round(h1=False, h2_alone=True)
        self.assertEqual({'other': ['u3/vda']}, views)
        self.assertEqual((), r.errors)
        self.round()
        self.assertNotIn('store', self.round(h1=False)[1])

    def test_two_rounds_a_window_at_most(self):
        # A late round every other one (h1 stays live): the third in
        # the window is decided without it.
        held = []
        for _ in range(2):
            self.round()
            held.append('store' not in self.round(h1=False)[1])
        self.assertEqual([True, True], held)
        self.round()
        r, views = self.round(h1=False)
        self.assertEqual(['u2/vda'], views['store'])
        self.assertIn('h1 has not reported this round for more than 2 '
                      'rounds in 60 s: store decided without its disks',
                      r.errors[0])

    def test_a_host_silent_past_its_timeout_is_gone(self):
        self.round()
        self.now += self.core.host_timeout_s
        r, views = self.round(h1=False)
        self.assertEqual(['u2/vda'], views['store'])
        self.assertEqual((), r.errors)


class Releaser(Recorder):
    """Releases the disk of u1, decides nothing on the others; a
    saturation border of 0.5."""

    def saturation_border(self):
        return 0.5

    def decide(self, view, state):
        return policy_mod.Outcome(decisions=tuple(
            model.Decision('u1', d.sample.device, model.RELEASE, 'test')
            for d in view.disks if d.sample.instance_uuid == 'u1'),
            state=state)


class TestDomainLoad(testtools.TestCase):

    def decide(self, policy, *samples, caps=None, declared=None):
        c = make_core(policy, declared=declared)
        c.add_report(report('h1', *samples, caps=caps), 0.0)
        return c.decide(0.0)

    def test_totals_load_and_caps_after_the_round(self):
        r = self.decide(Releaser(), sample('u1', 'store', 20.0),
                        sample('u2', 'store', 20.0),
                        sample('u3', 'store', 10.0),
                        caps={'u1/vda': model.Cap(30.0, 0.0),
                              'u2/vda': model.Cap(30.0, 0.0)})
        # u1's cap is released, u2 keeps the one its agent holds.
        self.assertEqual({'store': model.DomainLoad(
            iops=50.0, bytes_sec=50 * 65536.0, load=0.5, saturated=True,
            disks=3, caps=1)}, r.loads)

    def test_below_the_border_and_caps_set_this_round(self):
        # Recorder caps every disk; it has no border: saturated at 1.0.
        r = self.decide(Recorder(), sample('u1', 'a', 99.0),
                        sample('u2', 'b', 100.0))
        self.assertEqual((0.99, False, 1), (r.loads['a'].load,
                                            r.loads['a'].saturated,
                                            r.loads['a'].caps))
        self.assertEqual((1.0, True), (r.loads['b'].load,
                                       r.loads['b'].saturated))

    def test_against_the_capacity_the_policy_used(self):
        r = self.decide(Releaser(), sample('u2', 'store', 20.0),
                        declared={'store': model.Capacity(40.0, 1e9)})
        self.assertEqual(0.5, r.loads['store'].load)

    def test_guarantee_policy_measures_and_borders_its_own_way(self):
        # Its linear cost model adds the axes, against border_fraction.
        policy = guarantee_mod.GuaranteePolicy(
            guarantee_mod.GuaranteeTunables(border_fraction=0.8))
        capacity = model.Capacity(100.0, 65536.0 * 100)
        r = self.decide(policy, sample('u2', 'store', 40.0),
                        declared={'store': capacity})
        self.assertEqual((0.8, True), (r.loads['store'].load,
                                       r.loads['store'].saturated))

    def test_guarantee_policy_reports_latency_saturation_and_learned_load(
            self):
        # Told 200 IOPS, the store completes 45 at 100 ms (4.5 in flight):
        # congested, so saturated, and its load is measured against the
        # capacity learned from it - halved in one interval, 100 IOPS -
        # not the told one (0.225).
        policy = guarantee_mod.GuaranteePolicy()
        r = self.decide(policy, sample('u2', 'store', 45.0, latency_s=0.1),
                        declared={'store': model.Capacity(200.0, 1e12)})
        self.assertTrue(r.loads['store'].saturated)
        self.assertAlmostEqual(0.45, r.loads['store'].load, places=3)
        self.assertAlmostEqual(100.0, r.loads['store'].capacity.max_iops,
                               places=3)


class TestHostileReports(testtools.TestCase):

    def test_a_sample_that_breaks_admission_costs_only_itself(self):
        # Issue 9 item 5: a storage_domain of the wrong type raised in the
        # alias lookup after the pending reports were swapped out, and
        # every host lost the round.  Decode refuses it now; the core
        # also survives a sample it cannot admit.
        policy = Recorder()
        c = make_core(policy, aliases={'keyA': 'store'})
        bad = sample('u9', 'keyA')
        object.__setattr__(bad, 'storage_domain', ['not', 'a', 'key'])
        c.add_report(report('h1', sample('u1', 'keyA'), bad), 0.0)
        c.add_report(report('h2', sample('u2', 'keyA')), 0.0)
        r = c.decide(0.1)
        self.assertEqual(['u1/vda', 'u2/vda'],
                         sorted(d.disk_id for d in policy.views[0].disks))
        self.assertEqual(['h1', 'h2'], sorted(r.by_host))
        self.assertIn('u9/vda', ' '.join(r.errors))

    def test_replayed_or_reordered_report_is_dropped(self):
        c = make_core(Recorder())
        first = dataclasses.replace(report('h1', sample('u1', 's')),
                                    agent_id='a', seq=5)
        self.assertIsNone(c.add_report(first, 0.0))
        again = dataclasses.replace(first, seq=5)
        self.assertIn('not newer', c.add_report(again, 1.0))
        self.assertIsNone(c.add_report(
            dataclasses.replace(first, seq=6), 2.0))

    def test_second_agent_with_the_same_host_name_is_refused(self):
        # Issue 9 item 12: two hosts with one [agent] host overwrote each
        # other silently.
        c = make_core(Recorder())
        a = dataclasses.replace(report('h1', sample('u1', 's')),
                                agent_id='agent-a', seq=1)
        b = dataclasses.replace(report('h1', sample('u2', 's')),
                                agent_id='agent-b', seq=1)
        self.assertIsNone(c.add_report(a, 0.0))
        why = c.add_report(b, 1.0)
        self.assertIn('agent-a', why)
        self.assertIn('agent-b', why)
        # The first reports on (every 2 s interval): still refused.
        self.assertIsNone(c.add_report(
            dataclasses.replace(a, seq=2), 2.0))
        self.assertIn('agent-a', c.add_report(
            dataclasses.replace(b, seq=2), 3.5))

    def test_silent_hosts_and_domains_are_forgotten(self):
        # Issue 9: _agents, _last_seen and the policy states grew with
        # every host name and storage domain a report ever carried.
        c = make_core(Recorder())
        forget_s = core.FORGET_INTERVALS * c.interval_s
        for i in range(20):
            r = dataclasses.replace(
                report('made-up-%d' % i, sample('u%d' % i, 'd%d' % i)),
                agent_id='a%d' % i, seq=1)
            c.add_report(r, i * forget_s)
            c.decide(i * forget_s + 0.1)
        self.assertEqual(['made-up-19'], list(c._agents))
        self.assertEqual(['made-up-19'], list(c._last_seen))
        self.assertLessEqual(len(c._states), 2)

    def test_restarted_agent_takes_its_host_over_once_the_old_is_silent(
            self):
        # Found by iothrottle-bench faults (agent-kill): the new agent of
        # a restarted compute host was ignored for host_timeout_s (3
        # intervals), so its guarantees went undefended that long.
        c = make_core(Recorder())
        old = dataclasses.replace(report('h1', sample('u1', 's')),
                                  agent_id='old', seq=41)
        new = dataclasses.replace(old, agent_id='new', seq=1)
        self.assertIsNone(c.add_report(old, 0.0))
        # Killed right after; restarted, it reports 3.1 s later (more
        # than 1.5 intervals of 2 s), well before host_timeout_s (6 s).
        self.assertLess(3.1, c.host_timeout_s)
        self.assertIsNone(c.add_report(new, 3.1))
        # The old one's reports, if it was alive after all, are refused.
        self.assertIn('keeping new', c.add_report(
            dataclasses.replace(old, seq=42), 3.5))


class TestCapacities(testtools.TestCase):

    def test_declared_then_learned_then_default(self):
        declared = model.Capacity(max_iops=500.0, max_bytes_sec=1e8)
        caps = core.Capacities(CAPACITY, {'d': declared})
        self.assertEqual(declared, caps.capacity_of('d'))
        self.assertEqual(CAPACITY, caps.capacity_of('l'))
        self.assertIsNone(caps.observe('l', 80.0, 5e6))
        self.assertIsNone(caps.observe('l', 85.0, 6e6))
        # Held three intervals: the least loaded of them is the peak.
        self.assertEqual((80.0, 5e6), caps.observe('l', 90.0, 5e6))
        self.assertIsNone(caps.observe('l', 70.0, 4e6))
        self.assertEqual(core.peak_capacity(CAPACITY, 80.0, 5e6),
                         caps.capacity_of('l'))

    def test_the_learned_capacity_is_full_at_the_peak(self):
        # Each axis' peak taken as its capacity read the peak as load
        # 2: a domain saturated at half of what it had shown.
        learned = core.peak_capacity(CAPACITY, 80.0, 5e6)
        self.assertAlmostEqual(1.0, cost.load(learned, 80.0, 5e6))
        # The default's shape (100 IOPS to 1e9 B/s), scaled by the
        # peak's load on it: 80 / 100 + 5e6 / 1e9 = 0.805.
        self.assertAlmostEqual(1e7, learned.max_bytes_sec
                               / learned.max_iops)
        self.assertAlmostEqual(80.5, learned.max_iops)

    def test_a_peak_is_one_intervals_total(self):
        # Of the held intervals, the least loaded one whole: not the
        # IOPS of one and the bytes of another.
        caps = core.Capacities(CAPACITY)
        for total in ((90.0, 1e6), (60.0, 9e8), (80.0, 5e6)):
            caps.observe('l', *total)
        self.assertEqual((80.0, 5e6), caps.peaks['l'])
        # A later total of less load leaves it.
        for total in ((50.0, 5e6),) * 3:
            self.assertIsNone(caps.observe('l', *total))
        self.assertEqual((80.0, 5e6), caps.peaks['l'])

    def test_one_outlier_does_not_set_the_peak(self):
        # Issue 9 item 9: one report of 1e12 IOPS set the peak for good.
        caps = core.Capacities(CAPACITY)
        for total in ((80.0, 5e6), (80.0, 5e6), (80.0, 5e6)):
            caps.observe('l', *total)
        self.assertIsNone(caps.observe('l', 1e7, 1e11))
        self.assertIsNone(caps.observe('l', 80.0, 5e6))
        self.assertEqual((80.0, 5e6), caps.peaks['l'])

    def test_database_peaks_replace_and_lower_the_learned_ones(self):
        caps = core.Capacities(CAPACITY, peaks={'l': (80.0, 5e6),
                                                'm': (10.0, 1e6)})
        caps.replace_peaks({'l': (0.0, 0.0), 'm': (5.0, 1e6)})
        self.assertEqual(CAPACITY, caps.capacity_of('l'))
        self.assertEqual(core.peak_capacity(CAPACITY, 5.0, 1e6),
                         caps.capacity_of('m'))

    def test_learning_off_keeps_the_default(self):
        caps = core.Capacities(CAPACITY, learn=False)
        caps.observe('l', 80.0, 5e6)
        self.assertEqual(CAPACITY, caps.capacity_of('l'))


class TestResolver(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.log = self.useFixture(fixtures.FakeLogger(level=logging.INFO))
        self.now = 0.0

    def clock(self):
        return self.now

    def test_cached_then_refreshed(self):
        table = {'f': GOLD}
        calls = []

        def fetch(flavor):
            calls.append(flavor)
            return table.get(flavor)
        r = guarantees.Resolver(fetch, refresh_s=10.0, clock=self.clock)
        self.assertTrue(r.covers('f'))
        self.assertEqual(GOLD, r.guarantee_for('f'))
        self.assertEqual(['f'], calls)
        table['f'] = model.Guarantee(min_iops=5.0)
        self.now = 11.0
        self.assertEqual(5.0, r.guarantee_for('f').min_iops)
        self.assertFalse(r.covers(''))

    def test_invalid_flavor_warns_once_and_gets_nothing(self):
        def fetch(flavor):
            raise extra_specs.ExtraSpecError('iothrottle:min_iops: bad')
        r = guarantees.Resolver(fetch, refresh_s=0.0, clock=self.clock)
        for _ in range(3):
            self.assertEqual(model.NO_GUARANTEE, r.guarantee_for('bad'))
        self.assertEqual(1, self.log.output.count('iothrottle:min_iops'))

    def test_unreachable_source_keeps_the_last_value(self):
        state = {'down': False}

        def fetch(flavor):
            if state['down']:
                raise ConnectionError('down')
            return GOLD
        r = guarantees.Resolver(fetch, refresh_s=1.0, clock=self.clock)
        self.assertEqual(GOLD, r.guarantee_for('f'))
        state['down'] = True
        self.now = 5.0
        self.assertEqual(GOLD, r.guarantee_for('f'))
        self.assertIn('keeping the last one', self.log.output)

    def test_file_fetch(self):
        from iothrottle import tiers as tiers_mod
        tiers = tiers_mod.parse_tiers(
            'tiers: {gold: {min_iops: 30}}\nflavors: {m1.gold: gold}\n')
        r = guarantees.Resolver(guarantees.file_fetch(tiers))
        self.assertEqual(30.0, r.guarantee_for('m1.gold').min_iops)
        self.assertFalse(r.covers('m1.other'))


def agent_report(host, *samples, caps=None, agent_id='a1',
                 decided_through=0.0):
    return dataclasses.replace(report(host, *samples, caps=caps),
                               agent_id=agent_id, seq=agent_report.seq,
                               decided_through=decided_through)


agent_report.seq = 0


class TestFloors(testtools.TestCase):

    def test_each_host_gets_the_floors_of_its_known_instances(self):
        table = {'m1.gold': GOLD,
                 'db.large': model.Guarantee(min_iops=5.0,
                                             min_memory_mb=2048.0)}
        c = make_core(table=table)
        c.add_report(report('h1', sample('u1', 'a'),
                            sample('u1', 'a', device='vdb'),
                            sample('u2', 'a', flavor='db.large')), 0.0)
        c.add_report(report('h2', sample('u3', 'a', flavor='m1.none')), 0.0)
        r = c.decide(0.0)
        # u1's flavor sets no floor (0: floor_fraction); u3's flavor is
        # unknown: nothing said, its agent keeps its own.
        self.assertEqual({'h1': {'u1': 0.0, 'u2': 2048.0}}, r.floors)


class TestLifted(testtools.TestCase):
    """A cap cast is ended once its agent reports the disk without it."""

    CAP = model.Cap(20.0, 0.0)

    def setUp(self):
        super().setUp()
        agent_report.seq = 0
        self.core = make_core()

    def round(self, *reports, cast_at=None, now_s=0.0):
        for r in reports:
            agent_report.seq += 1
            self.core.add_report(dataclasses.replace(r,
                                                     seq=agent_report.seq),
                                 now_s)
        r = self.core.decide(now_s)
        if cast_at is not None:
            for host, pairs in r.by_host.items():
                self.core.cast(r.agents[host], [d for d, _ in pairs],
                               cast_at, now_s)
        return r

    def test_a_cap_the_agent_took_in_and_does_not_hold_is_lifted(self):
        self.round(agent_report('h1', sample('u1', 'a')), cast_at=100.0)
        # The report was read before the cast arrived: no verdict yet.
        r = self.round(agent_report('h1', sample('u1', 'a'),
                                    decided_through=99.0), now_s=2.0)
        self.assertEqual((), r.lifted)
        # It holds the cap: nothing lifted either.
        r = self.round(agent_report('h1', sample('u1', 'a'),
                                    caps={'u1/vda': self.CAP},
                                    decided_through=100.0), now_s=4.0)
        self.assertEqual((), r.lifted)
        # Took it in, holds none: lifted, once.
        for now_s in (6.0, 8.0):
            r = self.round(agent_report('h1', sample('u1', 'a'),
                                        decided_through=100.0),
                           now_s=now_s)
            self.assertEqual(('u1/vda',) if now_s == 6.0 else (), r.lifted)

    def test_a_new_agent_process_holds_no_cap(self):
        self.round(agent_report('h1', sample('u1', 'a')), cast_at=100.0)
        r = self.round(agent_report('h1', sample('u1', 'a'),
                                    agent_id='a2'), now_s=10.0)
        self.assertEqual(('u1/vda',), r.lifted)

    def test_a_cap_limiting_nothing_is_no_cap(self):
        self.round(agent_report('h1', sample('u1', 'a')), cast_at=100.0)
        r = self.round(agent_report('h1', sample('u1', 'a'),
                                    caps={'u1/vda': model.Cap(0.0, 0.0)},
                                    decided_through=100.0), now_s=2.0)
        self.assertEqual(('u1/vda',), r.lifted)

    def test_an_older_agent_never_ends_a_cap_early(self):
        self.round(agent_report('h1', sample('u1', 'a'), agent_id=''),
                   cast_at=100.0)
        r = self.round(agent_report('h1', sample('u1', 'a'), agent_id=''),
                       now_s=2.0)
        self.assertEqual((), r.lifted)

    def test_a_released_disk_has_no_cap_to_end(self):
        self.round(agent_report('h1', sample('u1', 'a')), cast_at=100.0)
        self.core.cast('a1', [model.Decision('u1', 'vda', model.RELEASE,
                                             'calm')], 101.0, 1.0)
        r = self.round(agent_report('h1', sample('u1', 'a'),
                                    decided_through=101.0), now_s=2.0)
        self.assertEqual((), r.lifted)

    def test_another_hosts_report_ends_nothing(self):
        self.round(agent_report('h1', sample('u1', 'a')), cast_at=100.0)
        # h0 sorts first and claims u1 too, without a cap; h1 keeps it
        # (reported twice: the second host is ignored, and h1 must
        # report it as well, with its cap, for the round to see it).
        r = self.round(agent_report('h1', sample('u1', 'a'),
                                    caps={'u1/vda': self.CAP},
                                    decided_through=100.0),
                       agent_report('h2', sample('u1', 'a'),
                                    agent_id='evil'), now_s=2.0)
        self.assertEqual((), r.lifted)

    def test_casts_of_silent_disks_are_forgotten(self):
        self.round(agent_report('h1', sample('u1', 'a')), cast_at=100.0)
        self.assertIn('u1/vda', self.core._casts)
        self.round(agent_report('h1', sample('u2', 'a')),
                   now_s=core.FORGET_INTERVALS * 2.0 + 1)
        self.assertNotIn('u1/vda', self.core._casts)
