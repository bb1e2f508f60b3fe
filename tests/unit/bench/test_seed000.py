import json

import testtools

from iothrottle.bench import report
from iothrottle.bench import seed000


def interval(end_s, **kb_s):
    return seed000.Interval(end_s=end_s, length_s=2.0, kb_s=kb_s,
                            latency_ms=20.0)


PLAN = seed000.Plan(vms=(
    seed000.VmPlan('vm1', 'f1', 1, 3, rate_kb_s=0, guarantee_kb_s=1000),
    seed000.VmPlan('vm2', 'f2', 1, 1, rate_kb_s=800, guarantee_kb_s=600),
), interval_s=2.0, ramp_s=10.0, tail_s=10.0)


class TestPlan(testtools.TestCase):

    def test_duration_covers_ramp_and_tail(self):
        self.assertEqual(30.0, PLAN.duration_s)
        self.assertEqual([0.0, 10.0, 20.0], PLAN.step_times_s())

    def test_default_plans_fit_guarantees_in_the_store(self):
        for short in (False, True):
            plan = seed000.default_plan(short)
            total = sum(vm.guarantee_kb_s for vm in plan.vms)
            # 10 ms per request at 64 KB: 6,400 KB/s; the border is 90 %.
            self.assertLess(total, 0.9 * 6400)
            for vm in plan.vms:
                self.assertLessEqual(vm.guarantee_kb_s, vm.demand_kb_s)


class TestMetrics(testtools.TestCase):

    def test_two_intervals_after_each_step_are_not_counted(self):
        counted = [seed000.counted(PLAN, interval(t))
                   for t in (2, 4, 6, 8, 10, 12, 14, 16)]
        self.assertEqual([False, False, True, True, True, False, False,
                          True], counted)

    def test_capacity_is_the_sustained_rate_not_the_best_tick(self):
        # The first tick (processes starting) is dropped; the others are
        # averaged: 94, 96, 93, 95 -> 94.5, not the best tick's 96.
        self.assertEqual(94.5, seed000.sustained_iops([60, 94, 96, 93, 95]))
        self.assertEqual(80.0, seed000.sustained_iops([80]))
        self.assertRaises(ValueError, seed000.sustained_iops, [])

    def test_satisfaction_uses_min_of_demand_and_guarantee(self):
        intervals = [interval(t, vm1=990, vm2=600) for t in (6, 8)]
        intervals.append(interval(16, vm1=949, vm2=560))
        rows = {r['name']: r for r in
                seed000.summarize(PLAN, intervals)['vms']}
        # vm1 needs 0.95 x 1000 = 950: two of three intervals.
        self.assertAlmostEqual(2 / 3, rows['vm1']['satisfied_fraction'])
        # vm2 needs 0.95 x min(800, 600) = 570.
        self.assertAlmostEqual(2 / 3, rows['vm2']['satisfied_fraction'])
        self.assertIsNone(rows['vm1']['demand'])
        self.assertEqual(800, rows['vm2']['demand'])
        self.assertEqual(949, rows['vm1']['min'])

    def test_bar(self):
        good = {'vms': [{'name': 'vm1', 'demand': None, 'guarantee': 1,
                         'satisfied_fraction': 0.97}], 'total_mean': 95.0}
        bad = {'vms': [{'name': 'vm1', 'demand': None, 'guarantee': 1,
                        'satisfied_fraction': 0.5}], 'total_mean': 100.0}
        ok, reasons = seed000.bar({'none': bad, 'paper': bad,
                                   'guarantee': good})
        self.assertTrue(ok, reasons)
        ok, reasons = seed000.bar({'none': bad, 'paper': good,
                                   'guarantee': bad})
        self.assertFalse(ok)
        self.assertIn('vm1 satisfied in 50 %', reasons[0])
        self.assertIn('not better than paper', reasons[-1])
        # Equal on guarantees, but 5 % more data than paper: better.
        paper = dict(good, total_mean=90.0)
        ok, reasons = seed000.bar({'paper': paper, 'guarantee': good})
        self.assertTrue(ok, reasons)
        ok, reasons = seed000.bar({'paper': dict(good, total_mean=94.0),
                                   'guarantee': good})
        self.assertFalse(ok)
        low = dict(good, total_mean=80.0)
        ok, reasons = seed000.bar({'none': bad, 'guarantee': low})
        self.assertEqual(['total throughput 80 % of the uncontrolled run '
                          '(< 90 %)'], reasons)

    def test_table_and_json_shape(self):
        intervals = [interval(t, vm1=990, vm2=600) for t in (6, 8)]
        summary = seed000.summarize(PLAN, intervals)
        json.dumps(summary)
        self.assertEqual({'name', 'demand', 'guarantee', 'mean', 'min', 'max',
                          'satisfied_fraction'}, set(summary['vms'][0]))
        table = report.seed000_table({'guarantee': summary})
        self.assertIn('guarantee  vm2', table)
        self.assertIn('total mean 1590 KB/s', table)
