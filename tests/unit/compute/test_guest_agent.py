"""The guest agent shell: malformed and slow replies, with a scripted
transport and a clock that only moves when the guest answers."""

import base64
import json

import fixtures
import testtools

from iothrottle.compute import guest_agent


class ScriptedGuest:
    """Serves reply texts in turn; each reply takes ``answer_s``."""

    def __init__(self, replies, answer_s=0.0):
        self.replies = list(replies)
        self.answer_s = answer_s
        self.now_s = 0.0
        self.requests = []

    def clock(self):
        return self.now_s

    def send(self, dom, request_json, timeout_s):
        self.requests.append((json.loads(request_json)['execute'],
                              timeout_s))
        self.now_s += self.answer_s
        reply = self.replies.pop(0) if len(self.replies) > 1 \
            else self.replies[0]
        return reply if isinstance(reply, (str, bytes)) \
            else json.dumps(reply)


def _ok(value):
    return {'return': value}


def _out(data):
    return base64.b64encode(data).decode()


class GuestAgentTestCase(testtools.TestCase):

    def guest(self, replies, answer_s=0.0):
        guest = ScriptedGuest(replies, answer_s)
        self.useFixture(fixtures.MockPatchObject(guest_agent, '_send',
                                                 guest.send))
        return guest

    def run_cat(self, guest, budget_s=2.0):
        return guest_agent.run(None, ['cat', '/proc/meminfo'], budget_s,
                               clock=guest.clock)


class TestRun(GuestAgentTestCase):

    def test_output_of_an_exited_command(self):
        guest = self.guest([_ok({'pid': 7}), _ok({'exited': False}),
                            _ok({'exited': True, 'out-data': _out(b'hi')})])
        self.assertEqual(b'hi', self.run_cat(guest))

    def test_malformed_exec_replies_are_guest_agent_errors(self):
        # Before the fix: {} raised KeyError, a list AttributeError, out
        # of the balloon step for every guest.
        for replies in ([_ok({})], [_ok([])], [_ok({'pid': True})],
                        [_ok({'pid': -3})], [_ok({'pid': 7}), _ok([1])],
                        [_ok({'pid': 7}), _ok({'exited': 'yes'})],
                        [_ok({'pid': 7}), _ok({'exited': True,
                                               'out-data': 5})],
                        [_ok({'pid': 7}), _ok({'exited': True,
                                               'out-data': '%%%'})],
                        ['[' * 100000], ['{"return": 1'], ['null']):
            exc = self.assertRaises(guest_agent.GuestAgentError,
                                    self.run_cat, self.guest(replies))
            self.assertNotIn('\n', str(exc))

    def test_a_slow_guest_gets_its_budget_and_no_more(self):
        # Each reply takes 0.5 s and the command never exits: before the
        # fix the polls went on 40 times with a 2 s timeout each.
        guest = self.guest([_ok({'pid': 7}), _ok({'exited': False})],
                           answer_s=0.5)
        exc = self.assertRaises(guest_agent.GuestAgentTimeout,
                                self.run_cat, guest, 2.0)
        self.assertIn('within 2.0 s', str(exc))
        self.assertLessEqual(guest.now_s, 2.0 + 1.0)
        self.assertTrue(all(timeout_s <= 2
                            for _, timeout_s in guest.requests))


class TestReadFile(GuestAgentTestCase):

    def test_reads_until_eof_and_closes(self):
        guest = self.guest([_ok(3), _ok({'count': 2, 'buf-b64': _out(b'ab'),
                                         'eof': False}),
                            _ok({'count': 1, 'buf-b64': _out(b'c'),
                                 'eof': True}), _ok({})])
        self.assertEqual(b'abc', guest_agent.read_file(
            None, '/proc/x', clock=guest.clock))
        self.assertEqual('guest-file-close', guest.requests[-1][0])

    def test_malformed_chunk_is_a_guest_agent_error(self):
        for chunk in ([], {'count': 'x'}, {'count': 1, 'buf-b64': None}):
            guest = self.guest([_ok(3), _ok(chunk), _ok({})])
            self.assertRaises(guest_agent.GuestAgentError,
                              guest_agent.read_file, None, '/proc/x',
                              clock=guest.clock)
