"""Caps grown within an interval when a disk they made room for stops.

The problem
-----------
A policy decides once an interval (``[controller] interval_s``: 5 s by
default, 2 s in the scenario bench).  When a guest stops, the caps the
last decision set hold through the rest of the interval: the bursters
they hold run under them while the store idles where the stopped guest
was, and the release comes at the interval's end.  In the README's
nineteen scenario draws (2026-11-29 to 2026-12-01), the plans that fit
with a guest stopping lost 723 requests/s against ``none`` (summed over
their intervals, ``iothrottle-bench report --stops``), 467 of them in
the interval a guest stopped in, and on eight of the
sixteen such plans under the totals bar (97 % of ``none``) that one
interval took more than the bar allows for the whole plan (seed 59
plan 7: 61 requests/s in it, 0.937 of ``none`` over the plan).

The model
---------
The last interval ran the storage domain at a load ``L``, of which the
stopped disk took ``l``.  Handing ``l`` to the disks held at their caps
keeps the domain at ``L``: the store's queue, hence every other disk's
latency and rate, stays what the last decision settled on.  The growth
needs no new reading of the store (no border, no latency margin, none
of the release rules of ``guarantee``), only two facts of the interval
so far: that the disk stopped, and that the disks grown want the room.

*Stopped* is no completion over a span in which the disk's last
interval promised many: ``idle_s x iops >= MIN_MISSED_REQUESTS`` (8)
and ``idle_s >= IDLE_LATENCIES x latency_s`` (3), its rate and latency
those of the last interval.  A disk at 20 requests/s and 60 ms is
stopped after 0.4 s without a completion (two checks of 0.25 s); one
at 4 requests/s after 2 s, so a slow disk is left to the interval's
decision.  Eight missed
requests is ``e^-8`` (0.03 %) for a Poisson stream of that rate, and
a stream with a request in flight completes one within three of its
latencies unless the store stalls, which the second fact rules out.

*Wants the room* is a disk at its cap over the same check, as the
policy that decided tests it (``Watch.at_cap_fraction``:
``guarantee``'s ``AT_CAP_FRACTION``, 0.9 of the cap) or within
``CHECK_SLACK_REQUESTS`` (1) of it: a check of 0.25 s sees a cap of
30 as 7.5 requests, which QEMU's throttle lets through in whole ones.
Disks at their caps completing is also what says the store did not
stall.  With none at its cap the room has no taker and nothing is
decided.  On a domain the decision
found overbooked only the disks with a floor take it: a disk without
one is held at the minimum cap there (``guarantee``'s "Overbooked
domains"), and the next decision says whether the stop ended the
overbooking.

The loop
--------
The shell (``iothrottle.compute.agent.Agent.check_idle``) samples the
domain's disks every ``[controller] idle_check_s`` (0.25 s by
default, 0 turns the checks off) between two decisions, each check's
samples covering the span since the one before, while a domain's last
decision left caps to grow (``has_watched``: a host without caps is
not sampled); the policy's ``early`` hook passes them here with the
``Watch`` its last decision left: each disk's rate, bytes and latency
over the last interval.  A disk found
stopped gives its load ``l`` once an interval (``Watch.freed``); the
caps of the disks at them grow by one factor ``1 + l / C``, ``C`` the
load of those caps together (both axes of the cost model, against the
same capacity), so that they add up to ``l`` more.  Worked numbers:
two bursters capped at 30 and 20 requests/s of 16 KB on a store of 95,
a paced guest of 25 requests/s stops; ``l`` = 25/95, ``C`` = 50/95,
the factor 1.5: caps of 45 and 30, the domain's load where it was.

The watch holds all a check reads besides its samples and the caps in
force (rates, latencies, the at-cap fraction, the lease of a grown
cap), so a shell that does not run the policy runs the checks from it.
In conductor mode the conductor's round casts each host its part of
each watch (compute RPC 1.3, ``HostWatch``: the domain's capacity, the
host's disks in it and their rates), to the hosts the decision set or
renewed a cap on, tagged with the report it was decided from; the
agent checks on it until its next report
(``iothrottle.rpc.agent.RemoteAgent.check``), and the conductor's next
round reads the grown caps in that report as any caps in force.  A
disk that stops on one host hands its load to the caps at theirs on
the same host only: the room is the domain's, but the caps of the
other hosts would need their checks' samples, a round trip through the
conductor within the interval.  The domain stays at ``L`` either way,
and a stop whose takers all run elsewhere waits for the next decision,
as before.

Measured
--------
Scenario bench, 2-core TCG testbed, stores 93.0-94.7 IOPS: the twelve
plans of seeds 11, 19, 23, 53, 59, 67 and 89 whose README runs lost
most in the interval a guest stopped in, each run with ``idle_check_s``
0 and at its default on the same code, ``--policy none --policy
guarantee`` (doc/scenarios.rst, "A disk that stops, seen within the
interval").  The intervals a guest stopped in: 0.934 of ``none``'s
requests against 0.781; the plans: 0.988 against 0.963, at >= 97 %
of ``none`` on 10 of 12 against 3, every floor kept on 12 of 12 with
both.  The checks grew 37 caps, every one in an interval a
guest stopped in: 17 guests found stopped, after 0.5 to 1.25 s
without a completion.

What it does not do
-------------------
It never cuts and never lifts: the next full decision sees the grown
caps as the caps in force and decides from them as from any other (a
calm hold renews them, a tightening cuts them if the stopped guest came
back).  A disk that comes back within the interval after a check found
it stopped runs beside caps that took its room: the store at ``L +
l`` until the interval's end, which is what a full interval of its
absence would have left it, one interval earlier.  In conductor mode
it hands a stop's load within its host only (above).
"""

