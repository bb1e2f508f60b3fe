"""``iothrottle-bench faults``: the fault matrix (the pure part).

Each fault is injected into a running control plane on the testbed, the
seed-000 guests under load: VM1 bursts with every writer process of the
plan, VM2-VM4 run their paced demands, and VM1 is capped when the fault
strikes.  The runner (:mod:`iothrottle.bench.fault_runner`) observes
three things and hands them to :func:`measure`:

* the throughput of every guest per interval, as the host's libvirt
  counters give it, on a fixed grid of ``interval_s``;
* the live cap of every guest's disk (``blockIoTune``), polled every
  ``CAP_POLL_S``;
* the log lines of the services, from which the decisions the conductor
  cast and the agents received are counted.

What is measured, per fault (all times from the bench's monotonic
clock):

``stale_cap_s``
    For a fault that cuts the decision path (nothing can renew a cap
    while it holds): seconds from the fault until no cap is in force on
    any disk.  A cap nobody renews is stale; the lease bounds how long
    it may stay, so the expectation is at most ``lease_s +
    interval_s`` (the agent looks at its leases once an interval).
    Faults that leave the decision path working renew their caps
    legitimately and have no stale cap to measure (``None``).
``defended_s``
    Seconds from the moment the fault cleared (the restarted service
    consumes its queue, the broker or database answers again, the guest
    runs its load again) until the end of the first whole interval after
    it in which every guest with demand got at least
    :data:`~iothrottle.bench.seed000.SATISFIED_FRACTION` of
    ``min(demand, floor)``.
``defended_intervals``
    Which whole interval after the clear that was (1 the first).
    Expected at most :data:`DEFENDED_INTERVALS`: whole intervals, not
    ``3 * interval_s`` seconds, which would count the sliver of the
    interval the fault cleared in as one of the three (a clear 0.16 s
    before an interval's end left two whole ones, and a defence in the
    third read 6.15 s: CI, 2026-11-30).
``recovered_fraction``
    The share of the whole intervals after that first defended one in
    which every floor was met again (how well the defence holds once
    it is back).
``broken_intervals``
    Whole intervals between the fault and the end of the observation
    in which some floor was broken (the price of the fault).
``throughput_recovered``
    The guests' total KB/s over the intervals wholly after the
    defence's :data:`DEFENDED_INTERVALS`, against the last
    :data:`BEFORE_INTERVALS` whole intervals before the fault: whether
    the control plane gave back the room it had before (a controller
    that learned a store's capacity down under the fault and kept it
    there meets every floor and wastes the rest).  Expected at least
    :data:`RECOVERED_THROUGHPUT`.
``decisions_lost``
    Decisions the conductor cast (``cast N decision(s)`` in its log)
    that no agent received (``received N decision(s)``): messages lost
    by the bus or by a killed process.  A decision received late and
    dropped as stale counts as received, not lost.
``deaths``
    Services, libvirtd or guests that stopped without being told to.

The expectations (:func:`expectations`) are issue 9's: no VM throttled
longer than its lease after any controller loss, no process death, the
guarantees defended again within 3 intervals after the fault clears;
and issue 8's for a store that was slow for a while: the throughput
back once the defence is.
"""

import dataclasses
import math
import re

from iothrottle.bench import seed000

