"""The balloon loop of the compute agent (shell around
:mod:`iothrottle.balloon`).

Every ``[balloon] interval_s`` it takes the host collection the I/O loop
already made (balloon stats and disk read rates of every domain), asks
each guest's QEMU guest agent for its kernel counters
(:data:`iothrottle.balloon.estimator.REPORT_ARGV`), turns them into one
:class:`~iothrottle.balloon.model.GuestMemory` per guest, lets the
balloon policy decide and applies the targets live with
``setMemoryFlags(KiB, VIR_DOMAIN_AFFECT_LIVE)``.

A guest without a usable report (no agent, agent refuses ``guest-exec``,
malformed or implausible counters, a report too soon after the last, no
answer within ``GUEST_BUDGET_S``) is
a ``host-estimate`` guest that interval: its read rate is its disk read
rate as the host sees it, its utilization unknown, so ``cams`` neither
takes from it nor gives to it except to keep floors (see the essay of
:mod:`iothrottle.balloon.cams`).  Each kind of failure is logged once per
guest, not every interval.  A balloon the guest does not honour is left
alone for a growing back-off (:mod:`iothrottle.balloon.watch`); so is
the agent of a guest too slow to answer within its budget
(``QUIET_INTERVALS``).
"""

import dataclasses
import math

import libvirt
from oslo_log import log as logging
from stevedore import driver

from iothrottle.balloon import estimator
from iothrottle.balloon import model
from iothrottle.balloon import watch as watch_mod
from iothrottle.compute import guest_agent

LOG = logging.getLogger(__name__)

NAMESPACE = 'iothrottle.balloon_policies'
# A report is pulled once per interval; one arriving sooner than this
# fraction of the interval after the last (a step called too often) is
# dropped rather than giving a rate over a tiny, noisy window.
MIN_REPORT_FRACTION = 0.5
# Seconds one guest's agent gets per balloon step for all its commands
# and polls together (guest_agent.run; at most one second more): a slow
# or hung guest must not stall the loop for its neighbours.
GUEST_BUDGET_S = 2.0
# A guest whose agent did not answer within its budget is asked again
# only this many balloon intervals later, doubled at each further timeout
# up to MAX_QUIET_INTERVALS: a slow guest costs the loop its budget once
# per quiet period, not every interval.
QUIET_INTERVALS = 2
MAX_QUIET_INTERVALS = 32
# Below this a target is not worth a balloon request.
MIN_CHANGE_MB = 1.0


def load_policy(conf, name=None):
    """The balloon policy ``name`` (default ``[balloon] policy``)."""
    name = name or conf.balloon.policy
    try:
        manager = driver.DriverManager(NAMESPACE, name, invoke_on_load=False)
    except Exception as exc:
        raise ValueError('unknown balloon policy %r: %s' % (name, exc)) \
            from None
    return manager.driver.from_conf(conf)


@dataclasses.dataclass(frozen=True)
class BalloonReport:
    now_s: float
    guests: tuple          # GuestMemory
    targets: tuple         # BalloonTarget
    estimates: dict        # uuid -> estimator.Estimate
    applied: dict          # uuid -> target MiB sent this interval
    errors: tuple = ()


