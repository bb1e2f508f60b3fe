import io
import os

import fixtures
import testtools

from iothrottle.bench import seed000
from iothrottle.bench import settings
from iothrottle.cmd import bench


class TestSettings(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.dir = self.useFixture(fixtures.TempDir()).path

    def _file(self, name, text):
        path = os.path.join(self.dir, name)
        with open(path, 'w') as f:
            f.write(text)
        return path

    def test_no_file_is_the_projects_defaults(self):
        values = settings.effective([])
        self.assertEqual(3, values['controller']['calm_intervals'])
        self.assertEqual(0.2, values['controller']['guard_fraction'])
        self.assertIn('default_max_iops', values['storage'])

    def test_a_files_options_reach_the_agents_conf(self):
        path = self._file('a.conf', '[controller]\ncalm_intervals = 1\n'
                                    '[storage]\ndefault_max_iops = 95\n')
        self.assertEqual(1, settings.effective([path])['controller'][
            'calm_intervals'])
        plan = seed000.default_plan(short=True)
        conf = settings.bench_conf(plan, 'guarantee', [path])
        self.assertEqual(1, conf.controller.calm_intervals)
        self.assertEqual(95.0, conf.storage.default_max_iops)

    def test_the_plans_grid_and_policy_win_over_a_file(self):
        path = self._file('a.conf', '[controller]\npolicy = paper\n'
                                    'interval_s = 60\nlease_s = 600\n')
        plan = seed000.default_plan(short=True)
        conf = settings.bench_conf(plan, 'guarantee', [path])
        self.assertEqual('guarantee', conf.controller.policy)
        self.assertEqual(plan.interval_s, conf.controller.interval_s)
        self.assertEqual(plan.lease_s, conf.controller.lease_s)

    def test_files_are_read_in_order(self):
        first = self._file('1.conf', '[controller]\ncalm_intervals = 1\n')
        second = self._file('2.conf', '[controller]\ncalm_intervals = 2\n')
        self.assertEqual(2, settings.effective([first, second])[
            'controller']['calm_intervals'])

    def test_a_bad_file_is_named_with_its_culprit(self):
        bad_value = self._file('v.conf', '[controller]\ncalm_intervals = x\n')
        refused = self._file('r.conf', '[controller]\n'
                                       'defend_fraction = 0.5\n')
        missing = os.path.join(self.dir, 'missing.conf')
        for path, culprit in ((bad_value, 'calm_intervals'),
                              (refused, 'defend_fraction'),
                              (missing, 'missing.conf')):
            e = self.assertRaises(ValueError, settings.effective, [path])
            self.assertIn('--config-file ' + path, str(e))
            self.assertIn(culprit, str(e))
            self.assertNotIn('\n', str(e))

    def test_the_command_checks_the_files_before_any_run(self):
        path = self._file('a.conf', '[controller]\ncalm_intervals = 2\n')
        args = bench.parse_args(['scenarios', '--config-file', path])
        self.assertEqual([path], args.config_file)
        self.assertEqual(2, args.settings['controller']['calm_intervals'])
        args = bench.parse_args(['seed000'])
        self.assertEqual([], args.config_file)
        self.assertEqual(3, args.settings['controller']['calm_intervals'])
        err = io.StringIO()
        self.useFixture(fixtures.MonkeyPatch('sys.stderr', err))
        bad = self._file('b.conf', '[controller]\nguard_fraction = no\n')
        self.assertRaises(SystemExit, bench.parse_args,
                          ['scenarios', '--config-file', bad])
        self.assertIn('guard_fraction',
                      err.getvalue().strip().splitlines()[-1])
