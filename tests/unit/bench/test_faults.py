"""The fault matrix's measurements (pure): stale caps, defence, losses."""

import configparser
import os

import testtools

from iothrottle.bench import faults
from iothrottle.bench import seed000

PLAN = seed000.default_plan(short=True)   # interval 2 s, lease 10 s
MET = {'vm1': 3000.0, 'vm2': 1600.0, 'vm3': 1200.0, 'vm4': 600.0}
BROKEN = dict(MET, vm3=300.0)


def interval(end_s, kb_s):
    return seed000.Interval(end_s=end_s, length_s=2.0, kb_s=kb_s,
                            latency_ms=10.0)


class TestStaleCap(testtools.TestCase):

    POLLS = [(9.8, {'vm1': 50}), (10.0, {'vm1': 50}), (18.0, {'vm1': 50}),
             (21.2, {'vm1': 0}), (24.0, {'vm1': 40})]

    def test_seconds_from_the_fault_to_the_first_poll_without_caps(self):
        self.assertAlmostEqual(11.2, faults.stale_cap_s(self.POLLS, 10.0))

    def test_none_when_a_cap_is_in_force_at_every_poll(self):
        self.assertIsNone(faults.stale_cap_s(self.POLLS[:3], 10.0))

    def test_a_lapse_before_the_fault_does_not_count(self):
        polls = [(5.0, {'vm1': 0})] + self.POLLS[1:3]
        self.assertIsNone(faults.stale_cap_s(polls, 9.9))

    def test_capped_at_is_the_last_poll_before(self):
        self.assertEqual({'vm1': 0}, faults.capped_at(self.POLLS, 22.0))
        self.assertEqual({}, faults.capped_at(self.POLLS, 1.0))


class TestMeasure(testtools.TestCase):

    fault = faults.BY_NAME['conductor-kill']
    polls = [(9.0, {'vm1': 50}), (20.5, {'vm1': 0})]

    def measure(self, intervals, **kw):
        return faults.measure(self.fault, PLAN, intervals, self.polls,
                              fault_s=10.0, clear_s=24.0, **kw)

    def test_defended_at_the_end_of_the_first_whole_interval_that_met(self):
        intervals = [interval(t, BROKEN) for t in (12, 14, 16, 18, 20, 22,
                                                   24, 26)]
        # 26 began at 24 (whole, after the clear) but broke a floor.
        intervals += [interval(28, MET), interval(30, BROKEN),
                      interval(32, MET)]
        row = self.measure(intervals)
        self.assertEqual(4.0, row['defended_s'])
        self.assertEqual(2, row['defended_intervals'])
        self.assertEqual(0.5, row['recovered_fraction'])
        self.assertEqual(9, row['broken_intervals'])
        self.assertEqual(10.5, row['stale_cap_s'])
        self.assertTrue(row['capped_at_fault'])

    def test_an_interval_straddling_the_clear_does_not_count(self):
        row = self.measure([interval(25, MET), interval(27, BROKEN)])
        self.assertIsNone(row['defended_s'])
        self.assertIn('not defended',
                      ' '.join(faults.expectations(row, PLAN)))

    def test_the_defence_is_counted_in_whole_intervals_after_the_clear(
            self):
        # The clear at 24.04 s, 0.16 s before an interval's end: the
        # third whole interval after it ends 6.16 s later and is within
        # the expectation; the fourth is not.
        row = faults.measure(
            self.fault, PLAN,
            [interval(t + 0.2, BROKEN) for t in (24, 26, 28)]
            + [interval(30.2, MET), interval(32.2, MET)],
            self.polls, fault_s=10.0, clear_s=24.04)
        self.assertEqual(6.16, row['defended_s'])
        self.assertEqual(3, row['defended_intervals'])
        self.assertEqual([], [m for m in faults.expectations(row, PLAN)
                              if 'defended' in m])
        row = faults.measure(
            self.fault, PLAN,
            [interval(t + 0.2, BROKEN) for t in (24, 26, 28, 30)]
            + [interval(32.2, MET)],
            self.polls, fault_s=10.0, clear_s=24.04)
        self.assertEqual(4, row['defended_intervals'])
        self.assertIn('not defended within 3 whole intervals',
                      ' '.join(faults.expectations(row, PLAN)))

    def test_lost_decisions_are_the_cast_ones_never_received(self):
        row = self.measure([interval(26, MET)], cast=40, received=37)
        self.assertEqual(3, row['decisions_lost'])

    def test_a_fault_that_leaves_control_working_has_no_stale_cap(self):
        row = faults.measure(faults.BY_NAME['mariadb-stop'], PLAN,
                             [interval(8, MET), interval(26, MET),
                              interval(28, MET)], self.polls, 10.0, 20.0)
        self.assertIsNone(row['stale_cap_s'])
        self.assertEqual([], faults.expectations(row, PLAN))

    def test_throughput_after_the_defence_against_before_the_fault(self):
        # Settled at 6400 KB/s before; after the clear (24 s) and three
        # intervals of defence, the burster held at 600 KB/s: 4000.
        held = dict(MET, vm1=600.0)
        intervals = ([interval(t, MET) for t in (2, 4, 6, 8, 10)]
                     + [interval(t, BROKEN) for t in (12, 14, 16, 18, 20,
                                                      22, 24)]
                     + [interval(t, MET) for t in (26, 28, 30)]
                     + [interval(t, held) for t in (32, 34)])
        row = self.measure(intervals)
        self.assertEqual(0.62, row['throughput_recovered'])
        self.assertIn('throughput not recovered',
                      ' '.join(faults.expectations(row, PLAN)))
        # Only the intervals wholly after the defence's three count.
        row = self.measure(intervals[:-2] + [interval(32, MET)])
        self.assertEqual(1.0, row['throughput_recovered'])

    def test_no_throughput_to_compare_is_a_miss(self):
        row = self.measure([interval(32, MET)])
        self.assertIsNone(row['throughput_recovered'])
        self.assertIn('throughput not recovered',
                      ' '.join(faults.expectations(row, PLAN)))


