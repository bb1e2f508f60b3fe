"""Compute RPC 1.2 ``advise``: the operator API's call to one agent, over
oslo.messaging's fake:// transport, and its reply on the wire."""

import logging

import fixtures
import testtools

from iothrottle.rpc import threads

threads.setup()

from iothrottle.api import compute  # noqa: E402
from iothrottle.compute import advice  # noqa: E402
from iothrottle.compute import inventory  # noqa: E402
from iothrottle.rpc import agent as remote_mod  # noqa: E402
from iothrottle.rpc import api as rpc_api  # noqa: E402
from iothrottle.rpc import wire  # noqa: E402
from tests.unit.compute import test_advice  # noqa: E402
from tests.unit.compute import test_inventory  # noqa: E402
from tests.unit.conductor import test_service  # noqa: E402

# Long enough for the fake transport's threads on a loaded 2-core
# machine; short, since the host-down test waits it out.
TIMEOUT_S = 1.0


class OldEndpoint(remote_mod.Endpoint):
    """An agent of the release before advice: compute RPC 1.1."""

    def __init__(self, remote):
        super().__init__(remote)
        import oslo_messaging as messaging
        self.target = messaging.Target(version='1.1')


def testbed_advisor(host):
    """The advisor of a host running the testbed's guest with 2 vCPUs
    (no sysfs: devices are not this test's subject)."""
    conn = test_inventory.FakeConn([test_inventory.FakeDomain(
        'itb-vm1', test_advice.testbed_xml(vcpus=2))])
    return inventory.Advisor(conn, host, sys_block='/nonexistent',
                             device_of=test_advice.device_of)


