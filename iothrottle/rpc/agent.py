"""The compute agent in conductor mode (shell, native threads).

Every interval the agent observes (collects, lifts expired leases) and
hands its samples and caps to a :class:`iothrottle.rpc.reporter.Reporter`,
which casts them to the conductor off the loop; the conductor's decisions
arrive on this host's topic and are applied through the agent's lease
table.  If the conductor or the bus goes away, no lease is renewed and
every cap lapses at its expiry; the loop carries on and reports again
once the bus is back.

Between two reports the agent checks its disks every ``[controller]
idle_check_s`` while the conductor's *watch* for the interval after its
latest report holds a disk yet to stop (compute RPC 1.3): a disk of
this host that stopped hands its load to this host's caps at theirs,
by :func:`iothrottle.controller.idle.check` as the standalone agent's
policy does, without the policy (the watch carries what it reads).
"""

import dataclasses
import threading
import time
import uuid

from oslo_log import log as logging

from iothrottle.compute import agent as agent_mod
from iothrottle.controller import idle
from iothrottle.controller import model
from iothrottle.rpc import fence as fence_mod
from iothrottle.rpc import reporter as reporter_mod
from iothrottle.rpc import wire

LOG = logging.getLogger(__name__)


def owns(prefixes, instance):
    """Whether an agent with ``owned_domains`` ``prefixes`` owns
    ``instance`` (every instance when there are none)."""
    if not prefixes:
        return True
    names = (instance.domain_name, instance.name, instance.uuid)
    return any(name and name.startswith(prefix)
               for prefix in prefixes for name in names)


class OwnedCollector:
    """A collector that keeps only the instances this agent owns."""

    def __init__(self, collector, prefixes):
        self.collector = collector
        self.prefixes = tuple(prefixes or ())

    def __getattr__(self, name):
        return getattr(self.collector, name)

    def collect(self):
        return self._owned(self.collector.collect())

    def check(self):
        return self._owned(self.collector.check())

    def _owned(self, collection):
        if not self.prefixes:
            return collection
        instances = {uuid: instance
                     for uuid, instance in collection.instances.items()
                     if owns(self.prefixes, instance)}
        return dataclasses.replace(
            collection, instances=instances,
            samples=tuple(s for s in collection.samples
                          if s.instance_uuid in instances))


class Endpoint:
    """The RPC endpoint on ``iothrottle-compute.<host>`` (compute API
    :data:`iothrottle.rpc.api.COMPUTE_VERSION`)."""

    def __init__(self, remote):
        from iothrottle.rpc import api   # oslo_messaging: after setup()
        self.target = api.compute_target()
        self._remote = remote

    def apply(self, ctxt, decisions):
        self._remote.apply(decisions)

    def set_memory_floors(self, ctxt, floors):
        """Since 1.1: the balloon floors of this host's instances."""
        self._remote.set_memory_floors(floors)

    def advise(self, ctxt):
        """Since 1.2, a call: this host's advice
        (:func:`iothrottle.rpc.wire.advice_reply`)."""
        return self._remote.advise()

    def watch(self, ctxt, watch):
        """Since 1.3: what this host's checks within the interval read
        (:func:`iothrottle.rpc.wire.watches`)."""
        self._remote.watch(watch)


