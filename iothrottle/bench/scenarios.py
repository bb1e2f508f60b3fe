"""Randomized scenarios: many plans drawn from one seed, and their metrics.

``iothrottle-bench seed000`` is one plan: one burster on a store whose
capacity the bench measures and hands to the controller.  A cloud runs
other plans.  This module draws them (pure, deterministic in the seed)
and scores a policy's run of each; ``iothrottle.bench.scenario_runner``
drives the testbed.

What a plan draws, within what the testbed's load generator can do
(``loadgen.c``: processes of one block size, random reads or writes,
each optionally paced to a rate; a guest may run several at once, and
the host stops all of a guest's processes together):

* 3-8 guests (3-5 with ``short``), each with one block size of
  4-256 KB;
* 0-3 *bursters*: unpaced processes, 2-4 at a random start and 2-5
  more at each of up to 4 random ramp steps on the interval grid, at
  least ``STEP_GAP_INTERVALS`` apart;
* the others *paced*: a random demand split over processes of at most
  ``PACED_IOPS_PER_PROC`` each (a synchronous stream cannot go faster
  than the store's latency allows);
* a read/write mix per guest: all writes, all reads, or mixed (every
  second paced process, or each added burster process at random, reads).
  The testbed's store charges reads and writes alike, so the mix
  exercises the host's read and write counters, not a device whose reads
  cost differently from its writes: the testbed cannot model that;
* guarantees in KB/s (some guests floorless), sized as a fraction of
  the store's nominal capacity so that most plans fit it (sum of floors
  ``FIT_FLOORS`` of it) and about ``OVERBOOKED_PROBABILITY`` of plans
  overbook it (``OVERBOOKED_FLOORS``);
* about ``IDLE_PROBABILITY`` of plans have an idle phase: one or two
  guests stop, and most start again later;
* the capacity the controller is told: the measured one times a
  log-uniform factor in [0.5, 2], or (``UNTOLD_PROBABILITY``) none at all,
  leaving the ``[storage]`` default (one 7200 rpm disk).

Metrics (per run of one policy on one plan), in the counted intervals
(``counted``: the two intervals after every event are skipped, as in
``iothrottle.bench.seed000``; an interval belongs to the event nearest
its measured end, see ``after_event``):

* each guest's *need* in an interval: ``min(demand, guarantee)`` while it
  runs; when the floors in demand exceed what the store's capacity
  (measured before the plan with its guests all writing,
  ``scenario_runner.ScenarioRun.calibrate_plan``) leaves once the
  running floorless guests have their minimum caps (the interval is
  *overbooked*), that rest is shared in proportion
  to the floors, as mClock shares reservations
  (``iothrottle.controller.shares``: a guest needing less than its share
  gets its need, one whose share is under the minimum cap keeps the
  minimum cap, and the rest is shared again); needs are compared in
  requests, since the store charges per request;
* *satisfied fraction* of a guest: counted intervals with need > 0 in
  which it got at least 95 % of its need, counted in whole requests
  (``need_met``): an interval holds a whole number of a guest's
  completions, so a need of 8.5 requests per interval is met by 8 (95 %
  of 8.5 is 8.07, which no interval can show).  The rounding matters for
  small needs only: a 4 KB guest paced at 17 KB/s does 8.5 requests in
  a 2 s interval and read 16 KB/s (94 %) in half of them even under
  ``none`` on an idle store (seed 7, plan 8); at 30 requests an interval
  it moves the bar from 95 % to 93 %.  One request, not one per
  process: the runner spreads a guest's paced processes over one slot
  (``scenario_runner.event_loads``), so its count moves by one.  The
  *worst guest's* is the minimum over the guests;
* *reaction time*: for each burst step (a burster starting or adding
  processes), the intervals from the step until every need is met again
  (0: never broken; None: not met before the next event or the end).
  A step that another guest's event follows within
  ``TARGET_REACTION_P95`` intervals and whose needs were not yet met is
  *cut short*, listed apart and out of the p95: its reaction is at
  least the intervals it had, which cannot show one of 1 or 2;
* overbooked intervals: each guaranteed guest's mean throughput over its
  mean share (target >= 95 %), and what the floorless guests did over
  what their minimum caps allow (target: cut to the minimum cap, at most
  ``FLOORLESS_MAX`` of it).  The minimum cap (10 IOPS by default) is a
  tenth of the testbed's store: were it counted as part of the floors'
  capacity, one floorless burster held at it would already push every
  guaranteed guest under 95 % of its share.
"""

