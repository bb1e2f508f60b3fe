import io
import json
import math

import fixtures
import testtools

from iothrottle.bench import peers
from iothrottle.bench import scenarios
from iothrottle.bench import seed000
from iothrottle.cmd import bench
from iothrottle.controller import model
from tests.unit.bench import test_scenarios

NODE = '/var/lib/iothrottle/testbed/x/blockdev'


class TestWeights(testtools.TestCase):

    def test_proportional_to_the_floors_within_libvirts_range(self):
        # The module doc's worked example.
        self.assertEqual([1000, 750, 400, 100],
                         peers.bfq_weights([20, 15, 8, 0]))
        # A floor of 1 % of the largest is still libvirt's least weight.
        self.assertEqual([1000, 100], peers.bfq_weights([100, 1]))

    def test_no_floors_at_all_is_every_guest_at_the_default(self):
        self.assertEqual([100, 100], peers.bfq_weights([0, 0]))
        self.assertEqual([], peers.bfq_weights([]))

    def test_a_floor_that_is_not_a_number_is_named(self):
        for bad in (-1, math.nan):
            e = self.assertRaises(ValueError, peers.bfq_weights, [1, bad])
            self.assertIn(repr(bad), str(e))


class TestThrottle(testtools.TestCase):

    def test_the_cap_goes_on_each_direction_of_the_whole_disk(self):
        params = peers.throttle_params(NODE, model.Cap(iops=20.4,
                                                       bytes_sec=1e6))
        self.assertEqual({'device_read_iops_sec': NODE + ',20',
                          'device_write_iops_sec': NODE + ',20',
                          'device_read_bytes_sec': NODE + ',1000000',
                          'device_write_bytes_sec': NODE + ',1000000'},
                         params)

    def test_an_unlimited_axis_stays_unlimited_a_tiny_cap_does_not(self):
        params = peers.throttle_params(NODE, model.Cap(iops=0.3,
                                                       bytes_sec=0))
        # 0.3 IOPS must not round to 0, which blk-throttle reads as "no
        # limit"; 0 on the byte axis is libvirt's unlimited, kept.
        self.assertEqual(NODE + ',1', params['device_read_iops_sec'])
        self.assertEqual(NODE + ',0', params['device_write_bytes_sec'])

    def test_lifting_sets_every_limit_to_none(self):
        lifted = peers.lifted_params(NODE)
        self.assertEqual(set(peers.throttle_params(NODE, model.Cap(1, 1))),
                         set(lifted))
        self.assertEqual({0}, {peers.device_limit(v, NODE)
                               for v in lifted.values()})

    def test_device_limit_reads_libvirts_lists(self):
        text = '/dev/loop0,50,%s,20' % NODE
        self.assertEqual(20, peers.device_limit(text, NODE))
        self.assertEqual(50, peers.device_limit(text, '/dev/loop0'))
        self.assertEqual(0, peers.device_limit(text, '/dev/loop9'))
        self.assertEqual(0, peers.device_limit('', NODE))

    def test_each_peer_runs_its_iothrottle_policy_and_scheduler(self):
        self.assertEqual('none', peers.agent_policy(peers.BFQ_WEIGHT))
        self.assertEqual('static', peers.agent_policy(peers.BLK_THROTTLE))
        self.assertEqual('guarantee', peers.agent_policy('guarantee'))
        self.assertEqual('guarantee',
                         peers.agent_policy(peers.GUARANTEE_BFQ))
        # Weights run under BFQ whatever the testbed's scheduler.
        self.assertEqual('bfq', peers.WEIGHT_SCHEDULER)


def seed000_run(total, worst, latency_ms):
    return {'vms': [
        {'name': 'vm1', 'demand': None, 'guarantee': 1280,
         'satisfied_fraction': 1.0},
        {'name': 'vm2', 'demand': 1600, 'guarantee': 1280,
         'satisfied_fraction': worst},
        # Demand under its guarantee: not judged.
        {'name': 'vm3', 'demand': 300, 'guarantee': 512,
         'satisfied_fraction': 0.0}],
        'total_mean': total, 'latency_ms_mean': latency_ms,
        'latency_ms_p95': latency_ms * 2}