class TestExpectations(testtools.TestCase):

    def row(self, **kw):
        row = {'capped_at_fault': True, 'cuts_control': True,
               'stale_cap_s': 10.5, 'defended_s': 4.0,
               'defended_intervals': 2, 'deaths': [],
               'throughput_recovered': 0.97}
        row.update(kw)
        return row

    def test_met(self):
        self.assertEqual([], faults.expectations(self.row(), PLAN))

    def test_a_cap_past_lease_and_interval_misses(self):
        misses = faults.expectations(self.row(stale_cap_s=12.5), PLAN)
        self.assertIn('outlived its lease', misses[0])

    def test_a_cap_that_never_lapsed_misses(self):
        misses = faults.expectations(self.row(stale_cap_s=None), PLAN)
        self.assertIn('outlived its lease', misses[0])

    def test_defence_later_than_three_intervals_misses(self):
        misses = faults.expectations(self.row(defended_s=6.5,
                                              defended_intervals=4), PLAN)
        self.assertIn('within 3 whole intervals', misses[0])

    def test_a_death_misses(self):
        misses = faults.expectations(self.row(deaths=['libvirtd']), PLAN)
        self.assertEqual(['died: libvirtd'], misses)

    def test_no_cap_at_the_fault_misses(self):
        misses = faults.expectations(self.row(capped_at_fault=False), PLAN)
        self.assertIn('no cap', misses[0])


