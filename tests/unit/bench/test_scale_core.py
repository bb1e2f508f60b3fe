"""``iothrottle-bench scale --core-only``: the conductor's round in
this process."""

import io

import testtools

from iothrottle.bench import scale
from iothrottle.bench import scale_core
from iothrottle.cmd import bench


class TestCoreOnly(testtools.TestCase):

    def test_rounds_are_timed_and_the_burster_capped(self):
        plan = scale.Plan(instances=200, rounds=5, warmup_rounds=2)
        summary = scale_core.run(plan)
        self.assertEqual(3, summary['rounds_measured'])
        self.assertEqual(3, len(summary['decide_cpu_ms']))
        self.assertGreater(summary['decide_cpu_ms_p50'], 0)
        # One saturated domain of 20: its burster is decided on each
        # round (capped, the cap renewed or grown), nothing else.
        self.assertEqual(1.0, summary['decisions_per_round'])
        self.assertNotIn('profile', summary)

    def test_profile_names_the_round(self):
        plan = scale.Plan(instances=200, rounds=3, warmup_rounds=2)
        summary = scale_core.run(plan, profile=True)
        self.assertIn('conductor/core.py', summary['profile'])
        self.assertIn('(decide)', summary['profile'])

    def test_command_line(self):
        out = io.StringIO()
        self.assertEqual(0, bench.run_scale(bench.parse_args(
            ['scale', '--core-only', '--instances', '200', '--rounds',
             '3']), out))
        self.assertIn('200 instances, 20 domains, in this process: '
                      'Core.decide', out.getvalue())