import dataclasses
import math
import random

from iothrottle.bench import seed000
from iothrottle.controller import model
from iothrottle.controller import shares as shares_mod

# The testbed store of the scenarios: 10 ms per request, 100 requests/s
# nominal (the seed-000 store); plans are drawn against this figure and
# scored against the measured one.
DELAY_MS = 10.0
NOMINAL_IOPS = 1000.0 / DELAY_MS

# Block sizes a guest may use, KB: a page to a large merged request.
BLOCK_SIZES_KB = (4, 8, 16, 32, 64, 128, 256)

# Requests/s one paced process may be asked for: a synchronous stream at
# ~40 ms of queueing (a busy store) manages ~25; 15 leaves it slack.
PACED_IOPS_PER_PROC = 15.0

# Interval grid, and run length per plan (full, short): 40 runs of the
# full length fit a 20-minute budget with the testbed's boot and drains.
INTERVAL_S = 2.0
DURATION_S = 22.0
SHORT_DURATION_S = 14.0

# Processes a burster starts with, and adds at each ramp step: seed
# 000's burster ends at 10; 2-4 plus 2-5 a step reaches 4-19.
BURST_START = (2, 4)
BURST_STEP = (2, 5)

# Fewest intervals between two ramp steps of one burster.
STEP_GAP_INTERVALS = 3

# Fraction of plans that overbook the store with floors, that have an
# idle phase, and whose controller is told no capacity at all.
OVERBOOKED_PROBABILITY = 0.3
IDLE_PROBABILITY = 0.5
UNTOLD_PROBABILITY = 0.2

# Sum of the floors, as a fraction of nominal capacity: plans that fit
# stay clear of the 0.9 border; overbooked ones exceed the store.
FIT_FLOORS = (0.3, 0.7)
OVERBOOKED_FLOORS = (1.15, 1.5)

# Bounds of the told capacity's error factor (log-uniform between).
TOLD_FACTOR = (0.5, 2.0)

# The minimum cap every policy leaves a disk it holds as hard as it
# may (the ``[controller]`` defaults the bench runs with): what a
# floorless guest keeps of an overbooked store.
MINIMUM_CAP = model.MinimumCap()

# Overbooked target: each floorless guest does at most this multiple of
# its minimum cap (QEMU's throttle lets a stream average a little over
# its limit within one interval: bursts of one request).
FLOORLESS_MAX = 1.1

# The targets: satisfaction, reaction p95 (intervals), total vs
# the uncontrolled run, and each guaranteed guest's overbooked share.
# Totals are judged in requests/s, the unit the store charges in: a
# policy that moves capacity from a floorless 256 KB guest to a
# guaranteed 4 KB one moves fewer KB for the same work (KB/s is
# reported beside it).
TARGET_SATISFIED = 0.95
TARGET_REACTION_P95 = 2
TARGET_TOTAL_VS_NONE = 0.97
TARGET_OVERBOOKED_SHARE = 0.95

START, STOP = 'start', 'stop'


@dataclasses.dataclass(frozen=True)
class Stream:
    """One load generator process: ``rw`` randread or randwrite, paced
    to ``rate_kb_s`` (0: as fast as it can)."""
    rw: str
    rate_kb_s: float = 0.0


@dataclasses.dataclass(frozen=True)
class Event:
    """At ``at_s``, ``guest`` starts ``streams`` (added to what it runs)
    or stops everything it runs."""
    at_s: float
    guest: str
    action: str
    streams: tuple = ()


@dataclasses.dataclass(frozen=True)
class GuestPlan:
    name: str
    flavor: str
    block_kb: int
    guarantee_kb_s: float      # 0 = floorless
    burster: bool
    mix: str                   # randwrite, randread or mixed


