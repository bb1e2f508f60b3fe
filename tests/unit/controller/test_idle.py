"""Caps grown within an interval for a disk that stopped (pure)."""

import testtools

from iothrottle.controller import guarantee
from iothrottle.controller import idle
from iothrottle.controller import model

STORE = model.Capacity(max_iops=95.0, max_bytes_sec=1e12)
KB16 = 16384.0


def disk(name, iops, latency_s, cap_iops=None, interval_s=2.0,
         min_iops=0.0):
    cap = (model.Cap(iops=cap_iops, bytes_sec=cap_iops * KB16)
           if cap_iops else None)
    return model.DiskInput(
        sample=model.DiskSample(
            instance_uuid=name, device='vda', storage_domain='store',
            interval_s=interval_s, write_iops=iops,
            write_bytes_sec=iops * KB16, latency_s=latency_s,
            instance_name=name),
        guarantee=model.Guarantee(min_iops=min_iops), cap=cap)


def watch_of(disks, floors_only=False):
    """The watch ``guarantee`` leaves after ``disks``: its at-cap test,
    its lease of 30 s."""
    return idle.watch_of(disks, guarantee.AT_CAP_FRACTION, 30.0,
                         floors_only=floors_only)


def view(*disks):
    return model.DomainView(storage_domain='store', capacity=STORE,
                            disks=disks, now_s=10.0)


# The worked numbers of the module docstring: two bursters capped at
# 30 and 20 requests/s, a paced guest at 25 requests/s and 60 ms.
LAST = (disk('b1', 30.0, 0.3, cap_iops=30.0),
        disk('b2', 20.0, 0.3, cap_iops=20.0),
        disk('paced', 25.0, 0.06, min_iops=20.0))
WATCH = watch_of(LAST)


def checked(paced_iops, span_s=0.25, b1_iops=30.0, b2_iops=20.0):
    """A check's view: the bursters at ``b1_iops`` / ``b2_iops`` under
    their caps, the paced guest at ``paced_iops``, over ``span_s``."""
    return view(disk('b1', b1_iops, 0.3, cap_iops=30.0, interval_s=span_s),
                disk('b2', b2_iops, 0.3, cap_iops=20.0, interval_s=span_s),
                disk('paced', paced_iops, 0.06 if paced_iops else 0.0,
                     interval_s=span_s))


def run(watch, *views):
    """The ``guarantee`` policy's checks of ``views`` from a state that
    holds ``watch``: the decisions of each and the watch after the
    last."""
    policy = guarantee.GuaranteePolicy()
    state = guarantee.DomainState(watch=watch)
    decisions = []
    for v in views:
        outcome = policy.early(v, state)
        decisions.append(outcome.decisions)
        state = outcome.state
    return decisions, state.watch


class TestCheck(testtools.TestCase):

    def test_the_caps_at_theirs_take_the_stopped_disks_load(self):
        # 0.25 s without a completion is 6.25 of its requests: not yet;
        # 0.5 s is 12.5 (and 8 x 60 ms): stopped.
        decisions, watch = run(WATCH, checked(0.0), checked(0.0))
        self.assertEqual((), decisions[0])
        caps = {d.instance_uuid: d.cap.iops for d in decisions[1]}
        self.assertEqual({'b1': 45.0, 'b2': 30.0},
                         {k: round(v, 6) for k, v in caps.items()})
        self.assertTrue(all(d.action == model.CAP and d.lease_s == 30.0
                            for d in decisions[1]))
        self.assertIn('early: paced stopped', decisions[1][0].reason)
        # Both axes grow by the factor.
        self.assertAlmostEqual(45.0 * KB16, decisions[1][0].cap.bytes_sec)
        self.assertEqual(frozenset({'paced/vda'}), watch.freed)

    def test_a_disk_gives_its_load_once_an_interval(self):
        decisions, _ = run(WATCH, checked(0.0), checked(0.0), checked(0.0),
                           checked(0.0))
        self.assertEqual([0, 2, 0, 0], [len(d) for d in decisions])

    def test_a_completion_starts_the_idle_span_again(self):
        decisions, watch = run(WATCH, checked(0.0), checked(4.0),
                               checked(0.0))
        self.assertEqual([(), (), ()], decisions)
        self.assertEqual(0.25, dict(watch.idle_s)['paced/vda'])

    def checks_until_stopped(self, iops, latency_s):
        """The checks of 0.25 s without a completion after which a disk
        last at ``iops`` and ``latency_s`` reads as stopped, beside a
        burster at its cap."""
        watch = watch_of((LAST[0], disk('x', iops, latency_s)))
        span = view(disk('b1', 30.0, 0.3, cap_iops=30.0, interval_s=0.25),
                    disk('x', 0.0, 0.0, interval_s=0.25))
        decisions, _ = run(watch, *[span] * 12)
        return 1 + [len(d) for d in decisions].index(1)

    def test_a_slow_disk_must_miss_eight_of_its_requests(self):
        # 4 requests/s: 2 s (eight checks) without one.
        self.assertEqual(8, self.checks_until_stopped(4.0, 0.05))

    def test_a_disk_with_a_long_latency_must_miss_three_of_them(self):
        # 8 requests in 0.2 s, but 3 x 400 ms is 1.2 s: five checks.
        self.assertEqual(5, self.checks_until_stopped(40.0, 0.4))

    def test_no_room_is_handed_out_when_no_cap_is_pushed(self):
        # The bursters below their caps: they want no more, or the
        # store stalled (nobody completes) - either way nothing grows,
        # but the disk counts as stopped only once a taker is there.
        decisions, watch = run(WATCH, checked(0.0, b1_iops=10.0,
                                              b2_iops=4.0),
                               checked(0.0, b1_iops=0.0, b2_iops=0.0))
        self.assertEqual([(), ()], decisions)
        self.assertEqual(frozenset(), watch.freed)
        decisions, _ = run(watch, checked(0.0))
        self.assertEqual(2, len(decisions[0]))

    def test_a_cap_within_one_request_of_its_rate_is_pushed(self):
        # 20 requests/s over 0.25 s is 5: a check that saw 4 of them
        # (16 requests/s, 80 % of the cap) reads the cap as pushed.
        decisions, _ = run(WATCH, checked(0.0, b2_iops=16.0),
                           checked(0.0, b2_iops=16.0))
        self.assertEqual({'b1', 'b2'},
                         {d.instance_uuid for d in decisions[1]})

    def test_only_the_caps_pushed_grow(self):
        decisions, _ = run(WATCH, checked(0.0), checked(0.0, b2_iops=8.0))
        (grown,) = decisions[1]
        self.assertEqual('b1', grown.instance_uuid)
        # 25 requests/s to the one cap of 30.
        self.assertAlmostEqual(55.0, grown.cap.iops)

    def test_a_disk_the_last_interval_did_not_see_is_not_watched(self):
        decisions, _ = run(watch_of(LAST[:2]), checked(0.0),
                           checked(0.0), checked(0.0))
        self.assertEqual([(), (), ()], decisions)

    def test_an_empty_watch_decides_nothing(self):
        decisions, _ = run(idle.Watch(), checked(0.0), checked(0.0))
        self.assertEqual([(), ()], decisions)


