"""The bench's observer: an agent that measures and touches no limit."""

import io

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
