"""The pure part of the e2e failover test."""

import testtools

from iothrottle.bench import failover
from iothrottle.bench import seed000

LOG = '''2026-11-23 13:00:01.000 7 INFO iothrottle.rpc.agent [-] u1/vda is \
decided by conductor c2-bb (epoch 2000) from now on, was c1-aa (epoch 1000)
2026-11-23 13:00:01.000 7 INFO iothrottle.rpc.agent [-] u2/vda is \
decided by conductor c2-bb (epoch 2000) from now on, was c1-aa (epoch 1000)
2026-11-23 13:00:09.000 7 INFO iothrottle.rpc.agent [-] u1/vda is \
decided by conductor c1-cc (epoch 3000) from now on, was c2-bb (epoch 2000)
'''


def interval(**kb_s):
    return seed000.Interval(end_s=0.0, length_s=2.0, kb_s=kb_s,
                            latency_ms=0.0)


class TestFailoverBar(testtools.TestCase):

    def test_owner_history_of_one_disk(self):
        self.assertEqual([('c1-aa', 1000), ('c2-bb', 2000),
                          ('c1-cc', 3000)],
                         failover.owner_history(LOG, 'u1/vda'))
        self.assertEqual([], failover.owner_history(LOG, 'u9/vda'))

    def test_flapping(self):
        history = failover.owner_history(LOG, 'u1/vda')
        self.assertIsNone(failover.flapping(history, 2))
        self.assertIn('2 handovers for 1',
                      failover.flapping(history, 1))
        self.assertIn('not increasing', failover.flapping(
            [('a', 5), ('b', 6), ('a', 5)], 5))

    def test_floors_and_scoring(self):
        plan = seed000.default_plan(short=True)
        good = interval(vm1=3000, vm2=1300, vm3=1000, vm4=600)
        bad = interval(vm1=4000, vm2=500, vm3=1000, vm4=600)
        self.assertTrue(failover.floors_met(plan, good, 0.95))
        self.assertFalse(failover.floors_met(plan, bad, 0.95))
        self.assertEqual(2, failover.defended_within(
            plan, [good, bad, bad, good], 1, 0.95))
        self.assertIsNone(failover.defended_within(plan, [bad], 0, 0.95))
        series = [good, bad, bad, good]
        kept = failover.scored(series, [(1, 3)])
        self.assertEqual([good, good], kept)
        self.assertEqual(1.0, failover.satisfaction(plan, kept,
                                                    0.95)['vm2'])
        self.assertEqual(0.5, failover.satisfaction(plan, series,
                                                    0.95)['vm2'])
