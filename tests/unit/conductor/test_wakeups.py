"""The decision loop is woken by the first report of a round and by the
one that completes it, not by every report (issue 12: at 2,500 hosts
the wake-ups made each interval cost O(hosts^2) in core.due)."""

import threading

import fixtures
import testtools

from iothrottle.conductor import service
from iothrottle.rpc import wire
from tests.unit.conductor import test_core


class CountingCondition(type(threading.Condition())):
    def __init__(self):
        super().__init__()
        self.notified = 0

    def notify_all(self):
        self.notified += 1
        super().notify_all()


class TestWakeups(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.useFixture(fixtures.FakeLogger())
        self.now = [0.0]
        self.conductor = service.Conductor(
            test_core.make_core(), None, service.Store(None), 'recorder',
            clock=lambda: self.now[0])
        self.cond = self.conductor._cond = CountingCondition()
        self.seq = 0

    def report_all(self, hosts):
        self.seq += 1
        for host in hosts:
            self.conductor.report(wire.report(
                host, 2.0, [test_core.sample('u-' + host, 'store')], {},
                agent_id='a-' + host, seq=self.seq))

    def test_first_and_completing_reports_wake_the_loop(self):
        hosts = ['h%d' % i for i in range(10)]
        self.report_all(hosts)
        self.assertIsNotNone(self.conductor.wait_round())
        self.cond.notified = 0
        self.now[0] = 2.0
        self.report_all(hosts)
        self.assertEqual(2, self.cond.notified)
        # The round is due at once: every live host reported.
        self.assertEqual(tuple(hosts), self.conductor.wait_round().hosts)
