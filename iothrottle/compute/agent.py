"""The compute agent's control loop (shell, native threads only).

Every interval the agent collects one sample per disk on this host,
groups the samples by storage domain, asks the controller policy what to
do with each domain, applies the answer as leased live caps, and lifts
the caps whose lease ran out.  A failing domain, disk or policy call is
logged and skipped; it never stops the others or the loop.  Between two
intervals it checks its disks every ``[controller] idle_check_s`` while
a domain's policy wants it (:meth:`Agent.check_idle`: a disk that
stopped leaves room for the caps, :mod:`iothrottle.controller.idle`).

A decision is applied only to a disk of a running domain that this
agent's latest collection found (its own, see ``[agent] owned_domains``):
the bus may carry decisions for disks this host does not run, and the
agent is no party to them.  A cap of 0 on both axes is refused (0 is
"unlimited" to libvirt), and every lease is bounded (see
:mod:`iothrottle.compute.leases`).

The agent is driven by :meth:`Agent.step` (one interval, returns a
:class:`StepReport`) so tests, benchmarks and demos can run it on their
own clock; :meth:`Agent.run` paces it with ``time.monotonic()``.
"""

import collections
import dataclasses
import threading
import time
import types

from oslo_log import log as logging

from iothrottle.compute import iotune as iotune_mod
from iothrottle.compute import leases as leases_mod
from iothrottle.controller import domain as domain_mod
from iothrottle.controller import model
from iothrottle import throttle_status

LOG = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True)
class StepReport:
    """What one interval saw and did."""
    now_s: float
    samples: tuple
    decisions: tuple
    caps: types.MappingProxyType
    errors: tuple
    expired: tuple = ()
    collect_s: float = 0.0
    balloon: object = None   # a balloon_agent.BalloonReport, if it ran
    # Storage domain -> the policy's state after this interval (what it
    # remembers: for ``guarantee`` the learned capacity, the escalation
    # and the demand-bound marks); filled where the agent decides itself.
    states: types.MappingProxyType = dataclasses.field(
        default_factory=lambda: types.MappingProxyType({}))
    # The host could not be read (collector.Collection.unreadable).
    unreadable: bool = False


