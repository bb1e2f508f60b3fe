"""The scale bench's pure part: plan, workload, metrics."""

import testtools

from iothrottle.bench import scale

STAT = ('4242 (python3 -m iothrottle.cmd.conductor) S 1 4242 4242 0 -1 '
        '4194560 9000 0 0 0 1234 567 0 0 20 0 9 0 100 500000000 30000 '
        '18446744073709551615 1 1 0 0 0 0 0 16781312 17154 0 0 0 17 1 0 0')
STATUS = 'Name:\tpython3\nVmPeak:\t  900000 kB\nVmRSS:\t  123456 kB\n'


class TestPlan(testtools.TestCase):

    def test_sizes_follow_the_issue(self):
        plan = scale.Plan(instances=10000)
        self.assertEqual((500, 1000), (plan.hosts, plan.domains))
        self.assertEqual(60.0, plan.guarantee_iops)

    def test_a_domain_spans_several_hosts(self):
        plan = scale.Plan(instances=1000)
        hosts = {scale.host_of(plan, i) for i in range(plan.instances)
                 if scale.domain_of(plan, i) == 7}
        self.assertEqual(plan.per_domain, len(hosts))

    def test_bad_plans_are_named(self):
        exc = self.assertRaises(ValueError, scale.Plan, instances=1010)
        self.assertIn('multiple of per_host', str(exc))
        exc = self.assertRaises(ValueError, scale.Plan,
                                interval_s=float('nan'))
        self.assertIn('interval_s', str(exc))
        self.assertRaises(ValueError, scale.Plan, rounds=2, warmup_rounds=2)

    def test_a_few_saturated_domains_spread_out(self):
        plan = scale.Plan(instances=10000)
        saturated = scale.saturated_domains(plan)
        self.assertEqual(20, len(saturated))
        self.assertEqual(1, len(scale.saturated_domains(
            scale.Plan(instances=20, per_domain=10))))


class TestWorkload(testtools.TestCase):

    def test_saturated_domains_burst_past_capacity_each_interval(self):
        plan = scale.Plan(instances=1000)
        saturated = scale.saturated_domains(plan)
        domain = min(saturated)
        members = [i for i in range(plan.instances)
                   if scale.domain_of(plan, i) == domain]
        totals = [sum(scale.demand_iops(plan, i, r, saturated)
                      for i in members) for r in (0, 1)]
        self.assertTrue(all(t > plan.capacity_iops for t in totals))
        self.assertNotEqual(totals[0], totals[1])

    def test_idle_domains_stay_below_the_border(self):
        plan = scale.Plan(instances=1000)
        saturated = scale.saturated_domains(plan)
        idle = next(d for d in range(plan.domains) if d not in saturated)
        rates = scale.round_rates(plan, 3, saturated, {})
        total = sum(rates[i][0] for i in range(plan.instances)
                    if scale.domain_of(plan, i) == idle)
        self.assertLess(total, 0.5 * plan.capacity_iops)

    def test_fluid_model_scales_down_and_honours_caps(self):
        got, load = scale.served({'a': 300.0, 'b': 100.0}, {}, 200.0)
        self.assertEqual({'a': 150.0, 'b': 50.0}, got)
        self.assertEqual(2.0, load)
        got, load = scale.served({'a': 300.0, 'b': 100.0}, {'a': 100.0},
                                 200.0)
        self.assertEqual({'a': 100.0, 'b': 100.0}, got)
        self.assertEqual(1.0, load)
        self.assertGreater(scale.latency_s(0.99), scale.latency_s(0.1))
        self.assertLessEqual(scale.latency_s(5.0), scale.BASE_LATENCY_S
                             * scale.MAX_QUEUE_FACTOR)


class TestMetrics(testtools.TestCase):

    def test_percentiles(self):
        self.assertIsNone(scale.percentile([], 0.5))
        self.assertEqual(2.0, scale.percentile([3.0, 1.0, 2.0], 0.5))
        self.assertAlmostEqual(99.01, scale.percentile(range(1, 101), 0.99))

    def test_proc_parsers(self):
        self.assertEqual(1234 + 567, scale.proc_cpu_ticks(STAT))
        self.assertEqual(123456 * 1024, scale.proc_rss_bytes(STATUS))
        self.assertRaises(ValueError, scale.proc_rss_bytes, 'Name: x\n')
        self.assertEqual(0.5, scale.cpu_share(100, 150, 1.0, 100))

    def test_conductor_log(self):
        text = ('2026 INFO iothrottle round 3: 50 host(s), 100 domain(s), '
                '7 decision(s); decided in 12.5 ms, cast in 1.5 ms\n'
                '2026 INFO iothrottle round 3 recorded in 40.0 ms\n'
                '2026 INFO iothrottle round 4: 50 host(s), 100 domain(s), '
                '0 decision(s); decided in 11.0 ms, cast in 0.0 ms\n')
        rounds = scale.parse_conductor_log(text)
        self.assertEqual({'hosts': 50, 'domains': 100, 'decisions': 7,
                          'decide_ms': 12.5, 'cast_ms': 1.5,
                          'record_ms': 40.0}, rounds[3])
        self.assertIsNone(rounds[4]['record_ms'])

    def test_end_to_end_takes_each_intervals_last_cast(self):
        last_reports = [10.0, 15.0, 20.0]
        receipts = [(10.2, 10.3), (10.2, 10.6), (15.1, 15.2),
                    (9.0, 9.1)]   # before any interval: not counted
        self.assertEqual({0: 0.6, 1: 0.2},
                         {k: round(v, 6) for k, v in scale.end_to_end(
                             last_reports, receipts).items()})

    def test_summary_and_targets(self):
        plan = scale.Plan(instances=1000, rounds=4, warmup_rounds=1)
        rows = [{'e2e_s': 0.2, 'reports': 50, 'casts': 5, 'wall_s': 5.0},
                {'e2e_s': 1.5, 'reports': 50, 'casts': 5, 'wall_s': 5.0}]
        rounds = [{'decide_ms': 10.0, 'record_ms': 30.0, 'decisions': 4},
                  {'decide_ms': 70.0, 'record_ms': None, 'decisions': 6}]
        summary = scale.summarize(plan, rows, {'c0': {
            'rounds': rounds, 'cpu': [0.1, 0.2], 'rss': [100 * 2 ** 20]}})
        self.assertAlmostEqual(0.15, summary['cpu_share'])
        self.assertEqual(11.0, summary['messages_per_s'])
        self.assertEqual(30.0, summary['db_write_ms_p99'])
        targets = summary['targets']
        self.assertFalse(targets['decision_ms_p99 <= 50'])
        self.assertFalse(targets['e2e_s_p99 <= 1'])
        self.assertTrue(targets['cpu_share <= 0.25'])
        self.assertTrue(targets['rss_bytes <= 300 MiB'])
        self.assertIn('1000', scale.table([summary]))

    def test_progress_bar(self):
        self.assertEqual('\r[###.......] 3/10 x',
                         scale.progress(3, 10, width=10, label='x'))
