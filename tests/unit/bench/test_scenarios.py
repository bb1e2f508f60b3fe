import dataclasses
import json
import math

import testtools

from iothrottle.bench import scenarios
from iothrottle.bench import seed000

S = scenarios.Stream


def interval(end_s, **kb_s):
    return seed000.Interval(end_s=end_s, length_s=2.0, kb_s=kb_s,
                            latency_ms=20.0)


def plan(vms, events, **kw):
    return scenarios.ScenarioPlan(seed=0, index=0, vms=tuple(vms),
                                  events=tuple(events), **kw)


def vm(name, guarantee_kb_s, burster=False, block_kb=64):
    return scenarios.GuestPlan(name, 'scn.' + name, block_kb,
                               guarantee_kb_s, burster, 'randwrite')


E = scenarios.Event
START, STOP = scenarios.START, scenarios.STOP

# A burster b (floor 640 KB/s = 10 IOPS) stepping at 0 and 8 s, a paced
# guest p at 1280 KB/s (20 IOPS at 64 KB) guaranteed 960, idle 12-16 s.
PLAN = plan([vm('b', 640, burster=True), vm('p', 960)], [
    E(0.0, 'b', START, (S('randwrite'),)),
    E(0.0, 'p', START, (S('randwrite', 640), S('randread', 640))),
    E(8.0, 'b', START, (S('randwrite'), S('randwrite'))),
    E(12.0, 'p', STOP),
    E(16.0, 'p', START, (S('randwrite', 640), S('randread', 640))),
], duration_s=22.0)


class TestDraw(testtools.TestCase):

    def test_same_seed_same_plans_other_seed_other_plans(self):
        a = scenarios.draw_plans(10, seed=3)
        self.assertEqual(a, scenarios.draw_plans(10, seed=3))
        self.assertNotEqual(a, scenarios.draw_plans(10, seed=4))
        # Plan k does not depend on how many plans are drawn.
        self.assertEqual(a[:4], scenarios.draw_plans(4, seed=3))

    def test_plans_stay_within_what_the_testbed_can_do(self):
        for short in (False, True):
            for p in scenarios.draw_plans(40, seed=11, short=short):
                self.assertTrue(3 <= len(p.vms) <= (5 if short else 8))
                self.assertLessEqual(sum(v.burster for v in p.vms), 3)
                names = {v.name for v in p.vms}
                for v in p.vms:
                    self.assertIn(v.block_kb, scenarios.BLOCK_SIZES_KB)
                    self.assertGreaterEqual(v.guarantee_kb_s, 0)
                for e in p.events:
                    self.assertIn(e.guest, names)
                    self.assertLess(e.at_s, p.duration_s)
                    self.assertEqual(0, e.at_s % p.interval_s)
                    for s in e.streams:
                        self.assertIn(s.rw, ('randread', 'randwrite'))
                        rate_iops = s.rate_kb_s / p.guest(e.guest).block_kb
                        self.assertLessEqual(
                            rate_iops, scenarios.PACED_IOPS_PER_PROC + 1e-9)
                        # Bursters are unpaced, paced guests paced.
                        self.assertEqual(p.guest(e.guest).burster,
                                         s.rate_kb_s == 0)
                if p.capacity_factor is not None:
                    self.assertTrue(0.5 <= p.capacity_factor <= 2.0)

    def test_the_draw_covers_the_issue(self):
        plans = scenarios.draw_plans(40, seed=1)
        overbooked = sum(p.overbooked for p in plans)
        # Some plans overbooked, most not.
        self.assertTrue(0 < overbooked < 20, overbooked)
        self.assertTrue(any(p.has_idle_phase for p in plans))
        self.assertTrue(any(p.capacity_factor is None for p in plans))
        self.assertTrue(any(p.capacity_factor < 1 for p in plans
                            if p.capacity_factor))
        self.assertTrue(any(p.capacity_factor > 1 for p in plans
                            if p.capacity_factor))
        self.assertEqual({0, 1, 2, 3},
                         {sum(v.burster for v in p.vms) for p in plans})
        mixes = {v.mix for p in plans for v in p.vms}
        self.assertEqual({'randread', 'randwrite', 'mixed'}, mixes)

    def test_overbooked_plans_claim_more_than_the_store(self):
        for p in scenarios.draw_plans(40, seed=2):
            demand = p.demand_kb_s(p.duration_s - 1)
            claims = sum(min(demand[v.name], v.guarantee_kb_s) / v.block_kb
                         for v in p.vms)
            floors = sum(v.guarantee_kb_s / v.block_kb for v in p.vms)
            if p.overbooked:
                self.assertGreater(floors, scenarios.NOMINAL_IOPS)
            else:
                self.assertLess(claims, 0.9 * scenarios.NOMINAL_IOPS)

    def test_burst_steps_are_spaced(self):
        for p in scenarios.draw_plans(20, seed=5):
            for v in p.vms:
                if not v.burster:
                    continue
                times = sorted(e.at_s for e in p.events
                               if e.guest == v.name and e.action == START)
                for a, b in zip(times, times[1:]):
                    self.assertGreaterEqual(
                        b - a, scenarios.STEP_GAP_INTERVALS * p.interval_s)


