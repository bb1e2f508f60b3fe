"""Drives the seed-000 experiment on the testbed (the shell around
:mod:`iothrottle.bench.seed000`).

One testbed serves every policy in turn: four guests on one nbdkit
store, the compute agent built exactly as ``iothrottle-compute
--standalone`` builds it, with the policy under test.  The store's
capacity is measured first (the burster alone with 8 processes), so the
controller works from a learned figure, not the configured delay.
"""

import contextlib
import dataclasses
import threading
import time

import libvirt

from iothrottle.bench import peers
from iothrottle.bench import peers_libvirt
from iothrottle.bench import seed000
from iothrottle.bench import settings
from iothrottle.compute import actuator as actuator_mod
from iothrottle.compute import agent as agent_mod
from iothrottle.compute import capacity as capacity_mod
from iothrottle.compute import collector as collector_mod
from iothrottle.controller import model
from iothrottle.controller import policy as policy_mod
from iothrottle import testbed
from iothrottle import tiers as tiers_mod

# The delay filter charges per request, not per byte; bytes over the
# unix socket are nearly free.  10 GB/s keeps the byte term of the cost
# model negligible, as it is on this store.
STORE_MAX_BYTES_SEC = 10e9

# Processes the burster runs while the store's capacity is measured:
# enough to keep nbdkit's single queue always busy.
CALIBRATION_PROCS = 8


def calibration_procs(guests):
    """Writers per guest when ``guests`` share the calibration load:
    ``CALIBRATION_PROCS`` in all, the first guests one more where they
    do not divide, and one each when there are more guests (pure)."""
    if guests < 1:
        raise ValueError('calibration needs a guest, got %r' % guests)
    each, rest = divmod(max(CALIBRATION_PROCS, guests), guests)
    return [each + (k < rest) for k in range(guests)]


# An idle store: total below this many IOPS ends the drain between runs.
IDLE_IOPS = 1.0


def ticks(interval_s, count):
    """Yield the elapsed seconds at ``count`` ticks of a fixed grid."""
    for elapsed_s, is_tick in schedule(interval_s, count):
        if is_tick:
            yield elapsed_s


def schedule(interval_s, count, check_s=0.0):
    """Yield ``(elapsed seconds, is_tick)`` at ``count`` ticks of a
    fixed grid and, between them, at the agent's checks every
    ``check_s`` (``agent.check_times``; none for 0)."""
    start_s = tick_s = time.monotonic()
    pause = threading.Event()
    for _ in range(count):
        for check_at_s in agent_mod.check_times(
                tick_s, tick_s + interval_s, check_s):
            pause.wait(max(0.0, check_at_s - time.monotonic()))
            yield check_at_s - start_s, False
        tick_s += interval_s
        # Waiting out the measurement window is the measurement.
        pause.wait(max(0.0, tick_s - time.monotonic()))
        yield tick_s - start_s, True


class WatchOnly:
    """The actuator of :meth:`Seed000Run.observer`.  An agent reconciles
    a domain it sees for the first time, or again after losing sight of
    it: a cap no lease of its own explains is lifted.  An observer has
    no leases, so with a real actuator it lifted the real agent's caps
    (the fault matrix's libvirtd-restart, 2026-11-28: one interval
    after libvirtd came back).  This one reconciles nothing and refuses
    every other call."""

    def reconcile(self, instances, leased):
        return (), ()

    def _refuse(self, *args):
        raise RuntimeError('an observer touches no limits')

    baseline = set_cap = in_force = restore = _refuse


def plan_tiers(plan):
    """Each VM's guarantee as a standalone tiers document."""
    flavors = {vm.flavor: {'min_bytes_sec': vm.guarantee_kb_s * 1024}
               for vm in plan.vms}
    return tiers_mod.parse_tiers(
        _yaml({'tiers': {}, 'flavors': flavors}), source='seed000 plan')


def _yaml(document):
    import yaml
    return yaml.safe_dump(document)


