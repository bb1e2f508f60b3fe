"""Property tests of the guest agent reply parsers: whatever a guest
answers, the parser returns a value or raises GuestAgentError (one line),
nothing else."""

import json
from unittest import mock

import hypothesis
from hypothesis import strategies as st
import testtools

from iothrottle.compute import guest_agent
from tests.unit.compute import test_guest_agent

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats()
    | st.text(max_size=40),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(
        st.sampled_from(['pid', 'exited', 'out-data', 'count', 'buf-b64',
                         'eof', 'return', 'x']) | st.text(max_size=8),
        children, max_size=5),
    max_leaves=20)
REPLY = (st.binary(max_size=300) | st.text(max_size=300)
         | JSON.map(json.dumps)
         | JSON.map(lambda value: json.dumps({'return': value})))
SETTINGS = hypothesis.settings(max_examples=300, deadline=None)


class TestParsers(testtools.TestCase):

    def assertValueOrGuestAgentError(self, parse, *args):
        try:
            return parse(*args)
        except guest_agent.GuestAgentError as exc:
            self.assertNotIn('\n', str(exc))
            return None

    @SETTINGS
    @hypothesis.given(REPLY)
    def test_reply(self, reply):
        self.assertValueOrGuestAgentError(guest_agent.parse_reply,
                                          'guest-exec', reply)

    @SETTINGS
    @hypothesis.given(JSON)
    def test_exec_pid(self, value):
        pid = self.assertValueOrGuestAgentError(guest_agent.parse_exec_pid,
                                                value)
        if pid is not None:
            self.assertTrue(0 < pid <= guest_agent.MAX_PID)

    @SETTINGS
    @hypothesis.given(JSON)
    def test_exec_status(self, value):
        status = self.assertValueOrGuestAgentError(
            guest_agent.parse_exec_status, value)
        if status is not None:
            self.assertIsInstance(status[0], bool)
            self.assertIsInstance(status[1], bytes)

    @SETTINGS
    @hypothesis.given(JSON)
    def test_file_chunk(self, value):
        chunk = self.assertValueOrGuestAgentError(
            guest_agent.parse_file_chunk, value)
        if chunk is not None:
            self.assertIsInstance(chunk[0], bytes)

    @SETTINGS
    @hypothesis.given(JSON)
    def test_file_handle(self, value):
        self.assertValueOrGuestAgentError(guest_agent.parse_file_handle,
                                          value)


class TestCommandsEndToEnd(testtools.TestCase):
    """run() and read_file() over any sequence of guest replies."""

    @SETTINGS
    @hypothesis.given(st.lists(REPLY, min_size=1, max_size=6))
    def test_run_and_read_file(self, replies):
        for call in (lambda: guest_agent.run(None, ['cat', '/proc/x'], 2,
                                             clock=clock),
                     lambda: guest_agent.read_file(None, '/proc/x', 4096, 2,
                                                   clock=clock)):
            guest = test_guest_agent.ScriptedGuest(replies, answer_s=0.3)
            clock = guest.clock
            with mock.patch.object(guest_agent, '_send', guest.send), \
                    mock.patch.object(guest_agent, 'EXEC_POLL_S', 0.0):
                try:
                    self.assertIsInstance(call(), bytes)
                except guest_agent.GuestAgentError as exc:
                    self.assertNotIn('\n', str(exc))
            self.assertLessEqual(guest.now_s, 2 + 1 + 0.3)