class BalloonAgent:
    """See the module docstring.  ``min_memory_mb`` maps a flavor name to
    its floor in MiB (``iothrottle:min_memory_mb`` or a tier), from the
    local tiers file.

    In conductor mode the conductor casts each instance's floor, resolved
    from its own flavor's extra specs and tiers as its I/O guarantee is
    (:meth:`set_conductor_floors`).  The conductor's floor of an instance
    wins over the file, a floor of 0 included (no floor set: the
    ``[balloon] floor_fraction``): it is the one source of guarantees
    for the whole cloud, resolved from the instance's own flavor rather
    than a flavor name, where a file on each host is kept by hand and
    goes stale.  The file serves an instance the conductor has said
    nothing about (an older conductor, a bus down since the agent
    started, an instance Nova has not placed yet), and one whose floor
    from the conductor exceeds its memory (refused, logged once).
    """

    def __init__(self, conf, conn, policy=None, min_memory_mb=None,
                 reporter=None):
        self.conf = conf
        self.conn = conn
        self.policy = policy or load_policy(conf)
        self.min_memory_mb = dict(min_memory_mb or {})
        # uuid -> MiB from the conductor; replaced whole, never mutated
        # (set on an RPC thread, read on the loop thread).
        self.conductor_floors = {}
        self.reporter = reporter or self._agent_report
        self.watch = watch_mod.BalloonWatch(conf.balloon.stuck_intervals)
        self.gate = estimator.ReportGate(
            conf.balloon.interval_s * MIN_REPORT_FRACTION)
        self._counters = {}
        # uuid -> (asked again from this time on, quiet intervals next)
        self._quiet = {}
        self._logged = set()
        self._last_step_s = None

    def due(self, now_s):
        return (self._last_step_s is None or now_s - self._last_step_s
                >= self.conf.balloon.interval_s * MIN_REPORT_FRACTION)

    def maybe_step(self, collection, now_s):
        """:meth:`step` if an interval has passed, else None; None too
        for a collection that could not read the host (libvirtd
        restarting), which says nothing of the guests: stepped on, it
        forgot every guest's state (a slow guest's back-off, the hold on
        a balloon not honoured) and asked them all afresh."""
        if collection.unreadable or not self.due(now_s):
            return None
        return self.step(collection, now_s)

    def step(self, collection, now_s):
        self._last_step_s = now_s
        errors = []
        read_iops = {}
        for s in collection.samples:
            read_iops[s.instance_uuid] = (read_iops.get(s.instance_uuid, 0.0)
                                          + s.read_iops)
        guests, estimates = [], {}
        present = list(collection.snapshot.domains)
        for uuid, dom_counters in collection.snapshot.domains.items():
            instance = collection.instances.get(uuid)
            try:
                guest, est = self._guest(uuid, dom_counters, instance,
                                         read_iops.get(uuid, 0.0), now_s)
            except Exception as exc:
                # One guest's failure skips that guest, never the step.
                self._counters.pop(uuid, None)
                self._log_once((uuid, 'guest'), 'balloon: guest %s '
                               'skipped: %s' % (uuid, exc))
                continue
            if guest is not None:
                guests.append(guest)
            if est is not None:
                estimates[uuid] = est
        for uuid in set(self._counters) - set(present):
            del self._counters[uuid]
            self.gate.forget(uuid)
        for uuid in set(self._quiet) - set(present):
            del self._quiet[uuid]
        try:
            targets = tuple(self.policy.decide(tuple(guests)))
        except Exception as exc:
            message = 'balloon policy failed: %s' % exc
            LOG.exception('%s', message)
            errors.append(message)
            targets = ()
        applied = {}
        current = {g.instance_uuid: g for g in guests}
        for target in targets:
            g = current.get(target.instance_uuid)
            if g is None or self.watch.held(target.instance_uuid):
                continue
            if abs(target.target_mb - g.current_mb) < MIN_CHANGE_MB:
                continue
            try:
                dom = self.conn.lookupByUUIDString(target.instance_uuid)
                dom.setMemoryFlags(int(target.target_mb * 1024),
                                   libvirt.VIR_DOMAIN_AFFECT_LIVE)
                self.watch.sent(target.instance_uuid, target.target_mb)
                applied[target.instance_uuid] = target.target_mb
                LOG.debug('balloon of %s to %.0f MiB: %s', g.name,
                          target.target_mb, target.reason)
            except libvirt.libvirtError as exc:
                message = 'balloon of %s to %.0f MiB failed: %s' % (
                    g.name or g.instance_uuid, target.target_mb,
                    exc.get_error_message() or exc)
                errors.append(message)
                self._log_once((target.instance_uuid, 'set'), message)
        self.watch.next_interval(present)
        return BalloonReport(now_s, tuple(guests), targets, estimates,
                             applied, tuple(errors))

    # -- one guest ----------------------------------------------------

    def _guest(self, uuid, counters, instance, read_iops, now_s):
        b = counters.balloon
        name = (instance.name if instance is not None else '') \
            or counters.name
        if b.current_kib is None or b.maximum_kib is None:
            return None, None
        current_mb = b.current_kib / 1024.0
        if self.watch.observe(uuid, current_mb):
            LOG.warning('%s (%s) does not honour its balloon target '
                        '(balloon at %.0f MiB); leaving its balloon alone '
                        'for a while', name, uuid, current_mb)
        max_mb = b.maximum_kib / 1024.0
        flavor = instance.flavor if instance is not None else ''
        floor = watch_mod.floor_mb(max_mb, self.conf.balloon.floor_fraction,
                                   self._override_mb(uuid, name, flavor,
                                                     max_mb))
        usable_mb = (b.usable_kib or 0) / 1024.0
        est = self._estimate(uuid, name, now_s)
        if self.watch.held(uuid):
            # Its balloon will not move: neither donor nor receiver.
            floor = max_mb = current_mb
        try:
            guest = model.GuestMemory(
                instance_uuid=uuid, name=name, current_mb=current_mb,
                max_mb=max(max_mb, current_mb),
                floor_mb=min(floor, max(max_mb, current_mb)),
                usable_mb=min(usable_mb, current_mb),
                utilization=est.utilization if est is not None else None,
                read_rate=read_iops,
                source=(model.SOURCE_GUEST_AGENT if est is not None
                        else model.SOURCE_HOST_ESTIMATE))
        except ValueError as exc:
            self._log_once((uuid, 'memory'), 'balloon: %s' % exc)
            return None, est
        return guest, est

    def set_conductor_floors(self, floors):
        """The conductor's floors ({uuid: MiB}, decoded by
        :func:`iothrottle.rpc.wire.decode_memory_floors`) replace the
        last ones."""
        self.conductor_floors = dict(floors)

    def _override_mb(self, uuid, name, flavor, max_mb):
        """The floor of ``uuid`` (MiB) that replaces the floor_fraction,
        or None: the conductor's, else the tiers file's (see the class
        docstring)."""
        floors = self.conductor_floors
        if uuid in floors:
            floor_mb = floors[uuid]
            if isinstance(floor_mb, (int, float)) and \
                    math.isfinite(floor_mb) and 0 <= floor_mb <= max_mb:
                self._logged.discard((uuid, 'floor'))
                return floor_mb or None
            self._log_once((uuid, 'floor'), 'balloon: memory floor %r MiB '
                           'from the conductor for %s (%s) is not within '
                           'its memory (%.0f MiB): ignored'
                           % (floor_mb, name, uuid, max_mb))
        return self.min_memory_mb.get(flavor)

    def _estimate(self, uuid, name, now_s):
        quiet = self._quiet.get(uuid)
        if quiet is not None and now_s < quiet[0]:
            return None
        if not self.gate.admit(uuid, now_s):
            self._log_once((uuid, 'often'), 'report of %s (%s) dropped: '
                           'too soon after the last one' % (name, uuid))
            return None
        try:
            text = self.reporter(uuid)
            counters = estimator.validate(text, now_s)
        except Exception as exc:
            # Whatever an untrusted guest (or its parser) does, only its
            # own report is lost: GuestAgentError, ReportError and
            # libvirtError are the expected ones.
            self._counters.pop(uuid, None)
            if isinstance(exc, guest_agent.GuestAgentTimeout):
                self._keep_quiet(uuid, name, now_s)
            self._log_once((uuid, 'report'), 'no cache report from %s '
                           '(%s): %s; using the host-only estimate'
                           % (name, uuid, exc))
            return None
        self._quiet.pop(uuid, None)
        previous = self._counters.get(uuid)
        self._counters[uuid] = counters
        if previous is None:
            return None
        try:
            est = estimator.estimate(previous, counters)
        except estimator.ReportError as exc:
            self._log_once((uuid, 'estimate'), 'cache report of %s (%s) '
                           'dropped: %s' % (name, uuid, exc))
            return None
        self._logged.discard((uuid, 'report'))
        return est

    def _keep_quiet(self, uuid, name, now_s):
        """Ask the slow guest ``uuid`` nothing for a growing while."""
        intervals = self._quiet.get(uuid, (None, QUIET_INTERVALS))[1]
        self._quiet[uuid] = (
            now_s + intervals * self.conf.balloon.interval_s,
            min(2 * intervals, MAX_QUIET_INTERVALS))
        LOG.debug('guest agent of %s (%s) is slow: asked again in %d '
                  'intervals', name, uuid, intervals)

    def _agent_report(self, uuid):
        dom = self.conn.lookupByUUIDString(uuid)
        return guest_agent.run(dom, estimator.REPORT_ARGV, GUEST_BUDGET_S)

    def _log_once(self, key, message):
        if key not in self._logged:
            self._logged.add(key)
            LOG.warning('%s', message)
