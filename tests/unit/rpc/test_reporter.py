"""The reporter: reports leave the agent's loop at once, only the newest
waits for a cast in flight, and a failing bus is logged once."""

import logging
import threading

import fixtures
import testtools

from iothrottle.rpc import threads

threads.setup()

import futurist  # noqa: E402

from iothrottle.rpc import reporter as reporter_mod  # noqa: E402
from tests.unit.conductor.test_service import wait_for  # noqa: E402


class HeldSend:
    """``send`` that holds every cast until released."""

    def __init__(self):
        self.started = []
        self.sent = []
        self.release = threading.Event()

    def __call__(self, report):
        self.started.append(report)
        self.release.wait()
        self.sent.append(report)


class TestReporter(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.log = self.useFixture(fixtures.FakeLogger(level=logging.INFO))

    def reporter(self, send):
        reporter = reporter_mod.Reporter(send)
        self.addCleanup(reporter.stop)
        return reporter

    def test_a_held_cast_never_holds_the_caller(self):
        send = HeldSend()
        self.addCleanup(send.release.set)
        reporter = self.reporter(send)
        for seq in range(1, 6):
            reporter.submit(seq)   # returns although cast 1 is held
        wait_for(lambda: send.started == [1], 'the first cast')
        self.assertEqual([], send.sent)
        # 2, 3 and 4 were each replaced by a newer one; 5 waits.
        self.assertEqual(3, reporter.superseded)
        send.release.set()
        wait_for(lambda: reporter.sent == 2, 'the casts to finish')
        self.assertEqual([1, 5], send.sent)

    def test_an_idle_reporter_sends_the_next_report_at_once(self):
        sent = []
        reporter = self.reporter(sent.append)
        reporter.submit('a')
        wait_for(lambda: sent == ['a'], 'the first report')
        reporter.submit('b')
        wait_for(lambda: sent == ['a', 'b'], 'the second report')
        self.assertEqual(0, reporter.superseded)

    def test_a_failing_bus_is_logged_once_and_its_return(self):
        fail = [True]
        sent = []

        def send(report):
            if fail[0]:
                raise ConnectionError('broker gone')
            sent.append(report)
        reporter = reporter_mod.Reporter(send,
                                         futurist.SynchronousExecutor())
        reporter.submit(1)
        reporter.submit(2)
        self.assertEqual((2, 0), (reporter.failed, reporter.sent))
        self.assertEqual(1, self.log.output.count(
            'cannot report to the conductor (broker gone)'))
        fail[0] = False
        reporter.submit(3)
        self.assertEqual([3], sent)
        self.assertIn('reporting to the conductor again', self.log.output)

    def test_a_stopped_reporter_drops_reports_without_raising(self):
        sent = []
        reporter = reporter_mod.Reporter(sent.append)
        reporter.stop()
        reporter.submit(1)
        reporter.submit(2)
        self.assertEqual([], sent)
