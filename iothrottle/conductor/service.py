"""The conductor's shell: RPC endpoint, decision loop, database.

Reports arrive on the RPC server's threads, are decoded (a malformed
sample costs only itself, a stale report is dropped) and handed to the
core under a lock; one loop thread runs a round as soon as the core says
it is due, casts each host its decisions, then collects the round's
garbage (not in the middle of the next round's decision).  Recording
the decisions, and re-reading the capacities every
``capacity_refresh_s``, happen on a writer thread with a bounded
backlog: nothing under the lock, and nothing in the loop, waits on the
database.  The database is best
effort: when it is unreachable the conductor keeps deciding from memory
and says so once in its log (and once when it is back).
"""

import datetime
import gc
import threading
import time

from oslo_log import log as logging

from iothrottle.conductor import core as core_mod
from iothrottle.conductor import ownership as ownership_mod
from iothrottle.db import api as db_api
from iothrottle.db import models as db_models
from iothrottle.rpc import wire

LOG = logging.getLogger(__name__)

# Longest sleep of the loop between two looks at the stop event.
POLL_S = 1.0

# Database writes of rounds waiting for the writer thread at most: a
# minute of rounds at a 2-5 s interval.  A database that is slower than
# that loses the writes past it (counted, logged), never the loop's time.
MAX_PENDING_WRITES = 30

# How long a stopping conductor waits for its queued database writes.
STOP_WRITES_S = 5.0

# Dropped reports and rejected samples are logged at most this often per
# host: a flood must not become a log flood.
WARN_EVERY_S = 60.0

# A host's memory floors are cast when they change, to a new agent
# process, and again once the last cast is this old: casts are fire and
# forget, and a lost one must not leave an agent on its tiers file for
# longer than a minute, while an unchanged map every interval would
# double the messages a round sends.
FLOORS_REFRESH_S = 60.0


class Store:
    """The database, or nothing: calls never raise.

    ``call(what, func, *args)`` runs ``func(engine, *args)`` and returns
    its value, or None when there is no engine or the call failed.  The
    first failure after a success is logged as a warning, the recovery as
    info; failures in between are logged at debug level only.
    """

    def __init__(self, engine):
        self.engine = engine
        self.healthy = True

    def call(self, what, func, *args, **kwargs):
        if self.engine is None:
            return None
        try:
            value = func(self.engine, *args, **kwargs)
        except Exception as exc:
            if self.healthy:
                self.healthy = False
                LOG.warning('database unreachable (%s failed: %s); '
                            'deciding from memory until it is back',
                            what, str(exc).splitlines()[0])
            else:
                LOG.debug('%s failed: %s', what, exc)
            return None
        if not self.healthy:
            self.healthy = True
            LOG.info('database reachable again')
        return value


def _writer():
    """One futurist thread with a backlog of MAX_PENDING_WRITES (imported
    here: futurist imports eventlet unless
    :func:`iothrottle.rpc.threads.setup` ran first)."""
    import futurist
    from futurist import rejection
    return futurist.ThreadPoolExecutor(
        max_workers=1,
        check_and_reject=rejection.reject_when_reached(MAX_PENDING_WRITES))


def load_capacities(store, capacities):
    """Declared capacities and learned peaks from the database into
    ``capacities`` (a core.Capacities); config declarations win, the
    database's peaks replace the ones in memory (an operator's reset
    lowers them).  Nothing changes when the database cannot be read."""
    domains = store.call('loading storage domains', db_api.storage_domains)
    if domains is None:
        return
    peaks = {}
    for domain in domains:
        if (domain.capacity_source == db_models.CAPACITY_CONFIG
                and domain.key not in capacities.declared
                and domain.capacity() is not None):
            capacities.declared[domain.key] = domain.capacity()
        peaks[domain.key] = (domain.peak_iops or 0.0,
                             domain.peak_bytes_sec or 0.0)
    capacities.replace_peaks(peaks)