class TestTable(testtools.TestCase):

    def test_rows_join_the_seed000_plan_and_the_scenarios(self):
        plan = test_scenarios.PLAN

        def run(p_kb_s, b_kb_s=700):
            return scenarios.summarize(plan, [
                test_scenarios.interval(t, b=b_kb_s, p=p_kb_s)
                for t in range(2, 23, 2)], 100)
        good, bad = run(1000), run(500, b_kb_s=2000)
        s0 = {'none': seed000_run(4000, 0.2, 40.0),
              'guarantee': seed000_run(3800, 0.97, 20.0),
              peers.BFQ_WEIGHT: seed000_run(3000, 0.5, 30.0)}
        runs = [{'none': bad, 'guarantee': good, peers.BFQ_WEIGHT: bad}]
        rows = {r['policy']: r for r in peers.rows(s0, [plan], runs)}
        g = rows['guarantee']
        self.assertEqual(0.97, g['seed000_worst_floor'])
        self.assertAlmostEqual(0.95, g['seed000_total_vs_none'])
        self.assertEqual(20.0, g['seed000_latency_ms'])
        self.assertEqual('1/1', g['floors_kept'])
        self.assertEqual('0/1', rows[peers.BFQ_WEIGHT]['floors_kept'])
        self.assertEqual(20.0, g['latency_ms_p50'])
        json.dumps(rows)
        text = peers.table(list(rows.values()))
        self.assertIn('bfq-weight', text)
        self.assertIn('97%', text)
        self.assertIn('3800 (95%)', text)

    def test_latency_summary_skips_intervals_without_io(self):
        intervals = [seed000.Interval(end_s=t, length_s=2.0, kb_s={},
                                      latency_ms=ms)
                     for t, ms in enumerate([0.0, 10.0, 30.0, 20.0], 1)]
        self.assertEqual({'latency_ms_mean': 20.0, 'latency_ms_p95': 30.0},
                         seed000.latency_summary(intervals))
        self.assertEqual({'latency_ms_mean': None, 'latency_ms_p95': None},
                         seed000.latency_summary(intervals[:1]))


class TestCommandLine(testtools.TestCase):

    def _error(self, argv):
        err = io.StringIO()
        self.useFixture(fixtures.MonkeyPatch('sys.stderr', err))
        self.assertRaises(SystemExit, bench.parse_args, argv)
        return err.getvalue().strip().splitlines()[-1]

    def test_a_peer_off_the_block_layer_is_refused_by_name(self):
        self.assertIn('--policy blk-throttle needs --block-layer',
                      self._error(['seed000', '--policy', 'blk-throttle']))
        self.assertIn('--policy bfq-weight needs --block-layer',
                      self._error(['scenarios', '--policy', 'bfq-weight']))
        self.assertIn('--policy guarantee-bfq needs --block-layer',
                      self._error(['scenarios', '--policy', 'guarantee',
                                   '--policy', 'guarantee-bfq']))

    def test_peers_on_the_block_layer_are_taken(self):
        args = bench.parse_args(['scenarios', '--policy', 'bfq-weight',
                                 '--policy', 'blk-throttle',
                                 '--block-layer', 'bfq'])
        self.assertEqual(['bfq-weight', 'blk-throttle'], args.policy)
        args = bench.parse_args(['seed000', '--policy', 'blk-throttle',
                                 '--block-layer', 'mq-deadline'])
        self.assertEqual(['blk-throttle'], args.policy)
        args = bench.parse_args(['scenarios', '--policy', 'bfq-weight',
                                 '--block-layer', 'kyber'])
        self.assertEqual('kyber', args.block_layer)
        args = bench.parse_args(['peers'])
        self.assertEqual('mq-deadline', args.block_layer)

    def test_the_weights_with_guarantee_are_an_arm_of_choice(self):
        # Weighted under BFQ like bfq-weight, with guarantee's caps on
        # top; asked for by name, not run by every peers bench.
        self.assertIn(peers.GUARANTEE_BFQ, peers.WEIGHTED)
        self.assertNotIn(peers.GUARANTEE_BFQ, peers.POLICIES)
        self.assertEqual(('none', 'guarantee', 'static', 'bfq-weight',
                          'blk-throttle'), peers.POLICIES)
        args = bench.parse_args(['scenarios', '--policy', 'guarantee-bfq',
                                 '--block-layer', 'mq-deadline'])
        self.assertEqual(['guarantee-bfq'], args.policy)

    def test_stretch_and_repeat_are_bounded(self):
        for option, most in (('stretch', 5), ('repeat', 5)):
            flag = '--' + option
            self.assertEqual(3, getattr(bench.parse_args(
                ['scenarios', flag, '3']), option))
            self.assertEqual(1, getattr(bench.parse_args(['scenarios']),
                                        option))
            self.assertIn('%s must be 1-%d, got %d' % (flag, most, most + 1),
                          self._error(['scenarios', flag, str(most + 1)]))

    def test_peers_take_a_trace_file(self):
        self.assertEqual('t.txt', bench.parse_args(
            ['peers', '--trace', 't.txt']).trace)
        self.assertIsNone(bench.parse_args(['peers']).trace)