class Agent:
    """Collect, decide, actuate; see the module docstring.

    ``collector`` has ``collect() -> Collection``; ``actuator`` has
    ``baseline``, ``set_cap``, ``restore`` and ``reconcile`` (see
    :mod:`iothrottle.compute.actuator`); ``policy`` has
    ``initial_state()`` and ``decide(view, state)``; ``guarantees`` has
    ``covers(flavor)`` and ``guarantee_for(flavor)`` (a
    :class:`iothrottle.tiers.Tiers`); ``capacities`` has
    ``capacity_of(storage_domain)``; ``balloon``, when given, has
    ``maybe_step(collection, now_s)`` (the balloon loop,
    :mod:`iothrottle.compute.balloon_agent`) and runs on the same
    collection.
    """

    def __init__(self, conf, collector, actuator, policy, guarantees,
                 capacities, clock=time.monotonic, balloon=None):
        self.conf = conf
        self.collector = collector
        self.actuator = actuator
        self.policy = policy
        self.guarantees = guarantees
        self.capacities = capacities
        self.clock = clock
        self.balloon = balloon
        max_lease_s = conf.agent.max_lease_s
        self.leases = leases_mod.LeaseTable(
            min_lease_s=min(conf.controller.interval_s, max_lease_s),
            max_lease_s=max_lease_s)
        self._states = {}
        self._warned = set()
        # Disk ids of the running domains this agent owns, as its latest
        # collection found them: the only disks it takes decisions for.
        self._own_disks = frozenset()
        # uuid -> libvirt domain id when last seen: a new id is a new
        # QEMU process (restart, resize, migration back).
        self._identities = {}
        # Conductor mode: decisions arrive on an RPC thread while the
        # loop thread collects and lifts expired leases.
        self._lock = threading.RLock()

    # -- one interval -------------------------------------------------

    def step(self, now_s=None):
        """Run one interval at ``now_s`` (default: the clock)."""
        now_s = self.clock() if now_s is None else now_s
        collection = self.collector.collect()
        errors = list(collection.errors)
        with self._lock:
            self._track(collection, errors)
        decisions = []
        for storage_domain, samples in _by_domain(collection.samples):
            decisions.extend(self._control_domain(
                storage_domain, samples, collection.instances, now_s,
                errors))
        expired = self._release_expired(now_s, errors)
        balloon = self._balloon_step(collection, now_s, errors)
        return StepReport(
            now_s=now_s, samples=collection.samples,
            decisions=tuple(decisions),
            caps=types.MappingProxyType(self.leases.caps()),
            errors=tuple(errors), expired=expired,
            collect_s=collection.duration_s, balloon=balloon,
            states=types.MappingProxyType(dict(self._states)))

    def _balloon_step(self, collection, now_s, errors):
        """Run the balloon loop if enabled; a failure is logged into
        ``errors`` and never stops the I/O loop."""
        if self.balloon is None:
            return None
        try:
            return self.balloon.maybe_step(collection, now_s)
        except Exception as exc:
            errors.append('balloon loop failed: %s' % exc)
            LOG.exception('%s', errors[-1])
            return None

    # -- the two halves, for conductor mode -----------------------------

    def observe(self, now_s=None):
        """One interval without deciding: collect, lift expired leases,
        run the balloon loop.  The report's ``decisions`` are empty; the
        samples go to the conductor, whose decisions come back through
        :meth:`apply_decisions`.

        Only the lease bookkeeping holds the lock that
        :meth:`apply_decisions` takes: the collection and the balloon
        loop (guest agents, which may be slow) run outside it, so the
        conductor's decisions never wait behind a slow guest.
        """
        now_s = self.clock() if now_s is None else now_s
        collection = self.collector.collect()
        errors = list(collection.errors)
        with self._lock:
            self._track(collection, errors)
            expired = self._release_expired(now_s, errors)
            caps = types.MappingProxyType(self.leases.caps())
        balloon = self._balloon_step(collection, now_s, errors)
        return StepReport(
            now_s=now_s, samples=collection.samples, decisions=(),
            caps=caps, errors=tuple(errors), expired=expired,
            collect_s=collection.duration_s, balloon=balloon,
            unreadable=collection.unreadable)

    def apply_decisions(self, decisions, now_s=None):
        """Apply ``(Decision, Guarantee)`` pairs decided elsewhere (the
        conductor) as leased caps; returns the errors."""
        with self._lock:
            now_s = self.clock() if now_s is None else now_s
            errors = []
            for decision, guarantee in decisions:
                self._apply(decision, guarantee, now_s, errors)
            return tuple(errors)

    def caps(self):
        """``{disk_id: Cap}`` of the leases in force (conductor mode: the
        caps a check within the interval may grow)."""
        with self._lock:
            return self.leases.caps()

    # -- a check within an interval -----------------------------------

    def check_idle(self, now_s=None):
        """A check between two steps (``[controller] idle_check_s``):
        the disks sampled over the span since the last step or check,
        each domain whose state the policy wants checked given to its
        ``early`` hook, its decisions applied (caps a disk that stopped
        leaves room for, :mod:`iothrottle.controller.idle`).  Returns a
        StepReport whose samples cover that span; when no domain wants
        a check the host is not sampled and the report is empty."""
        now_s = self.clock() if now_s is None else now_s
        wanted = {domain for domain, state in self._states.items()
                  if self.policy.wants_check(state)}
        if not wanted:
            return StepReport(now_s=now_s, samples=(), decisions=(),
                              caps=types.MappingProxyType(
                                  self.leases.caps()), errors=())
        collection = self.collector.check()
        errors = list(collection.errors)
        decisions = []
        for storage_domain, samples in _by_domain(collection.samples):
            if storage_domain not in wanted:
                continue
            decisions.extend(self._control_domain(
                storage_domain, samples, collection.instances, now_s,
                errors, run=domain_mod.check))
        return StepReport(
            now_s=now_s, samples=collection.samples,
            decisions=tuple(decisions),
            caps=types.MappingProxyType(self.leases.caps()),
            errors=tuple(errors), collect_s=collection.duration_s,
            unreadable=collection.unreadable)

    def _control_domain(self, storage_domain, samples, instances, now_s,
                        errors, run=domain_mod.decide):
        """Decide (``run``: ``domain.decide`` or ``domain.check``) and
        apply for one storage domain; returns decisions."""
        disks = []
        for sample in samples:
            lease = self.leases.get(sample.disk_id)
            disks.append((sample,
                          self._guarantee(instances.get(sample.instance_uuid),
                                          sample),
                          lease.cap if lease is not None else None))
        result = run(
            self.policy, self._states.get(storage_domain), storage_domain,
            self.capacities.capacity_of, disks, now_s)
        self._states[storage_domain] = result.state
        for message in result.errors:
            LOG.error('%s', message)
        errors.extend(result.errors)
        for decision, guarantee in result.decided:
            self._apply(decision, guarantee, now_s, errors)
        return [decision for decision, _ in result.decided]

    def _guarantee(self, instance, sample):
        flavor = instance.flavor if instance is not None else sample.flavor
        if self.guarantees.covers(flavor):
            return self.guarantees.guarantee_for(flavor)
        if sample.instance_uuid not in self._warned:
            self._warned.add(sample.instance_uuid)
            if flavor:
                LOG.warning('instance %s (%s) has flavor %r, which the '
                            'guarantees do not cover: no guarantee',
                            sample.instance_name, sample.instance_uuid,
                            flavor)
            else:
                LOG.info('domain %s (%s) is not a Nova instance: no '
                         'guarantee', sample.instance_name,
                         sample.instance_uuid)
        return model.NO_GUARANTEE

    # -- actuation ----------------------------------------------------

    def _apply(self, decision, guarantee, now_s, errors):
        uuid, device = decision.instance_uuid, decision.device
        if decision.disk_id not in self._own_disks:
            message = ('%s of %s ignored: not a disk of a running domain '
                       'this agent owns' % (decision.action,
                                            decision.disk_id))
            LOG.warning('%s', message)
            errors.append(message)
            return
        try:
            if decision.action == model.CAP:
                self._cap(decision, guarantee, now_s)
            elif decision.action == model.RELEASE:
                lease = self.leases.get(decision.disk_id)
                if lease is not None:
                    self._restore(lease)
            else:
                raise ValueError('unknown action %r' % decision.action)
        except Exception as exc:
            message = '%s of %s/%s failed: %s' % (
                decision.action, uuid, device, exc)
            LOG.warning('%s', message)
            errors.append(message)

    def _cap(self, decision, guarantee, now_s):
        if decision.cap is None:
            raise ValueError('cap decision without a cap')
        if not decision.cap.limits:
            # libvirt reads 0 as "no limit": such a "cap" would lift one.
            raise ValueError('cap of 0 IOPS and 0 B/s refused: 0 means '
                             'unlimited to libvirt')
        uuid, device = decision.instance_uuid, decision.device
        lease_s = self._lease_s(decision)
        previous = self.leases.get(decision.disk_id)
        baseline = (previous.baseline if previous is not None
                    else self.actuator.baseline(uuid, device))
        lease = self.leases.grant(decision.disk_id, decision.cap, lease_s,
                                  now_s, baseline, guarantee)
        if previous is not None and iotune_mod.same_limits(
                baseline, previous.cap, lease.cap):
            # The limits in force are this cap's: set again, they would
            # empty QEMU's buckets and let a burst through for nothing.
            if self._in_force(uuid, device, lease):
                return
            LOG.warning('cap of %s was no longer in force (someone '
                        'changed its limits): set again', decision.disk_id)
        try:
            self.actuator.set_cap(uuid, device, lease.cap, baseline)
        except Exception:
            if previous is not None:
                self.leases.put(previous)
            else:
                self.leases.release(decision.disk_id)
            raise
        # Each change costs a burst the disk's statistics show and
        # nothing else does: QEMU empties the throttle buckets whenever
        # the limits are set, and the interval after passes a tenth of
        # a second of the new cap on top of it.
        LOG.debug('cap of %s set live: %s (was %s); the interval after '
                  'a change passes 0.1 s of the new cap on top of it',
                  decision.disk_id, _cap_text(lease.cap),
                  'uncapped' if previous is None
                  else _cap_text(previous.cap))

    def _in_force(self, uuid, device, lease):
        """Whether the live limits still carry ``lease``'s cap; a disk
        that cannot be read counts as not (the cap is set again, and a
        failure there is reported as any failed cap is)."""
        try:
            return self.actuator.in_force(uuid, device, lease.cap,
                                          lease.baseline)
        except Exception:
            return False

    def _lease_s(self, decision):
        """The decision's lease (0: ``[controller] lease_s``) within the
        lease table's bounds; the first clamped length is a warning."""
        asked_s = decision.lease_s or self.conf.controller.lease_s
        lease_s = leases_mod.bound_lease_s(
            decision.disk_id, asked_s, self.leases.min_lease_s,
            self.leases.max_lease_s)
        if lease_s != asked_s:
            # Once per agent at warning level: the sender chooses the
            # numbers, and must not choose the size of the log.
            log = LOG.debug if 'lease' in self._warned else LOG.warning
            self._warned.add('lease')
            log('lease of %s s asked for %s held to %s s (bounds: '
                '[controller] interval_s, [agent] max_lease_s)',
                asked_s, decision.disk_id, lease_s)
        return lease_s

    def _restore(self, lease):
        """Put a leased disk's baseline back and forget the lease.

        A disk that is gone (its domain stopped) is forgotten too; any
        other failure keeps the lease so the next interval retries.
        """
        uuid, device = lease.disk_id.split('/', 1)
        try:
            self.actuator.restore(uuid, device, lease.baseline)
        except LookupError:
            LOG.info('%s is gone; its cap went with it', lease.disk_id)
        self.leases.release(lease.disk_id)

    def _release_expired(self, now_s, errors):
        released = []
        for lease in self.leases.expired(now_s):
            try:
                self._restore(lease)
                released.append(lease.disk_id)
                LOG.info('cap on %s expired: baseline restored',
                         lease.disk_id)
            except Exception as exc:
                message = 'restoring %s after its lease expired failed: ' \
                          '%s' % (lease.disk_id, exc)
                LOG.warning('%s', message)
                errors.append(message)
        return tuple(released)

    # -- life cycle ---------------------------------------------------

    def reconcile(self):
        """Undo caps a previous run left; returns the restored disk ids.

        Also takes the first collection, so the next step has samples
        and the agent knows its disks.
        """
        collection = self.collector.collect()
        errors = list(collection.errors)
        with self._lock:
            return self._track(collection, errors)

    def _track(self, collection, errors):
        """Take in a new collection (under the lock); returns the disk ids
        of leftover caps it restored.

        Its disks become the ones decisions may touch.  A domain seen for
        the first time, or under a new domain id (restarted, resized,
        migrated back: a new QEMU process, started without the cap), has
        its leases dropped without a restore, as the cap went with the old
        process, and is reconciled: a cap it carries that no lease of
        this agent explains (a previous run's, or one a live migration
        brought along) is lifted back to the baseline its record or
        persistent config gives.  The next decision caps it afresh.

        A collection that could not read the host at all (libvirtd down
        or restarting) changes nothing: it does not say the domains
        stopped.  Taken as "none run", it made every domain without a
        lease arrive again once libvirtd answered, to be reconciled
        anew; and the fault bench's observer (an agent of its own, with
        no leases) lifted the real agent's caps that way, one interval
        after every libvirtd restart.
        """
        if collection.unreadable:
            return ()
        self._own_disks = own_disks(collection)
        arrived = []
        for uuid, instance in collection.instances.items():
            domain_id = instance.domain_id
            if uuid in self._identities:
                if self._identities[uuid] == domain_id:
                    continue
                self._drop_leases(uuid, domain_id)
            self._identities[uuid] = domain_id
            arrived.append(instance)
        leased_uuids = {lease.disk_id.split('/', 1)[0]
                        for lease in self.leases.leases()}
        for uuid in set(self._identities) - set(collection.instances):
            if uuid not in leased_uuids:
                del self._identities[uuid]
        if not arrived:
            return ()
        restored, messages = self.actuator.reconcile(
            arrived, set(self.leases.caps()))
        for message in messages:
            LOG.warning('%s', message)
        errors.extend(messages)
        return tuple(restored)

    def _drop_leases(self, uuid, domain_id):
        for lease in self.leases.leases():
            if lease.disk_id.split('/', 1)[0] == uuid:
                self.leases.release(lease.disk_id)
                LOG.info('%s runs as a new domain (id %s): its cap went '
                         'with the old one, the lease is dropped',
                         lease.disk_id, domain_id)

    def release_all(self):
        """Restore every leased disk (on shutdown); returns errors."""
        errors = []
        with self._lock:
            for lease in self.leases.leases():
                try:
                    self._restore(lease)
                except Exception as exc:
                    errors.append('restoring %s failed: %s'
                                  % (lease.disk_id, exc))
                    LOG.warning('%s', errors[-1])
        return tuple(errors)

    def run(self, stop_event, on_step=None):
        """Step every ``[controller] interval_s`` until ``stop_event``.

        Ticks are laid on a fixed grid from the start, so a slow step
        does not push later ones back; ticks that a very slow step missed
        are skipped, not run in a burst.  Caps are lifted on the way out.
        """
        interval_s = self.conf.controller.interval_s
        check_s = self.conf.controller.idle_check_s
        next_tick_s = self.clock()
        try:
            while not stop_event.is_set():
                tick_s = next_tick_s
                report = self.step()
                if on_step is not None:
                    on_step(report)
                next_tick_s = next_tick(next_tick_s, interval_s,
                                        self.clock())
                for check_at_s in check_times(tick_s, next_tick_s, check_s):
                    if self.clock() >= check_at_s:
                        continue   # a slow step ran past it
                    if stop_event.wait(check_at_s - self.clock()):
                        return
                    self.check_idle()
                if stop_event.wait(max(0.0, next_tick_s - self.clock())):
                    break
        finally:
            self.release_all()