def describe_load(load):
    """One line of what a domain carried (a ``model.DomainLoad``): what
    it completed, its load and the capacity the load is of (the learned
    one, when the policy learns it), whether it was saturated and how
    many of its disks end the round capped.  Logged beside the round's
    decisions on it: the numbers a decision was made from, which its
    reason gives only in part."""
    of = ('of the learned capacity %.1f IOPS, %.2f MB/s'
          % (load.capacity.max_iops, load.capacity.max_bytes_sec / 1e6)
          if load.capacity is not None else 'of its capacity')
    return ('completed %.1f IOPS, %.2f MB/s: load %.2f %s; %s; %d of %d '
            'disk(s) capped' % (
                load.iops, load.bytes_sec / 1e6, load.load, of,
                'saturated' if load.saturated else 'not saturated',
                load.caps, load.disks))


class Endpoint:
    """The RPC endpoint on topic ``iothrottle-conductor``: only what
    agents may call."""

    def __init__(self, conductor):
        self._conductor = conductor

    def report(self, ctxt, report):
        self._conductor.report(report)

    def pool_state(self, ctxt, pools):
        """Called by Cinder's scheduler plugins (iothrottle.cinder)."""
        return self._conductor.pool_state(pools)


def _not_cast(rest):
    """The end of the warning of a round's failed cast: the hosts whose
    decisions it leaves uncast.

    A cast fails on the bus, not at one host (it does not wait for a
    consumer), and each failure takes the connection attempts of
    ``rpc.api.CAST_RETRY``, 2-4 s against a stopped RabbitMQ: casting on
    to the round's other hosts held the loop for that long per host,
    and the round after the broker's return behind it.  Their caps
    lapse by their leases; the next round decides again from fresh
    reports."""
    if not rest:
        return ''
    return ('; the bus is down: %d more host(s) not cast this round (%s)'
            % (len(rest), ', '.join(host for host, _ in rest[:3])
               + (', ...' if len(rest) > 3 else '')))


