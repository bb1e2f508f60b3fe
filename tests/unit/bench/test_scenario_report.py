import dataclasses
import io
import json
import os
import re

import fixtures
import testtools

from iothrottle.bench import scenario_report as report
from iothrottle.bench import scenarios
from iothrottle.cmd import bench

# Seed 19's plan 7: g4 (8 KB) and g5 (64 KB) guaranteed, g3 (16 KB)
# floorless; events at 0, 2, 6, 10 and 12 s, so the interval ending at
# 14 s settles after one and the one ending at 18 s is scored.
TRACE = """\
plan 7 guarantee t= 12.0 overbooked g3=80/-@170ms g4=128/143@190ms \
g5=700/640@150ms
    g5 cap: latency 150 ms; excess cut -> 10.0 IOPS, 655360 B/s
    domain: capacity 97.3 IOPS, baseline 0.0 ms, lowest 99.0 ms, \
share scale 0.970
plan 7 guarantee t= 14.0 overbooked g3=80/-@170ms g4=100/143@200ms \
g5=600/640[cap 10]@200ms
    g5 cap: held: g4 within 20 % of guarantee
plan 7 guarantee t= 18.0 overbooked g3=80/-@190ms g4=120/143[cap 18]@200ms \
g5=608/640[cap 10]@200ms
    domain: capacity 97.3 IOPS, baseline 0.0 ms, lowest 99.0 ms, \
share scale 0.950
plan 7 guarantee t= 20.0 g3=80/-@190ms g4=60/143@100ms \
g5=608/640[cap 11]@200ms
plan 7 none      t= 18.0 overbooked g3=80/-@190ms g4=60/143@400ms \
g5=900/640@200ms
"""


def _doc(seed, results_by_plan, overbooked=True):
    return {'seed': seed, 'short': False, 'stretch': 1,
            'plans': [{'index': index, 'overbooked': overbooked,
                       'results': results, 'targets': {
                           pol: targets for pol, (_, targets)
                           in results.items()}}
                      for index, results in results_by_plan.items()]}


def _fixed(doc):
    """``_doc``'s results are (summary, targets) pairs: split them as a
    run's JSON holds them."""
    for plan in doc['plans']:
        plan['results'] = {pol: summary for pol, (summary, _)
                           in plan['results'].items()}
    return doc


def _summary(iops, least=None, worst=None):
    return {'total_iops_mean': iops, 'overbooked_share_min': least,
            'worst_satisfied': worst}


def _overbooked_run(seed, index, least):
    """A run document of one overbooked plan whose least share is
    ``least`` (the bar met at 95 %)."""
    return _fixed(_doc(seed, {index: {
        'none': (_summary(90), {}),
        'guarantee': (_summary(89, least=least),
                      {'overbooked_share': least >= 0.95,
                       'floorless_cut': True})}}))