class TestPlan(testtools.TestCase):

    def test_demand_follows_the_events(self):
        self.assertEqual({'b': math.inf, 'p': 1280}, PLAN.demand_kb_s(1))
        self.assertEqual({'b': math.inf, 'p': 0}, PLAN.demand_kb_s(13))
        self.assertEqual(3, len(PLAN.streams_at(9)['b']))
        self.assertEqual([0.0, 8.0], PLAN.burst_steps_s())
        self.assertEqual([0.0, 8.0, 12.0, 16.0], PLAN.step_times_s())
        self.assertEqual([12.0], PLAN.stop_times_s())
        self.assertTrue(PLAN.has_idle_phase)

    def test_a_stretched_plan_runs_each_phase_longer(self):
        p = scenarios.draw_plan(7, 8)
        long = scenarios.stretched(p, 3)
        self.assertEqual(3 * p.duration_s, long.duration_s)
        self.assertEqual([3 * t for t in p.step_times_s()],
                         long.step_times_s())
        self.assertEqual(p.vms, long.vms)
        self.assertEqual(p.capacity_factor, long.capacity_factor)
        # What runs at a time of the plan runs at three times it.
        for t in p.step_times_s():
            self.assertEqual(p.demand_kb_s(t + 1), long.demand_kb_s(3 * t + 1))
        # Events stay on the interval grid, so the metrics' windows do.
        for e in long.events:
            self.assertEqual(0.0, e.at_s % long.interval_s)
        self.assertIs(p, scenarios.stretched(p, 1))