class Seed000Run:
    """One testbed, several policies; see the module docstring."""

    def __init__(self, plan, out, prefix='itb-s000-', block_layer=None,
                 config_files=()):
        self.plan = plan
        self.out = out
        self.prefix = prefix
        # The operator's files the agents read (bench.settings); none:
        # the project's defaults.
        self.config_files = tuple(config_files)
        # None: the plain NBD testbed; a scheduler name: the store under
        # a host block device with that scheduler (testbed.blocklayer).
        self.block_layer = block_layer
        self.capacity = None
        self._tb = None     # the running Testbed

    def guests(self):
        return [testbed.GuestSpec(name=vm.name, flavor=vm.flavor,
                                  project='bench', memory_mb=128,
                                  disk_mb=256)
                for vm in self.plan.vms]

    def run(self, policies, on_interval=None):
        """Run every policy; returns ({policy: summary}, {policy:
        [Interval]})."""
        results, series = {}, {}
        with testbed.Testbed(self.guests(), delay_ms=self.plan.delay_ms,
                             prefix=self.prefix,
                             block_layer=self.block_layer) as tb:
            conn = libvirt.open(tb.uri)
            try:
                self.capacity = self.calibrate(tb, conn)
                self.out.write('store capacity measured: %.1f IOPS at '
                               '%d KB (%.0f KB/s)\n' % (
                                   self.capacity.max_iops,
                                   self.plan.block_kb,
                                   self.capacity.max_iops
                                   * self.plan.block_kb))
                for name in policies:
                    self.out.write('-- policy %s\n' % name)
                    intervals = self.run_policy(tb, conn, name, on_interval)
                    series[name] = intervals
                    results[name] = seed000.summarize(self.plan, intervals)
            finally:
                conn.close()
        return results, series

    def agent(self, conn, policy_name, capacity, actuator=None):
        conf = settings.bench_conf(
            self.plan, peers.agent_policy(policy_name), self.config_files)
        return agent_mod.Agent(
            conf, collector_mod.Collector(conn),
            actuator or self.actuator(conn, policy_name),
            policy_mod.load_policy(conf), plan_tiers(self.plan),
            capacity_mod.CapacityTable(default=capacity, by_domain={}))

    def observer(self, conn, capacity):
        """An agent that measures the guests while real agents (other
        processes, other hosts) control them: the ``none`` policy
        decides nothing, and its actuator (:class:`WatchOnly`) touches
        no limit, since every cap it sees is theirs."""
        return self.agent(conn, 'none', capacity, actuator=WatchOnly())

    def actuator(self, conn, policy_name):
        """Where ``policy_name``'s caps go: QEMU's throttle groups, or
        blk-throttle on the block layer's disk for that peer."""
        if policy_name == peers.BLK_THROTTLE:
            return peers_libvirt.BlkThrottleActuator(
                conn, self._tb.blocklayer.disk_node)
        return actuator_mod.Actuator(conn)

    def floors(self):
        """{VM name: its floor in requests/s}: what the store charges
        for (the bfq-weight peer's weights are proportional to it)."""
        return {vm.name: vm.guarantee_kb_s / self.plan.block_kb
                for vm in self.plan.vms}

    def calibrate(self, tb, conn, guests=None):
        """The store's IOPS at full parallelism
        (``seed000.sustained_iops``): ``CALIBRATION_PROCS`` writers of
        the plan's requests in its first guest, or spread over
        ``guests`` (``(VM name, request KB)`` pairs, at least one writer
        each: ``calibration_procs``)."""
        guests = list(guests or [(self.plan.vms[0].name,
                                  self.plan.block_kb)])
        probe = self.agent(conn, 'none', model.Capacity(1.0, 1.0))
        probe.step()
        started = []
        try:
            for (name, block_kb), procs in zip(
                    guests, calibration_procs(len(guests))):
                tb.start_load(name, testbed.Load(
                    procs=procs, block_kb=block_kb, rw='randwrite'))
                started.append(name)
            ticks = [sum(s.iops for s in report.samples) for report in
                     self._ticks(probe, 1 + seed000.CALIBRATION_TICKS)]
        finally:
            for name in started:
                tb.stop_load(name)
        self._drain(probe)
        return model.Capacity(max_iops=seed000.sustained_iops(ticks),
                              max_bytes_sec=STORE_MAX_BYTES_SEC)

    def run_policy(self, tb, conn, policy_name, on_interval=None):
        self._tb = tb
        agent = self.agent(conn, policy_name, self.capacity)
        with self._peer(conn, tb, policy_name):
            return self.observe(tb, agent, policy_name, on_interval,
                                finish=agent.release_all)

    def _peer(self, conn, tb, policy_name):
        """What a kernel peer's run is wrapped in: the BFQ weights, or
        blk-throttle limits lifted before and after it."""
        if policy_name in peers.WEIGHTED:
            return peers_libvirt.bfq_weighted(conn, tb, self.floors(),
                                              self.out)
        if policy_name == peers.BLK_THROTTLE:
            return peers_libvirt.throttle_lifted(conn, tb)
        return contextlib.nullcontext()

    def observe(self, tb, agent, policy_name, on_interval=None,
                caps_of=None, finish=None):
        """Run the plan's loads once and return its Intervals, measured
        by ``agent`` on the tick grid.  ``caps_of(names)``, when given,
        replaces the caps of each report (uuid/dev -> Cap): the live caps
        of an agent elsewhere.  ``finish()`` runs once the loads stop,
        before the store drains."""
        plan = self.plan
        agent.step()   # first sight: a baseline for the counters
        names = {tb.instance_uuid(vm.name): vm.name for vm in plan.vms}
        self.start_loads(tb)
        start_s = time.monotonic()
        intervals = []
        count = int(round(plan.duration_s / plan.interval_s))
        try:
            for report in self._ticks(agent, count):
                if caps_of is not None:
                    report = dataclasses.replace(report,
                                                 caps=caps_of(names))
                interval = self.interval(report, names, start_s)
                intervals.append(interval)
                if on_interval is not None:
                    on_interval(policy_name, interval, report)
                self.after_interval(tb, interval)
        finally:
            for vm in plan.vms:
                tb.stop_load(vm.name)
            if finish is not None:
                finish()
        self._drain(agent)
        return intervals

    def load(self, vm):
        """The testbed Load of ``vm`` (a VmPlan) in this plan."""
        plan = self.plan
        return testbed.Load(
            procs=vm.procs, max_procs=vm.max_procs, ramp_s=plan.ramp_s,
            block_kb=plan.block_kb, rw='randwrite',
            rate_kb_s=vm.rate_kb_s or None)

    def start_loads(self, tb):
        """Every VM's load of the plan, started now."""
        for vm in self.plan.vms:
            tb.start_load(vm.name, self.load(vm))

    def after_interval(self, tb, interval):
        """Called after each measured interval while the loads run
        (seed 000's plan has nothing to do: its ramp runs in the guest)."""

    def _ticks(self, agent, count):
        """``count`` agent steps on a fixed grid of interval_s, with the
        agent's checks between them (``[controller] idle_check_s``):
        each step's report carries the decisions its interval's checks
        made, before its own."""
        checked = []
        for _, is_tick in schedule(self.plan.interval_s, count,
                                   agent.conf.controller.idle_check_s):
            if not is_tick:
                checked.extend(agent.check_idle().decisions)
                continue
            report = agent.step()
            if checked:
                report = dataclasses.replace(
                    report, decisions=tuple(checked) + report.decisions)
                checked = []
            yield report

    def _drain(self, agent, max_intervals=15):
        """Wait until the store is idle (queued requests finished)."""
        for report in self._ticks(agent, max_intervals):
            if sum(s.iops for s in report.samples) < IDLE_IOPS:
                return

    def interval(self, report, names, start_s):
        """One Interval of ``report`` (anything with now_s, samples,
        caps and collect_s), VMs named through ``names`` (uuid -> VM)."""
        kb_s, iops, weighted = {}, 0.0, 0.0
        length_s = self.plan.interval_s
        for s in report.samples:
            name = names.get(s.instance_uuid)
            if name is None:
                continue
            kb_s[name] = kb_s.get(name, 0.0) + s.bytes_sec / 1024.0
            iops += s.iops
            weighted += s.iops * s.latency_s
            length_s = s.interval_s
        caps = {names[d.split('/')[0]]: c.iops
                for d, c in report.caps.items()
                if d.split('/')[0] in names}
        return seed000.Interval(
            end_s=report.now_s - start_s, length_s=length_s, kb_s=kb_s,
            latency_ms=weighted / iops * 1e3 if iops else 0.0, caps=caps,
            collect_ms=report.collect_s * 1e3)
