"""An agent's reports to the conductor, sent off its control loop.

The agent's loop does two things every interval: it reports to the
conductor, and it lifts the caps whose lease ran out.  The second is
what keeps a guest from being held by a cap nobody renews, and it must
not wait for the first.  A cast to a stopped broker does wait: with
oslo.messaging's ``retry=1`` one publish takes 3-4 s to fail
("Unable to connect ... after 1 tries"), and the full fault matrix saw a
cap lapse 3.8 s past its lease because the loop that checks leases was
inside such a cast (``doc/security.rst``, rabbitmq-restart).

So the loop hands each report to a :class:`Reporter` and goes on.  The
reporter casts on one thread of its own.  Only the newest report is
worth sending - the conductor decides from the last interval, and an
older one would be refused behind a newer sequence number anyway - so
while a cast is in flight a report waits in a one-slot mailbox, and a
newer one replaces it (counted in ``superseded``).  The loop never
waits for the bus and the bus never holds more than two reports of one
agent: the one in flight and the newest.
"""

import threading

from oslo_log import log as logging

LOG = logging.getLogger(__name__)


def _thread():
    """One futurist worker thread (imported here: futurist imports
    eventlet unless :func:`iothrottle.rpc.threads.setup` ran first)."""
    import futurist
    return futurist.ThreadPoolExecutor(max_workers=1)


class Reporter:
    """Sends reports with ``send(report)`` on ``executor`` (default: a
    thread of its own; futurist's SynchronousExecutor sends inline)."""

    def __init__(self, send, executor=None):
        self._send = send
        self._executor = executor if executor is not None else _thread()
        self._lock = threading.Lock()
        self._busy = False       # a cast is in flight, or about to be
        self._pending = None     # the newest report waiting for it
        self._bus_ok = True
        self.sent = 0
        self.failed = 0
        self.superseded = 0

    def submit(self, report):
        """Send ``report`` soon; returns at once."""
        with self._lock:
            if self._busy:
                if self._pending is not None:
                    self.superseded += 1
                self._pending = report
                return
            self._busy = True
        try:
            self._executor.submit(self._drain, report)
        except Exception as exc:   # shut down: the agent is stopping
            with self._lock:
                self._busy = False
            LOG.debug('report not sent: %s', exc)

    def _drain(self, report):
        """Cast ``report``, then the newest one that came meanwhile."""
        while report is not None:
            self._cast(report)
            with self._lock:
                report, self._pending = self._pending, None
                if report is None:
                    self._busy = False

    def _cast(self, report):
        try:
            self._send(report)
        except Exception as exc:
            self.failed += 1
            if self._bus_ok:
                self._bus_ok = False
                LOG.warning('cannot report to the conductor (%s); caps '
                            'lapse at their lease expiry, retrying every '
                            'interval', exc)
            return
        self.sent += 1
        if not self._bus_ok:
            self._bus_ok = True
            LOG.info('reporting to the conductor again')

    def stop(self):
        """Stop taking reports; a cast in flight is not waited for."""
        self._executor.shutdown(wait=False)