class TestMetrics(testtools.TestCase):

    def test_needs_and_idle_guests(self):
        needs, over = scenarios.needs_kb_s(PLAN, interval(6), 100)
        self.assertEqual({'b': 640, 'p': 960}, needs)
        self.assertFalse(over)
        needs, _ = scenarios.needs_kb_s(PLAN, interval(14), 100)
        self.assertEqual({'b': 640}, needs)   # p is idle
        # A store of 24 IOPS: floors of 10 + 15 IOPS are overbooked.
        needs, over = scenarios.needs_kb_s(PLAN, interval(6), 24)
        self.assertTrue(over)
        self.assertAlmostEqual(10 * 64, needs['b'])
        self.assertAlmostEqual(14 * 64, needs['p'])
        # Of 24 and of 20 IOPS, b's share (9.6, 8) is under the minimum
        # cap of 10 IOPS that any policy leaves it: it keeps 10, p gets
        # the rest.
        needs, over = scenarios.needs_kb_s(PLAN, interval(6), 20)
        self.assertTrue(over)
        self.assertAlmostEqual(10 * 64, needs['b'])
        self.assertAlmostEqual(10 * 64, needs['p'])

    def test_floorless_guests_keep_their_minimum_cap_of_an_overbooked_store(
            self):
        # f, floorless, bursts at 4 KB (minimum cap 10 IOPS) and at 256 KB
        # (1 MiB/s: 4 IOPS); the floors of b and p share what is left.
        for block_kb, reserve_iops in ((4, 10.0), (256, 4.0)):
            burst = E(0.0, 'f', START, (S('randwrite'),))
            p = plan(list(PLAN.vms) + [vm('f', 0, True, block_kb)],
                     list(PLAN.events) + [burst], duration_s=22.0)
            # 24 IOPS left of the store: b keeps its minimum cap (10 IOPS,
            # over its share of 9.6), p gets the other 14.
            needs, over = scenarios.needs_kb_s(p, interval(6),
                                               24 + reserve_iops)
            self.assertTrue(over)
            self.assertNotIn('f', needs)
            self.assertAlmostEqual(10 * 64, needs['b'])
            self.assertAlmostEqual(14 * 64, needs['p'])
        # With room for every floor and the minimum caps: not overbooked.
        _, over = scenarios.needs_kb_s(p, interval(6), 100)
        self.assertFalse(over)

    def test_reaction_counts_intervals_until_every_need_is_met(self):
        ok = dict(b=700, p=1000)
        bad = dict(b=700, p=500)
        series = [interval(2, **bad), interval(4, **ok), interval(6, **ok),
                  interval(8, **ok), interval(10, **bad),
                  interval(12, **bad)]
        # Step 0: one bad interval; step 8: not met in the 2 intervals
        # before p stops at 12 s, too few to show a reaction of 2 or
        # less: cut short, out of the reactions the bar judges.
        self.assertEqual(([1], [2]),
                         scenarios.reaction_intervals(PLAN, series, 100))
        series[-1] = interval(12, **ok)
        self.assertEqual(([1, 1], []),
                         scenarios.reaction_intervals(PLAN, series, 100))

    def test_a_reaction_with_room_to_show_and_not_met_is_never(self):
        # p stops at 14 s: step 8 has 3 intervals, not met in any.
        later = plan(PLAN.vms, [e if e.action != STOP else E(14.0, 'p', STOP)
                                for e in PLAN.events], duration_s=22.0)
        ok = dict(b=700, p=1000)
        bad = dict(b=700, p=500)
        series = [interval(t, **(ok if t <= 8 else bad))
                  for t in range(2, 15, 2)]
        self.assertEqual(([0, None], []),
                         scenarios.reaction_intervals(later, series, 100))
        summary = scenarios.summarize(later, series, 100)
        self.assertIsNone(summary['reaction_p95'])
        # The same run with p stopping at 12 s: cut short, not judged.
        short = scenarios.summarize(PLAN, series[:6], 100)
        self.assertEqual([0], short['reaction'])
        self.assertEqual([2], short['reaction_cut_short'])
        self.assertEqual(0, short['reaction_p95'])

    def test_the_two_intervals_after_an_event_are_skipped_late_ticks_too(
            self):
        # Events at 0, 8, 12 and 16 s; ticks 4 ms late.  The tick ending
        # at 8.004 ran before the step at 8 s and counts; 10.004 and
        # 12.004 ran after it and do not.
        ends = {t: scenarios.counted(PLAN, interval(t + 0.004))
                for t in range(2, 23, 2)}
        self.assertEqual([6, 8, 22], [t for t, c in ends.items() if c])

    def test_reaction_windows_follow_the_runners_ticks(self):
        # Ticks end a few ms late; the interval ending at 8.004 s ran
        # before the step at 8 s (the runner starts it after that tick),
        # so it belongs to step 0's window, not to step 8's.
        ok = dict(b=700, p=1000)
        bad = dict(b=700, p=500)
        series = [interval(t + 0.004, **kb_s) for t, kb_s in (
            (2, bad), (4, bad), (6, bad), (8, ok), (10, ok), (12, ok))]
        self.assertEqual(([3, 0], []),
                         scenarios.reaction_intervals(PLAN, series, 100))

    def test_percentile_ranks_never_last(self):
        self.assertEqual(1, scenarios.percentile([0, 1, 2, 3], 50))
        self.assertIsNone(scenarios.percentile([0, None], 95))
        self.assertEqual(0, scenarios.percentile([0, None], 50))
        self.assertIsNone(scenarios.percentile([], 50))

    def series(self, p_kb_s, b_kb_s=700):
        return [interval(t, b=b_kb_s, p=p_kb_s) for t in range(2, 23, 2)]

    def test_summary_counts_like_seed000_and_is_json(self):
        summary = scenarios.summarize(PLAN, self.series(1000), 100)
        json.dumps(summary)
        # Counted: 6, 12 (p idle: only b) and 22 (others settle after
        # the events at 0, 8, 12 and 16 s).
        self.assertEqual(3, summary['scored_intervals'])
        self.assertEqual(1.0, summary['worst_satisfied'])
        self.assertAlmostEqual(1700, summary['total_mean'])
        self.assertAlmostEqual(1700 / 64, summary['total_iops_mean'])
        self.assertEqual([0, 0], summary['reaction'])
        self.assertEqual(0, summary['overbooked_intervals'])
        # p needs 960 KB/s, 30 requests of 64 KB in 2 s: 95 % is 28.5,
        # so 28 requests (896 KB/s) meet it, 27 (864) do not.
        edge = scenarios.summarize(PLAN, self.series(896), 100)
        self.assertEqual(1.0, edge['worst_satisfied'])
        low = scenarios.summarize(PLAN, self.series(864), 100)
        self.assertEqual(0.0, low['worst_satisfied'])

    def test_a_need_is_met_in_whole_requests(self):
        # Seed 7's plan 8: 17 KB/s at 4 KB is 8.5 requests in 2 s; 95 %
        # of it (8.07) cannot be shown, 8 requests can.
        self.assertTrue(scenarios.need_met(16.0, 17.0, 4, 2.0))
        self.assertFalse(scenarios.need_met(14.0, 17.0, 4, 2.0))
        # Large needs keep the 95 % bar (to within one request).
        self.assertTrue(scenarios.need_met(950.0, 1000.0, 4, 2.0))
        self.assertFalse(scenarios.need_met(948.0, 1000.0, 4, 2.0))
        # An interval measured a little long: 8 requests in 2.02 s.
        self.assertTrue(scenarios.need_met(8 * 4 / 2.02, 17.0, 4, 2.02))
        # Under one request an interval, any interval meets the need.
        self.assertTrue(scenarios.need_met(0.0, 2.0, 4, 2.0))

    def test_spread_lists_each_repeat_of_a_plan(self):
        good = scenarios.summarize(PLAN, self.series(1000), 100)
        bad = scenarios.summarize(PLAN, self.series(500, b_kb_s=2000), 100)
        repeats = [[{'none': bad, 'guarantee': good}],
                   [{'none': good, 'guarantee': bad}]]
        rows = scenarios.spread([PLAN], repeats)
        json.dumps(rows)
        g = rows[0]['policies']['guarantee']
        self.assertEqual([1.0, 0.0], g['worst_satisfied'])
        # Against none of the same repeat: 1700/2500 KB/s, then back.
        self.assertAlmostEqual(1700 / 2500, g['total_iops_vs_none'][0])
        self.assertAlmostEqual(2500 / 1700, g['total_iops_vs_none'][1])
        self.assertEqual([None, None], g['overbooked_share_min'])
        text = scenarios.spread_table(rows)
        self.assertIn('100% 0% (0%-100%)', text)
        self.assertIn('0.68 1.47 (0.68-1.47)', text)
        one = scenarios.spread_table(scenarios.spread([PLAN], repeats[:1]))
        self.assertIn('100%', one)
        self.assertNotIn('(', one.splitlines()[-1])

    def test_targets(self):
        good = scenarios.summarize(PLAN, self.series(1000), 100)
        bad = scenarios.summarize(PLAN, self.series(500, b_kb_s=2000), 100)
        static = dict(good, total_iops_mean=good['total_iops_mean'] - 1)
        results = {'none': bad, 'guarantee': good, 'static': static}
        t = scenarios.targets(PLAN, results, 'guarantee')
        self.assertEqual({'satisfied': True, 'reaction': True,
                          'total': False, 'beats_static_total': True,
                          'static_satisfaction': True}, t)
        t = scenarios.targets(PLAN, results, 'none')
        self.assertFalse(t['satisfied'])
        self.assertFalse(t['reaction'])
        self.assertFalse(t['static_satisfaction'])
        summary = scenarios.aggregate([PLAN], [results])
        self.assertEqual('1/1', summary['guarantee']['targets']['satisfied'])
        self.assertEqual('0/1', summary['none']['targets']['satisfied'])
        self.assertIn('guarantee', scenarios.table(summary))
        ratio = bad['total_iops_mean'] / good['total_iops_mean']
        self.assertAlmostEqual(
            ratio, summary['guarantee']['total_iops_vs_none']['min'] ** -1)
        self.assertIn('IOPS', scenarios.plan_row(PLAN, results))

    def test_overbooked_targets(self):
        # 20 IOPS: floors of 10 + 15 overbook it; b's share (8) is under
        # its minimum cap, so b needs 10 and p the other 10.
        small = 20
        fair = scenarios.summarize(PLAN, self.series(620, b_kb_s=620), small)
        self.assertGreater(fair['overbooked_intervals'], 0)
        self.assertGreaterEqual(fair['overbooked_share_min'], 0.95)
        t = scenarios.targets(PLAN, {'guarantee': fair}, 'guarantee')
        self.assertTrue(t['overbooked_share'])
        unfair = scenarios.summarize(PLAN, self.series(400, b_kb_s=900),
                                     small)
        t = scenarios.targets(PLAN, {'guarantee': unfair}, 'guarantee')
        self.assertFalse(t['overbooked_share'])