class Conductor:
    """See the module docstring.  ``core`` is a
    :class:`iothrottle.conductor.core.Core`; ``compute_api`` has
    ``apply(host, decision_dicts)``; ``store`` a :class:`Store`."""

    def __init__(self, core, compute_api, store, policy_name,
                 clock=time.monotonic, wall_clock=time.time,
                 max_report_age_s=10.0, capacity_refresh_s=60.0,
                 writer=None, membership=None):
        self.core = core
        self.compute_api = compute_api
        self.store = store
        self.policy_name = policy_name
        self.clock = clock
        self.wall_clock = wall_clock
        self.max_report_age_s = max_report_age_s
        self.capacity_refresh_s = capacity_refresh_s
        self.rounds = 0
        self.dropped_writes = 0
        self.dropped_reports = 0
        self._cond = threading.Condition()
        self._reported = set()      # hosts heard since the last round
        self._expected_hosts = 0    # hosts live at the last round
        self._stopping = False
        self._warnings = core_mod.WarnEvery(WARN_EVERY_S)
        self._capacities_read_s = clock()
        # host -> (agent_id, floors, cast at) of its last floors cast.
        self._floors_sent = {}
        # Database writes happen on one thread of their own, so a hung
        # database never holds the decision loop (issue 9 item 11).
        self._writer = writer or _writer()
        # Several conductors: a coordination.Membership whose current()
        # view says which domains this one decides (None: every domain,
        # as a single conductor).
        self.membership = membership
        self.view = None
        self.decide_s = 0.0     # the last round's core.decide, seconds

    # -- reports ------------------------------------------------------

    def report(self, report):
        """An agent's report of one interval (a wire dict)."""
        try:
            decoded = wire.decode_report(report)
        except Exception as exc:
            self._drop('malformed', 'malformed report ignored: %s' % exc)
            return
        for line in decoded.rejected:
            self._drop(decoded.host, line)
        age_s = self.wall_clock() - decoded.sent_at
        if decoded.sent_at > 0 and age_s > self.max_report_age_s:
            self._drop(decoded.host, 'report of %s sent %.1f s ago (more '
                       'than max_report_age_s %.0f): dropped as stale'
                       % (decoded.host, age_s, self.max_report_age_s))
            return
        with self._cond:
            why = self.core.add_report(decoded, self.clock())
            if why is None:
                self._reported.add(decoded.host)
                # Wake the loop for the first report (its deadline) and
                # once as many hosts reported as were live at the last
                # round; it wakes by itself at the deadline.  Waking it
                # for every report made a round cost O(hosts^2) in
                # core.due (0.8 s of CPU an interval at 2,500 hosts).
                if len(self._reported) == 1 or \
                        len(self._reported) >= self._expected_hosts:
                    self._cond.notify_all()
        if why:
            self._drop(decoded.host, why)

    def _drop(self, key, message):
        """Count a dropped report or sample; log at most one line per
        ``key`` every WARN_EVERY_S."""
        self.dropped_reports += 1
        if self._warnings.due(key, self.clock()):
            LOG.warning('%s', message)

    # -- Cinder pools -------------------------------------------------

    def pool_state(self, pools):
        """The ``pool_state`` reply for ``pools`` (a list of Cinder pool
        names), read from the database; a reply with ``error`` when it
        cannot be read."""
        try:
            pools = [str(pool) for pool in pools]
        except TypeError:
            return wire.pool_state_reply(error='pools must be a list')
        states = self.store.call('reading pool states', db_api.pool_states,
                                 pools)
        tiers = self.store.call('reading tiers', db_api.list_tiers)
        if states is None or tiers is None:
            return wire.pool_state_reply(error='the conductor cannot read '
                                               'its database')
        return wire.pool_state_reply(states, tiers)

    # -- decision loop ------------------------------------------------

    def wait_round(self):
        """Block until a round is due (or stop); run it; the Round.

        The reports are taken under the lock and decided outside it: a
        guarantee resolver that reads a slow database (``guarantees =
        db``) delays this round, never the report handlers."""
        with self._cond:
            while not self._stopping:
                now = self.clock()
                if self.core.due(now):
                    pending = self.core.take()
                    self._reported = set()
                    self._expected_hosts = len(self.core.live_hosts(now))
                    break
                timeout = self.core.next_deadline(now)
                self._cond.wait(POLL_S if timeout is None
                                else min(POLL_S, max(timeout, 0.01)))
            else:
                return None
        pending = self._owned(pending)
        started = time.perf_counter()
        round_ = self.core.decide(now, pending)
        self.decide_s = time.perf_counter() - started
        return round_

    def _owned(self, pending):
        """Several conductors: from now on the core decides only the
        domains the current view owns (every domain without a
        membership); a domain gained since the last round starts from a
        fresh policy state.  Returns ``pending``."""
        if self.membership is None:
            return pending
        view = self.membership.current()
        if view is self.view:
            return pending
        domain_of = self.core.domain_map.domain_of
        domains = {domain_of(sample.storage_domain)
                   for report, _ in pending.values()
                   for sample in report.samples}
        gained = ownership_mod.gained(self.view, view, domains)
        self.core.forget_domains(gained)
        self.core.owns = view.owns
        LOG.info('deciding %d of the %d storage domain(s) reported, '
                 'epoch %d (%d gained)',
                 sum(1 for d in domains if view.owns(d)), len(domains),
                 view.epoch, len(gained))
        self.view = view
        return pending

    def publish(self, round_):
        """Cast the decisions of a round; hand their recording to the
        database writer."""
        self.rounds += 1
        for message in round_.errors:
            LOG.warning('%s', message)
        issued_at = self.wall_clock()
        started = time.perf_counter()
        owner, epoch = ((self.view.me, self.view.epoch)
                        if self.view is not None else ('', 0))
        hosts = sorted(round_.by_host.items())
        for k, (host, pairs) in enumerate(hosts):
            try:
                payload = [wire.decision_to_dict(decision, guarantee,
                                                 issued_at, owner, epoch)
                           for decision, guarantee in pairs]
            except Exception as exc:
                LOG.warning('decisions for %s not cast: %s', host, exc)
                continue
            try:
                self.compute_api.apply(host, payload)
                LOG.debug('cast %d decision(s) to %s', len(pairs), host)
            except Exception as exc:
                LOG.warning('casting %d decision(s) to %s failed: %s%s',
                            len(pairs), host, exc,
                            _not_cast(hosts[k + 1:]))
                break
            self.core.cast(round_.agents.get(host, ''),
                           [decision for decision, _ in pairs], issued_at,
                           round_.now_s)
        else:
            self._cast_floors(round_)
            self._cast_watches(round_, owner, epoch)
        cast_s = time.perf_counter() - started
        self._log_undecided(round_)
        states = self.core.states()
        for domain, decisions in sorted(round_.by_domain.items()):
            if decisions and domain in round_.loads:
                LOG.info('domain %s: %s%s', domain,
                         describe_load(round_.loads[domain]),
                         self._learned(states.get(domain)))
            for decision in decisions:
                LOG.info('%s %s on %s: %s', decision.action,
                         decision.disk_id, domain, decision.reason)
        for disk_id in round_.lifted:
            LOG.info('cap on %s no longer in force: its agent reports it '
                     'lifted', disk_id)
        LOG.info('round %d: %d host(s), %d domain(s), %d decision(s); '
                 'decided in %.1f ms, cast in %.1f ms', self.rounds,
                 len(round_.hosts), len(round_.loads),
                 sum(len(pairs) for pairs in round_.by_host.values()),
                 self.decide_s * 1e3, cast_s * 1e3)
        self._write(self._record, round_, issued_at, self.rounds)
        if self.clock() - self._capacities_read_s >= self.capacity_refresh_s:
            self._capacities_read_s = self.clock()
            self._write(load_capacities, self.store, self.core.capacities)

    def _learned(self, state):
        """'; ' and what the policy learned of a domain whose state is
        ``state`` (its ``describe``), or '' when it says nothing."""
        text = self.core.policy.describe(state)
        return '; ' + text if text else ''

    @staticmethod
    def _log_undecided(round_):
        """At debug level, each domain the round decided nothing on and
        what it carried: the line a decided domain has at info, so that
        a round with no decision (a burst the controller did not act on,
        a restarted guest it does not see yet) still says what each
        domain read.  At info a cloud's idle domains would fill the log
        every round."""
        if not LOG.isEnabledFor(logging.DEBUG):
            return
        for domain, load in sorted(round_.loads.items()):
            if not round_.by_domain.get(domain):
                LOG.debug('domain %s: %s; no decision', domain,
                          describe_load(load))

    def _cast_floors(self, round_):
        """Cast each host of the round its instances' memory floors when
        they changed, its agent is new, or FLOORS_REFRESH_S passed (not
        at all while ``[upgrade_levels] compute`` holds agents at 1.0)."""
        if not getattr(self.compute_api, 'sends_memory_floors', False):
            return
        for host, floors in sorted(round_.floors.items()):
            if self.view is not None and \
                    not self.view.owns(ownership_mod.host_key(host)):
                continue    # several conductors: the host's is another's
            agent_id = round_.agents.get(host, '')
            sent = self._floors_sent.get(host)
            if (sent is not None and sent[:2] == (agent_id, floors)
                    and round_.now_s - sent[2] < FLOORS_REFRESH_S):
                continue
            try:
                self.compute_api.set_memory_floors(
                    host, wire.memory_floors(floors))
            except Exception as exc:
                LOG.warning('casting the memory floors of %s failed: %s; '
                            'no more this round', host, exc)
                break
            self._floors_sent[host] = (agent_id, floors, round_.now_s)
        for host, (_, _, sent_s) in list(self._floors_sent.items()):
            if round_.now_s - sent_s > 2 * FLOORS_REFRESH_S:
                del self._floors_sent[host]   # a host gone silent

    def _cast_watches(self, round_, owner, epoch):
        """Cast each host of the round the watches of its domains (not
        at all while ``[upgrade_levels] compute`` holds agents below
        1.3): its agent's checks within the interval read them."""
        if not getattr(self.compute_api, 'sends_watch', False):
            return
        for host, host_watches in sorted(round_.watches.items()):
            agent_id = round_.agents.get(host)
            if not agent_id:
                continue    # an agent older than report ids: before 1.3
            try:
                self.compute_api.watch(host, wire.watches(
                    agent_id, round_.seqs[host], host_watches, owner,
                    epoch))
            except Exception as exc:
                LOG.warning('casting the watches of %s failed: %s; no more '
                            'this round', host, exc)
                break

    def _record(self, round_, lifted_at=None, number=0):
        """Store a round's decisions, grown peaks and domain loads (the
        loads only when they changed noticeably or at a heartbeat: see
        :func:`db_api.record_domain_loads`) in one transaction (writer
        thread), and log how long round ``number`` took.  Caps its agents
        report lifted end first, at ``lifted_at`` (seconds since the
        epoch; None: now), so a disk capped again in the same round gets
        a new cap."""
        started = time.perf_counter()
        if round_.lifted:
            self.store.call('ending lifted caps', db_api.end_caps,
                            round_.lifted, None if lifted_at is None else
                            datetime.datetime.fromtimestamp(
                                lifted_at, datetime.timezone.utc))
        self.store.call('recording decisions', db_api.record_round,
                        round_.by_domain, round_.peaks, round_.loads,
                        self.policy_name, learned=round_.learned)
        LOG.info('round %d recorded in %.1f ms', number,
                 (time.perf_counter() - started) * 1e3)

    def _flush_writes(self):
        """Let the writer finish the queued writes for up to
        STOP_WRITES_S, then stop it: a stopping conductor keeps its last
        rounds unless the database hangs."""
        from futurist import waiters
        try:
            done = self._writer.submit(lambda: None)
            waiters.wait_for_all([done], STOP_WRITES_S)
        except Exception as exc:   # rejected (backlog full) or shut down
            LOG.debug('flushing database writes: %s', exc)
        self._writer.shutdown(wait=False)

    def _write(self, func, *args):
        """Run ``func(*args)`` on the writer thread; when its backlog is
        full the write is dropped, counted and logged (once a minute)."""
        import futurist   # after threads.setup(): see _writer
        try:
            return self._writer.submit(func, *args)
        except futurist.RejectedSubmission:
            self.dropped_writes += 1
            if self._warnings.due('db', self.clock()):
                LOG.warning('database writes are %d rounds behind; %d '
                            'write(s) dropped so far', MAX_PENDING_WRITES,
                            self.dropped_writes)
            return None

    def run(self):
        """Decide until :meth:`stop`; a failing round never ends it."""
        while True:
            try:
                round_ = self.wait_round()
                if round_ is None:
                    return
                self.publish(round_)
                # The round's garbage goes now, its decisions out, not in
                # a full collection that falls inside a later round's
                # decision (at 10k instances 9-14 ms of one in four).
                gc.collect()
            except Exception:
                LOG.exception('decision round failed; carrying on')
                time.sleep(0.1)

    def stop(self):
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        self._flush_writes()
        if self.membership is not None:
            self.membership.stop()
        directory = getattr(self.core, 'instances', None)
        if directory is not None and hasattr(directory, 'close'):
            directory.close()