@dataclasses.dataclass(frozen=True)
class ScenarioPlan:
    """One drawn plan.  ``vms``, ``interval_s``, ``lease_s``,
    ``paper_cap_time_s``, ``block_kb`` and ``duration_s`` are what
    ``iothrottle.bench.runner`` reads of a plan."""
    seed: int
    index: int
    vms: tuple
    events: tuple
    capacity_factor: float = None    # None: the controller is not told
    overbooked: bool = False
    interval_s: float = INTERVAL_S
    duration_s: float = DURATION_S
    delay_ms: float = DELAY_MS
    lease_s: float = 10.0
    paper_cap_time_s: float = 24.0
    block_kb: int = 64               # the store's calibration load

    def guest(self, name):
        return next(vm for vm in self.vms if vm.name == name)

    def step_times_s(self):
        """Every event time (what ``counted`` skips after)."""
        return sorted({e.at_s for e in self.events})

    def burst_steps_s(self):
        """Times at which a burster starts or adds processes."""
        return sorted({e.at_s for e in self.events if e.action == START
                       and self.guest(e.guest).burster})

    def stop_times_s(self):
        """Times at which a guest stops (always after it started)."""
        return sorted({e.at_s for e in self.events if e.action == STOP})

    @property
    def has_idle_phase(self):
        return bool(self.stop_times_s())

    def streams_at(self, at_s):
        """{guest: tuple of Streams} running just after ``at_s``."""
        running = {vm.name: () for vm in self.vms}
        for e in sorted(self.events, key=lambda e: e.at_s):
            if e.at_s > at_s:
                break
            running[e.guest] = (running[e.guest] + e.streams
                                if e.action == START else ())
        return running

    def demand_kb_s(self, at_s):
        """{guest: demand} at ``at_s``: inf with an unpaced process."""
        out = {}
        for name, streams in self.streams_at(at_s).items():
            if any(s.rate_kb_s <= 0 for s in streams):
                out[name] = math.inf
            else:
                out[name] = sum(s.rate_kb_s for s in streams)
        return out

    def describe(self):
        told = ('not told ([storage] default)'
                if self.capacity_factor is None
                else 'told x%.2f' % self.capacity_factor)
        return ('plan %d: %d guests (%d bursters), %s, %s%s' % (
            self.index, len(self.vms),
            sum(vm.burster for vm in self.vms), told,
            'overbooked' if self.overbooked else 'fits',
            ', idle phase' if self.has_idle_phase else ''))


# -- drawing ---------------------------------------------------------------

def draw_plans(count, seed, short=False):
    """``count`` plans drawn from ``seed`` (the same plans every time)."""
    return [draw_plan(seed, index, short) for index in range(count)]


def draw_plan(seed, index, short=False):
    """Plan ``index`` of ``seed``; see the module docstring."""
    rng = random.Random('iothrottle-scenario/%d/%d' % (seed, index))
    duration_s = SHORT_DURATION_S if short else DURATION_S
    grid = [k * INTERVAL_S for k in range(int(duration_s / INTERVAL_S))]
    count = rng.randint(3, 5 if short else 8)
    bursters = rng.randint(0, min(3, count - 1))
    overbooked = rng.random() < OVERBOOKED_PROBABILITY
    untold = rng.random() < UNTOLD_PROBABILITY
    factor = None if untold else math.exp(rng.uniform(
        math.log(TOLD_FACTOR[0]), math.log(TOLD_FACTOR[1])))
    floors_total = rng.uniform(*(OVERBOOKED_FLOORS if overbooked
                                 else FIT_FLOORS)) * NOMINAL_IOPS
    kinds = []
    for k in range(count):
        burster = k < bursters
        # At least two guaranteed guests; then 1 in 3 bursters and 1 in 5
        # paced guests are floorless.
        floorless = k >= 2 and rng.random() < (0.33 if burster else 0.2)
        kinds.append((burster, floorless, rng.uniform(0.5, 2.0)))
    weight_total = sum(w for _, floorless, w in kinds if not floorless)
    vms, events = [], []
    for k, (burster, floorless, weight) in enumerate(kinds):
        name = 'g%d' % (k + 1)
        block_kb = rng.choice(BLOCK_SIZES_KB)
        mix = rng.choice(('randwrite', 'randread', 'mixed'))
        floor_iops = 0.0 if floorless else (
            weight / weight_total * floors_total)
        vms.append(GuestPlan(name, 'scn.' + name, block_kb,
                             round(floor_iops * block_kb, 1), burster, mix))
        if burster:
            events.extend(_burster_events(rng, name, mix, grid))
        else:
            demand_iops = _paced_demand_iops(rng, floor_iops, overbooked)
            events.append(Event(0.0, name, START, _paced_streams(
                mix, demand_iops, block_kb)))
    if rng.random() < IDLE_PROBABILITY:
        events = _idle_phase(rng, [vm.name for vm in vms], events, grid)
    return ScenarioPlan(seed=seed, index=index, vms=tuple(vms),
                        events=tuple(sorted(events, key=lambda e: e.at_s)),
                        capacity_factor=factor, overbooked=overbooked,
                        duration_s=duration_s)