class TestRunnerPieces(testtools.TestCase):

    def test_told_capacity(self):
        from oslo_config import cfg

        from iothrottle.bench import scenario_runner
        from iothrottle import conf as iothrottle_conf
        from iothrottle.controller import model
        conf = cfg.ConfigOpts()
        iothrottle_conf.register_opts(conf)
        conf([], project='iothrottle', default_config_files=[])
        measured = model.Capacity(max_iops=95.0, max_bytes_sec=1e10)
        told = scenario_runner.told_capacity(
            plan([], [], capacity_factor=0.5), measured, conf)
        self.assertEqual(47.5, told.capacity_of('any').max_iops)
        untold = scenario_runner.told_capacity(plan([], []), measured, conf)
        # Not told: the [storage] default, one 7200 rpm disk.
        self.assertEqual(200.0, untold.capacity_of('any').max_iops)

    def test_an_events_paced_processes_are_spread_over_one_slot(self):
        from iothrottle.bench import scenario_runner
        S = scenarios.Stream
        loads = scenario_runner.event_loads(
            (S('randwrite', 9.5), S('randread', 9.5), S('randread', 9.5),
             S('randwrite')), block_kb=4)
        got = [(ld.rw, ld.procs, ld.rate_kb_s, ld.phase_slots,
                ld.phase_step_slots) for ld in loads]
        # Three paced processes over two runs: 0, 1/3 and 2/3 of a
        # slot late; the unpaced burster has no slot to spread over.
        self.assertEqual(
            [('randread', 2, 9.5, 0.0, 1 / 3),
             ('randwrite', 1, 9.5, 2 / 3, 1 / 3),
             ('randwrite', 1, None, 0.0, None)],
            sorted(got, key=lambda g: (g[2] is None, g[0])))
        late = next(ld for ld in loads if ld.phase_slots)
        self.assertIn('-F', late.argv())

    def test_trace_names_the_demand_bound_marks(self):
        import types

        from iothrottle.bench import scenario_runner
        from iothrottle.controller import guarantee
        states = {'store': guarantee.DomainState(
            demand_bound=(('u2/vda', 52.0), ('u3/vda', 19.5)))}
        self.assertEqual(
            'g2 at 52.0 IOPS, g3 at 19.5 IOPS',
            scenario_runner._marks_text(types.MappingProxyType(states),
                                        {'u2': 'g2', 'u3': 'g3'}))
        # A policy state with no marks (paper's, none's) says nothing.
        self.assertEqual('', scenario_runner._marks_text(
            {'store': None, 'other': guarantee.DomainState()}, {}))

    def test_trace_names_what_the_policy_learned_of_the_domain(self):
        from iothrottle.bench import scenario_runner
        from iothrottle.controller import guarantee
        states = {'store': guarantee.DomainState(
            baseline_latency_s=0.0125, learned_iops=88.44,
            share_scale=0.97, lowest_latency_s=0.011, proven_iops=79.61,
            latency_s=0.0512, completed_iops=84.46)}
        scales = {}
        self.assertEqual(
            'capacity 88.4 IOPS (proven 79.6), baseline 12.5 ms, '
            'lowest 11.0 ms, read 51.2 ms at 84.5 IOPS, share scale '
            '0.970 down from 1.000',
            scenario_runner._domain_text(states, scales, 'guarantee'))
        # The same scale again says nothing of a move; a rise says so,
        # and each policy's run has its own last scale.
        self.assertTrue(scenario_runner._domain_text(
            states, scales, 'guarantee').endswith('share scale 0.970'))
        states['store'] = dataclasses.replace(states['store'],
                                              share_scale=0.985)
        self.assertTrue(scenario_runner._domain_text(
            states, scales, 'guarantee').endswith(
                'share scale 0.985 up from 0.970'))
        self.assertTrue(scenario_runner._domain_text(
            states, scales, 'other').endswith(
                'share scale 0.985 down from 1.000'))
        # A tightening that found the domain full says so.
        states['store'] = dataclasses.replace(states['store'],
                                              found_full=True)
        self.assertTrue(scenario_runner._domain_text(
            states, scales, 'guarantee').endswith(
                'share scale 0.985, found full (nothing to cut on floors '
                'that fit)'))
        # A policy that keeps no such state (paper's, none's): nothing.
        self.assertEqual('', scenario_runner._domain_text(
            {'store': None}, scales, 'none'))

    def test_plan_collector_shows_only_the_plans_disks(self):
        import types

        from iothrottle.bench import scenario_runner
        from iothrottle.compute import collector
        from iothrottle.controller import model

        def sample(uuid):
            return model.DiskSample(instance_uuid=uuid, device='vda',
                                    storage_domain='store', interval_s=2.0)

        class Inner:
            def collect(self):
                return collector.Collection(
                    1.0, (sample('a'), sample('b')),
                    types.MappingProxyType({'a': 1, 'b': 2}), None)
        got = scenario_runner.PlanCollector(Inner(), ['b']).collect()
        self.assertEqual(['b'], [s.instance_uuid for s in got.samples])
        self.assertEqual({'b': 2}, dict(got.instances))