# Seconds between two polls of the live caps: a tenth of the seed-000
# interval, fine enough to time a cap lapse to well within an interval.
CAP_POLL_S = 0.2
# Whole intervals after the fault clears within which every floor must be
# met (issue 9: "defended again within 3 intervals after the fault
# clears"): the one that reads the load back and decides a cut, the one
# the cut acts in, and one to spare.
DEFENDED_INTERVALS = 3
# Seconds a killed agent stays down before it starts again: the
# RestartSec of its systemd unit (etc/systemd/iothrottle-compute.service).
AGENT_RESTART_S = 5.0
# How long a disturbance that does not cut the decision path holds, in
# intervals: long enough for several decisions to be made under it.
DISTURB_INTERVALS = 5
# Whole intervals observed after the fault clears.
OBSERVE_INTERVALS = 8
# How much slower the store serves every request under store-slowdown:
# half its rate, under the floors in demand of the plan (its four
# floors take ~0.6 of the store), so the fault breaks floors and teaches
# the controller a capacity that is wrong once the store is back.
SLOWDOWN_FACTOR = 2.0
# Whole intervals before the fault that say what the plan moved settled:
# the bench injects this many intervals after the first in which VM1 was
# capped and every floor met, that one included (the ones before it ran
# the burster uncapped; the first capped one still completes what it
# had queued: 0.93 of it was what guest-restart moved afterwards).
BEFORE_INTERVALS = 3
# Of the settled throughput, what the observed intervals after the
# defence must move: releases still under way after a store slowdown
# moved 0.84 of it, the other faults 0.98-1.08 (2026-11-28), and a
# capacity kept at what a slowdown taught ~0.75.
RECOVERED_THROUGHPUT = 0.8


@dataclasses.dataclass(frozen=True)
class Fault:
    name: str
    what: str
    # The decision path is cut while the fault holds: no cap can be
    # renewed, so every cap in force must lapse within its lease.
    cuts_control: bool


FAULTS = (
    Fault('agent-kill', 'kill -9 of the compute agent, started again %g s '
          'later (systemd RestartSec)' % AGENT_RESTART_S, True),
    Fault('conductor-kill', 'kill -9 of the conductor, started again '
          'after lease_s + 2 intervals', True),
    Fault('rabbitmq-restart', 'RabbitMQ stopped (rabbitmqctl stop_app), '
          'started again after lease_s + 2 intervals', True),
    Fault('mariadb-stop', 'MariaDB stopped (SIGTERM), started again '
          'after %d intervals' % DISTURB_INTERVALS, False),
    Fault('libvirtd-restart', 'libvirtd stopped (SIGTERM) and started '
          'again; the guests keep running', False),
    Fault('guest-restart', 'the capped burster destroyed and started '
          'again (new domain id)', False),
    Fault('guest-agent-slow', "a neighbour's qemu-ga stopped (SIGSTOP) "
          'for %d intervals' % DISTURB_INTERVALS, False),
    Fault('guest-agent-malformed', "a neighbour's /proc/meminfo replaced "
          'by garbage (bind mount) for %d intervals' % DISTURB_INTERVALS,
          False),
    Fault('store-slowdown', 'every request served %g x slower by the '
          'store for %d intervals' % (SLOWDOWN_FACTOR, DISTURB_INTERVALS),
          False),
)
BY_NAME = {fault.name: fault for fault in FAULTS}
# The faults of the short e2e run: one of each kind of loss (the
# decision path, the agent's state, a guest's domain).
SHORT = ('conductor-kill', 'agent-kill', 'guest-restart')


def hold_s(fault, plan):
    """Seconds the fault holds before it is cleared."""
    if fault.name == 'agent-kill':
        return AGENT_RESTART_S
    if fault.cuts_control:
        # Past the lease, so the lapse of every cap is observed.
        return plan.lease_s + 2 * plan.interval_s
    if fault.name in ('libvirtd-restart', 'guest-restart'):
        return 0.0
    return DISTURB_INTERVALS * plan.interval_s


def floors_met(plan, interval):
    """Whether every guest got SATISFIED_FRACTION of min(demand, floor)
    in ``interval`` (a seed000.Interval)."""
    for vm in plan.vms:
        need = min(vm.demand_kb_s, vm.guarantee_kb_s)
        if interval.kb_s.get(vm.name, 0.0) < \
                seed000.SATISFIED_FRACTION * need:
            return False
    return True