class TestParseTrace(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.intervals = report.parse_trace(io.StringIO(TRACE))

    def test_one_interval_per_line_with_its_guests(self):
        self.assertEqual([(7, 'guarantee', 12.0, True),
                          (7, 'guarantee', 14.0, True),
                          (7, 'guarantee', 18.0, True),
                          (7, 'guarantee', 20.0, False),
                          (7, 'none', 18.0, True)],
                         [(i.plan, i.policy, i.end_s, i.overbooked)
                          for i in self.intervals])
        g3 = self.intervals[0].guests['g3']
        self.assertIsNone(g3.need_kb_s)
        self.assertIsNone(g3.cap_iops)
        self.assertEqual((128.0, 143.0, 190.0),
                         (self.intervals[0].guests['g4'].kb_s,
                          self.intervals[0].guests['g4'].need_kb_s,
                          self.intervals[0].guests['g4'].latency_ms))

    def test_cap_bytes_come_from_the_decision_that_set_it(self):
        # Set at 12 s (10 IOPS, 640 KB/s), in force at 14 and 18 s,
        # although the held decision at 14 s names no bytes.
        self.assertEqual(640.0, self.intervals[1].guests['g5'].cap_kb_s)
        self.assertEqual(640.0, self.intervals[2].guests['g5'].cap_kb_s)
        # A cap of other IOPS than the last decision's: bytes unknown.
        self.assertEqual(11.0, self.intervals[3].guests['g5'].cap_iops)
        self.assertIsNone(self.intervals[3].guests['g5'].cap_kb_s)
        # A cap no decision line set (an older trace): bytes unknown.
        self.assertIsNone(self.intervals[2].guests['g4'].cap_kb_s)

    def test_share_scale_from_the_domain_line(self):
        self.assertEqual([0.97, None, 0.95, None, None],
                         [i.share_scale for i in self.intervals])


class TestDecompose(testtools.TestCase):

    def test_scored_overbooked_intervals_of_the_policy_only(self):
        doc = _doc(19, {7: {}})
        by_block, under = report.decompose(
            report.parse_trace(io.StringIO(TRACE)), doc)
        # Only 18 s counts: 12 and 14 s settle after events, 20 s is
        # not overbooked, 'none' is another policy.
        self.assertEqual({8, 64}, set(by_block))
        n, cap_share, got_cap = by_block[64]
        self.assertEqual(1, n)
        self.assertAlmostEqual(1.0, cap_share)        # 640 / 640
        self.assertAlmostEqual(608 / 640, got_cap)
        # g4's cap: 18 IOPS x 8 KB = 144 KB/s of a share of 143.
        self.assertAlmostEqual(144 / 143, by_block[8][1])
        self.assertEqual(['g4'], [u.guest for u in under])
        u = under[0]
        self.assertEqual(18.0, u.end_s)
        self.assertAlmostEqual(120 / 143, u.got_share)
        self.assertAlmostEqual(15 * 0.2, u.inflight)  # 15 req/s x 200 ms
        self.assertAlmostEqual(3.0 / (143 / 8) * 1e3, u.target_ms)
        self.assertAlmostEqual(144 / 143, u.cap_share)
        self.assertFalse(u.held)                      # 120 < 0.9 x 144

    def test_the_fixture_reads_the_settle_as_the_bench(self):
        plan = scenarios.draw_plan(19, 7)
        self.assertFalse(scenarios.counted(plan, report.TracedInterval(
            7, 'guarantee', 14.0, True, {}, None)))
        self.assertTrue(scenarios.counted(plan, report.TracedInterval(
            7, 'guarantee', 18.0, True, {}, None)))

    def test_table_names_latency_bound_guests(self):
        text = report.decompose_table(*report.decompose(
            report.parse_trace(io.StringIO(TRACE)), _doc(19, {7: {}})))
        self.assertIn('not holding', text)
        self.assertIn('168ms', text)                  # q / share
        self.assertIn('1 under 95 %: 0 held by their caps (median cap '
                      '0.0 % of share), 1 capped and not held, 0 uncapped',
                      text)
        self.assertNotIn('(none)', text)


# Seed 11's plan 0, which fits: g1 (16 KB) the burster, g2 (16 KB) and
# g6 (4 KB) paced; events at 0 and 14 s, so 4 s settles and 6 s is
# scored.
FITS_TRACE = """\
plan 0 guarantee t=  4.0 g1=300/265[cap 17]@140ms g2=100/174@90ms \
g6=38/39@80ms
plan 0 guarantee t=  6.0 g1=300/265[cap 17]@140ms g2=150/174@96ms \
g6=38/39@80ms
plan 0 none      t=  4.0 g1=600/265@80ms g2=170/174@80ms g6=40/39@80ms
plan 0 none      t=  6.0 g1=600/265@80ms g2=120/174@80ms g6=40/39@80ms
"""


class _FitsCase(testtools.TestCase):
    """A trace of seed 11's plan 0 (``trace``), judged as fitting."""

    trace = FITS_TRACE

    def setUp(self):
        super().setUp()
        self.intervals = report.parse_trace(io.StringIO(self.trace))
        self.doc = _doc(11, {0: {'guarantee': (None, {'satisfied': True})}},
                        overbooked=False)


class TestPlansThatFit(_FitsCase):

    def test_missed_needs_of_scored_intervals_of_the_policy_only(self):
        missed = report.missed_needs(self.intervals, self.doc)
        # g2 at 4 s settles after the start; at 6 s it did 18.75 of the
        # 20 whole requests 95 % of 174 KB/s asks of 2 s; g6 did 19 of
        # 18; 'none' is another policy.
        self.assertEqual([('g2', 6.0)], [(m.guest, m.end_s)
                                         for m in missed])
        m = missed[0]
        self.assertAlmostEqual(150 / 174, m.got_share)
        self.assertAlmostEqual(150 / 16 * 0.096, m.inflight)
        self.assertAlmostEqual(m.inflight / (174 / 16) * 1e3, m.target_ms)
        self.assertIsNone(m.cap_share)
        text = report.missed_table(missed)
        self.assertIn('q/need', text)
        self.assertIn('1 uncapped (1 over q/need)', text)

    def test_a_plan_judged_overbooked_has_no_missed_needs(self):
        # Drawn to fit, judged overbooked by the run's calibration: its
        # targets are the overbooked ones, and so are its intervals.
        judged = _doc(11, {0: {'guarantee': (None, {
            'overbooked_share': True})}}, overbooked=False)
        self.assertEqual([], report.missed_needs(self.intervals, judged))
        self.assertEqual({}, report.interval_totals(self.intervals, judged))

    def test_totals_per_interval_against_none(self):
        totals = report.interval_totals(self.intervals, self.doc)
        # Every interval counts toward the totals bar, settling or not.
        self.assertEqual([4.0, 6.0], [row[0] for row in totals[0]])
        end_s, iops, none_iops, capped = totals[0][0]
        self.assertAlmostEqual(300 / 16 + 100 / 16 + 38 / 4, iops)
        self.assertAlmostEqual(600 / 16 + 170 / 16 + 40 / 4, none_iops)
        self.assertEqual(1, capped)
        text = report.totals_table(totals)
        self.assertIn('4:0.59/1', text)
        self.assertNotIn('(none)', text)

    def test_a_plan_at_the_totals_bar_is_not_listed(self):
        self.assertIn('(none)', report.totals_table(
            {0: [(2.0, 97.0, 100.0, 0)]}))


# FITS_TRACE's plan with a decision after each interval: a cut, a calm
# hold, a release, a lift; each governs the interval after it.
LOSS_TRACE = """\
plan 0 guarantee t=  2.0 g1=600/265@80ms g2=170/174@80ms g6=40/39@80ms
    g1 cap: latency 80.0 ms >= 30.0 ms (congestion threshold; no \
baseline yet); excess cut -> 17.0 IOPS, 1048576 B/s
    domain: capacity 97.3 IOPS, baseline 0.0 ms, lowest 80.0 ms, \
share scale 1.000
plan 0 guarantee t=  4.0 g1=272/265[cap 17]@140ms g2=160/174@96ms \
g6=40/39@80ms
    g1 cap: held: calm for 1 of 3 intervals before a release
plan 0 guarantee t=  6.0 g1=272/265[cap 17]@140ms g2=174/174@96ms \
g6=40/39@80ms
    g1 cap: no guarantee at risk; cap released by 50.0 % (domain below \
its border) -> 25.5 IOPS, 1048576 B/s
plan 0 guarantee t=  8.0 g1=400/265[cap 26]@100ms g2=174/174@80ms \
g6=40/39@80ms
    g1 release: no longer pushing against its cap (0.00 in flight < 0.50)
plan 0 guarantee t= 10.0 g1=0/265@0ms g2=174/174@80ms g6=40/39@80ms
plan 0 none      t=  2.0 g1=600/265@80ms g2=170/174@80ms g6=40/39@80ms
plan 0 none      t=  4.0 g1=600/265@80ms g2=170/174@80ms g6=40/39@80ms
plan 0 none      t=  6.0 g1=600/265@80ms g2=170/174@80ms g6=40/39@80ms
plan 0 none      t=  8.0 g1=600/265@80ms g2=170/174@80ms g6=40/39@80ms
plan 0 none      t= 10.0 g1=0/265@0ms g2=174/174@80ms g6=40/39@80ms
"""


class TestLosses(_FitsCase):

    trace = LOSS_TRACE

    def test_each_decision_line_has_a_kind(self):
        kinds = [report.decision_kind('    g1 ' + text) for text in (
            'cap: kept while tightening: domain load 0.95 >= border 0.90',
            'cap: held: g7, g8 within 20 % of guarantee; overbooked: x',
            'cap: held: g5\'s surplus above the guard band allows 0.033',
            'cap: static share 0.25 of told capacity -> 9.0 IOPS, 1 B/s',
            'release: cap grew past the domain border; lifted',
            'cap: early: g2 stopped (0.50 s without a completion), 15.7 % of '
            'the domain to the caps '
            'at theirs (x 2.157) -> 43.7 IOPS, 11452570 B/s')]
        self.assertEqual(['tighten', 'floor hold', 'other hold', 'other',
                          'lift', 'early'], kinds)
        self.assertIsNone(report.decision_kind(
            '    domain: capacity 97.3 IOPS'))
        self.assertIsNone(report.decision_kind(
            '    demand-bound: g2 at 12.0 IOPS'))

    def test_a_tightening_names_an_interval_of_several_kinds(self):
        self.assertEqual('tighten', report.interval_kind(
            {'release', 'tighten', 'calm hold'}))
        self.assertEqual('release', report.interval_kind({'release',
                                                          'lift'}))
        self.assertEqual('no cap', report.interval_kind(()))
        # A check's growth names no interval its decision also names.
        self.assertEqual('calm hold', report.interval_kind(
            {'early', 'calm hold'}))
        self.assertEqual('early', report.interval_kind({'early'}))

    def test_each_interval_lost_under_the_decision_before_it(self):
        losses = report.losses(self.intervals, self.doc)
        # Against none's 600/16 + 170/16 + 40/4 = 58.125 requests/s: 2 s
        # ran before any decision (as none), 4 s under the cut (17 + 10
        # + 10), 6 s under the calm hold (17 + 10.875 + 10), 8 s under
        # the release (25 + 10.875 + 10), and 10 s after the lift (as
        # none).
        self.assertEqual({'no cap', 'tighten', 'calm hold', 'release',
                          'lift'}, set(losses))
        lost = {kind: x.lost for kind, x in losses.items()}
        self.assertAlmostEqual(0.0, lost['no cap'])
        self.assertAlmostEqual((58.125 - 37) * 2, lost['tighten'])
        self.assertAlmostEqual((58.125 - 37.875) * 2, lost['calm hold'])
        self.assertAlmostEqual((58.125 - 45.875) * 2, lost['release'])
        self.assertAlmostEqual(0.0, lost['lift'])
        self.assertEqual(1, losses['release'].intervals)
        self.assertAlmostEqual(58.125 * 2, losses['release'].none)
        text = report.losses_table(losses, 'title')
        self.assertIn('tighten             1        42', text)
        self.assertIn('0.789', text)          # 45.875 / 58.125, released
        self.assertIn('all                 5', text)

    def test_plans_at_the_totals_bar_left_out_on_request(self):
        # The plan runs 0.79 of none's requests: under 0.97, kept; over
        # 0.75, left out.
        self.assertEqual(5, sum(x.intervals for x in report.losses(
            self.intervals, self.doc, target=0.97).values()))
        self.assertEqual({}, report.losses(self.intervals, self.doc,
                                           target=0.75))
        self.assertIn('(none)', report.losses_table({}, 'title'))

    def test_runs_add_up(self):
        summed = {}
        one = report.losses_by_bar(self.intervals, self.doc)
        report.add_losses(summed, one)
        report.add_losses(summed, one)
        self.assertEqual(2, summed[True]['tighten'].intervals)
        self.assertAlmostEqual(2 * one[False]['release'].lost,
                               summed[False]['release'].lost)
        self.assertEqual(1, one[True]['tighten'].intervals)


# Seed 11's plan 1: g2 stops at 10 s, so the interval ending at 12 s
# is the one it stopped in; plan 0 has no stop and is left out.
STOP_TRACE = """\
plan 0 guarantee t=  2.0 g1=600/265@80ms g2=170/174@80ms g6=40/39@80ms
plan 0 none      t=  2.0 g1=900/265@80ms g2=170/174@80ms g6=40/39@80ms
plan 1 guarantee t= 10.0 g1=640/-[cap 10]@80ms g2=320/300@80ms g3=0/-@0ms
plan 1 none      t= 10.0 g1=640/-@80ms g2=320/300@80ms g3=0/-@0ms
plan 1 guarantee t= 12.0 g1=640/-[cap 10]@80ms g2=0/-@0ms g3=0/-@0ms
plan 1 none      t= 12.0 g1=1280/-@80ms g2=0/-@0ms g3=0/-@0ms
"""


class TestStopTotals(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.intervals = report.parse_trace(io.StringIO(STOP_TRACE))
        fits = {'guarantee': (None, {'satisfied': True})}
        self.doc = _doc(11, {0: fits, 1: fits}, overbooked=False)

    def test_the_interval_a_guest_stopped_in_against_the_whole(self):
        plan = report.plan_of(self.doc, 1)
        g1, g2 = (plan.guest(n).block_kb for n in ('g1', 'g2'))
        t = report.stop_totals(self.intervals, self.doc)
        self.assertEqual((1, 1), (t.plans, t.stop_intervals))
        self.assertAlmostEqual(640 / g1, t.at_stops)
        self.assertAlmostEqual(1280 / g1, t.none_at_stops)
        self.assertAlmostEqual(2 * 640 / g1 + 320 / g2, t.whole)
        self.assertAlmostEqual(640 / g1 + 320 / g2 + 1280 / g1,
                               t.none_whole)
        both = report.StopTotals()
        both.add(t)
        both.add(t)
        text = report.stop_totals_table({'head': both})
        self.assertIn('head                 2               2    0.500',
                      text)


class TestPacedRates(_FitsCase):
    """LOSS_TRACE's plan (seed 11 plan 0): g2 (16 KB) paced at 188.78
    KB/s and g6 (4 KB) at 45.4 KB/s, one process each; g1 the burster."""

    trace = LOSS_TRACE

    def test_uncapped_paced_guests_of_scored_intervals_only(self):
        rates = report.paced_rates(self.intervals, self.doc)
        # 2 and 4 s settle after the start; g1 is capped at 6 and 8 s and
        # unpaced at 10 s; 'none' is another policy.
        self.assertEqual(6, len(rates))
        self.assertEqual(['calm hold', 'calm hold', 'release', 'release',
                          'lift', 'lift'], [r.in_force for r in rates])
        g2_at_6 = rates[0]
        self.assertAlmostEqual(0.096 * 188.78 / 16, g2_at_6.rho, places=3)
        self.assertAlmostEqual(174 / 188.78, g2_at_6.got_share, places=3)

    def test_another_policy_reads_its_own_intervals(self):
        rates = report.paced_rates(self.intervals, self.doc, policy='none')
        # none ran nothing capped: g2 and g6 at 6, 8 and 10 s, no
        # decision in force.
        self.assertEqual(6, len(rates))
        self.assertEqual({'no cap'}, {r.in_force for r in rates})

    def test_table_by_rho_and_decisions_in_force(self):
        text = report.paced_table(report.paced_rates(self.intervals,
                                                     self.doc))
        rows = {line.split()[0]: line for line in text.splitlines()[2:]}
        # At 8 and 10 s (a release, then a lift, in force) g2 ran at rho
        # 0.944 and g6 at 0.908, at 0.922 and 0.881 of their demands;
        # at 6 s (a calm hold) g6 at 0.908 and g2 at 1.133.
        self.assertRegex(rows['0.9-1.0'],
                         r'^0.9-1.0 +5 0.897 +0% +4 0.901 +0% +- +1 0.881')
        self.assertRegex(rows['1.0-1.2'], r' 1 0.922 +0% +- +- +1 0.922')
        self.assertTrue(rows['1.2-'].rstrip().endswith('-'))
        self.assertEqual(len(report.PACED_BINS), len(rows))


# TRACE as another run of the same plan: g4 short at 18 s too, further.
OTHER_TRACE = TRACE.replace('g4=120/143[cap 18]@200ms',
                            'g4=100/143[cap 18]@200ms').replace(
    'g4=60/143@100ms', 'g4=143/143@100ms')


class TestActed(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.intervals = report.parse_trace(io.StringIO(TRACE))

    def test_lines_under_the_policy_s_intervals_match(self):
        intervals = self.intervals
        self.assertEqual({(7, 14.0)}, report.acted_at(
            intervals, re.compile('held: g4')))
        # The domain lines match as the decisions do.
        self.assertEqual({(7, 12.0), (7, 18.0)}, report.acted_at(
            intervals, re.compile(r'share scale 0\.9')))
        # An interval's own line is no act, nor another policy's.
        self.assertEqual(set(), report.acted_at(
            intervals, re.compile('g4=60/143@400ms')))
        self.assertEqual(set(), report.acted_at(
            intervals, re.compile('held'), policy='none'))

    def test_the_least_a_guest_with_a_need_got(self):
        at_18 = self.intervals[2]
        # g3 has no floor; g4 120 of 143, g5 608 of 640.
        self.assertAlmostEqual(120 / 143, report.least_got(at_18))
        self.assertIsNone(report.least_got(report.TracedInterval(
            7, 'guarantee', 2.0, False, {}, None)))

    def test_the_scored_intervals_within_the_span_after(self):
        doc = _doc(19, {7: {}})
        # At 14 s: 16 s is not traced, 18 s is scored and overbooked.
        self.assertEqual({(7, 18.0): True}, report.after_acts(
            self.intervals, doc, {(7, 14.0)}))
        # At 12 s: 14 s settles after an event, 16 s is not traced.
        self.assertEqual({}, report.after_acts(
            self.intervals, doc, {(7, 12.0)}))
        # At 18 s: 20 s, scored, fits.
        self.assertEqual({(7, 20.0): False}, report.after_acts(
            self.intervals, doc, {(7, 18.0)}))
        # Another plan's act is not this plan's.
        self.assertEqual({}, report.after_acts(
            self.intervals, doc, {(6, 18.0)}))

    def test_against_the_same_intervals_of_the_other_run(self):
        doc = _doc(19, {7: {}})
        other = report.parse_trace(io.StringIO(OTHER_TRACE))
        acts = {(7, 14.0), (7, 18.0)}
        rows = report.acted([('n', doc, self.intervals, acts),
                             ('b', doc, other, set())])
        by = {(r.label, r.other, r.overbooked): r for r in rows}
        # b acted nowhere: no rows of its own.
        self.assertEqual({('n', None, True), ('n', 'b', True),
                          ('n', None, False), ('n', 'b', False)}, set(by))
        r = by[('n', 'b', True)]
        self.assertEqual((120 / 143,), r.mine)
        self.assertEqual((100 / 143,), r.theirs)
        self.assertEqual((60 / 143,), by[('n', 'b', False)].mine)
        # At 20 s b's g4 met its need; g5's 608 of 640 is its least.
        self.assertEqual((608 / 640,), by[('n', 'b', False)].theirs)
        text = report.acted_table(rows, 'x')
        self.assertIn("matching 'x'", text)
        self.assertRegex(text, r'n +overbooked +b +1 +0\.839 +1 +0\.699 '
                               r'+1 +1')

    def test_runs_of_another_seed_are_not_compared(self):
        rows = report.acted([('n', _doc(19, {7: {}}), self.intervals,
                              {(7, 14.0)}),
                             ('b', _doc(23, {7: {}}), self.intervals,
                              set())])
        self.assertEqual([('n', None)], [(r.label, r.other) for r in rows])

    def test_runs_under_one_label_add_up(self):
        doc = _doc(19, {7: {}})
        rows = report.acted([('n', doc, self.intervals, {(7, 14.0)}),
                             ('n', doc, self.intervals, {(7, 14.0)})])
        self.assertEqual([(120 / 143, 120 / 143)], [r.mine for r in rows])


class TestCompleted(testtools.TestCase):

    def test_requests_per_policy_over_scored_overbooked_intervals(self):
        done = report.completed(report.parse_trace(io.StringIO(TRACE)),
                                _doc(19, {7: {}}))
        # 18 s only: g3 80/16 + g4 120/8 + g5 608/64 under guarantee,
        # 80/16 + 60/8 + 900/64 under none.
        self.assertEqual({(7, 'guarantee'), (7, 'none')}, set(done))
        self.assertAlmostEqual(5 + 15 + 9.5, done[(7, 'guarantee')])
        self.assertAlmostEqual(5 + 7.5 + 900 / 64, done[(7, 'none')])
        # A run from before the plans had calibrations of their own.
        text = report.completed_table(
            done, dict(_doc(19, {7: {}}), capacity_iops=59.0))
        self.assertIn('guarantee      29.5   50.0 % of 59.0', text)
        # Since, each plan is set against its own.
        doc = dict(_doc(19, {7: {}}), capacity_iops=59.0)
        doc['plans'][0]['capacity_iops'] = 29.5
        text = report.completed_table(done, doc)
        self.assertIn('guarantee      29.5  100.0 % of 29.5', text)


# Seed 19's plan 7 at 18 s against 95 requests/s: shares of 2617.8,
# 1360.2 and 143.5 KB/s for g1, g2 and g4, the minimum cap's 640 for g5,
# g6 and g7 (g3 is floorless).  g4 gets 90 % of its share.
SHARED_TRACE = """\
plan 7 guarantee t= 18.0 overbooked g1=2618/2618@150ms g2=1360/1360@150ms \
g3=80/-@150ms g4=129/144@150ms g5=640/640@150ms g6=640/640@150ms \
g7=640/640@150ms
plan 7 none      t= 18.0 overbooked g1=4000/2618@300ms g2=1500/1360@300ms \
g3=80/-@300ms g4=60/144@300ms g5=500/640@300ms g6=500/640@300ms \
g7=500/640@300ms
"""


class TestCapacityShares(testtools.TestCase):

    def test_the_same_intervals_scored_against_each_capacity(self):
        doc = dict(_doc(19, {7: {}}), capacity_iops=95.0)
        rows = report.capacity_shares(
            report.parse_trace(io.StringIO(SHARED_TRACE)), doc)
        self.assertEqual([7], [r.plan for r in rows])
        r = rows[0]
        own = 2618 / 128 + 1360 / 64 + 80 / 16 + 129 / 8 + 3 * 640 / 64
        none = 4000 / 128 + 1500 / 64 + 80 / 16 + 60 / 8 + 3 * 500 / 64
        self.assertEqual(95.0, r.capacity_iops['calibrated'])
        self.assertAlmostEqual(own, r.capacity_iops['own'])
        self.assertAlmostEqual(none, r.capacity_iops['none'])
        # Against the calibration, the bench's own scoring: g4's 129 of
        # 143.5 KB/s.
        self.assertAlmostEqual(129 / 143.5235, r.least_share['calibrated'],
                               places=4)
        # Less capacity shares less to each: g4 is the least still, and
        # nearer its share the less the store completed.
        self.assertGreater(r.least_share['own'],
                           r.least_share['calibrated'])
        self.assertGreater(r.least_share['none'], r.least_share['own'])
        self.assertIsNone(r.capacity_iops['plan'])   # run of before
        self.assertIsNone(r.least_share['plan'])
        text = report.capacity_shares_table(rows)
        self.assertRegex(text, r'\n   7 +89\.9 % \( 95\.0\) +- ')
        self.assertIn('calibrated 0/1 (mean 89.9 %), plan -, none', text)

    def test_a_plan_calibrated_on_its_own_is_scored_by_it(self):
        doc = dict(_doc(19, {7: {}}), capacity_iops=95.0)
        doc['plans'][0]['capacity_iops'] = 93.0
        r, = report.capacity_shares(
            report.parse_trace(io.StringIO(SHARED_TRACE)), doc)
        self.assertEqual(93.0, r.capacity_iops['plan'])
        # Two requests/s less to share: g4's share shrinks, its least
        # share grows.
        self.assertGreater(r.least_share['plan'],
                           r.least_share['calibrated'])
        self.assertIn('plan 0/1', report.capacity_shares_table([r]))


class TestCompare(testtools.TestCase):

    def test_labels_make_columns_and_count_targets(self):
        a0 = _overbooked_run(0, 3, 0.93)
        a7 = _overbooked_run(7, 1, 0.97)
        b0 = _overbooked_run(0, 3, 0.96)
        rows, summary = report.compare([('a', a0), ('a', a7), ('b', b0)])
        self.assertEqual([(0, 3), (7, 1)], [r[:2] for r in rows])
        self.assertIsNone(rows[1][3][1])              # b never ran seed 7
        a, b = dict(summary)['a'], dict(summary)['b']
        self.assertEqual((1, 2), a['overbooked'])
        self.assertAlmostEqual(0.95, a['mean least share'])
        self.assertEqual((1, 1), b['overbooked'])
        text = report.compare_table(rows, summary)
        self.assertIn('93.0%!', text)                 # missed
        self.assertIn('96.0% ', text)
        self.assertIn('a: overbooked 1/2, floorless 2/2, mean least '
                      'share 95.0 %', text)

    def test_plans_that_fit_show_floors_and_totals(self):
        doc = _fixed(_doc(11, {0: {
            'none': (_summary(100), {}),
            'guarantee': (_summary(95, worst=1.0),
                          {'satisfied': True, 'reaction': True,
                           'total': False})}}, overbooked=False))
        rows, summary = report.compare([('x', doc)])
        self.assertIn('100.0% x0.95!', report.compare_table(rows, summary))
        self.assertEqual({'floors': (1, 1), 'reaction': (1, 1),
                          'totals': (0, 1), 'mean least share': None},
                         dict(dict(summary)['x']))


# Seed 19's plan 7 again (g3 16 KB, g4 8 KB, g5 64 KB), 50 requests/s
# each at 150 ms; then g3 capped, the others' latency at 0.4 of it with
# fewer requests (a queue that drained), then a rise, then a fall under
# FALL_FRACTION.
FALLS_TRACE = """\
plan 7 guarantee t= 12.0 g3=800/-@150ms g4=400/143@150ms g5=3200/640@150ms
    domain: capacity 100.0 IOPS (proven 90.0), baseline 12.0 ms, \
lowest 12.0 ms, share scale 1.000
plan 7 guarantee t= 14.0 g3=800/-[cap 40]@300ms g4=400/143@60ms \
g5=2560/640@60ms
    domain: capacity 90.0 IOPS (proven 90.0), baseline 12.0 ms, \
lowest 12.0 ms, share scale 1.000
plan 7 guarantee t= 16.0 g3=800/-[cap 40]@300ms g4=400/143@90ms \
g5=2560/640@90ms
    domain: capacity 80.0 IOPS (proven 90.0), baseline 12.0 ms, \
lowest 12.0 ms, share scale 1.000
plan 7 guarantee t= 18.0 g3=800/-[cap 40]@300ms g4=400/143@90ms \
g5=2560/640@90ms
    domain: capacity 79.5 IOPS (proven 90.0), baseline 12.0 ms, \
lowest 12.0 ms, share scale 1.000
plan 7 none      t= 18.0 g3=800/-@300ms g4=400/143@90ms g5=2560/640@90ms
"""


ONSETS_TRACE = """\
plan 3 guarantee t= 10.0 g1=2000/-[cap 20]@200ms g2=800/640@20ms
    g1 cap: no guarantee at risk; cap released by 50.0 % (domain below \
its border) -> 30.0 IOPS, 3932160 B/s
    domain: capacity 150.0 IOPS (proven 80.0), baseline 12.0 ms, \
lowest 12.0 ms, read 20.0 ms at 70.0 IOPS, share scale 1.000
plan 3 guarantee t= 12.0 g1=3000/-[cap 30]@300ms g2=600/640@110ms
    g1 cap: latency 110.0 ms >= 36.0 ms (3.0 x baseline 12.0 ms); cut \
-> 20.0 IOPS, 2621440 B/s
    domain: capacity 100.0 IOPS (proven 90.0), baseline 12.0 ms, \
lowest 12.0 ms, read 110.0 ms at 90.0 IOPS, share scale 1.000
plan 3 guarantee t= 14.0 g1=2000/-[cap 20]@200ms g2=800/640@20ms
    g1 cap: no guarantee at risk; cap released by 50.0 % (domain below \
its border) -> 30.0 IOPS, 3932160 B/s
    domain: capacity 100.0 IOPS (proven 90.0), baseline 12.0 ms, \
lowest 12.0 ms, read 20.0 ms at 80.0 IOPS, share scale 1.000
plan 3 guarantee t= 16.0 g1=2000/-[cap 30]@300ms g2=600/640@40ms
    domain: capacity 100.0 IOPS (proven 90.0), baseline 12.0 ms, \
lowest 12.0 ms, read 40.0 ms at 75.0 IOPS, share scale 1.000
"""


class TestReleaseOnsets(testtools.TestCase):

    def test_a_queue_after_a_release_with_more_completed(self):
        onsets = report.release_onsets(
            report.parse_trace(io.StringIO(ONSETS_TRACE)))
        # 12 s: congested (110 ms >= 3 x 12) after a release at 20 ms,
        # 90 done against 70.  16 s: congested after a release, but
        # less done (75 against 80): not a release's queue.
        self.assertEqual([(3, 12.0, 150.0, 100.0, 20.0, 110.0, 70.0,
                           90.0)], [dataclasses.astuple(o) for o in onsets])
        text = report.onsets_table(onsets)
        self.assertIn('queues a release began: 1, the learned capacity '
                      'fell after 1', text)
        self.assertRegex(text, r'12\.0 +150\.0-> 100\.0 +20\.0-> 110\.0 '
                               r'+70\.0-> 90\.0$')

    def test_no_release_no_onset_and_the_fixed_threshold_without_baseline(
            self):
        no_release = ONSETS_TRACE.replace('cap released by', 'held by')
        self.assertEqual([], report.release_onsets(
            report.parse_trace(io.StringIO(no_release))))
        # No baseline: the fixed 30 ms threshold; 16 s reads 40 ms.
        unbased = ONSETS_TRACE.replace('baseline 12.0 ms', 'baseline 0.0 ms')
        unbased = unbased.replace('at 75.0 IOPS', 'at 85.0 IOPS')
        self.assertEqual([12.0, 16.0], [o.end_s for o in report.release_onsets(
            report.parse_trace(io.StringIO(unbased)))])


class TestCapacityFalls(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.falls = report.capacity_falls(
            report.parse_trace(io.StringIO(FALLS_TRACE)),
            _doc(19, {7: {}}, overbooked=False))

    def test_each_fall_with_the_readings_before_and_after(self):
        self.assertEqual([(14.0, 100.0, 90.0), (16.0, 90.0, 80.0)],
                         [(f.end_s, f.from_iops, f.to_iops)
                          for f in self.falls])
        first = self.falls[0]
        self.assertAlmostEqual(150.0, first.latency_before_ms)
        self.assertAlmostEqual(60.0, first.latency_ms)   # g3 capped
        self.assertAlmostEqual(150.0, first.done_before)
        self.assertAlmostEqual(140.0, first.done)

    def test_a_fall_reads_drained_only_with_the_latency_and_rate_down(self):
        self.assertEqual([True, False], [f.drained for f in self.falls])
        same_rate = dataclasses.replace(self.falls[0], done=150.0)
        self.assertFalse(same_rate.drained)
        no_latency = dataclasses.replace(self.falls[0],
                                         latency_before_ms=None)
        self.assertFalse(no_latency.drained)

    def test_table_counts_and_marks_them(self):
        text = report.falls_table(self.falls)
        self.assertIn('learned capacity falls: 2, 1 on a reading that '
                      'drained', text)
        self.assertRegex(text, r'14\.0 +100\.0-> +90\.0 +x0\.40 '
                               r'150\.0->140\.0\*  drained')
        self.assertRegex(text, r'16\.0 .* x1\.50 +140\.0->140\.0\*$')

    def test_the_controllers_own_readings_where_the_trace_has_them(self):
        # The domain line's reading (its mean latency, what it completed
        # in its cost model's load) stands for the guests' figures: here
        # the latency fell by less than a fifth, so no drain.
        trace = FALLS_TRACE.replace(
            'lowest 12.0 ms, share scale',
            'lowest 12.0 ms, read 100.0 ms at 95.0 IOPS, share scale', 1)
        trace = trace.replace(
            'lowest 12.0 ms, share scale',
            'lowest 12.0 ms, read 85.0 ms at 90.0 IOPS, share scale', 1)
        first = report.capacity_falls(
            report.parse_trace(io.StringIO(trace)),
            _doc(19, {7: {}}, overbooked=False))[0]
        self.assertEqual((100.0, 85.0, 95.0, 90.0, True),
                         (first.latency_before_ms, first.latency_ms,
                          first.done_before, first.done, first.exact))
        self.assertFalse(first.drained)
        self.assertRegex(report.falls_table([first]),
                         r'x0\.85 +95\.0-> 90\.0$')


# Seed 19's plan 7 again: g3 (16 KB) capped at 40 at 12 s, the cap
# kept at 14 s, cut to 36 at 16 s, raised to 40 at 18 s; g3 waits in
# its throttle queue (300 ms, the store's 90 ms) until 22 s.
CAPS_TRACE = """\
plan 7 guarantee t= 12.0 g3=800/-[cap 40]@150ms g4=400/143@150ms \
g5=3200/640@150ms
    g3 cap: domain load 0.95 >= border 0.90 -> 40.0 IOPS, 655360 B/s
plan 7 guarantee t= 14.0 g3=640/-[cap 40]@300ms g4=400/143@90ms \
g5=2560/640@90ms
    g3 cap: held: g4 within 20 % of guarantee
plan 7 guarantee t= 16.0 g3=640/-[cap 36]@300ms g4=400/143@90ms \
g5=2560/640@90ms
    g3 cap: domain load 0.95 >= border 0.90 -> 36.0 IOPS, 589824 B/s
plan 7 guarantee t= 18.0 g3=624/-[cap 40]@300ms g4=400/143@90ms \
g5=2560/640@90ms
    g3 cap: no guarantee at risk; cap released -> 40.0 IOPS, 655360 B/s
plan 7 guarantee t= 20.0 g3=672/-[cap 40]@300ms g4=400/143@90ms \
g5=2560/640@90ms
plan 7 guarantee t= 22.0 g3=672/-[cap 40]@150ms g4=400/143@90ms \
g5=2560/640@90ms
"""


class TestCapPasses(testtools.TestCase):

    def _passes(self, trace=CAPS_TRACE):
        return report.cap_passes(report.parse_trace(io.StringIO(trace)),
                                 _doc(19, {7: {}}, overbooked=False))

    def test_each_interval_against_a_cap_by_the_decision_before(self):
        # 14 s ran under a cap first set at 12 s (nothing to compare),
        # 22 s waited in no throttle queue (150 ms, under 2 x 90).
        passes = self._passes()
        self.assertEqual([(16.0, 'kept'), (18.0, 'cut'), (20.0, 'raised')],
                         [(p.end_s, p.change) for p in passes])
        self.assertEqual([1.0, 624 / 576.0, 672 / 640.0],
                         [p.ratio for p in passes])

    def test_a_cap_changed_without_naming_it_is_left_out(self):
        # A renew raised to the defended level names no cap: the line
        # shows 41 after the hold at 14 s, so neither 16 s nor the cut
        # after it has an exact cap to compare with.
        trace = CAPS_TRACE.replace('t= 14.0 g3=640/-[cap 40]',
                                   't= 14.0 g3=640/-[cap 41]')
        self.assertNotEqual(CAPS_TRACE, trace)
        self.assertEqual([20.0], [p.end_s for p in self._passes(trace)])

    def test_a_cap_named_with_the_same_limits_is_told_apart(self):
        # 36.2 IOPS is libvirt's 36 as 36.0 was: the agent leaves the
        # limits alone, and the interval after reads as one under a
        # hold would, not as one after a raise.
        trace = CAPS_TRACE.replace(
            'cap released -> 40.0 IOPS, 655360 B/s',
            'cap released -> 36.2 IOPS, 589824 B/s').replace(
            't= 20.0 g3=672/-[cap 40]', 't= 20.0 g3=580/-[cap 36]')
        self.assertNotEqual(CAPS_TRACE, trace)
        passes = self._passes(trace)
        self.assertEqual([(16.0, 'kept'), (18.0, 'cut'),
                          (20.0, 'same limits')],
                         [(p.end_s, p.change) for p in passes])

    def test_table_by_decision(self):
        text = report.cap_passes_table(self._passes())
        self.assertRegex(text, r'kept +1 +1\.000 +1\.000')
        self.assertRegex(text, r'raised +1 +1\.050')
        self.assertRegex(text, r'cut +1 +1\.083')


class TestQueueReadings(testtools.TestCase):
    """The controller's readings of the store by the load of its
    border: FALLS_TRACE's domain lines, read as the controller's."""

    TRACE = FALLS_TRACE.replace(
        'lowest 12.0 ms, share scale',
        'lowest 12.0 ms, read 100.0 ms at 85.5 IOPS, share scale', 1
    ).replace(
        'lowest 12.0 ms, share scale',
        'lowest 12.0 ms, read 20.0 ms at 40.5 IOPS, share scale', 1)

    def _readings(self, doc=None):
        return report.queue_readings(
            report.parse_trace(io.StringIO(self.TRACE)),
            doc or _doc(19, {7: {}}, overbooked=False))

    def test_each_reading_over_the_learned_border(self):
        # 100 IOPS learned, border 0.9: 90 requests/s, 11.1 ms each;
        # 85.5 of them at 100 ms is a load of 0.95 at 9 service times.
        # 90 IOPS learned: 81 requests/s, 40.5 at 20 ms is 0.5 at 1.62.
        # The two intervals without a reading are left out.
        got = [(round(r.utilisation, 3), round(r.latency_services, 3))
               for r in self._readings()]
        self.assertEqual([(0.95, 9.0), (0.5, 1.62)], got)

    def test_the_border_the_run_was_set_to(self):
        doc = _doc(19, {7: {}}, overbooked=False)
        doc['settings'] = {'controller': {'border_fraction': 0.95}}
        first = self._readings(doc)[0]
        self.assertAlmostEqual(85.5 / 95.0, first.utilisation)
        self.assertAlmostEqual(0.1 * 95.0, first.latency_services)

    def test_table_beside_the_queue_models(self):
        text = report.queue_table(self._readings())
        # M/M/1 at 0.5 is 2 service times, M/D/1 1.5; past 0.95 M/M/1
        # shows 20 and M/D/1 10.5.
        self.assertRegex(text, r'\n0\.50-0\.70 +1 +1\.62 +1\.62 +1\.62 '
                               r'+2\.00 +1\.50')
        self.assertRegex(text, r'\n0\.95-1\.00 +1 +9\.00 .* +20\.00 +10\.50')
        self.assertNotIn('0.00-0.50', text)      # empty bins left out

    def test_at_or_past_the_border_no_model_applies(self):
        text = report.queue_table([report.QueueReading(1.02, 9.0)])
        self.assertRegex(text, r'\n1\.00-1\.05 +1 +9\.00 +9\.00 +9\.00 '
                               r'+- +-$')


class TestBoundReleases(testtools.TestCase):
    """Releases a latency margin bounded, by the load of the border:
    TestQueueReadings' trace with such releases under its second
    reading (0.5 of the border) and one without a reading."""

    NOTE = ("    %s cap: no guarantee at risk; cap released by 5.0 %% "
            "(domain below its border; g4 keeps its need to 71 ms, 21 ms "
            "now, the border's latency 95 ms at most, 11 ms a request "
            "there: %d %% of the room) -> 42.0 IOPS, 2752512 B/s\n")
    TRACE = TestQueueReadings.TRACE.replace(
        'plan 7 guarantee t= 16.0',
        NOTE % ('g3', 67) + NOTE % ('g5', 59) + 'plan 7 guarantee t= 16.0',
        1).replace(
        'plan 7 guarantee t= 18.0',
        NOTE % ('g3', 40) + 'plan 7 guarantee t= 18.0', 1)

    def _releases(self):
        return report.bound_releases(
            report.parse_trace(io.StringIO(self.TRACE)),
            _doc(19, {7: {}}, overbooked=False))

    def test_the_least_part_at_the_load_read(self):
        # The interval ending at 14 s read 40.5 IOPS on a border of 81:
        # 0.5 of it, and its notes took 67 and 59 % of the room.  The
        # interval ending at 16 s took 40 % and read nothing: left out.
        got = [(round(r.utilisation, 3), r.part, round(r.room, 3))
               for r in self._releases()]
        self.assertEqual([(0.5, 0.59, 0.5)], got)

    def test_table_by_load_with_the_step(self):
        text = report.bound_releases_table(
            self._releases() + [report.BoundRelease(0.97, 0.35),
                                report.BoundRelease(1.02, 0.3)])
        self.assertRegex(text, r'\n0\.50-0\.70 +1 +0\.59 +0\.500 +0\.295')
        self.assertRegex(text, r'\n0\.95-1\.00 +1 +0\.35 +0\.030 +0\.011')
        # Past the border there is no room, whatever part was taken.
        self.assertRegex(text, r'\n1\.00-1\.05 +1 +0\.30 +0\.000 +0\.000')
        self.assertNotIn('0.00-0.50', text)


class TestReportCommand(testtools.TestCase):
    """``iothrottle-bench report`` on run files in a temporary
    directory."""

    def _write(self, name, text):
        if not hasattr(self, 'dir'):
            self.dir = self.useFixture(fixtures.TempDir()).path
        path = os.path.join(self.dir, name)
        with open(path, 'w') as f:
            f.write(text)
        return path

    def _fitting_runs(self, seed, index, none_iops, got_iops, trace):
        """Two runs of plan ``index`` of ``seed`` that fits, both traced
        by ``trace``: their JSON paths."""
        doc = _fixed(_doc(seed, {index: {
            'none': (_summary(none_iops), {}),
            'guarantee': (_summary(got_iops), {'satisfied': True})}},
            overbooked=False))
        paths = [self._write('r%d.json' % k, json.dumps(doc))
                 for k in (1, 2)]
        for k in (1, 2):
            self._write('r%d.trace' % k, trace)
        return paths

    def _report(self, argv):
        """``iothrottle-bench report ARGV``'s output (it must exit 0)."""
        out = io.StringIO()
        self.useFixture(fixtures.MonkeyPatch('sys.stdout', out))
        self.assertEqual(0, bench.main(['report'] + argv))
        return out.getvalue()

    def test_labelled_runs_and_their_traces(self):
        doc = _overbooked_run(19, 7, 0.84)
        doc['capacity_iops'] = 95.0
        path = self._write('r1.json', json.dumps(doc))
        self._write('r1.trace', TRACE)
        out = io.StringIO()
        self.useFixture(fixtures.MonkeyPatch('sys.stdout', out))
        self.assertEqual(0, bench.main(['report', 'head=' + path,
                                        '--decompose']))
        text = out.getvalue()
        self.assertIn('head: overbooked 0/1', text)
        self.assertIn('84.0%!', text)
        self.assertIn('== %s' % path, text)
        self.assertIn('not holding', text)
        self.assertIn('requests/s completed', text)

    def test_losses_per_run_and_over_all(self):
        paths = self._fitting_runs(11, 0, 58, 50, LOSS_TRACE)
        text = self._report(['--losses'] + paths)
        self.assertNotIn('cap/share', text)           # no --decompose
        self.assertEqual(3, text.count('plans under the totals bar'))
        all_runs = text[text.index('== all runs'):]
        self.assertIn('tighten             2        84', all_runs)

    def test_acted_reads_the_traces_and_compares_runs(self):
        doc = _overbooked_run(19, 7, 0.84)
        paths = [self._write('r%d.json' % k, json.dumps(doc))
                 for k in (1, 2)]
        self._write('r1.trace', TRACE)
        self._write('r2.trace', OTHER_TRACE)
        out = io.StringIO()
        self.useFixture(fixtures.MonkeyPatch('sys.stdout', out))
        self.assertEqual(0, bench.main(['report', 'n=' + paths[0],
                                        'b=' + paths[1],
                                        '--acted', 'held: g4']))
        text = out.getvalue()
        self.assertNotIn('cap/share', text)           # no --decompose
        self.assertIn("after a line matching 'held: g4'", text)
        self.assertRegex(text, r'n +overbooked +b +1 ')

    def _report_of_one_plan(self, plan, trace, flag):
        """``report RUN --flag``'s output on a run of one plan that fits
        with ``trace`` beside it, and the run's path."""
        doc = _fixed(_doc(19, {plan: {
            'none': (_summary(140), {}),
            'guarantee': (_summary(140), {'satisfied': True})}},
            overbooked=False))
        path = self._write('r1.json', json.dumps(doc))
        self._write('r1.trace', trace)
        out = io.StringIO()
        self.useFixture(fixtures.MonkeyPatch('sys.stdout', out))
        self.assertEqual(0, bench.main(['report', path, flag]))
        return path, out.getvalue()

    def test_falls_reads_each_trace(self):
        path, text = self._report_of_one_plan(7, FALLS_TRACE, '--falls')
        self.assertIn('== %s' % path, text)
        self.assertIn('learned capacity falls: 2, 1 on a reading', text)
        self.assertNotIn('tighten', text)             # no --losses

    def test_onsets_reads_each_trace(self):
        _, text = self._report_of_one_plan(3, ONSETS_TRACE, '--onsets')
        self.assertIn('queues a release began: 1,', text)
        self.assertNotIn('learned capacity falls', text)   # no --falls

    def test_caps_reads_each_trace_and_sums_the_runs(self):
        paths = self._fitting_runs(19, 7, 140, 140, CAPS_TRACE)
        text = self._report(paths + ['--caps'])
        self.assertEqual(3, text.count('what a guest pushing against'))
        self.assertRegex(text, r'== all runs\n.*\n.*\nkept +2 ')
        self.assertNotIn('learned capacity falls', text)   # no --falls

    def test_paced_sums_the_runs(self):
        paths = self._fitting_runs(11, 0, 58, 50, LOSS_TRACE)
        text = self._report(paths + ['--paced'])
        self.assertEqual(1, text.count('paced uncapped guests'))
        self.assertRegex(text, r'\n0.9-1.0 +10 0.897 ')     # both runs
        self.assertNotIn('requests lost against none', text)  # no --losses

    def test_queue_sums_the_runs(self):
        paths = self._fitting_runs(19, 7, 140, 140,
                                   TestQueueReadings.TRACE)
        text = self._report(paths + ['--queue'])
        self.assertEqual(1, text.count("the store's latency by its load"))
        self.assertRegex(text, r'\n0\.95-1\.00 +2 +9\.00 ')   # both runs
        self.assertNotIn('paced uncapped guests', text)     # no --paced
        self.assertEqual(1, text.count('releases a latency margin bounded'))

    def test_stops_sums_the_runs_of_a_label(self):
        paths = self._fitting_runs(11, 1, 100, 90, STOP_TRACE)
        text = self._report(['x=' + p for p in paths] + ['--stops'])
        self.assertEqual(1, text.count('plans that fit with a guest '
                                       'stopping'))
        self.assertRegex(text, r'\nx +2 +2 +0\.500 ')     # both runs

    def test_capacities_per_run_and_over_all(self):
        doc = _overbooked_run(19, 7, 0.899)
        doc['capacity_iops'] = 95.0
        paths = [self._write('r%d.json' % k, json.dumps(doc))
                 for k in (1, 2)]
        for k in (1, 2):
            self._write('r%d.trace' % k, SHARED_TRACE)
        text = self._report(paths + ['--capacities'])
        self.assertEqual(2, text.count('by the capacity shared'))
        self.assertNotIn('cap/share', text)           # no --decompose
        self.assertRegex(text, r'== all runs\nevery share at 95 %: '
                               r'calibrated 0/2 .*, none 2/2 ')

    def test_acted_that_is_no_regular_expression_is_named(self):
        err = io.StringIO()
        self.useFixture(fixtures.MonkeyPatch('sys.stderr', err))
        e = self.assertRaises(SystemExit, bench.main,
                              ['report', 'x.json', '--acted', 'held ('])
        self.assertEqual(2, e.code)
        self.assertIn("--acted: not a regular expression: 'held ('",
                      err.getvalue())

    def test_a_missing_file_is_named(self):
        path = os.path.join(self.useFixture(fixtures.TempDir()).path,
                            'gone.json')
        out = io.StringIO()
        self.useFixture(fixtures.MonkeyPatch('sys.stdout', out))
        self.assertEqual(2, bench.main(['report', 'x=' + path]))
        self.assertEqual('%s: cannot read it (No such file or directory)\n'
                         % path, out.getvalue())

    def test_a_file_that_is_no_run_is_named(self):
        path = self._write('bad.json', '{"plans": []}')
        out = io.StringIO()
        self.useFixture(fixtures.MonkeyPatch('sys.stdout', out))
        self.assertEqual(2, bench.main(['report', path]))
        self.assertEqual(1, len(out.getvalue().splitlines()))
        self.assertIn(path, out.getvalue())
        self.assertIn('not the JSON of a scenarios run', out.getvalue())


def _shares(seed, index, shares):
    return {'seed': seed, 'plans': [{'index': index, 'results': {
        'guarantee': {'vms': [{'name': n, 'overbooked_share': s}
                              for n, s in shares.items()]}}}]}


class TestShareNoise(testtools.TestCase):

    def test_noise_from_the_differences_bias_from_what_stays(self):
        noise = report.share_noise([
            ('r1', _shares(0, 3, {'g1': 0.9, 'g2': 1.0, 'g3': None})),
            ('r2', _shares(0, 3, {'g1': 1.0, 'g2': 0.9, 'g3': 0.5}))])
        # Differences -0.1 and +0.1; g3 has no share in r1.  Both
        # guests' means are 0.95: no spread of their own.
        self.assertAlmostEqual(0.1 / 2 ** 0.5, noise.sd)
        self.assertEqual(2, noise.pairs)
        self.assertAlmostEqual(0.95, noise.mean)
        self.assertEqual(0.0, noise.bias_sd)
        self.assertEqual(((0.95, 0.95),), noise.plans)

    def test_a_guest_short_in_every_run_is_bias(self):
        noise = report.share_noise([
            ('r1', _shares(0, 3, {'g1': 0.80, 'g2': 1.10})),
            ('r2', _shares(0, 3, {'g1': 0.82, 'g2': 1.08})),
            ('r3', _shares(0, 3, {'g1': 0.80, 'g2': 1.10}))])
        self.assertLess(noise.sd, 0.02)
        self.assertGreater(noise.bias_sd, 0.14)
        g1, g2 = noise.plans[0]
        self.assertLess(g1, 0.85)                   # barely shrunk
        self.assertGreater(g2, 1.05)
        # g1 under 95 % in every run: no plan kept, unless every guest
        # got its mean of 100 %.
        self.assertLess(noise.expected_passes(), 0.01)
        self.assertGreater(noise.expected_passes(at=1.0), 0.99)

    def test_no_plan_run_twice_is_no_figure(self):
        self.assertIsNone(report.share_noise([
            ('r1', _shares(0, 3, {'g1': 0.9, 'g2': 1.0})),
            ('r2', _shares(7, 3, {'g1': 1.0, 'g2': 0.9}))]))
        self.assertEqual('', report.noise_text(None))

    def test_expected_passes(self):
        at_bar = report.ShareNoise(sd=0.03, bias_sd=0.0, mean=0.95,
                                   plans=((0.95, 0.95), (0.95,) * 4),
                                   pairs=6)
        # At the bar itself each guest is under it half the time.
        self.assertAlmostEqual(0.5 ** 2 + 0.5 ** 4,
                               at_bar.expected_passes())
        exact = report.ShareNoise(sd=0.0, bias_sd=0.0, mean=0.97,
                                  plans=((0.97, 0.96), (0.97, 0.94)),
                                  pairs=4)
        self.assertEqual(1.0, exact.expected_passes())
        self.assertEqual(2.0, exact.expected_passes(at=1.0))
        text = report.noise_text(at_bar)
        self.assertIn('sd 3.0 %', text)
        self.assertIn('0.3 of 2 plans', text)
