"""An agent ignores the decisions of a deposed conductor."""

import logging
import types

import fixtures
import testtools

from iothrottle.compute import agent as agent_mod
from iothrottle.controller import model
from iothrottle.rpc import agent as remote_mod
from iothrottle.rpc import fence as fence_mod
from iothrottle.rpc import wire


class TestFence(testtools.TestCase):

    def test_older_epoch_is_refused_while_the_newer_holds(self):
        fence = fence_mod.Fence()
        self.assertTrue(fence.admit('u/vda', 'c1', 100, 0.0, 10.0).admitted)
        verdict = fence.admit('u/vda', 'c2', 200, 1.0, 10.0)
        self.assertTrue(verdict.admitted)
        self.assertEqual(('c1', 100), (verdict.previous.owner,
                                       verdict.previous.epoch))
        # The deposed c1 has not noticed: ignored, c2 keeps the disk.
        self.assertFalse(fence.admit('u/vda', 'c1', 100, 2.0,
                                     10.0).admitted)
        self.assertEqual('c2', fence.record('u/vda').owner)
        # Same owner, same epoch: no handover.
        verdict = fence.admit('u/vda', 'c2', 200, 3.0, 10.0)
        self.assertTrue(verdict.admitted)
        self.assertIsNone(verdict.previous)

    def test_a_lapsed_record_lets_any_owner_in(self):
        # Back to one conductor without coordination (epoch 0).
        fence = fence_mod.Fence()
        fence.admit('u/vda', 'c2', 200, 0.0, 10.0)
        self.assertFalse(fence.admit('u/vda', '', 0, 9.9, 10.0).admitted)
        self.assertTrue(fence.admit('u/vda', '', 0, 10.0, 10.0).admitted)

    def test_disks_are_fenced_apart_and_forgotten_when_gone(self):
        fence = fence_mod.Fence()
        fence.admit('a/vda', 'c2', 200, 0.0, 10.0)
        self.assertTrue(fence.admit('b/vda', 'c1', 100, 0.0,
                                    10.0).admitted)
        fence.keep({'b/vda'})
        self.assertIsNone(fence.record('a/vda'))
        self.assertTrue(fence.admit('a/vda', 'c1', 100, 1.0,
                                    10.0).admitted)


class RecordingAgent:
    def __init__(self):
        self.applied = []

    def apply_decisions(self, pairs):
        self.applied.extend(decision for decision, _ in pairs)
        return ()


def decision(owner, epoch, iops, issued_at=1000.0):
    return wire.decision_to_dict(
        model.Decision('u', 'vda', model.CAP, 'r', model.Cap(iops, 0.0),
                       lease_s=10.0),
        issued_at=issued_at, owner=owner, epoch=epoch)


class TestRemoteAgentFence(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.log = self.useFixture(fixtures.FakeLogger(level=logging.INFO))
        self.agent = RecordingAgent()
        self.remote = remote_mod.RemoteAgent(
            self.agent, None, 'h1', 2.0,
            wall_clock=lambda: 1000.0)

    def test_deposed_owner_is_ignored_and_the_handover_logged(self):
        self.remote.apply([decision('c1', 100, 10.0)])
        self.remote.apply([decision('c2', 200, 20.0)])
        self.remote.apply([decision('c1', 100, 30.0)])
        self.assertEqual([10.0, 20.0],
                         [d.cap.iops for d in self.agent.applied])
        self.assertEqual(1, self.remote.deposed)
        self.assertIn('decided by conductor c2 (epoch 200) from now on, '
                      'was c1 (epoch 100)', self.log.output)
        self.assertIn('from conductor c1 (epoch 100) ignored',
                      self.log.output)

    def test_single_conductor_decisions_pass_as_before(self):
        for iops in (10.0, 20.0):
            self.remote.apply([wire.decision_to_dict(
                model.Decision('u', 'vda', model.CAP, 'r',
                               model.Cap(iops, 0.0), lease_s=10.0),
                issued_at=1000.0)])
        self.assertEqual(2, len(self.agent.applied))
        self.assertEqual(0, self.remote.deposed)

    def test_an_unreadable_host_keeps_its_disks_fenced(self):
        # libvirtd restarting: the report samples nothing.  Taken as
        # "every disk gone", it forgot the records, and a deposed
        # conductor's decision was admitted once libvirtd answered.
        sent = []
        self.remote.reporter = types.SimpleNamespace(submit=sent.append)
        self.agent.observe = lambda: agent_mod.StepReport(
            now_s=0.0, samples=(), decisions=(),
            caps={'u/vda': model.Cap(20.0, 0.0)}, errors=(),
            unreadable=True)
        self.remote.apply([decision('c2', 200, 20.0)])
        self.remote.step()
        self.remote.apply([decision('c1', 100, 30.0)])
        self.assertEqual([20.0], [d.cap.iops for d in self.agent.applied])
        self.assertTrue(sent[0]['unreadable'])
        # Its caps are not sent: each would be refused as a cap of a
        # disk the report does not sample (the fault matrix's log).
        self.assertEqual({}, sent[0]['caps'])
        self.assertEqual((), wire.decode_report(sent[0]).rejected)

    def test_malformed_epoch_is_refused(self):
        bad = decision('c1', 100, 10.0)
        bad['epoch'] = float('nan')
        self.remote.apply([bad])
        self.assertEqual([], self.agent.applied)
        self.assertIn('epoch must be an integer', self.log.output)