def stale_cap_s(cap_polls, fault_s, end_s=math.inf):
    """Seconds from ``fault_s`` to the first poll in [fault_s, end_s]
    with no cap in force; None if every such poll saw one.
    ``cap_polls`` is ``[(t_s, {vm: iops})]`` in time order."""
    for t_s, caps in cap_polls:
        if fault_s <= t_s <= end_s and not any(caps.values()):
            return t_s - fault_s
    return None


def capped_at(cap_polls, t_s):
    """The caps of the last poll at or before ``t_s`` ({} if none)."""
    last = {}
    for poll_s, caps in cap_polls:
        if poll_s > t_s:
            break
        last = caps
    return last


def _after(intervals, t_s):
    """Intervals wholly after ``t_s``."""
    return [i for i in intervals if i.end_s - i.length_s >= t_s - 1e-9]


def _before(intervals, t_s):
    """Intervals wholly before ``t_s``."""
    return [i for i in intervals if i.end_s <= t_s + 1e-9]


def _mean_total_kb_s(intervals):
    return (sum(sum(i.kb_s.values()) for i in intervals) / len(intervals)
            if intervals else None)


def throughput_recovered(plan, intervals, fault_s, clear_s):
    """The ``throughput_recovered`` of the module docstring, or None
    without intervals on either side."""
    before = _mean_total_kb_s(_before(intervals, fault_s)[-BEFORE_INTERVALS:])
    after = _mean_total_kb_s(_after(
        intervals, clear_s + DEFENDED_INTERVALS * plan.interval_s))
    if not before or after is None:
        return None
    return after / before


def measure(fault, plan, intervals, cap_polls, fault_s, clear_s,
            cast=0, received=0, deaths=()):
    """The fault's row (a dict; see the module docstring)."""
    met = [(i, floors_met(plan, i)) for i in _after(intervals, clear_s)]
    defended_at = next((k for k, (_, ok) in enumerate(met) if ok), None)
    defended = None if defended_at is None else met[defended_at][0]
    defended_s = None if defended is None else defended.end_s - clear_s
    recovered = None
    if defended is not None:
        tail = [ok for i, ok in met if i.end_s > defended.end_s]
        recovered = sum(tail) / len(tail) if tail else 1.0
    broken = sum(1 for i in _after(intervals, fault_s)
                 if not floors_met(plan, i))
    return {
        'fault': fault.name,
        'what': fault.what,
        'cuts_control': fault.cuts_control,
        'capped_at_fault': bool(any(capped_at(cap_polls, fault_s).values())),
        'hold_s': round(clear_s - fault_s, 2),
        'stale_cap_s': (None if not fault.cuts_control else
                        _round(stale_cap_s(cap_polls, fault_s))),
        'defended_s': _round(defended_s),
        'defended_intervals': (None if defended_at is None
                               else defended_at + 1),
        'recovered_fraction': _round(recovered),
        'broken_intervals': broken,
        'throughput_recovered': _round(throughput_recovered(
            plan, intervals, fault_s, clear_s)),
        'decisions_cast': cast,
        'decisions_received': received,
        'decisions_lost': max(0, cast - received),
        'deaths': list(deaths),
    }


def _round(value):
    return None if value is None else round(value, 2)


def expectations(row, plan):
    """Why ``row`` misses issue 9's expectations ([] if it meets them)."""
    misses = []
    if not row['capped_at_fault']:
        misses.append('no cap was in force when the fault struck')
    limit_s = plan.lease_s + plan.interval_s + CAP_POLL_S
    if row['cuts_control'] and (row['stale_cap_s'] is None
                                or row['stale_cap_s'] > limit_s):
        misses.append('a cap outlived its lease (stale for %s s, limit '
                      '%.1f s)' % (row['stale_cap_s'], limit_s))
    defended_at = row.get('defended_intervals')
    if defended_at is None or defended_at > DEFENDED_INTERVALS:
        misses.append('guarantees not defended within %d whole intervals '
                      'of the fault clearing (%s s, interval %s)'
                      % (DEFENDED_INTERVALS, row['defended_s'],
                         defended_at))
    recovered = row.get('throughput_recovered')
    if recovered is None or recovered < RECOVERED_THROUGHPUT:
        misses.append('throughput not recovered after the defence (%s of '
                      'before the fault, %.0f %% expected)'
                      % (recovered, RECOVERED_THROUGHPUT * 100))
    if row['deaths']:
        misses.append('died: %s' % ', '.join(row['deaths']))
    return misses


