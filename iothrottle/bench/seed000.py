"""The seed-000 experiment: one VM bursts, three keep their floors.

Seed 000 section 4 runs four KVM guests on one shared array with 64 KB
random writes: VM1 starts with one fio process and adds one a minute up
to 10; VM2-VM4 run one process each with demands of 800, 600 and
300 KB/s.  Without control the three neighbours fall to ~85 KB/s.

The testbed version keeps the shape and compresses time: the store is
one nbdkit process that serves one FIFO queue of requests with a fixed delay
(10 ms: 100 requests/s, 6,400 KB/s at 64 KB), VM1 adds a process every
``ramp_s`` seconds, and the neighbours' demands keep the paper's
800:600:300 ratio scaled to this store (1,600 / 1,200 / 600 KB/s).
Guarantees sit at or below demand and together fit the store; VM1 alone
can saturate it.  This module holds the plan and the metrics (pure);
``iothrottle.bench.runner`` drives the testbed.
"""

import dataclasses
import math

# An interval counts as satisfied when a VM got at least this fraction of
# min(demand, guarantee): the bar, which allows for measurement
# granularity (one 64 KB request in a 2 s interval is 32 KB/s).
SATISFIED_FRACTION = 0.95

# "Visibly better than paper" on throughput: at least 5 % more data moved,
# several times the run-to-run noise of the total on the testbed.
PAPER_MARGIN = 1.05

# Intervals right after a ramp step that the satisfaction metric skips:
# the controller needs one interval to see the step and one to act.
SETTLE_INTERVALS = 2

# Calibration ticks (2 s each) that measure the store's capacity, after
# a first one that is dropped because the burster's processes are still
# starting in it.
CALIBRATION_TICKS = 4


@dataclasses.dataclass(frozen=True)
class VmPlan:
    name: str
    flavor: str
    procs: int
    max_procs: int
    rate_kb_s: float       # per process; 0 = as fast as it can
    guarantee_kb_s: float

    @property
    def demand_kb_s(self):
        """What the VM would do on an idle store (inf = unbounded)."""
        if self.rate_kb_s <= 0:
            return math.inf
        return self.rate_kb_s * self.max_procs


@dataclasses.dataclass(frozen=True)
class Plan:
    vms: tuple
    delay_ms: float = 10.0
    block_kb: int = 64
    interval_s: float = 2.0
    ramp_s: float = 20.0
    tail_s: float = 60.0
    paper_cap_time_s: float = 24.0
    lease_s: float = 10.0

    @property
    def ramp_steps(self):
        return max(v.max_procs - v.procs for v in self.vms)

    @property
    def duration_s(self):
        return self.ramp_steps * self.ramp_s + self.tail_s

    def step_times_s(self):
        """Seconds after the start at which the burster adds a process
        (0 is the start itself)."""
        return [k * self.ramp_s for k in range(self.ramp_steps + 1)]


def default_plan(short=False):
    """The plan of ``iothrottle-bench seed000``; ``short`` for the e2e
    test (ramp every 8 s instead of 20 s)."""
    vms = (
        VmPlan('vm1', 'bench.burst', procs=1, max_procs=10, rate_kb_s=0,
               guarantee_kb_s=1280),
        VmPlan('vm2', 'bench.vm2', 1, 1, rate_kb_s=1600,
               guarantee_kb_s=1280),
        VmPlan('vm3', 'bench.vm3', 1, 1, rate_kb_s=1200,
               guarantee_kb_s=960),
        VmPlan('vm4', 'bench.vm4', 1, 1, rate_kb_s=600,
               guarantee_kb_s=512),
    )
    if short:
        return Plan(vms=vms, ramp_s=8.0, tail_s=24.0)
    return Plan(vms=vms)


@dataclasses.dataclass(frozen=True)
class Interval:
    """Host-measured throughput over [end_s - length_s, end_s]."""
    end_s: float
    length_s: float
    kb_s: dict          # vm name -> KB/s
    latency_ms: float   # IOPS-weighted mean over all VMs
    caps: dict = dataclasses.field(default_factory=dict)  # name -> IOPS
    collect_ms: float = 0.0   # how long libvirt took to answer


def counted(plan, interval):
    """Whether the satisfaction metric counts this interval."""
    settle_s = SETTLE_INTERVALS * plan.interval_s
    for step_s in plan.step_times_s():
        if step_s < interval.end_s <= step_s + settle_s + 1e-9:
            return False
    return True