def own_disks(collection):
    """Disk ids (``<uuid>/<device>``) of every disk in ``collection``:
    those of the running domains it found, and those it sampled."""
    disks = {'%s/%s' % (uuid, disk.device)
             for uuid, instance in collection.instances.items()
             for disk in instance.disks}
    disks.update(sample.disk_id for sample in collection.samples)
    return frozenset(disks)


def _by_domain(samples):
    """``(storage domain, [samples])`` pairs, in the domains' order."""
    by_domain = collections.defaultdict(list)
    for sample in samples:
        by_domain[sample.storage_domain].append(sample)
    return sorted(by_domain.items())


def check_times(tick_s, next_tick_s, check_s):
    """The checks between the ticks at ``tick_s`` and ``next_tick_s``:
    every ``check_s`` from the first, none within half a check of the
    next tick (which samples that span itself); none for ``check_s``
    0."""
    if check_s <= 0:
        return []
    count = int((next_tick_s - tick_s) / check_s - 0.5)
    return [tick_s + k * check_s for k in range(1, count + 1)]


def next_tick(last_tick_s, interval_s, now_s):
    """The first tick ``last_tick_s + k * interval_s`` (k >= 1) > now_s."""
    ticks = max(1, int((now_s - last_tick_s) // interval_s) + 1)
    return last_tick_s + ticks * interval_s


def _cap_text(cap):
    """``cap`` as the operator's status reads it (``format_cap``)."""
    return throttle_status.format_cap(cap.iops, cap.bytes_sec)
