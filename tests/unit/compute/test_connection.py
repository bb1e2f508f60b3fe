"""Reopening a libvirt connection that died under the agent."""

import subprocess
import sys

import fixtures
import libvirt
import testtools

from iothrottle.compute import connection


class FakeConn:

    def __init__(self, number):
        self.number = number
        self.alive = True

    def isAlive(self):
        return self.alive

    def getAllDomainStats(self, stats, flags):
        return [('record of connection', self.number)]


class TestConnection(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.logger = self.useFixture(
            fixtures.FakeLogger(name='iothrottle'))
        self.opened = []
        self.refuse = False

    def _open(self, uri):
        if self.refuse:
            raise libvirt.libvirtError('libvirtd is down')
        self.opened.append(FakeConn(len(self.opened)))
        return self.opened[-1]

    def test_calls_go_to_the_live_connection(self):
        conn = connection.Connection('qemu:///system', self._open)
        self.assertEqual([('record of connection', 0)],
                         conn.getAllDomainStats(1, 2))
        self.assertEqual(1, len(self.opened))

    def test_dead_connection_reopened(self):
        conn = connection.Connection('qemu:///system', self._open)
        self.opened[0].alive = False
        self.assertEqual([('record of connection', 1)],
                         conn.getAllDomainStats(1, 2))

    def test_failed_reopen_raises_then_retries(self):
        conn = connection.Connection('qemu:///system', self._open)
        self.opened[0].alive = False
        self.refuse = True
        for _attempt in range(2):
            self.assertRaises(libvirt.libvirtError,
                              lambda: conn.getAllDomainStats(1, 2))
        self.refuse = False
        self.assertEqual([('record of connection', 1)],
                         conn.getAllDomainStats(1, 2))
        # One warning for the outage, not one per attempt.
        self.assertEqual(1, self.logger.output.count('lost'))


# A lookup that fails on libvirt's built-in test driver (no daemon).
_FAILING_LOOKUP = """
import libvirt
from iothrottle.compute import connection
if %r:
    connection.silence_default_errors()
conn = libvirt.open('test:///default')
try:
    conn.lookupByName('no-such-domain')
except libvirt.libvirtError:
    pass
"""


class TestSilenceDefaultErrors(testtools.TestCase):

    def _stderr(self, silenced):
        return subprocess.run(
            [sys.executable, '-c', _FAILING_LOOKUP % silenced],
            capture_output=True, text=True, check=True).stderr

    def test_a_caught_error_reaches_stderr_only_by_default(self):
        self.assertIn('Domain not found', self._stderr(False))
        self.assertEqual('', self._stderr(True))