class TestAdvise(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.log = self.useFixture(fixtures.FakeLogger(level=logging.INFO))
        conf = test_service.conf_with()
        self.transport = rpc_api.get_transport(conf, url='fake:/')
        self.addCleanup(self.transport.cleanup)

    def serve(self, host, advisor, endpoint=remote_mod.Endpoint):
        remote = remote_mod.RemoteAgent(None, None, host, 1.0,
                                        advisor=advisor)
        server = rpc_api.get_server(self.transport,
                                    rpc_api.compute_topic(host), host,
                                    [endpoint(remote)])
        server.start()
        self.addCleanup(lambda: (server.stop(), server.wait()))

    def advise(self, host, version_cap=None):
        api = rpc_api.ComputeAPI(self.transport, version_cap=version_cap)
        return compute.advise(lambda: api, host, timeout_s=TIMEOUT_S)

    def test_the_agent_answers_its_hosts_advice(self):
        self.serve('h1', testbed_advisor('h1'))
        reply = self.advise('h1')
        self.assertEqual(('h1', 0, 1), (reply.host, reply.devices,
                                        reply.instances))
        self.assertEqual(('cannot list /nonexistent: No such file or '
                          'directory',), reply.notes)
        finding, = reply.findings
        self.assertEqual(('warning', 'vm1/vda', 'iothreads-missing', '002'),
                         (finding.severity, finding.subject, finding.rule,
                          finding.seed))

    def test_an_agent_of_the_previous_release_is_a_conflict(self):
        self.serve('h1', testbed_advisor('h1'), endpoint=OldEndpoint)
        exc = self.assertRaises(compute.Conflict, self.advise, 'h1')
        self.assertEqual('the agent of host h1 is too old to advise (it '
                         'does not serve compute RPC 1.2)', str(exc))

    def test_a_pin_below_1_2_is_a_conflict_before_any_call(self):
        self.serve('h1', testbed_advisor('h1'))
        exc = self.assertRaises(compute.Conflict, self.advise, 'h1',
                                version_cap='1.1')
        self.assertEqual('cannot ask host h1: compute RPC is pinned to 1.1 '
                         '([upgrade_levels] compute); advice needs 1.2',
                         str(exc))

    def test_a_host_without_an_agent_is_unavailable(self):
        exc = self.assertRaises(compute.Unavailable, self.advise, 'h-down')
        self.assertEqual('the agent of host h-down did not answer within '
                         '1 s (down, not running, or not in conductor mode)',
                         str(exc))

    def test_an_advisor_that_fails_is_an_error_reply(self):
        def broken():
            raise RuntimeError('sysfs on fire')
        self.serve('h1', broken)
        exc = self.assertRaises(compute.Unavailable, self.advise, 'h1')
        self.assertEqual('the agent of host h1 cannot advise: advice '
                         'failed: sysfs on fire', str(exc))

    def test_an_agent_without_libvirt(self):
        self.serve('h1', None)
        exc = self.assertRaises(compute.Unavailable, self.advise, 'h1')
        self.assertIn('no libvirt connection', str(exc))

    def test_a_malformed_reply_is_unavailable(self):
        self.serve('h1', lambda: {'host': 'h1', 'findings': 'all good',
                                  'devices': 0, 'instances': 0})
        exc = self.assertRaises(compute.Unavailable, self.advise, 'h1')
        self.assertEqual('the agent of host h1 sent a malformed reply: '
                         'advice reply: findings must be a list, got str',
                         str(exc))

    def test_an_old_agent_behind_a_broker(self):
        # A broker carries the agent's UnsupportedVersion back as a
        # RemoteError (oslo.messaging rebuilds no class of its own).
        import oslo_messaging as messaging

        class BrokerAPI:
            sends_advice = True

            def advise(self, host, timeout_s):
                raise messaging.RemoteError(
                    'UnsupportedVersion', 'Endpoint does not support RPC '
                    'version 1.2. Attempted method: advise')
        exc = self.assertRaises(compute.Conflict, compute.advise,
                                BrokerAPI, 'h1')
        self.assertIn('host h1 is too old', str(exc))

    def test_a_bus_that_cannot_be_reached(self):
        def factory():
            raise OSError('connection refused')
        exc = self.assertRaises(compute.Unavailable, compute.advise,
                                factory, 'h1')
        self.assertEqual('cannot reach the message bus to ask host h1: '
                         'connection refused', str(exc))


def finding(**changes):
    values = dict(severity='info', subject='vm1/vda', rule='discard',
                  finding='f', recommendation='r', seed=None, section=None,
                  effect='e')
    values.update(changes)
    return advice.Finding(**values)


class TestWire(testtools.TestCase):

    def reply(self, **changes):
        data = wire.advice_reply('h1', [finding()], 2, 1, ['a note'])
        data.update(changes)
        return data

    def test_round_trip(self):
        decoded = wire.decode_advice_reply(self.reply())
        self.assertEqual((finding(),), decoded.findings)
        self.assertEqual(('h1', 2, 1, ('a note',), None),
                         (decoded.host, decoded.devices, decoded.instances,
                          decoded.notes, decoded.error))

    def test_unprintable_names_are_cleaned_on_the_way_out(self):
        data = wire.advice_reply('h1', [finding(subject='vm\n1/vda')],
                                 notes=['skipped \x1b[31m'])
        decoded = wire.decode_advice_reply(data)
        self.assertEqual('vm?1/vda', decoded.findings[0].subject)
        self.assertEqual(('skipped ?[31m',), decoded.notes)

    def test_every_field_is_checked(self):
        good = wire.advice_reply('h1', [finding()])['findings'][0]
        for changes, message in (
                ({'findings': [dict(good, severity='fatal')]},
                 'finding 0: severity must be one of error, warning, '
                 'info, got fatal'),
                ({'findings': [dict(good, subject='a\nb')]},
                 'finding 0: subject has unprintable characters'),
                ({'findings': [dict(good, effect='x' * 2000)]},
                 'finding 0: effect is longer than 1024 characters'),
                ({'findings': [dict(good, seed=2)]},
                 'finding 0: seed must be a string, got int'),
                ({'findings': [good] * (wire.MAX_FINDINGS + 1)},
                 'advice reply: more than 10000 findings'),
                ({'devices': -1}, 'advice reply: devices must be a finite '
                                  'number in [0, 1e+06], got -1.0'),
                ({'instances': 1.5}, 'advice reply: devices and instances '
                                     'must be whole numbers'),
                ({'host': ''}, 'advice reply: host must not be empty'),
                ({'notes': 'none'}, 'advice reply: notes must be a list, '
                                    'got str')):
            exc = self.assertRaises(ValueError, wire.decode_advice_reply,
                                    self.reply(**changes))
            self.assertEqual(message, str(exc))

    def test_an_error_reply(self):
        decoded = wire.decode_advice_reply(
            wire.advice_reply('h1', error='cannot list the domains: x'))
        self.assertEqual(('cannot list the domains: x', ()),
                         (decoded.error, decoded.findings))
