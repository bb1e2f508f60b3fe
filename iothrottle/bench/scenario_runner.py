"""Drives the randomized scenarios on the testbed (the shell around
:mod:`iothrottle.bench.scenarios`).

One testbed serves every plan and policy: as many guests as the largest
plan, on one nbdkit store whose capacity is measured first (as for seed
000: one guest, eight writers) and again before each plan with every
guest of the plan writing (``plan_capacity``): the plans are scored
against the second, the capacity the controller is told derives from
the first (an operator's figure does not know how many guests run).
Each plan uses its first guests; the agent's collector is limited
to them, so the others (idle) and any other testbed on the host are
invisible to the policy.  Every policy runs each plan's events on the
interval grid: a start runs load generator processes in the guest, a
stop ends all of the guest's.  The capacity the controller is told is
the measured one times the plan's factor, or the ``[storage]`` default.
With ``--mode conductor`` the agent reports to an in-process conductor
that decides and casts back (:mod:`iothrottle.bench.conductor_mode`),
the path production runs.
"""

import collections
import dataclasses
import types

import libvirt

from iothrottle.bench import conductor_mode
from iothrottle.bench import peers
from iothrottle.bench import runner
from iothrottle.bench import scenarios
from iothrottle.bench import settings
from iothrottle.compute import agent as agent_mod
from iothrottle.compute import capacity as capacity_mod
from iothrottle.compute import collector as collector_mod
from iothrottle.controller import guarantee
from iothrottle.controller import model
from iothrottle.controller import policy as policy_mod
from iothrottle import testbed


# Where the policy runs: in the agent's step, or in a conductor's round.
STANDALONE = 'standalone'
CONDUCTOR = 'conductor'
MODES = (STANDALONE, CONDUCTOR)


class PlanCollector:
    """A collector that shows only the disks of ``uuids``."""

    def __init__(self, inner, uuids):
        self.inner = inner
        self.uuids = frozenset(uuids)

    def collect(self):
        return self._only(self.inner.collect())

    def check(self):
        return self._only(self.inner.check())

    def _only(self, c):
        return dataclasses.replace(
            c, samples=tuple(s for s in c.samples
                             if s.instance_uuid in self.uuids),
            instances=types.MappingProxyType(
                {u: i for u, i in c.instances.items() if u in self.uuids}))


def told_capacity(plan, measured, conf):
    """The CapacityTable the controller gets for ``plan``."""
    if plan.capacity_factor is None:
        return capacity_mod.CapacityTable.from_conf(conf)
    f = plan.capacity_factor
    return capacity_mod.CapacityTable(
        default=model.Capacity(max_iops=measured.max_iops * f,
                               max_bytes_sec=measured.max_bytes_sec * f),
        by_domain={})


