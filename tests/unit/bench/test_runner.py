"""The bench's observer: an agent that measures and touches no limit."""

import io
import types

import fixtures
import testtools

from iothrottle.bench import runner
from iothrottle.bench import seed000
from iothrottle.compute import instances
from iothrottle.compute import iotune
from iothrottle.controller import model


class TestObserver(testtools.TestCase):

    def setUp(self):
        super().setUp()
        run = runner.Seed000Run(seed000.default_plan(short=True),
                                io.StringIO())
        self.observer = run.observer(object(), model.Capacity(100.0, 1e8))

    def test_it_reconciles_nothing(self):
        # A real actuator lifts a cap no lease of its agent explains: an
        # observer, with no leases, lifted the real agent's caps so.
        domain = instances.Instance(
            uuid='a', domain_name='itb-vm1', name='vm1', flavor='f1',
            disks=(instances.Disk('vda', 'file', '/x', 'local:h:sda'),))
        self.assertEqual(((), ()), self.observer.actuator.reconcile(
            [domain], set()))

    def test_it_sets_and_restores_no_limit(self):
        actuator = self.observer.actuator
        self.assertRaises(RuntimeError, actuator.set_cap, 'a', 'vda',
                          model.Cap(10, 0), iotune.IoTune())
        self.assertRaises(RuntimeError, actuator.restore, 'a', 'vda',
                          iotune.IoTune())


class TestTicksWithChecks(testtools.TestCase):
    """A run's intervals carry the decisions its checks made."""

    def test_each_report_carries_its_intervals_checks_first(self):
        run = runner.Seed000Run(seed000.default_plan(short=True),
                                io.StringIO())
        plan = [(0.5, False), (1.0, False), (2.0, True), (2.5, False),
                (4.0, True), (6.0, True)]
        self.useFixture(fixtures.MonkeyPatch(
            'iothrottle.bench.runner.schedule',
            lambda interval_s, count, check_s: iter(plan)))

        class Agent:
            conf = types.SimpleNamespace(
                controller=types.SimpleNamespace(idle_check_s=0.5))
            checks = steps = 0

            def check_idle(self):
                self.checks += 1
                return types.SimpleNamespace(
                    decisions=('check %d' % self.checks,))

            def step(self):
                self.steps += 1
                return runner.agent_mod.StepReport(
                    now_s=0.0, samples=(),
                    decisions=('step %d' % self.steps,), caps={},
                    errors=())
        reports = list(run._ticks(Agent(), 3))
        self.assertEqual([('check 1', 'check 2', 'step 1'),
                          ('check 3', 'step 2'), ('step 3',)],
                         [r.decisions for r in reports])

    def test_the_schedule_puts_the_checks_between_the_ticks(self):
        marks = [is_tick for _, is_tick in runner.schedule(0.02, 2, 0.005)]
        self.assertEqual(([False] * 3 + [True]) * 2, marks)


class TestCalibrationProcs(testtools.TestCase):

    def test_the_writers_spread_over_the_guests(self):
        self.assertEqual([8], runner.calibration_procs(1))
        self.assertEqual([3, 3, 2], runner.calibration_procs(3))
        self.assertEqual([1] * 8, runner.calibration_procs(8))
        # More guests than writers: one each, so every guest runs.
        self.assertEqual([1] * 10, runner.calibration_procs(10))
        self.assertEqual(runner.CALIBRATION_PROCS,
                         sum(runner.calibration_procs(5)))

    def test_no_guest_is_refused(self):
        self.assertRaisesRegex(ValueError, 'needs a guest',
                               runner.calibration_procs, 0)