class RemoteAgent:
    """Drives an :class:`iothrottle.compute.agent.Agent` for the
    conductor.  ``conductor_api`` has ``report(report_dict)``; the
    reports go through ``reporter`` (default: a
    :class:`iothrottle.rpc.reporter.Reporter` casting on a thread of its
    own, so that a hung bus never delays the lease checks)."""

    def __init__(self, agent, conductor_api, host, interval_s,
                 max_decision_age_s=10.0, wall_clock=time.time,
                 advisor=None, reporter=None, check_s=0.0):
        self.agent = agent
        # Seconds between two checks within an interval ([controller]
        # idle_check_s; 0: none).
        self.check_s = check_s
        # advisor(): this host's advice reply (an
        # iothrottle.compute.inventory.Advisor); None: it cannot inspect.
        self.advisor = advisor
        self.host = host
        self.interval_s = interval_s
        self.max_decision_age_s = max_decision_age_s
        self.wall_clock = wall_clock
        # Who this process is, for the conductor: a second agent started
        # with the same [agent] host is told apart from this one, and a
        # report replayed or reordered on the bus by its number.
        self.agent_id = str(uuid.uuid4())
        if reporter is None and conductor_api is not None:
            reporter = reporter_mod.Reporter(conductor_api.report)
        self.reporter = reporter
        self.reports = 0    # built so far: the newest one's seq
        self.applied = 0
        self.stale = 0
        self.deposed = 0
        # Per disk, the newest conductor epoch applied (several
        # conductors: a deposed owner's decisions are ignored).
        self.fence = fence_mod.Fence()
        self._fence_lock = threading.Lock()   # RPC thread and loop thread
        # The issued_at of the newest decisions taken in (applied or
        # dropped), set once they are: a report whose caps were read
        # after reading it reflects them (wire.report).
        self.decided_through = 0.0
        # The watches of the interval after the latest report:
        # {storage domain: (idle.HostWatch, (owner, epoch))}, set on the
        # RPC thread, read and advanced by the checks on the loop thread,
        # emptied by the next report.  The guarantee of each disk's
        # latest decision: a grown cap keeps its ceilings.
        self._watch_lock = threading.Lock()
        self._watches = {}
        self._guarantees = {}
        self.stale_watches = 0
        self.checks = 0     # checks that sampled the host
        self.grown = 0      # caps the checks grew

    def apply(self, decisions):
        """Apply decision dicts from the conductor; returns errors.
        Decisions issued more than ``max_decision_age_s`` ago (queued
        while this agent or the bus was down) are dropped: the conductor
        decides again from fresh reports."""
        pairs = []
        if not isinstance(decisions, list):
            LOG.warning('malformed apply ignored: decisions must be a list')
            return ()
        now = self.wall_clock()
        stale = self.stale
        for data in decisions:
            try:
                issued_at = wire.issued_at(data)
                if issued_at > 0 and now - issued_at > \
                        self.max_decision_age_s:
                    self.stale += 1
                    LOG.info('decision issued %.1f s ago dropped as stale',
                             now - issued_at)
                    continue
                pair = wire.decision_from_dict(data)
                if self._fenced(pair[0], wire.fence_of(data), now):
                    pairs.append(pair)
            except Exception as exc:
                LOG.warning('malformed decision ignored: %s', exc)
        errors = self.agent.apply_decisions(pairs)
        with self._watch_lock:
            self._guarantees.update((decision.disk_id, guarantee)
                                    for decision, guarantee in pairs)
        self.applied += len(pairs)
        self.decided_through = max(
            [self.decided_through] + [wire.issued_at(data)
                                      for data in decisions
                                      if isinstance(data, dict)])
        LOG.debug('received %d decision(s): %d applied, %d stale',
                  len(decisions), len(pairs), self.stale - stale)
        for message in errors:
            LOG.warning('%s', message)
        return errors

    def _fenced(self, decision, fence, now):
        """Whether ``decision`` from ``fence`` = (owner, epoch) passes the
        fence (see :mod:`iothrottle.rpc.fence`): its record holds for the
        lease it grants, at least ``max_decision_age_s``."""
        owner, epoch = fence
        hold_s = max(decision.lease_s, self.max_decision_age_s)
        with self._fence_lock:
            verdict = self.fence.admit(decision.disk_id, owner, epoch, now,
                                       hold_s)
            record = self.fence.record(decision.disk_id)
        if not verdict.admitted:
            self.deposed += 1
            LOG.info('%s of %s from conductor %s (epoch %d) ignored: %s '
                     '(epoch %d) decides it now', decision.action,
                     decision.disk_id, owner or '-', epoch,
                     record.owner or '-', record.epoch)
        elif verdict.previous is not None:
            LOG.info('%s is decided by conductor %s (epoch %d) from now '
                     'on, was %s (epoch %d)', decision.disk_id,
                     owner or '-', epoch, verdict.previous.owner or '-',
                     verdict.previous.epoch)
        return verdict.admitted

    def set_memory_floors(self, floors):
        """Take the conductor's balloon floors ({uuid: MiB}) for this
        host's instances; returns the rejected entries.  They replace
        the last ones and win over the local tiers file (see
        :meth:`iothrottle.compute.balloon_agent.BalloonAgent.
        set_conductor_floors`); without a balloon loop they are
        ignored."""
        try:
            floors, rejected = wire.decode_memory_floors(floors)
        except ValueError as exc:
            LOG.warning('malformed memory floors ignored: %s', exc)
            return (str(exc),)
        for message in rejected:
            LOG.warning('memory floor ignored: %s', message)
        balloon = getattr(self.agent, 'balloon', None)
        if balloon is not None:
            balloon.set_conductor_floors(floors)
        return rejected

    def advise(self):
        """This host's advice reply; an error reply, never an exception
        (the caller is an operator waiting on the API)."""
        if self.advisor is None:
            return wire.advice_reply(self.host, error='this agent has no '
                                     'libvirt connection to inspect')
        try:
            return self.advisor()
        except Exception as exc:
            LOG.exception('advice failed')
            return wire.advice_reply(self.host, error='advice failed: %s'
                                     % (str(exc).splitlines()
                                        or [type(exc).__name__])[0])

    def watch(self, data):
        """Take the conductor's watches (a watch cast's ``watch``) for
        the checks of the interval after this agent's latest report;
        returns the rejected entries.  A watch decided from an earlier
        report, or another agent process's, is dropped: its interval
        is over."""
        try:
            watches = wire.decode_watches(data)
        except ValueError as exc:
            LOG.warning('malformed watch ignored: %s', exc)
            return (str(exc),)
        for message in watches.rejected:
            LOG.warning('watch ignored: %s', message)
        with self._watch_lock:
            if (watches.agent_id, watches.seq) != (self.agent_id,
                                                   self.reports):
                self.stale_watches += 1
                LOG.debug('watch of report %d dropped: report %d is the '
                          'latest', watches.seq, self.reports)
                return watches.rejected
            fence = (watches.owner, watches.epoch)
            for domain, host_watch in watches.domains.items():
                self._watches[domain] = (host_watch, fence)
        return watches.rejected

    def check(self):
        """A check within the interval (``check_s``): the disks of the
        watched domains sampled over the span since the last report or
        check, the caps a disk that stopped leaves room for grown
        (:func:`iothrottle.controller.idle.check`); returns the
        decisions applied.  Without a watch holding a disk yet to stop
        the host is not sampled."""
        with self._watch_lock:
            watched = {domain: entry
                       for domain, entry in self._watches.items()
                       if idle.has_watched(entry[0].watch)}
        if not watched:
            return ()
        collection = self.agent.collector.check()
        if collection.unreadable:
            return ()
        self.checks += 1
        samples = {sample.disk_id: sample for sample in collection.samples}
        caps = self.agent.caps()
        with self._watch_lock:
            guarantees = dict(self._guarantees)
        now = self.wall_clock()
        applied = []
        for domain, entry in sorted(watched.items()):
            host_watch, fence = entry
            growth = idle.check(host_watch.watch, model.DomainView(
                storage_domain=domain, capacity=host_watch.capacity,
                disks=_check_inputs(host_watch.disks, samples, caps,
                                    guarantees), now_s=now))
            with self._watch_lock:
                if self._watches.get(domain) is not entry:
                    continue    # a new report or watch since
                self._watches[domain] = (dataclasses.replace(
                    host_watch, watch=growth.watch), fence)
            pairs = [(decision, guarantees.get(decision.disk_id,
                                               model.NO_GUARANTEE))
                     for decision in growth.decisions
                     if self._fenced(decision, fence, now)]
            for decision, _ in pairs:
                LOG.info('%s %s on %s: %s', decision.action,
                         decision.disk_id, domain, decision.reason)
            for message in self.agent.apply_decisions(pairs):
                LOG.warning('%s', message)
            self.grown += len(pairs)
            applied.extend(decision for decision, _ in pairs)
        return tuple(applied)

    def step(self):
        """Observe one interval and report it; returns the StepReport."""
        # Read before the caps are: decisions taken in meanwhile show in
        # the next report, never claimed by this one.
        decided_through = self.decided_through
        report = self.agent.observe()
        if not report.unreadable:
            # A host it could not read says nothing of which disks are
            # gone: forgotten, their records would admit a deposed
            # conductor's decisions once libvirtd answered again.
            sampled = {sample.disk_id for sample in report.samples}
            with self._fence_lock:
                self.fence.keep(sampled)
            with self._watch_lock:
                self._guarantees = {
                    disk_id: guarantee
                    for disk_id, guarantee in self._guarantees.items()
                    if disk_id in sampled}
        with self._watch_lock:
            # The watches were of the interval this report ends.
            self.reports += 1
            self._watches.clear()
        # A cap travels with its disk's sample: a blind report has none
        # (the conductor would refuse each cap as one of a disk the
        # report does not sample, a warning per capped disk).
        caps = {} if report.unreadable else report.caps
        self.reporter.submit(wire.report(
            self.host, self.interval_s, report.samples, caps,
            agent_id=self.agent_id, seq=self.reports,
            sent_at=self.wall_clock(), decided_through=decided_through,
            unreadable=report.unreadable))
        return report

    def run(self, stop_event, on_step=None):
        """Step on the wall clock's grid of ``interval_s`` until
        ``stop_event``; caps are lifted on the way out.  A failing step
        is logged, never fatal.

        Every host's agent steps at the same instants (the multiples of
        ``interval_s`` since the epoch; NTP keeps hosts within
        milliseconds of each other), so the conductor's round finds the
        reports of every host of a shared storage domain together.  On
        grids laid from each agent's start, hosts more than the
        conductor's ``wait_s`` apart split the domain between rounds,
        each decided on part of its disks.  A step that overruns skips
        the grid points it missed."""
        try:
            while not stop_event.wait(
                    aligned_wait_s(self.wall_clock(), self.interval_s)):
                tick_s = agent_mod.next_tick(
                    0.0, self.interval_s, self.wall_clock()) - \
                    self.interval_s
                try:
                    report = self.step()
                    if on_step is not None:
                        on_step(report)
                except Exception:
                    LOG.exception('agent step failed; carrying on')
                if self._check_until_next_tick(stop_event, tick_s):
                    break
        finally:
            if self.reporter is not None:
                self.reporter.stop()
            self.agent.release_all()

    def _check_until_next_tick(self, stop_event, tick_s):
        """Check every ``check_s`` after the grid point ``tick_s`` until
        half a check before the next (``agent.check_times``); a failing
        check is logged, never fatal.  Returns whether ``stop_event``
        was set meanwhile."""
        next_s = tick_s + self.interval_s
        for check_at_s in agent_mod.check_times(tick_s, next_s,
                                                self.check_s):
            wait_s = check_at_s - self.wall_clock()
            if wait_s <= 0:
                continue    # a slow step or check ran past it
            if stop_event.wait(wait_s):
                return True
            try:
                self.check()
            except Exception:
                LOG.exception('agent check failed; carrying on')
        return False


def _check_inputs(disk_ids, samples, caps, guarantees):
    """The DiskInputs of a check: each of ``disk_ids`` in ``samples``,
    with its cap in force and the guarantee of its latest decision."""
    return tuple(model.DiskInput(samples[disk_id],
                                 guarantees.get(disk_id, model.NO_GUARANTEE),
                                 caps.get(disk_id))
                 for disk_id in sorted(disk_ids) if disk_id in samples)


def aligned_wait_s(wall_s, interval_s):
    """Seconds from ``wall_s`` to the next multiple of ``interval_s``
    (a whole interval when ``wall_s`` is on one): the agent's grid
    (``next_tick``) laid from the epoch."""
    return agent_mod.next_tick(0.0, interval_s, wall_s) - wall_s


def start_thread(remote, stop_event, name='iothrottle-agent'):
    thread = threading.Thread(target=remote.run, args=(stop_event,),
                              name=name, daemon=True)
    thread.start()
    return thread