class TestGuaranteeHook(testtools.TestCase):
    """The ``guarantee`` policy's decision leaves the watch its checks
    read, and ``early`` runs them."""

    def setUp(self):
        super().setUp()
        self.policy = guarantee.GuaranteePolicy()

    def test_a_decision_that_renews_caps_leaves_a_watch(self):
        state = guarantee.DomainState(baseline_latency_s=0.02,
                                      learned_iops=95.0)
        outcome = self.policy.decide(view(*LAST), state)
        self.assertTrue(any(d.action == model.CAP
                            for d in outcome.decisions))
        self.assertEqual(watch_of(LAST), outcome.state.watch)
        first = self.policy.early(checked(0.0), outcome.state)
        second = self.policy.early(checked(0.0), first.state)
        self.assertEqual((), first.decisions)
        self.assertEqual({'b1', 'b2'},
                         {d.instance_uuid for d in second.decisions})
        self.assertEqual(frozenset({'paced/vda'}),
                         second.state.watch.freed)
        # Nothing else of the state moves.
        self.assertEqual(outcome.state.learned_iops,
                         second.state.learned_iops)

    def test_a_check_is_wanted_while_a_watched_disk_may_stop(self):
        self.assertFalse(self.policy.wants_check(None))
        self.assertFalse(self.policy.wants_check(guarantee.DomainState()))
        watch = watch_of(LAST[2:])
        state = guarantee.DomainState(watch=watch)
        self.assertTrue(self.policy.wants_check(state))
        _, freed = run(watch, checked(0.0), checked(0.0))
        self.assertFalse(self.policy.wants_check(
            guarantee.DomainState(watch=freed)))

    def test_a_decision_without_caps_leaves_none(self):
        outcome = self.policy.decide(
            view(disk('a', 20.0, 0.02), disk('b', 10.0, 0.02)),
            guarantee.DomainState())
        self.assertEqual((), outcome.decisions)
        self.assertEqual(idle.Watch(), outcome.state.watch)
        self.assertEqual((), self.policy.early(checked(0.0),
                                               outcome.state).decisions)


class TestOverbooked(testtools.TestCase):

    def test_only_disks_with_a_floor_take_the_room(self):
        # b1 has no floor: on an overbooked domain it stays where the
        # decision held it; b2's floor takes the whole load freed.
        last = (LAST[0], disk('b2', 20.0, 0.3, cap_iops=20.0, min_iops=15.0),
                LAST[2])
        span = view(disk('b1', 30.0, 0.3, cap_iops=30.0, interval_s=0.25),
                    disk('b2', 20.0, 0.3, cap_iops=20.0, interval_s=0.25,
                         min_iops=15.0),
                    disk('paced', 0.0, 0.0, interval_s=0.25))
        decisions, _ = run(watch_of(last, floors_only=True), span, span)
        (grown,) = decisions[1]
        self.assertEqual('b2', grown.instance_uuid)
        self.assertAlmostEqual(45.0, grown.cap.iops)
        decisions, _ = run(watch_of(last), span, span)
        self.assertEqual({'b1', 'b2'},
                         {d.instance_uuid for d in decisions[1]})