class ScenarioRun(runner.Seed000Run):
    """One testbed, every plan, every policy; see the module docstring."""

    def __init__(self, plans, out, prefix='itb-scn-', block_layer=None,
                 config_files=(), mode=STANDALONE):
        super().__init__(plans[0], out, prefix, block_layer, config_files)
        self.plans = plans
        # STANDALONE: the agent decides in its step; CONDUCTOR: an
        # in-process conductor decides on its reports (conductor_mode).
        self.mode = mode
        # The store measured again after the last plan (run).
        self.capacity_end = None
        # The store measured with each plan's guests all writing
        # (calibrate_plan), one a plan run so far: what its needs are
        # shared out of.
        self.plan_capacities = []
        self._pending = []

    @property
    def plan_capacity(self):
        """The running plan's calibration (``calibrate_plan``)."""
        return self.plan_capacities[-1]

    @property
    def plan_iops(self):
        """Each plan run so far, its calibrated store in requests/s."""
        return [c.max_iops for c in self.plan_capacities]

    def guests(self):
        largest = max(self.plans, key=lambda p: len(p.vms))
        return [testbed.GuestSpec(name=vm.name, flavor=vm.flavor,
                                  project='bench', memory_mb=128,
                                  disk_mb=256)
                for vm in largest.vms]

    def run(self, policies, on_interval=None, on_plan=None):
        """Run every plan under every policy; returns one ({policy:
        summary}, {policy: [Interval]}) per plan.  Each call builds and
        calibrates a testbed of its own (``--repeat`` calls it again),
        before each plan with the plan's guests (``plan_capacity``,
        listed in ``plan_capacities``), and once the plans are done
        (``capacity_end``).  Each plan is scored against its own
        measurement; the first is what the controller is told (times
        the plan's factor), and the last says how far the store drifted
        under them (a TCG guest's host shares two cores with the
        others)."""
        out = []
        self.plan_capacities = []
        self.plan = self.plans[0]   # calibration runs with the first plan
        with testbed.Testbed(self.guests(), delay_ms=self.plan.delay_ms,
                             prefix=self.prefix,
                             block_layer=self.block_layer) as tb:
            conn = libvirt.open(tb.uri)
            try:
                self._tb = tb
                self.capacity = self.calibrate(tb, conn)
                self.out.write('store capacity measured: %.1f IOPS\n'
                               % self.capacity.max_iops)
                for plan in self.plans:
                    self.plan = plan
                    self.out.write('== %s\n' % plan.describe())
                    self.plan_capacities.append(
                        self.calibrate_plan(tb, conn))
                    results, series = {}, {}
                    for name in policies:
                        intervals = self.run_policy(tb, conn, name,
                                                    on_interval)
                        series[name] = intervals
                        results[name] = scenarios.summarize(
                            plan, intervals, self.plan_capacity.max_iops)
                    out.append((results, series))
                    if on_plan is not None:
                        on_plan(plan, results)
                self.plan = self.plans[0]
                self.capacity_end = self.calibrate(tb, conn)
                self.out.write('store capacity at the end: %.1f IOPS '
                               '(%.1f %% of the start)\n' % (
                                   self.capacity_end.max_iops,
                                   100.0 * self.capacity_end.max_iops
                                   / self.capacity.max_iops))
            finally:
                conn.close()
        return out

    def calibrate_plan(self, tb, conn):
        """The store's capacity with every guest of the plan writing its
        own requests (``calibrate``), the plan's ``plan_capacity``.

        Measured with one guest, the store's capacity is not what it
        has for three to eight: each TCG guest's emulation shares the
        host's two cores with the store's.  Seed 19's eight guests,
        three measurements each (2026-12-03): 95.2 IOPS with one guest
        of eight 64 KB writers, 94.4 with one writer in each of the
        eight (64 KB or each guest's own requests alike)."""
        capacity = self.calibrate(tb, conn, [(vm.name, vm.block_kb)
                                             for vm in self.plan.vms])
        self.out.write('  store capacity with the plan\'s %d guests: '
                       '%.1f IOPS (%.1f %% of the first measurement)\n' % (
                           len(self.plan.vms), capacity.max_iops,
                           100.0 * capacity.max_iops
                           / self.capacity.max_iops))
        return capacity

    def agent(self, conn, policy_name, capacity):
        conf = settings.bench_conf(self.plan,
                                   peers.agent_policy(policy_name),
                                   self.config_files)
        uuids = [self._tb.instance_uuid(vm.name) for vm in self.plan.vms]
        # The measured capacity (run_policy) reaches the controller as
        # the plan tells it; calibration's placeholder goes as it is.
        capacities = (told_capacity(self.plan, capacity, conf)
                      if capacity is self.capacity else
                      capacity_mod.CapacityTable(default=capacity,
                                                 by_domain={}))
        collector = PlanCollector(collector_mod.Collector(conn), uuids)
        actuator = self.actuator(conn, policy_name)
        if self.mode == CONDUCTOR:
            return conductor_mode.ConductorModeAgent(
                conf, agent_mod.Agent(conf, collector, actuator, None, None,
                                      None),
                runner.plan_tiers(self.plan), capacities)
        return agent_mod.Agent(
            conf, collector, actuator, policy_mod.load_policy(conf),
            runner.plan_tiers(self.plan), capacities)

    def floors(self):
        return {vm.name: vm.guarantee_kb_s / vm.block_kb
                for vm in self.plan.vms}

    def start_loads(self, tb):
        """The events at 0; the others run from :meth:`after_interval`."""
        self._pending = sorted(self.plan.events, key=lambda e: e.at_s)
        self._run_due(tb, 0.0)

    def after_interval(self, tb, interval):
        # Events sit on the interval grid: run those due by this tick.
        self._run_due(tb, interval.end_s + self.plan.interval_s / 2)

    def _run_due(self, tb, until_s):
        while self._pending and self._pending[0].at_s <= until_s:
            event = self._pending.pop(0)
            if event.action == scenarios.STOP:
                tb.stop_load(event.guest)
                continue
            block_kb = self.plan.guest(event.guest).block_kb
            for load in event_loads(event.streams, block_kb):
                tb.start_load(event.guest, load)


def event_loads(streams, block_kb):
    """The load generator runs that start ``streams``: one per
    (rw, rate), its processes spread over one slot of their rate
    together with the other paced runs of the event (``testbed.Load``'s
    phases): paced process j of the event's m starts j / m of a slot
    late.  Started in phase, a guest paced by two processes of 4.76
    requests/s each showed 8 or 10 requests in every 2 s interval
    after the first, never 9, and missed a need of 9 in the same
    intervals under ``none`` and ``guarantee`` (seed 29 plan 8,
    doc/scenarios.rst)."""
    groups = collections.Counter((s.rw, s.rate_kb_s) for s in streams)
    paced = sum(n for (_, rate), n in groups.items() if rate)
    out, first = [], 0
    for (rw, rate_kb_s), procs in sorted(groups.items()):
        phases = {}
        if rate_kb_s:
            phases = dict(phase_slots=first / paced,
                          phase_step_slots=1.0 / paced)
            first += procs
        out.append(testbed.Load(procs=procs, block_kb=block_kb, rw=rw,
                                rate_kb_s=rate_kb_s or None, **phases))
    return out


