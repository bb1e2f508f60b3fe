"""The agent's interval: grouping, policy calls, leases and actuation.

The collector, actuator and policy are tiny hand-written fakes; the time
is passed in, so nothing sleeps.
"""

import dataclasses
import logging
import threading
import types

import fixtures
from oslo_config import cfg
from oslo_config import fixture as config_fixture
import testtools

from iothrottle.compute import agent as agent_mod
from iothrottle.compute import collector as collector_mod
from iothrottle.compute import instances
from iothrottle.compute import iotune
from iothrottle.compute import stats
from iothrottle import conf as iothrottle_conf
from iothrottle.controller import model
from iothrottle.controller import policy as policy_mod
from iothrottle import tiers

SHARED = 'nbd+unix:///run/store.sock'
LOCAL = 'local:h:sda'
TIERS = tiers.parse_tiers('''
tiers: {gold: {min_iops: 50, max_iops: 300}}
flavors: {m1.gold: gold}
''')


def _sample(uuid, storage_domain, iops=100.0, flavor='m1.gold'):
    return model.DiskSample(instance_uuid=uuid, device='vda',
                            storage_domain=storage_domain, interval_s=1.0,
                            write_iops=iops, instance_name='vm-' + uuid,
                            flavor=flavor)


def _instance(uuid, storage_domain, flavor='m1.gold'):
    return instances.Instance(
        uuid=uuid, domain_name='instance-' + uuid, name='vm-' + uuid,
        flavor=flavor, disks=(instances.Disk('vda', 'file', '/x',
                                             storage_domain),))


class FakeCollector:
    """Returns the samples it is told to, one collection per call."""

    def __init__(self, instances_by_uuid):
        self.instances = instances_by_uuid
        self.samples = ()
        self.errors = ()
        self.checks = 0     # check() calls
        # True: libvirt cannot be read (libvirtd restarting).
        self.unreadable = False

    def collect(self):
        if self.unreadable:
            return collector_mod.Collection(
                taken_at_s=0.0, samples=(),
                instances=types.MappingProxyType({}),
                snapshot=stats.HostSnapshot(0.0),
                errors=('cannot read domain statistics: broken pipe',),
                unreadable=True)
        return collector_mod.Collection(
            taken_at_s=0.0, samples=tuple(self.samples),
            instances=types.MappingProxyType(dict(self.instances)),
            snapshot=stats.HostSnapshot(0.0), errors=tuple(self.errors))

    def check(self):
        self.checks += 1
        return self.collect()


class FakeActuator:
    """Live and persistent limits in dicts; records every call."""

    def __init__(self):
        self.persistent = {}
        self.live = {}
        self.calls = []
        self.fail = set()
        self.gone = set()

    def _check(self, uuid, device):
        if uuid in self.gone:
            raise LookupError('domain %s is gone' % uuid)
        if uuid in self.fail:
            raise RuntimeError('libvirt said no to %s' % uuid)

    def baseline(self, uuid, device):
        self._check(uuid, device)
        return self.persistent.get((uuid, device), iotune.IoTune())

    def set_cap(self, uuid, device, cap, baseline):
        self._check(uuid, device)
        self.calls.append(('cap', uuid, cap))
        self.live[(uuid, device)] = iotune.IoTune.from_params(
            iotune.cap_params(baseline, cap))

    def in_force(self, uuid, device, cap, baseline):
        self._check(uuid, device)
        return self.live.get((uuid, device)) == iotune.IoTune.from_params(
            iotune.cap_params(baseline, cap))

    def restore(self, uuid, device, baseline):
        self._check(uuid, device)
        self.calls.append(('restore', uuid, baseline))
        self.live[(uuid, device)] = baseline

    def reconcile(self, instances_, leased):
        restored = []
        for instance in instances_:
            key = (instance.uuid, 'vda')
            if key in self.persistent and (
                    self.live.get(key) != self.persistent[key]):
                self.live[key] = self.persistent[key]
                restored.append('%s/vda' % instance.uuid)
        return restored, []