import dataclasses

from iothrottle.controller import cost
from iothrottle.controller import model

# Requests a disk's last rate promised over a span without a
# completion before the span reads as the disk stopped: e^-8 (0.03 %)
# is the chance a Poisson stream of that rate shows such a gap.
MIN_MISSED_REQUESTS = 8.0

# ... and the span is at least this many of its last latencies: a
# request in flight completes within them unless the store stalls.
IDLE_LATENCIES = 3.0

# A check of 0.25 s sees a cap of 30 requests/s as 7.5 requests, which
# QEMU's throttle lets through in whole ones: a disk within this many
# requests of its cap over a check's span runs at it.
CHECK_SLACK_REQUESTS = 1.0


@dataclasses.dataclass(frozen=True)
class Watch:
    """What a decision leaves the checks of the interval after it.

    ``served``: ``(disk_id, iops, bytes_sec, latency_s)`` of every disk
    with I/O in the interval decided on; ``idle_s``: ``(disk_id,
    seconds)`` each has gone without a completion so far, from the
    checks; ``freed``: the disks whose load a check handed out already;
    ``floors_only``: only caps of disks with a floor take it (the
    decision found the domain overbooked, where a disk without one is
    held at the minimum cap); ``at_cap_fraction``: a disk at this
    fraction of its cap runs at it, as the policy that decided tests it
    (``guarantee``'s ``AT_CAP_FRACTION``); ``lease_s``: the lease of a
    grown cap, seconds (0: the shell's ``[controller] lease_s``).  It
    holds everything a check reads besides the check's samples, so a
    shell that does not run the policy (the conductor-mode agent) runs
    the checks from it alone.
    """
    served: tuple = ()
    idle_s: tuple = ()
    freed: frozenset = frozenset()
    floors_only: bool = False
    at_cap_fraction: float = 1.0
    lease_s: float = 0.0


def watch_of(disks, at_cap_fraction, lease_s, floors_only=False):
    """The Watch of an interval's ``disks`` (DiskInputs)."""
    return Watch(served=tuple(
        (d.disk_id, d.sample.iops, d.sample.bytes_sec, d.sample.latency_s)
        for d in disks if d.sample.iops > 0), floors_only=floors_only,
        at_cap_fraction=at_cap_fraction, lease_s=lease_s)


def has_watched(watch):
    """Whether ``watch`` holds a disk whose stop a check could still
    hand out (none once every watched disk gave its load)."""
    return any(disk_id not in watch.freed for disk_id, *_ in watch.served)


@dataclasses.dataclass(frozen=True)
class HostWatch:
    """One storage domain's watch as the checks of one host run it
    without the policy (conductor mode): the domain's ``capacity``, the
    host's ``disks`` in it (disk ids) and the ``watch`` of those disks
    alone.  A disk that stops there hands its load to the caps of that
    host; another host's caps wait for the next decision."""
    capacity: model.Capacity
    disks: frozenset
    watch: Watch