class TestLogsAndTable(testtools.TestCase):

    def test_count_decisions(self):
        conductor = ('... DEBUG ... cast 2 decision(s) to flt-a\n'
                     '... DEBUG ... cast 1 decision(s) to flt-a\n'
                     '... WARNING ... casting 1 decision(s) to flt-a '
                     'failed\n')
        agent = '... received 2 decision(s): 1 applied, 1 stale\n'
        self.assertEqual((3, 2), faults.count_decisions(conductor, agent))

    def test_decision_trail_keeps_the_last_decisions_of_a_log(self):
        head = ('2026-11-26 10:07:%02d.016 26561 INFO '
                'iothrottle.conductor.service [-] ')
        log = '\n'.join([
            head % 20 + 'round 1: 1 host(s), 1 domain(s), 1 decision(s)',
            head % 22 + 'cap 9c/vda on nbd+unix:///s.sock: held: calm',
            '2026-11-26 10:07:23.0 26561 DEBUG iothrottle.conductor.service'
            ' [-] cast 1 decision(s) to flt-a publish x.py:294',
            head % 24 + 'domain nbd+unix:///s.sock: completed 94.8 IOPS, '
            '6.07 MB/s: load 0.97 of its capacity; saturated; 1 of 4 '
            'disk(s) capped',
            head % 24 + 'release 9c/vda on nbd+unix:///s.sock: no longer '
            'pushing against its cap',
            head % 26 + 'cap 9c/vda on nbd+unix:///s.sock: domain load '
            '0.90 >= border 0.90; deficit 0.260 -> 26.9 IOPS'])
        self.assertEqual(
            ['10:07:22.016 cap 9c/vda: held: calm',
             '10:07:24.016 domain: completed 94.8 IOPS, 6.07 MB/s: load '
             '0.97 of its capacity; saturated; 1 of 4 disk(s) capped',
             '10:07:24.016 release 9c/vda: no longer pushing against its '
             'cap',
             '10:07:26.016 cap 9c/vda: domain load 0.90 >= border 0.90; '
             'deficit 0.260 -> 26.9 IOPS'],
            faults.decision_trail(log))
        self.assertEqual(1, len(faults.decision_trail(log, limit=1)))
        self.assertEqual([], faults.decision_trail('no decisions here'))

    def test_series_text_shows_each_interval_with_its_caps(self):
        row = {'series': [{'end_s': 2.0, 'kb_s': {'vm1': 900, 'vm2': 40}},
                          {'end_s': 4.0, 'kb_s': {'vm1': 300, 'vm2': 600}}],
               'caps': [[0.5, {}], [3.1, {'vm1': 20}]]}
        self.assertEqual('    2.0 s  vm1=900 vm2=40\n'
                         "    4.0 s  vm1=300 vm2=600  caps {'vm1': 20}",
                         faults.series_text(row))

    def test_table_has_a_line_per_fault_and_says_what_missed(self):
        row = faults.measure(faults.BY_NAME['agent-kill'], PLAN,
                             [interval(26, MET)], [(9.0, {'vm1': 5})],
                             10.0, 20.0, deaths=['libvirtd'])
        text = faults.table([row], PLAN)
        self.assertEqual(3, len(text.splitlines()))
        self.assertIn('agent-kill', text)
        self.assertIn('died: libvirtd', text)
        self.assertIn('outlived its lease', text)

    def test_hold_of_a_controller_loss_passes_the_lease(self):
        hold = faults.hold_s(faults.BY_NAME['conductor-kill'], PLAN)
        self.assertGreater(hold, PLAN.lease_s + PLAN.interval_s)
        self.assertEqual(faults.AGENT_RESTART_S,
                         faults.hold_s(faults.BY_NAME['agent-kill'], PLAN))

    def test_every_short_fault_is_in_the_catalogue(self):
        self.assertTrue(set(faults.SHORT) <= set(faults.BY_NAME))

    def test_a_killed_agent_stays_down_as_long_as_its_unit_says(self):
        unit = configparser.ConfigParser(strict=False)
        unit.read(os.path.join(os.path.dirname(__file__), '..', '..', '..',
                               'etc', 'systemd',
                               'iothrottle-compute.service'))
        self.assertEqual(faults.AGENT_RESTART_S,
                         float(unit['Service']['RestartSec']))