# Log lines of the services that count decisions (see
# iothrottle.conductor.service.Conductor.publish and
# iothrottle.rpc.agent.RemoteAgent.apply).
_CAST = re.compile(r'cast (\d+) decision\(s\) to ')
_RECEIVED = re.compile(r'received (\d+) decision\(s\)')


def count_decisions(conductor_log, agent_log):
    """(cast, received) from the text of the services' logs."""
    return (sum(int(n) for n in _CAST.findall(conductor_log)),
            sum(int(n) for n in _RECEIVED.findall(agent_log)))


# The conductor's decision lines (``Conductor.publish``: action, disk,
# storage domain, reason), the line on the domain each round that
# decided logs before them (``service.describe_load``), and how many of
# the last a missed fault's report shows: two lines an interval while
# the plan's burster is the one disk capped, so 40 lines cover the 20
# intervals around a fault.
_INFO = r'^\S+ (\S+) \d+ INFO \S+ \[[^]]*\] '
_DECISION = re.compile(_INFO + r'(cap|release) (\S+) on \S+: (.*)$')
_DOMAIN = re.compile(_INFO + r'domain \S+: (completed .*)$')
TRAIL_LINES = 40


def decision_trail(conductor_log, limit=TRAIL_LINES):
    """The last ``limit`` decisions in the text of a conductor's log and
    the domain lines logged with them, a line each: time, action, disk,
    reason, or time and what the domain carried - what a fault that
    missed its expectations is explained by where no log survives the
    run (CI)."""
    lines = []
    for line in conductor_log.splitlines():
        m = _DECISION.match(line)
        if m:
            lines.append('%s %s %s: %s' % m.groups())
            continue
        m = _DOMAIN.match(line)
        if m:
            lines.append('%s domain: %s' % m.groups())
    return lines[-limit:] if limit else []


def series_text(row):
    """A fault's intervals, a line each: end, KB/s per guest, and the
    caps in force from then (``row['series']``, ``row['caps']``)."""
    caps = list(row.get('caps', ()))
    lines = []
    for interval in row.get('series', ()):
        now = [c for t, c in caps if t <= interval['end_s']]
        lines.append('%7.1f s  %s%s' % (
            interval['end_s'],
            ' '.join('%s=%d' % kv for kv in sorted(interval['kb_s'].items())),
            '  caps %s' % now[-1] if now and now[-1] else ''))
    return '\n'.join(lines)


def table(rows, plan):
    """The fault matrix as text, one line per fault."""
    header = ('%-22s %6s %7s %9s %9s %7s %6s %5s  %s' % (
        'fault', 'hold_s', 'stale_s', 'defended', 'recovered', 'broken',
        'KB/s', 'lost', 'deaths / misses'))
    lines = [header, '-' * len(header)]
    for row in rows:
        misses = expectations(row, plan)
        lines.append('%-22s %6.1f %7s %9s %9s %7d %6s %5d  %s' % (
            row['fault'], row['hold_s'], _text(row['stale_cap_s']),
            _text(row['defended_s']),
            _text(row['recovered_fraction'], '%.0f %%', 100),
            row['broken_intervals'],
            _text(row.get('throughput_recovered'), '%.0f %%', 100),
            row['decisions_lost'], '; '.join(misses) or 'ok'))
    return '\n'.join(lines)


def _text(value, fmt='%.1f', scale=1):
    return '-' if value is None else fmt % (value * scale)
