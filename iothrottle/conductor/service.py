"""The conductor's shell: RPC endpoint, decision loop, database.

Reports arrive on the RPC server's threads and are handed to the core
under a lock; one loop thread runs a round as soon as the core says it
is due, casts each host its decisions and stores them with their reason.
The database is best effort: when it is unreachable the conductor keeps
deciding from memory and says so once in its log (and once when it is
back).
"""

import threading
import time

from oslo_log import log as logging

from iothrottle.db import api as db_api
from iothrottle.db import models as db_models
from iothrottle.rpc import wire

LOG = logging.getLogger(__name__)

# Longest sleep of the loop between two looks at the stop event.
POLL_S = 1.0


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


def load_capacities(store, capacities):
    """Declared capacities and learned peaks from the database into
    ``capacities`` (a core.Capacities); config declarations win."""
    for domain in store.call('loading storage domains',
                             db_api.storage_domains) or ():
        if (domain.capacity_source == db_models.CAPACITY_CONFIG
                and domain.key not in capacities.declared
                and domain.capacity() is not None):
            capacities.declared[domain.key] = domain.capacity()
        if domain.peak_iops or domain.peak_bytes_sec:
            capacities.peaks[domain.key] = (domain.peak_iops,
                                            domain.peak_bytes_sec)


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


class Conductor:
    """See the module docstring.  ``core`` is a
    :class:`iothrottle.conductor.core.Core`; ``compute_api`` has
    ``apply(host, decision_dicts)``; ``store`` a :class:`Store`."""

    def __init__(self, core, compute_api, store, policy_name,
                 clock=time.monotonic):
        self.core = core
        self.compute_api = compute_api
        self.store = store
        self.policy_name = policy_name
        self.clock = clock
        self.rounds = 0
        self._cond = threading.Condition()
        self._stopping = False

    # -- reports ------------------------------------------------------

    def report(self, report):
        """An agent's report of one interval (a wire dict)."""
        try:
            decoded = wire.decode_report(report)
        except Exception as exc:
            LOG.warning('malformed report ignored: %s', exc)
            return
        with self._cond:
            self.core.add_report(decoded, self.clock())
            self._cond.notify_all()

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
        """Block until a round is due (or stop); run it; the Round."""
        with self._cond:
            while not self._stopping:
                now = self.clock()
                if self.core.due(now):
                    return self.core.decide(now)
                timeout = self.core.next_deadline(now)
                self._cond.wait(POLL_S if timeout is None
                                else min(POLL_S, max(timeout, 0.01)))
        return None

    def publish(self, round_):
        """Cast the decisions of a round and store them."""
        self.rounds += 1
        for message in round_.errors:
            LOG.warning('%s', message)
        for host, pairs in sorted(round_.by_host.items()):
            try:
                self.compute_api.apply(host, [
                    wire.decision_to_dict(decision, guarantee)
                    for decision, guarantee in pairs])
            except Exception as exc:
                LOG.warning('casting %d decision(s) to %s failed: %s',
                            len(pairs), host, exc)
        for domain, decisions in sorted(round_.by_domain.items()):
            for decision in decisions:
                LOG.info('%s %s on %s: %s', decision.action,
                         decision.disk_id, domain, decision.reason)
            self.store.call('recording decisions', db_api.record_decisions,
                            domain, decisions, policy=self.policy_name)
        for domain, (iops, bytes_sec) in sorted(round_.peaks.items()):
            self.store.call('recording the peak of %s' % domain,
                            db_api.learn_peak, domain, iops, bytes_sec)

    def run(self):
        """Decide until :meth:`stop`; a failing round never ends it."""
        while True:
            try:
                round_ = self.wait_round()
                if round_ is None:
                    return
                self.publish(round_)
            except Exception:
                LOG.exception('decision round failed; carrying on')
                time.sleep(0.1)

    def stop(self):
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