class Tracer:
    """Writes one line per interval of a run to ``out``: the plan and
    policy, each guest's KB/s against its need, cap and latency, then
    the decisions of that interval with their reasons."""

    def __init__(self, out, run):
        self.out = out
        self.run = run
        # (policy, storage domain) -> the share scale the last interval
        # left, so that a move reads in words --acted can match.
        self.share_scales = {}

    def __call__(self, policy_name, interval, report):
        plan = self.run.plan
        needs, overbooked = scenarios.needs_kb_s(
            plan, interval, self.run.plan_capacity.max_iops)
        names = {self.run._tb.instance_uuid(vm.name): vm.name
                 for vm in plan.vms}
        latency_ms = {names.get(s.instance_uuid): s.latency_s * 1e3
                      for s in report.samples}
        self.out.write('plan %d %-9s t=%5.1f%s %s\n' % (
            plan.index, policy_name, interval.end_s,
            ' overbooked' if overbooked else '',
            ' '.join('%s=%.0f/%s%s@%.0fms' % (
                vm.name, interval.kb_s.get(vm.name, 0.0),
                '%.0f' % needs[vm.name] if vm.name in needs else '-',
                '[cap %.0f]' % interval.caps[vm.name]
                if interval.caps.get(vm.name) else '',
                latency_ms.get(vm.name, 0.0)) for vm in plan.vms)))
        for d in report.decisions:
            self.out.write('    %s %s: %s\n' % (
                names.get(d.instance_uuid, d.instance_uuid), d.action,
                d.reason))
        marks = _marks_text(report.states, names)
        if marks:
            self.out.write('    demand-bound: %s\n' % marks)
        domain = _domain_text(report.states, self.share_scales,
                              policy_name)
        if domain:
            self.out.write('    domain: %s\n' % domain)
        self.out.flush()


def _marks_text(states, names):
    """The demand-bound marks the policy holds after an interval
    (``guarantee``'s ``DomainState.demand_bound``), as ``name at IOPS``,
    or ''."""
    out = []
    for state in states.values():
        for disk_id, iops in getattr(state, 'demand_bound', ()):
            uuid = disk_id.split('/', 1)[0]
            out.append('%s at %.1f IOPS' % (names.get(uuid, uuid), iops))
    return ', '.join(out)


def _domain_text(states, share_scales, policy_name):
    """What the policy learned of each domain after an interval
    (``guarantee``'s ``DomainState``: the learned capacity, the load
    it proved, the baseline and lowest latencies, the interval's own
    reading of the two it learns from (its mean latency and what it
    completed, ``_drained``'s), the share scale and,
    where it moved, ``up from`` or ``down from`` the one the last
    interval left, kept in ``share_scales`` per policy and domain, and
    ``found full`` where its tightening had nothing to cut on floors
    that fit, ``_found_full``), or ''."""
    out = []
    for domain, state in states.items():
        if getattr(state, 'learned_iops', None) is None:
            continue
        key = (policy_name, domain)
        scale = state.share_scale
        last = share_scales.get(key, 1.0)
        share_scales[key] = scale
        out.append(guarantee.describe_state(state, _moved(scale, last)))
    return '; '.join(out)


def _moved(scale, last):
    """`` up from 0.950`` (or down) when ``scale`` and ``last`` differ
    as printed, else ''."""
    if '%.3f' % scale == '%.3f' % last:
        return ''
    return ' %s from %.3f' % ('up' if scale > last else 'down', last)


def figure(path, plans, runs, policies):
    """Worst guest's satisfaction and total vs none, per plan and
    policy (two panels)."""
    import matplotlib
    matplotlib.use('Agg')
    from matplotlib import pyplot

    fig, (top, bottom) = pyplot.subplots(2, 1, figsize=(9, 6), sharex=True)
    width = 0.8 / max(1, len(policies))
    x = list(range(len(plans)))
    for k, policy in enumerate(policies):
        at = [i + (k - (len(policies) - 1) / 2) * width for i in x]
        worst = [r[policy]['worst_satisfied'] or 0.0 for r, _ in runs]
        ratio = [r[policy]['total_mean']
                 / max(r['none']['total_mean'], 1e-9) if 'none' in r
                 else 0.0 for r, _ in runs]
        top.bar(at, worst, width, label=policy)
        bottom.bar(at, ratio, width, label=policy)
    top.axhline(scenarios.TARGET_SATISFIED, color='k', lw=0.8, ls='--')
    bottom.axhline(scenarios.TARGET_TOTAL_VS_NONE, color='k', lw=0.8,
                   ls='--')
    top.set_ylabel('worst guest satisfied')
    bottom.set_ylabel('total vs none')
    bottom.set_xticks(x)
    bottom.set_xticklabels(['%d%s%s' % (p.index, '*' if p.overbooked
                                        else '', 'i' if p.has_idle_phase
                                        else '') for p in plans])
    bottom.set_xlabel('plan (* overbooked, i idle phase)')
    top.legend(ncol=len(policies), fontsize='small')
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    pyplot.close(fig)