def stretched(plan, factor):
    """``plan`` run ``factor`` times longer: every event at ``factor``
    times its time, on the same interval grid.  The same guests, floors,
    demands and told capacity, each phase ``factor`` times as many
    intervals: what a policy loses in the intervals after an event
    weighs ``factor`` times less in its totals, so a run of both tells
    a transient from a steady state."""
    if factor == 1:
        return plan
    return dataclasses.replace(
        plan, duration_s=plan.duration_s * factor,
        events=tuple(dataclasses.replace(e, at_s=e.at_s * factor)
                     for e in plan.events))


def _paced_demand_iops(rng, floor_iops, overbooked):
    if floor_iops <= 0:
        return rng.uniform(0.05, 0.2) * NOMINAL_IOPS
    if not overbooked and rng.random() < 0.2:
        return floor_iops * rng.uniform(0.5, 0.9)   # needs less than floor
    return min(floor_iops / rng.uniform(0.6, 1.0), 0.6 * NOMINAL_IOPS)


def _paced_streams(mix, demand_iops, block_kb):
    """Processes of at most PACED_IOPS_PER_PROC sharing the demand."""
    procs = max(1, math.ceil(demand_iops / PACED_IOPS_PER_PROC))
    if mix == 'mixed':
        procs = max(procs, 2)
    rate_kb_s = demand_iops * block_kb / procs
    return tuple(Stream(_rw(mix, k), rate_kb_s) for k in range(procs))


def _rw(mix, k):
    if mix == 'mixed':
        return 'randread' if k % 2 else 'randwrite'
    return mix