def summarize(plan, intervals):
    """Per-VM rows and totals for one policy run (the JSON shape of
    ``iothrottle-bench seed000``)."""
    rows = []
    scored = [i for i in intervals if counted(plan, i)]
    for vm in plan.vms:
        series = [i.kb_s.get(vm.name, 0.0) for i in intervals]
        need = min(vm.demand_kb_s, vm.guarantee_kb_s)
        ok = [i.kb_s.get(vm.name, 0.0) >= SATISFIED_FRACTION * need
              for i in scored]
        rows.append({
            'name': vm.name,
            'demand': None if math.isinf(vm.demand_kb_s)
            else vm.demand_kb_s,
            'guarantee': vm.guarantee_kb_s,
            'mean': _mean(series),
            'min': min(series, default=0.0),
            'max': max(series, default=0.0),
            'satisfied_fraction': sum(ok) / len(ok) if ok else 0.0,
        })
    totals = [sum(i.kb_s.values()) for i in intervals]
    out = {'vms': rows, 'total_mean': _mean(totals),
           'intervals': len(intervals), 'scored_intervals': len(scored)}
    out.update(latency_summary(intervals))
    return out


def latency_summary(intervals):
    """Mean and p95 (nearest rank) of the intervals' request latency
    (each interval's IOPS-weighted mean over the guests), over the
    intervals that did I/O; None without any."""
    values = sorted(i.latency_ms for i in intervals if i.latency_ms > 0)
    if not values:
        return {'latency_ms_mean': None, 'latency_ms_p95': None}
    return {'latency_ms_mean': _mean(values),
            'latency_ms_p95': values[max(0, math.ceil(0.95 * len(values))
                                         - 1)]}


def worst_floor_kept(summary):
    """The least satisfied fraction among the VMs whose demand reaches
    their guarantee (the ones the bar judges); None if there are none."""
    kept = [r['satisfied_fraction'] for r in summary['vms']
            if (math.inf if r['demand'] is None else r['demand'])
            >= r['guarantee']]
    return min(kept) if kept else None


def bar(results):
    """The issue's bar for the ``guarantee`` run, as (ok, reasons).

    Every VM with demand >= guarantee is satisfied in >= 95 % of the
    counted intervals; the total is >= 90 % of the uncontrolled run's;
    and ``guarantee`` is visibly better than ``paper``: its worst VM is
    satisfied more often, or it meets the 95 % bar and moves at least
    5 % more data (paper squeezes the burster below what it could use).
    """
    reasons = []
    g = results.get('guarantee')
    if g is None:
        return False, ['no guarantee run']
    for row in g['vms']:
        demand = math.inf if row['demand'] is None else row['demand']
        if demand >= row['guarantee'] and row['satisfied_fraction'] < 0.95:
            reasons.append('%s satisfied in %.0f %% of intervals (< 95 %%)'
                           % (row['name'], row['satisfied_fraction'] * 100))
    if 'none' in results:
        ratio = g['total_mean'] / max(results['none']['total_mean'], 1e-9)
        if ratio < 0.9:
            reasons.append('total throughput %.0f %% of the uncontrolled '
                           'run (< 90 %%)' % (ratio * 100))
    if 'paper' in results:
        p = results['paper']
        worst_g = min(r['satisfied_fraction'] for r in g['vms'])
        worst_p = min(r['satisfied_fraction'] for r in p['vms'])
        more_data = g['total_mean'] >= PAPER_MARGIN * p['total_mean']
        if not (worst_g > worst_p or (worst_g >= 0.95 and more_data)):
            reasons.append(
                'guarantee (worst %.2f, total %.0f KB/s) not better than '
                'paper (worst %.2f, total %.0f KB/s)' % (
                    worst_g, g['total_mean'], worst_p, p['total_mean']))
    return not reasons, reasons


def _mean(values):
    values = list(values)
    return sum(values) / len(values) if values else 0.0


def sustained_iops(tick_iops):
    """The store's capacity from the calibration ticks' total IOPS: the
    mean of the ticks after the first, a rate the store sustains.

    Not the best tick: the best of four 2 s ticks is the top of their
    noise, and shares scored against it were out of every policy's
    reach (seed 7's scenario run calibrated at 98.0 IOPS where no arm's
    intervals with a burster averaged over 94.6, ``none``'s included).
    """
    counted = list(tick_iops[1:]) or list(tick_iops)
    if not counted:
        raise ValueError('no calibration ticks')
    return sum(counted) / len(counted)