def host_watches(watch, capacity, host_of):
    """``{host: HostWatch}`` of a domain's ``watch``, ``host_of``
    ``{disk_id: host}`` of every disk decided on, for the hosts with a
    watched disk."""
    served = {}
    for entry in watch.served:
        served.setdefault(host_of.get(entry[0]), []).append(entry)
    served.pop(None, None)
    disks = {}
    for disk_id, host in host_of.items():
        if host in served:
            disks.setdefault(host, set()).add(disk_id)
    return {host: HostWatch(capacity, frozenset(disks[host]),
                            dataclasses.replace(watch,
                                                served=tuple(entries)))
            for host, entries in served.items()}


@dataclasses.dataclass(frozen=True)
class Growth:
    """What a check decided: ``decisions`` and the next ``watch``."""
    decisions: tuple
    watch: Watch


def check(watch, view):
    """The caps ``view`` (a check's DomainView: samples since the last
    check, caps in force) grows for the disks of ``watch`` that stopped,
    and the watch after it.  See the module docstring."""
    served = {disk_id: (iops, bytes_sec, latency_s)
              for disk_id, iops, bytes_sec, latency_s in watch.served}
    idle_s = _idle_spans(watch, served, view.disks)
    stopped = sorted(
        disk_id for disk_id, span_s in idle_s.items()
        if disk_id not in watch.freed
        and _stopped(span_s, *served[disk_id]))
    after = dataclasses.replace(watch, idle_s=tuple(sorted(idle_s.items())))
    takers = [d for d in view.disks if _at_cap(watch, d)
              and (_has_floor(d.guarantee) or not watch.floors_only)]
    if not stopped or not takers:
        return Growth((), after)
    freed_load = sum(cost.load(view.capacity, *served[disk_id][:2])
                     for disk_id in stopped)
    caps_load = sum(cost.load(view.capacity, d.cap.iops, d.cap.bytes_sec)
                    for d in takers)
    factor = 1.0 + freed_load / caps_load
    names = _names(view.disks, stopped)
    reason = 'early: %s stopped (%s without a completion), %.1f %% of ' \
             'the domain to the caps at theirs (x %.3f)' % (
                 ', '.join(names), ', '.join(
                     '%.2f s' % idle_s[disk_id] for disk_id in stopped),
                 freed_load * 100, factor)
    decisions = tuple(_grown(d, factor, reason, watch.lease_s)
                      for d in takers)
    return Growth(decisions, dataclasses.replace(
        after, freed=watch.freed | frozenset(stopped)))


def _idle_spans(watch, served, disks):
    """``{disk_id: seconds without a completion}`` of the watched disks
    (``served``'s) the check sampled, the check's span added to a disk
    that completed nothing in it, 0 for one that did."""
    before = dict(watch.idle_s)
    out = {}
    for d in disks:
        if d.disk_id not in served:
            continue
        out[d.disk_id] = (before.get(d.disk_id, 0.0) + d.sample.interval_s
                          if d.sample.iops == 0 else 0.0)
    return out


def _at_cap(watch, disk):
    """Whether ``disk`` runs at its cap over the check's span, as the
    policy that left ``watch`` tests it, or within
    CHECK_SLACK_REQUESTS of it."""
    return cost.at_cap(disk.sample, disk.cap, watch.at_cap_fraction,
                       CHECK_SLACK_REQUESTS)


def _has_floor(guarantee):
    return guarantee.min_iops > 0 or guarantee.min_bytes_sec > 0


def _stopped(span_s, iops, bytes_sec, latency_s):
    return (span_s * iops >= MIN_MISSED_REQUESTS
            and span_s >= IDLE_LATENCIES * latency_s)


def _grown(disk, factor, reason, lease_s):
    cap = disk.cap
    grown = model.Cap(iops=cap.iops * factor,
                      bytes_sec=cap.bytes_sec * factor)
    return model.Decision(
        instance_uuid=disk.sample.instance_uuid, device=disk.sample.device,
        action=model.CAP, reason='%s -> %.1f IOPS, %.0f B/s' % (
            reason, grown.iops, grown.bytes_sec),
        cap=grown, lease_s=lease_s)


def _names(disks, disk_ids):
    names = {d.disk_id: d.sample.instance_name or d.disk_id for d in disks}
    return [names.get(disk_id, disk_id) for disk_id in disk_ids]