def _burster_events(rng, name, mix, grid):
    """Start with BURST_START processes, add BURST_STEP at each of up to
    4 ramp steps."""
    def streams(n):
        return tuple(Stream(rng.choice(('randread', 'randwrite'))
                            if mix == 'mixed' else mix) for _ in range(n))
    start = rng.choice(grid[:len(grid) // 3])
    later = [t for t in grid if t > start and t <= grid[-1] - 2 * INTERVAL_S]
    steps = []
    for t in sorted(rng.sample(later, min(len(later), rng.randint(1, 4)))):
        # Steps at least STEP_GAP_INTERVALS apart: a reaction is measured
        # up to the next event, and needs room to show.
        if t - (steps[-1] if steps else start) >= \
                STEP_GAP_INTERVALS * INTERVAL_S:
            steps.append(t)
    return [Event(start, name, START, streams(rng.randint(*BURST_START)))
            ] + [Event(t, name, START, streams(rng.randint(*BURST_STEP)))
                 for t in steps]


def _idle_phase(rng, names, events, grid):
    """One or two guests stop, and most start again with what they ran;
    a burster's ramp steps while it is stopped, or too close to its
    restart, are dropped."""
    span = grid[-1]
    out = list(events)
    for name in rng.sample(names, rng.randint(1, min(2, len(names) - 1))):
        starts = [e.at_s for e in out if e.guest == name]
        stop_s = rng.choice([t for t in grid
                             if 0.25 * span <= t <= 0.5 * span
                             and t > min(starts)])
        restart_s = stop_s + rng.choice((0.3, 0.4)) * span
        restart_s = INTERVAL_S * round(restart_s / INTERVAL_S)
        if restart_s > span - 2 * INTERVAL_S or rng.random() < 0.25:
            restart_s = None   # stays idle to the end
        running = ()
        for e in sorted(out, key=lambda e: e.at_s):
            if e.guest == name and e.at_s < stop_s:
                running += e.streams
        gap_s = STEP_GAP_INTERVALS * INTERVAL_S
        out = [e for e in out if e.guest != name or e.at_s < stop_s or (
            restart_s is not None and e.at_s >= restart_s + gap_s)]
        out.append(Event(stop_s, name, STOP))
        if restart_s is not None:
            out.append(Event(restart_s, name, START, running))
    return out


# -- metrics ---------------------------------------------------------------

def minimum_cap_iops(vm):
    """Requests/s the minimum cap leaves ``vm`` (a GuestPlan) at its
    block size: the tighter of its IOPS and bandwidth limits."""
    return min(MINIMUM_CAP.iops,
               MINIMUM_CAP.bytes_sec / (vm.block_kb * 1024.0))


def floorless_reserve_iops(plan, demand):
    """Requests/s the running floorless guests keep however hard they
    are held: each its demand, at most its minimum cap."""
    return sum(min(demand[vm.name] / vm.block_kb, minimum_cap_iops(vm))
               for vm in plan.vms
               if vm.guarantee_kb_s <= 0 and demand[vm.name] > 0)


def needs_kb_s(plan, interval, capacity_iops):
    """({guest: need KB/s}, overbooked) for one interval: what each
    running guaranteed guest must get (see the module docstring).  The
    floors share what the floorless guests' minimum caps leave of the
    capacity: no policy may hold a disk under the minimum cap."""
    demand = plan.demand_kb_s(interval.end_s - interval.length_s / 2)
    names, claims, floors, minimums = [], [], [], []
    for vm in plan.vms:
        if vm.guarantee_kb_s <= 0 or demand[vm.name] <= 0:
            continue
        names.append(vm.name)
        claims.append(min(demand[vm.name], vm.guarantee_kb_s) / vm.block_kb)
        floors.append(vm.guarantee_kb_s / vm.block_kb)
        minimums.append(minimum_cap_iops(vm))
    usable_iops = capacity_iops - floorless_reserve_iops(plan, demand)
    shares = shares_mod.entitlements(claims, floors, usable_iops, minimums)
    overbooked = sum(claims) > usable_iops
    return ({n: s * plan.guest(n).block_kb for n, s in zip(names, shares)},
            overbooked)


def need_met(got_kb_s, need_kb_s, block_kb, length_s):
    """Whether ``got_kb_s`` over an interval of ``length_s`` meets
    ``need_kb_s``: at least ``TARGET_SATISFIED`` of it, rounded down to
    whole requests of ``block_kb`` (see the module doc)."""
    to_requests = length_s / block_kb
    needed = math.floor(TARGET_SATISFIED * need_kb_s * to_requests)
    # The tolerance absorbs float error only: got is a whole number of
    # requests over the interval's own measured length.
    return got_kb_s * to_requests >= needed - 1e-6


def _met(plan, interval, needs):
    return all(need_met(interval.kb_s.get(n, 0.0), need,
                        plan.guest(n).block_kb, interval.length_s)
               for n, need in needs.items())


def after_event(plan, event_s, interval, span_s):
    """Whether ``interval`` is one of those that ran in the ``span_s``
    seconds after the event at ``event_s``.

    The runner starts an event after the tick whose measured end lies
    within half an interval of the event's time, and ticks end a few
    milliseconds late: the interval ending at 8.004 s ran before an event
    at 8 s, the one ending at 10.004 s after it.
    """
    half_s = plan.interval_s / 2
    return event_s + half_s < interval.end_s <= event_s + span_s + half_s


def counted(plan, interval):
    """Whether the metrics count ``interval``: not one of the
    ``seed000.SETTLE_INTERVALS`` after an event."""
    settle_s = seed000.SETTLE_INTERVALS * plan.interval_s
    return not any(after_event(plan, t, interval, settle_s)
                   for t in plan.step_times_s())


def reaction_intervals(plan, intervals, capacity_iops):
    """Per burst step, the intervals until every need is met again, as
    ``(reactions, cut_short)``.

    ``reactions`` holds one entry per step whose reaction the bar can
    judge: the interval index at which every need was met (0: never
    broken), or None if it was not met within ``TARGET_REACTION_P95 +
    1`` intervals or more before the next event or the end of the run.
    ``cut_short`` holds, for each step not met before the next event
    came fewer intervals later, the number of intervals it had: its
    reaction is at least that, which says nothing of a bar of
    ``TARGET_REACTION_P95`` (another guest's event one interval after a
    burster's step leaves room for a reaction of 0 only).
    """
    events = plan.step_times_s()
    reactions, cut_short = [], []
    for step_s in plan.burst_steps_s():
        later = [t for t in events if t > step_s]
        until_s = later[0] if later else math.inf
        window = [i for i in intervals
                  if after_event(plan, step_s, i, until_s - step_s)]
        reaction = None
        for k, interval in enumerate(window):
            if _met(plan, interval,
                    needs_kb_s(plan, interval, capacity_iops)[0]):
                reaction = k
                break
        if reaction is None and later and \
                len(window) <= TARGET_REACTION_P95:
            cut_short.append(len(window))
        else:
            reactions.append(reaction)
    return reactions, cut_short


def summarize(plan, intervals, capacity_iops):
    """One policy's run of one plan: the JSON row of the bench."""
    scored = [i for i in intervals if counted(plan, i)]
    judged = [(i,) + needs_kb_s(plan, i, capacity_iops) for i in scored]
    rows = []
    for vm in plan.vms:
        ok = [need_met(i.kb_s.get(vm.name, 0.0), needs[vm.name],
                       vm.block_kb, i.length_s)
              for i, needs, _ in judged if needs.get(vm.name, 0) > 0]
        over = [(i.kb_s.get(vm.name, 0.0), needs[vm.name])
                for i, needs, overbooked in judged
                if overbooked and needs.get(vm.name, 0) > 0]
        rows.append({
            'name': vm.name, 'block_kb': vm.block_kb, 'mix': vm.mix,
            'burster': vm.burster, 'guarantee': vm.guarantee_kb_s,
            'mean': _mean(i.kb_s.get(vm.name, 0.0) for i in intervals),
            'satisfied_fraction': sum(ok) / len(ok) if ok else None,
            'overbooked_share': (sum(g for g, _ in over)
                                 / sum(n for _, n in over)) if over else None,
        })
    over_intervals = [i for i, _, overbooked in judged if overbooked]
    floorless = [vm for vm in plan.vms if vm.guarantee_kb_s <= 0]
    satisfied = [r['satisfied_fraction'] for r in rows
                 if r['satisfied_fraction'] is not None]
    shares = [r['overbooked_share'] for r in rows
              if r['overbooked_share'] is not None]
    reactions, cut_short = reaction_intervals(plan, intervals,
                                              capacity_iops)
    return dict(seed000.latency_summary(intervals), **{
        'vms': rows,
        'total_mean': _mean(sum(i.kb_s.values()) for i in intervals),
        # Requests/s: what the store charges for, whatever the sizes.
        'total_iops_mean': _mean(
            sum(i.kb_s.get(vm.name, 0.0) / vm.block_kb for vm in plan.vms)
            for i in intervals),
        'worst_satisfied': min(satisfied) if satisfied else None,
        'reaction': reactions,
        'reaction_p95': percentile(reactions, 95),
        'reaction_cut_short': cut_short,
        'overbooked_intervals': len(over_intervals),
        'overbooked_share_min': min(shares) if shares else None,
        'floorless_vs_minimum': _mean(
            sum(i.kb_s.get(vm.name, 0.0) / vm.block_kb for vm in floorless)
            / sum(minimum_cap_iops(vm) for vm in floorless)
            for i in over_intervals)
        if over_intervals and floorless else None,
        'intervals': len(intervals), 'scored_intervals': len(scored),
    })


def percentile(values, pct):
    """Nearest-rank percentile; None (never met) ranks above everything
    and is returned as None; None for no values."""
    if not values:
        return None
    ranked = sorted(values, key=lambda v: math.inf if v is None else v)
    return ranked[max(0, math.ceil(pct / 100 * len(ranked)) - 1)]


def targets(plan, results, policy):
    """The issue's targets for ``policy`` on one plan: {target: bool},
    only those that apply to it."""
    r = results[policy]
    out = {}
    if r['overbooked_intervals'] == 0:
        out['satisfied'] = (r['worst_satisfied'] is None
                            or r['worst_satisfied'] >= TARGET_SATISFIED)
        p95 = r['reaction_p95']
        out['reaction'] = (not r['reaction']) or (
            p95 is not None and p95 <= TARGET_REACTION_P95)
        if 'none' in results:
            out['total'] = (r['total_iops_mean'] >= TARGET_TOTAL_VS_NONE
                            * results['none']['total_iops_mean'])
    else:
        out['overbooked_share'] = (
            r['overbooked_share_min'] is None
            or r['overbooked_share_min'] >= TARGET_OVERBOOKED_SHARE)
        out['floorless_cut'] = (r['floorless_vs_minimum'] is None
                                or r['floorless_vs_minimum']
                                <= FLOORLESS_MAX)
    if plan.has_idle_phase and 'static' in results and policy != 'static':
        s = results['static']
        out['beats_static_total'] = (r['total_iops_mean']
                                     > s['total_iops_mean'])
        out['static_satisfaction'] = _at_least(r['worst_satisfied'],
                                               s['worst_satisfied'])
    return out


def _at_least(a, b):
    return b is None or (a is not None and a >= b)


def aggregate(plans, runs):
    """Per policy over plans: ``runs`` is one {policy: summary} per plan.
    Distributions of the worst guest's satisfaction and total vs none,
    pooled reaction percentiles, and how many plans meet each target."""
    policies = list(runs[0]) if runs else []
    out = {}
    for policy in policies:
        worst = [r[policy]['worst_satisfied'] for r in runs
                 if r[policy]['worst_satisfied'] is not None]
        ratio = [r[policy]['total_mean'] / r['none']['total_mean']
                 for r in runs if 'none' in r
                 and r['none']['total_mean'] > 0]
        ratio_iops = [x for x in (_vs_none(r, policy) for r in runs)
                      if x is not None]
        reactions = [x for r in runs for x in r[policy]['reaction']]
        cut_short = sum(len(r[policy].get('reaction_cut_short', ()))
                        for r in runs)
        met, applicable = {}, {}
        for plan, r in zip(plans, runs):
            for name, ok in targets(plan, r, policy).items():
                applicable[name] = applicable.get(name, 0) + 1
                met[name] = met.get(name, 0) + int(ok)
        out[policy] = {
            'worst_satisfied': _distribution(worst),
            'total_vs_none': _distribution(ratio),
            # The same in requests/s: a policy that moves capacity from
            # large-block to small-block guests moves fewer KB, not less
            # work, on this store.
            'total_iops_vs_none': _distribution(ratio_iops),
            'reaction_p50': percentile(reactions, 50),
            'reaction_p95': percentile(reactions, 95),
            'reaction_never': sum(x is None for x in reactions),
            'burst_steps': len(reactions) + cut_short,
            'reaction_cut_short': cut_short,
            'targets': {n: '%d/%d' % (met[n], applicable[n])
                        for n in applicable},
        }
    return out


def plans_document(plans, runs, capacities_iops):
    """The JSON of each plan with its {policy: summary} of ``runs``, the
    targets each policy met and the capacity (requests/s) its needs
    were shared out of, one of ``capacities_iops`` a plan."""
    return [{'index': p.index, 'describe': p.describe(),
             'overbooked': p.overbooked, 'idle_phase': p.has_idle_phase,
             'capacity_factor': p.capacity_factor, 'capacity_iops': c,
             'results': r,
             'targets': {pol: targets(p, r, pol) for pol in r}}
            for p, r, c in zip(plans, runs, capacities_iops)]


def _distribution(values):
    if not values:
        return None
    return {'min': min(values), 'p50': percentile(values, 50),
            'mean': _mean(values), 'max': max(values),
            'values': list(values)}


def _mean(values):
    values = list(values)
    return sum(values) / len(values) if values else 0.0


def spread(plans, repeats):
    """Per plan, per policy, what each repeat of the same draw gave:
    ``repeats`` is one list of {policy: summary} per plan for each run
    (``--repeat``).  On this testbed one run of a plan moves by as much
    as a change of the controller does (a borderline victim dips in one
    interval or not), so a plan's spread is what a change is judged
    against.  Each figure is a list in repeat order: the worst guest's
    satisfied fraction, requests/s against ``none`` of the same repeat
    and, on overbooked plans, the least share."""
    out = []
    for i, plan in enumerate(plans):
        runs = [r[i] for r in repeats]
        policies = list(runs[0]) if runs else []
        out.append({'index': plan.index, 'describe': plan.describe(),
                    'policies': {pol: {
                        'worst_satisfied': [r[pol]['worst_satisfied']
                                            for r in runs],
                        'total_iops_vs_none': [_vs_none(r, pol)
                                               for r in runs],
                        'overbooked_share_min': [
                            r[pol]['overbooked_share_min'] for r in runs],
                    } for pol in policies}})
    return out


def _vs_none(results, policy):
    """``policy``'s requests/s over ``none``'s in one plan's results;
    None without a ``none`` run that moved anything."""
    none = results.get('none')
    if not none or none['total_iops_mean'] <= 0:
        return None
    return results[policy]['total_iops_mean'] / none['total_iops_mean']


def spread_table(rows):
    """:func:`spread` as text: one line per plan and policy, each
    figure per repeat, then its range."""
    lines = ['%-5s %-12s %-28s %-28s %s' % (
        'plan', 'policy', 'worst satisfied', 'requests vs none',
        'least share (overbooked)')]
    for row in rows:
        for policy, f in row['policies'].items():
            lines.append('%-5d %-12s %-28s %-28s %s' % (
                row['index'], policy, _series(f['worst_satisfied']),
                _series(f['total_iops_vs_none'], '%.2f'),
                _series(f['overbooked_share_min'])))
    return '\n'.join(lines)


def _series(values, fmt=None):
    """'a b c (lo-hi)' of one figure over the repeats; '-' for none."""
    shown = [v for v in values if v is not None]
    if not shown:
        return '-'

    def one(v):
        if v is None:
            return '-'
        return fmt % v if fmt else pct(v)
    text = ' '.join(one(v) for v in values)
    if len(shown) > 1:
        text += ' (%s-%s)' % (one(min(shown)), one(max(shown)))
    return text


def plan_row(plan, results):
    """One line per policy for one plan (the live report)."""
    lines = [plan.describe()]
    for policy, r in results.items():
        lines.append(
            '  %-12s worst satisfied %5s  total %6.0f KB/s %5.1f IOPS'
            '  reaction %s%s  overbooked share %s  targets %s' % (
                policy, pct(r['worst_satisfied']), r['total_mean'],
                r['total_iops_mean'], r['reaction'],
                ' (cut short after %s)' % r['reaction_cut_short']
                if r.get('reaction_cut_short') else '',
                pct(r['overbooked_share_min']),
                ' '.join('%s=%s' % (k, 'ok' if v else 'MISSED')
                         for k, v in targets(plan, results,
                                             policy).items()) or '-'))
    return '\n'.join(lines)


def table(summary):
    """The per-policy summary over plans, as text (``short``: burst
    steps whose reaction was cut short by the next event)."""
    lines = ['%-12s %18s %18s %18s %9s %9s %6s  %s' % (
        'policy', 'worst sat min/p50', 'KB/s vs none', 'IOPS vs none',
        'react p50', 'react p95', 'short', 'targets met (plans)')]
    for policy, a in summary.items():
        w, t = a['worst_satisfied'], a['total_vs_none']
        n = a['total_iops_vs_none']
        lines.append('%-12s %18s %18s %18s %9s %9s %6s  %s' % (
            policy,
            '%s / %s' % (pct(w and w['min']), pct(w and w['p50'])),
            '%s / %s' % (pct(t and t['min']), pct(t and t['p50'])),
            '%s / %s' % (pct(n and n['min']), pct(n and n['p50'])),
            _intervals(a['reaction_p50']), _intervals(a['reaction_p95']),
            a.get('reaction_cut_short', 0),
            ' '.join('%s %s' % kv for kv in a['targets'].items())))
    return '\n'.join(lines)


def pct(value):
    """A fraction as a whole percentage for a table ('-' for None)."""
    return '-' if value is None else '%.0f%%' % (value * 100)


def _intervals(value):
    return 'never' if value is None else '%d' % value