class ScriptedPolicy:
    """Caps or releases what the test says; remembers what it saw."""

    def __init__(self):
        self.views = []
        self.decide_for = {}
        self.early_for = {}
        # States for which a check is not wanted.
        self.unchecked = set()
        self.fail_on = set()

    def initial_state(self):
        return 0

    def decide(self, view, state):
        if view.storage_domain in self.fail_on:
            raise ArithmeticError('bad model for ' + view.storage_domain)
        self.views.append((view, state))
        decisions = tuple(self.decide_for.get(view.storage_domain, ()))
        return policy_mod.Outcome(decisions=decisions, state=state + 1)

    def wants_check(self, state):
        return state not in self.unchecked

    def early(self, view, state):
        self.views.append((view, 'early', state))
        decisions = tuple(self.early_for.get(view.storage_domain, ()))
        return policy_mod.Outcome(decisions=decisions, state=state + 100)


def _cap(uuid, iops, lease_s=0.0):
    return model.Decision(uuid, 'vda', model.CAP, 'test',
                          cap=model.Cap(iops, 0), lease_s=lease_s)


def _release(uuid):
    return model.Decision(uuid, 'vda', model.RELEASE, 'test')


class AgentTestCase(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.logger = self.useFixture(fixtures.FakeLogger(name='iothrottle'))
        conf = cfg.ConfigOpts()
        iothrottle_conf.register_opts(conf)
        conf([])
        # The fixture undoes the overrides, which oslo.config keeps on
        # the (shared) option group.
        self.useFixture(config_fixture.Config(conf)).config(
            group='controller', lease_s=30.0, interval_s=1.0)
        self.conf = conf
        self.collector = FakeCollector({
            'a': _instance('a', SHARED), 'b': _instance('b', SHARED),
            'c': _instance('c', LOCAL)})
        self.collector.samples = [_sample('a', SHARED), _sample('b', SHARED),
                                  _sample('c', LOCAL)]
        self.actuator = FakeActuator()
        self.policy = ScriptedPolicy()
        self.agent = agent_mod.Agent(
            conf, self.collector, self.actuator, self.policy, TIERS,
            types.SimpleNamespace(
                capacity_of=lambda key: model.Capacity(200, 1e8)))


class TestStep(AgentTestCase):

    def test_one_view_per_storage_domain(self):
        report = self.agent.step(10.0)
        views = {view.storage_domain: view for view, _ in self.policy.views}
        self.assertEqual({SHARED, LOCAL}, set(views))
        self.assertEqual(['a/vda', 'b/vda'],
                         [d.disk_id for d in views[SHARED].disks])
        self.assertEqual(10.0, views[SHARED].now_s)
        self.assertEqual(model.Capacity(200, 1e8), views[SHARED].capacity)
        self.assertEqual(50, views[SHARED].disks[0].guarantee.min_iops)
        self.assertIsNone(views[SHARED].disks[0].cap)
        self.assertEqual(3, len(report.samples))
        self.assertEqual((), report.errors)

    def test_state_carried_per_domain(self):
        self.agent.step(1.0)
        self.agent.step(2.0)
        states = [(v.storage_domain, s) for v, s in self.policy.views]
        self.assertEqual([(LOCAL, 0), (SHARED, 0), (LOCAL, 1), (SHARED, 1)],
                         states)

    def test_report_shows_each_domains_state_after_the_interval(self):
        report = self.agent.step(1.0)
        self.assertEqual({LOCAL: 1, SHARED: 1}, dict(report.states))
        report = self.agent.step(2.0)
        self.assertEqual({LOCAL: 2, SHARED: 2}, dict(report.states))

    def test_cap_applied_leased_and_shown_next_interval(self):
        self.policy.decide_for[SHARED] = [_cap('a', 120)]
        report = self.agent.step(1.0)
        self.assertEqual([('cap', 'a', model.Cap(120, 0))],
                         self.actuator.calls)
        self.assertEqual({'a/vda': model.Cap(120, 0)}, dict(report.caps))
        self.assertEqual(1, len(report.decisions))
        self.policy.decide_for[SHARED] = []
        self.agent.step(2.0)
        view = self.policy.views[-1][0]
        self.assertEqual(model.Cap(120, 0), view.disks[0].cap)

    def test_cap_clamped_to_guarantee_max_and_baseline(self):
        self.actuator.persistent[('b', 'vda')] = iotune.IoTune(
            total_iops_sec=90)
        self.policy.decide_for[SHARED] = [_cap('a', 1000), _cap('b', 1000)]
        report = self.agent.step(1.0)
        self.assertEqual(model.Cap(300, 0), report.caps['a/vda'])
        self.assertEqual(model.Cap(90, 0), report.caps['b/vda'])

    def test_each_cap_change_is_logged_with_the_cap_before_it(self):
        debug = self.useFixture(fixtures.FakeLogger(
            name='iothrottle.compute.agent', level=logging.DEBUG))
        self.policy.decide_for[SHARED] = [_cap('a', 120)]
        self.agent.step(1.0)
        self.agent.step(2.0)
        self.policy.decide_for[SHARED] = [_cap('a', 90)]
        self.agent.step(3.0)
        changes = [line for line in debug.output.splitlines()
                   if 'set live' in line]
        self.assertEqual(['cap of a/vda set live: 120 IOPS (was '
                          'uncapped)', 'cap of a/vda set live: 90 IOPS '
                          '(was 120 IOPS)'],
                         [line.split(';')[0] for line in changes])

    def test_renewal_with_same_cap_does_not_touch_libvirt(self):
        self.policy.decide_for[SHARED] = [_cap('a', 120)]
        self.agent.step(1.0)
        self.agent.step(2.0)
        self.assertEqual(1, len(self.actuator.calls))
        self.assertEqual(32.0, self.agent.leases.get('a/vda').expires_at_s)

    def test_a_cap_libvirt_would_be_given_as_before_is_not_set_again(self):
        # QEMU empties its throttle buckets on every set, the same
        # limits or not: a decision that moved by less than half a
        # request a second renews the lease, and leaves libvirt alone.
        self.policy.decide_for[SHARED] = [_cap('a', 120)]
        self.agent.step(1.0)
        self.policy.decide_for[SHARED] = [_cap('a', 120.3)]
        report = self.agent.step(2.0)
        self.assertEqual([('cap', 'a', model.Cap(120, 0))],
                         self.actuator.calls)
        lease = self.agent.leases.get('a/vda')
        self.assertEqual(model.Cap(120.3, 0), lease.cap)
        self.assertEqual(32.0, lease.expires_at_s)
        self.assertEqual(model.Cap(120.3, 0), report.caps['a/vda'])
        self.policy.decide_for[SHARED] = [_cap('a', 120.6)]
        self.agent.step(3.0)
        self.assertEqual([('cap', 'a', model.Cap(120, 0)),
                          ('cap', 'a', model.Cap(120.6, 0))],
                         self.actuator.calls)

    def test_the_same_limits_lost_behind_the_agent_are_set_again(self):
        self.policy.decide_for[SHARED] = [_cap('a', 40)]
        self.agent.step(1.0)
        self.actuator.live[('a', 'vda')] = iotune.IoTune(total_iops_sec=250)
        self.policy.decide_for[SHARED] = [_cap('a', 40.2)]
        self.agent.step(2.0)
        self.assertEqual([('cap', 'a', model.Cap(40, 0)),
                          ('cap', 'a', model.Cap(40.2, 0))],
                         self.actuator.calls)
        self.assertIn('no longer in force', self.logger.output)

    def test_release_restores_baseline(self):
        baseline = iotune.IoTune(total_iops_sec=250)
        self.actuator.persistent[('a', 'vda')] = baseline
        self.policy.decide_for[SHARED] = [_cap('a', 120)]
        self.agent.step(1.0)
        self.policy.decide_for[SHARED] = [_release('a')]
        report = self.agent.step(2.0)
        self.assertEqual(('restore', 'a', baseline), self.actuator.calls[-1])
        self.assertEqual(baseline, self.actuator.live[('a', 'vda')])
        self.assertEqual({}, dict(report.caps))

    def test_expiry_restores_without_any_controller(self):
        self.policy.decide_for[SHARED] = [_cap('a', 120, lease_s=5.0)]
        self.agent.step(0.0)
        self.policy.decide_for[SHARED] = []
        self.assertEqual((), self.agent.step(4.9).expired)
        report = self.agent.step(5.0)
        self.assertEqual(('a/vda',), report.expired)
        self.assertEqual('restore', self.actuator.calls[-1][0])
        self.assertEqual({}, dict(report.caps))

    def test_expired_lease_of_vanished_domain_dropped(self):
        self.policy.decide_for[SHARED] = [_cap('a', 120, lease_s=5.0)]
        self.agent.step(0.0)
        self.policy.decide_for[SHARED] = []
        self.actuator.gone.add('a')
        report = self.agent.step(6.0)
        self.assertEqual(('a/vda',), report.expired)
        self.assertEqual(0, len(self.agent.leases))

    def test_failed_restore_keeps_lease_for_retry(self):
        self.policy.decide_for[SHARED] = [_cap('a', 120, lease_s=5.0)]
        self.agent.step(0.0)
        self.policy.decide_for[SHARED] = []
        self.actuator.fail.add('a')
        report = self.agent.step(6.0)
        self.assertEqual((), report.expired)
        self.assertIn('a/vda', self.agent.leases)
        self.assertIn('libvirt said no', report.errors[0])
        self.actuator.fail.clear()
        self.assertEqual(('a/vda',), self.agent.step(7.0).expired)

    def test_failed_cap_on_one_disk_does_not_stop_others(self):
        self.actuator.fail.add('a')
        self.policy.decide_for[SHARED] = [_cap('a', 120), _cap('b', 130)]
        report = self.agent.step(1.0)
        self.assertEqual({'b/vda': model.Cap(130, 0)}, dict(report.caps))
        self.assertEqual(1, len(report.errors))
        self.assertIn('a/vda', report.errors[0])

    def test_failed_recap_keeps_previous_lease(self):
        self.policy.decide_for[SHARED] = [_cap('a', 120)]
        self.agent.step(1.0)
        self.actuator.fail.add('a')
        self.policy.decide_for[SHARED] = [_cap('a', 60)]
        report = self.agent.step(2.0)
        self.assertEqual(model.Cap(120, 0), report.caps['a/vda'])

    def test_policy_error_in_one_domain_does_not_stop_another(self):
        self.policy.fail_on.add(SHARED)
        self.policy.decide_for[LOCAL] = [_cap('c', 40)]
        report = self.agent.step(1.0)
        self.assertEqual({'c/vda'}, set(report.caps))
        self.assertEqual(1, len(report.errors))
        self.assertIn(SHARED, report.errors[0])
        self.assertIn('bad model', report.errors[0])

    def test_decision_for_foreign_disk_ignored(self):
        self.policy.decide_for[LOCAL] = [_cap('a', 40)]
        report = self.agent.step(1.0)
        self.assertEqual({}, dict(report.caps))
        self.assertIn('not a disk of storage domain', report.errors[0])

    def test_collection_errors_reported(self):
        self.collector.errors = ('domain x skipped: gone',)
        self.assertEqual(('domain x skipped: gone',),
                         self.agent.step(1.0).errors)

    def test_release_all(self):
        self.policy.decide_for[SHARED] = [_cap('a', 120), _cap('b', 120)]
        self.agent.step(1.0)
        self.assertEqual((), self.agent.release_all())
        self.assertEqual(0, len(self.agent.leases))
        self.assertEqual(2, sum(1 for call in self.actuator.calls
                                if call[0] == 'restore'))

    def test_reconcile_restores_leftovers(self):
        self.actuator.persistent[('a', 'vda')] = iotune.IoTune(
            total_iops_sec=250)
        self.actuator.live[('a', 'vda')] = iotune.IoTune(total_iops_sec=10)
        self.assertEqual(('a/vda',), self.agent.reconcile())


class TestUnknownFlavor(AgentTestCase):

    def test_no_guarantee_and_one_warning(self):
        self.collector.instances['a'] = _instance('a', SHARED, 'm1.odd')
        self.collector.samples = [_sample('a', SHARED, flavor='m1.odd')]
        for now_s in (1.0, 2.0, 3.0):
            self.agent.step(now_s)
        view = self.policy.views[-1][0]
        self.assertIs(model.NO_GUARANTEE, view.disks[0].guarantee)
        lines = [line for line in self.logger.output.splitlines()
                 if 'm1.odd' in line]
        self.assertEqual(1, len(lines))
        self.assertIn('vm-a', lines[0])


class TestRun(AgentTestCase):

    def test_ticks_on_a_grid_without_drift(self):
        self.assertEqual(12.0, agent_mod.next_tick(10.0, 2.0, 10.5))
        # A step that took 2.5 intervals: skip the missed ticks.
        self.assertEqual(16.0, agent_mod.next_tick(10.0, 2.0, 15.0))
        self.assertEqual(14.0, agent_mod.next_tick(10.0, 2.0, 12.0))

    def test_run_steps_until_stopped_then_lifts_caps(self):
        stop = threading.Event()
        reports = []
        self.policy.decide_for[SHARED] = [_cap('a', 120)]

        def on_step(report):
            reports.append(report)
            if len(reports) == 3:
                stop.set()
        now = [0.0]

        def clock():
            # A full interval per reading: run() never has to wait.
            now[0] += 1.0
            return now[0]
        self.agent.clock = clock
        self.agent.run(stop, on_step=on_step)
        self.assertEqual(3, len(reports))
        self.assertEqual(0, len(self.agent.leases))
        self.assertEqual('restore', self.actuator.calls[-1][0])


class TestCheckIdle(AgentTestCase):
    """Checks within an interval ([controller] idle_check_s)."""

    def test_check_times_between_two_ticks(self):
        self.assertEqual([10.5, 11.0, 11.5],
                         agent_mod.check_times(10.0, 12.0, 0.5))
        # None within half a check of the next tick.
        self.assertEqual([10.7, 11.4],
                         [round(t, 6) for t in
                          agent_mod.check_times(10.0, 12.0, 0.7)])
        self.assertEqual([], agent_mod.check_times(10.0, 12.0, 0.0))

    def test_a_check_runs_the_policys_early_hook_on_decided_domains(self):
        self.policy.early_for[SHARED] = [_cap('a', 120, lease_s=30.0)]
        # Before any decision there is nothing to check against.
        self.assertEqual((), self.agent.check_idle(0.5).decisions)
        self.agent.step(1.0)
        report = self.agent.check_idle(1.5)
        self.assertEqual(['a/vda'], [d.disk_id for d in report.decisions])
        self.assertEqual(120, report.caps['a/vda'].iops)
        self.assertEqual(120, self.actuator.live[('a', 'vda')].total_iops_sec)
        early = [(v.storage_domain, s) for v, *rest, s in self.policy.views
                 if rest == ['early']]
        # Each domain's state goes through the hook and comes back; the
        # check before any decision sampled nothing.
        self.assertEqual([(LOCAL, 1), (SHARED, 1)], early)
        self.assertEqual(1, self.collector.checks)
        self.agent.step(2.0)
        self.assertEqual([(LOCAL, 101), (SHARED, 101)],
                         [(v.storage_domain, s)
                          for v, s in self.policy.views[-2:]])

    def test_no_domain_wanting_a_check_samples_nothing(self):
        self.agent.step(1.0)
        self.policy.unchecked = {1}
        report = self.agent.check_idle(1.5)
        self.assertEqual(((), ()), (report.samples, report.decisions))
        self.assertEqual(0, self.collector.checks)
        self.policy.unchecked = set()
        self.assertEqual(3, len(self.agent.check_idle(1.75).samples))

    def test_run_checks_between_steps(self):
        self.useFixture(config_fixture.Config(self.conf)).config(
            group='controller', idle_check_s=0.25)
        now = [0.0]

        class Waits(threading.Event):
            # The wait is the clock moving on: nothing sleeps.
            def wait(self, timeout=None):
                now[0] += timeout or 0.0
                return self.is_set()
        stop = Waits()
        steps = []

        def on_step(report):
            steps.append(now[0])
            if len(steps) == 2:
                stop.set()
        self.agent.clock = lambda: now[0]
        self.agent.run(stop, on_step=on_step)
        self.assertEqual([0.0, 1.0], steps)
        self.assertEqual(3, self.collector.checks)


class TestLeaseBounds(AgentTestCase):

    def setUp(self):
        super().setUp()
        self.agent.observe(0.0)

    def test_nan_lease_rejected_in_one_line_naming_the_disk(self):
        errors = self.agent.apply_decisions(
            [(_cap('a', 40, lease_s=float('nan')), model.NO_GUARANTEE)],
            now_s=1.0)
        self.assertEqual(1, len(errors))
        self.assertIn('a/vda', errors[0])
        self.assertNotIn('\n', errors[0])
        self.assertEqual({}, self.agent.leases.caps())
        self.assertEqual([], self.actuator.calls)

    def test_absurd_lease_clamped_to_max_lease_s(self):
        self.assertEqual((), self.agent.apply_decisions(
            [(_cap('a', 40, lease_s=1e12), model.NO_GUARANTEE)], now_s=1.0))
        lease = self.agent.leases.get('a/vda')
        self.assertEqual(1.0 + self.conf.agent.max_lease_s,
                         lease.expires_at_s)
        self.agent.apply_decisions(
            [(_cap('a', 40, lease_s=1e12), model.NO_GUARANTEE)], now_s=1.0)
        self.assertEqual(1, self.logger.output.count('held to 120.0 s'))
        self.agent.step(1.0 + self.conf.agent.max_lease_s)
        self.assertNotIn('a/vda', self.agent.leases)


class TestOwnDisksOnly(AgentTestCase):

    def setUp(self):
        super().setUp()
        self.agent.observe(0.0)

    def test_decision_for_a_disk_not_collected_is_rejected(self):
        errors = self.agent.apply_decisions(
            [(_cap('zz', 40), model.NO_GUARANTEE),
             (_cap('a', 40), model.NO_GUARANTEE)], now_s=1.0)
        self.assertEqual(1, len(errors))
        self.assertIn('zz/vda', errors[0])
        self.assertIn('not a disk of a running domain', errors[0])
        self.assertEqual(['a/vda'], list(self.agent.leases.caps()))
        self.assertEqual([('cap', 'a', model.Cap(40, 0))],
                         self.actuator.calls)

    def test_only_the_latest_collection_counts(self):
        del self.collector.instances['b']
        self.collector.samples = [_sample('a', SHARED)]
        self.agent.observe(1.0)
        errors = self.agent.apply_decisions(
            [(_cap('b', 40), model.NO_GUARANTEE)], now_s=1.0)
        self.assertIn('b/vda', errors[0])
        self.assertEqual({}, self.agent.leases.caps())

    def test_nothing_is_owned_before_the_first_collection(self):
        agent = agent_mod.Agent(self.conf, self.collector, self.actuator,
                                None, None, None)
        self.assertEqual(1, len(agent.apply_decisions(
            [(_cap('a', 40), model.NO_GUARANTEE)], now_s=1.0)))
        self.assertEqual([], self.actuator.calls)

    def test_zero_cap_on_both_axes_is_refused(self):
        # Cap(0, 0) is "unlimited" to libvirt: as a cap it would lift one.
        self.agent.apply_decisions([(_cap('a', 40), model.NO_GUARANTEE)],
                                   now_s=1.0)
        errors = self.agent.apply_decisions(
            [(_cap('a', 0), model.NO_GUARANTEE)], now_s=2.0)
        self.assertEqual(1, len(errors))
        self.assertIn('a/vda', errors[0])
        self.assertIn('0 means unlimited', errors[0])
        self.assertEqual(model.Cap(40, 0), self.agent.leases.caps()['a/vda'])
        self.assertEqual(1, len(self.actuator.calls))


class SlowBalloon:
    """A balloon step that waits until the test lets it go."""

    def __init__(self):
        self.entered = threading.Event()
        self.go = threading.Event()

    def maybe_step(self, collection, now_s):
        self.entered.set()
        self.go.wait(30)


class TestSlowGuestDoesNotBlockDecisions(AgentTestCase):

    def test_decisions_apply_while_the_balloon_step_waits(self):
        # Before the fix observe() held the agent lock across the balloon
        # step, so a slow guest agent held back the conductor's decisions.
        self.agent.observe(0.0)
        balloon = SlowBalloon()
        self.addCleanup(balloon.go.set)
        self.agent.balloon = balloon
        observer = threading.Thread(target=self.agent.observe, args=(1.0,))
        observer.start()
        self.addCleanup(observer.join, 30)
        self.assertTrue(balloon.entered.wait(30))
        applier = threading.Thread(target=self.agent.apply_decisions, args=(
            [(_cap('a', 40), model.NO_GUARANTEE)], 1.0))
        applier.start()
        applier.join(10)
        self.assertFalse(applier.is_alive())
        self.assertIn('a/vda', self.agent.leases)
        balloon.go.set()
        applier.join(30)


class TestNewDomainIdentity(AgentTestCase):

    def setUp(self):
        super().setUp()
        self.collector.instances['a'] = dataclasses.replace(
            self.collector.instances['a'], domain_id=1)
        self.actuator.persistent[('a', 'vda')] = iotune.IoTune(
            total_iops_sec=250)
        self.agent.observe(0.0)

    def restart(self, uuid, domain_id):
        self.collector.instances[uuid] = dataclasses.replace(
            self.collector.instances[uuid], domain_id=domain_id)

    def test_a_resized_domain_is_capped_afresh_on_its_new_baseline(self):
        # Before the fix the lease outlived the restart: the renewal of
        # the same cap was skipped (no cap on the new process) and the
        # old flavor's baseline was restored at expiry.
        cap = [(_cap('a', 40), model.NO_GUARANTEE)]
        self.agent.apply_decisions(cap, now_s=0.0)
        self.restart('a', 2)
        resized = iotune.IoTune(total_iops_sec=500)
        self.actuator.persistent[('a', 'vda')] = resized
        self.actuator.live[('a', 'vda')] = resized
        self.agent.observe(1.0)
        self.assertNotIn('a/vda', self.agent.leases)
        self.assertEqual((), self.agent.apply_decisions(cap, now_s=1.0))
        self.assertEqual([('cap', 'a', model.Cap(40, 0))] * 2,
                         self.actuator.calls)
        self.assertEqual(resized, self.agent.leases.get('a/vda').baseline)

    def test_a_renewal_sets_a_cap_that_was_lost_again(self):
        # Found by iothrottle-bench faults (libvirtd-restart): the cap
        # was lifted behind the agent's back (by the bench's observer,
        # see test_an_unreadable_host_makes_no_domain_arrive_again),
        # and every renewal of the same cap was skipped as "unchanged".
        cap = [(_cap('a', 40), model.NO_GUARANTEE)]
        self.agent.apply_decisions(cap, now_s=0.0)
        self.agent.apply_decisions(cap, now_s=1.0)
        self.assertEqual(1, len(self.actuator.calls))   # in force: kept
        self.actuator.live[('a', 'vda')] = iotune.IoTune(
            total_iops_sec=250)
        self.assertEqual((), self.agent.apply_decisions(cap, now_s=2.0))
        self.assertEqual([('cap', 'a', model.Cap(40, 0))] * 2,
                         self.actuator.calls)
        self.assertIn('no longer in force', self.logger.output)

    def test_an_unreadable_host_makes_no_domain_arrive_again(self):
        # Found by iothrottle-bench faults (libvirtd-restart): libvirtd
        # down read as "no domain runs", so once it answered every
        # domain without a lease of this agent arrived again and was
        # reconciled: a cap another agent held on it was lifted.
        self.actuator.persistent[('b', 'vda')] = iotune.IoTune(
            total_iops_sec=250)
        self.agent.observe(1.0)
        capped = iotune.IoTune(total_iops_sec=9)
        self.actuator.live[('b', 'vda')] = capped   # not this agent's
        self.collector.unreadable = True
        report = self.agent.observe(2.0)
        self.assertIn('broken pipe', report.errors[0])
        self.collector.unreadable = False
        self.agent.observe(3.0)
        self.assertEqual(capped, self.actuator.live[('b', 'vda')])

    def test_an_unreadable_host_keeps_its_disks_own(self):
        # A decision that arrives once libvirtd answers again, before the
        # next collection, is for a disk this agent still runs.
        self.collector.unreadable = True
        self.agent.observe(1.0)
        self.assertEqual((), self.agent.apply_decisions(
            [(_cap('a', 40), model.NO_GUARANTEE)], now_s=1.0))
        self.assertIn('a/vda', self.agent.leases)

    def test_same_identity_keeps_the_lease(self):
        self.agent.apply_decisions([(_cap('a', 40), model.NO_GUARANTEE)],
                                   now_s=0.0)
        self.agent.observe(1.0)
        self.assertIn('a/vda', self.agent.leases)

    def test_a_domain_arriving_capped_is_restored(self):
        # A migration brings a domain with the source's cap in force.
        self.collector.instances['d'] = _instance('d', SHARED)
        self.actuator.persistent[('d', 'vda')] = iotune.IoTune(
            total_iops_sec=250)
        self.actuator.live[('d', 'vda')] = iotune.IoTune(total_iops_sec=9)
        self.agent.observe(1.0)
        self.assertEqual(iotune.IoTune(total_iops_sec=250),
                         self.actuator.live[('d', 'vda')])
