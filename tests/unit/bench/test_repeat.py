import io
import json
import os
import types

import fixtures
import testtools

from iothrottle.cmd import bench


class TestRepeatedScenarios(testtools.TestCase):
    """``scenarios --repeat``'s shell, on a runner that replays canned
    results instead of driving a testbed."""

    def test_each_repeat_is_recorded_and_spread_per_plan(self):
        from iothrottle.bench import scenario_runner
        from iothrottle.bench import scenarios
        from tests.unit.bench import test_scenarios as ts

        good = scenarios.summarize(ts.PLAN, [ts.interval(t, b=700, p=1000)
                                             for t in range(2, 23, 2)], 100)
        bad = scenarios.summarize(ts.PLAN, [ts.interval(t, b=2000, p=500)
                                            for t in range(2, 23, 2)], 100)
        canned = [(90.0, 88.0, 89.0, {'none': bad, 'guarantee': good}),
                  (95.0, 96.0, 94.0, {'none': good, 'guarantee': bad})]

        class Replay:
            plan_iops = scenario_runner.ScenarioRun.plan_iops

            def __init__(self, plans, out, **kw):
                self.plans = plans
                self.config_files = kw['config_files']
                self.capacity = self.capacity_end = None

            def run(self, policies, on_plan=None, on_interval=None):
                iops, end_iops, plan_iops, results = canned.pop(0)
                self.capacity = types.SimpleNamespace(max_iops=iops)
                self.capacity_end = types.SimpleNamespace(
                    max_iops=end_iops)
                self.plan_capacities = [
                    types.SimpleNamespace(max_iops=plan_iops)
                    for _ in self.plans]
                return [(results, {}) for _ in self.plans]

        self.useFixture(fixtures.MonkeyPatch(
            'iothrottle.bench.scenario_runner.ScenarioRun', Replay))
        self.assertIs(Replay, scenario_runner.ScenarioRun)
        path = os.path.join(self.useFixture(fixtures.TempDir()).path,
                            'out.json')
        out = io.StringIO()
        args = bench.parse_args(['scenarios', '--count', '1', '--repeat',
                                 '2', '--policy', 'guarantee',
                                 '--json', path])
        self.assertEqual(0, bench.run_scenarios(args, out))
        with open(path) as f:
            document = json.load(f)
        self.assertEqual(2, document['repeat'])
        self.assertEqual(90.0, document['capacity_iops'])
        self.assertEqual(88.0, document['capacity_iops_end'])
        self.assertEqual([(90.0, 88.0), (95.0, 96.0)],
                         [(r['capacity_iops'], r['capacity_iops_end'])
                          for r in document['repeats']])
        # Each plan records the capacity its needs were shared out of.
        self.assertEqual([89.0], [p['capacity_iops']
                                  for p in document['plans']])
        self.assertEqual([[89.0], [94.0]],
                         [[p['capacity_iops'] for p in r['plans']]
                          for r in document['repeats']])
        g = document['spread'][0]['policies']['guarantee']
        self.assertEqual([1.0, 0.0], g['worst_satisfied'])
        self.assertIn('== repeat 2 of 2', out.getvalue())
        self.assertIn('store 90.0-88.0 IOPS, store 95.0-96.0 IOPS',
                      out.getvalue())
        self.assertEqual([], canned)
