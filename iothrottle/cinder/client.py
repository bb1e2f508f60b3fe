"""The plugins' shell: pool states from the conductor, and stepping aside.

``SeekModelWeigher`` and ``SeekModelFilter`` call :func:`advise` with the
names of the pools they are given and the request's properties; it asks
the conductor (``ConductorAPI.pool_state``, one call for all the pools,
``[iothrottle_cinder] rpc_timeout_s``), keeps the answer for
``cache_s`` (so the filter and the weigher of one request share it),
turns the volume type into a ``placement.Volume`` and returns one
``placement.Assessment`` per pool, or None where the plugins must step
aside.  It never raises: volume creation never fails because of
iothrottle.

Stepping aside (None: neutral weight, the filter passes):

* the conductor does not answer, answers with an error or with
  something malformed: one warning, then nothing is asked for
  ``retry_s`` (no request waits ``rpc_timeout_s`` meanwhile); one info
  line when it answers again;
* a pool the conductor has no profile for: one info line per pool;
* a volume type whose ``iothrottle:`` keys are invalid (an unknown
  tier, a bad number): one warning per distinct error.

Configuration.  Cinder instantiates a weigher or filter class with no
arguments for every request, so the plugins find their options
themselves.  They register ``[iothrottle_cinder]`` on cinder-scheduler's
global ``cfg.CONF`` at first use (:func:`options`), not at import and
not from a private ``/etc/iothrottle/iothrottle.conf``: the operator
enables the plugins in ``cinder.conf`` and tunes them in the same file;
cinder-scheduler has parsed it already with its own ``--config-file``
and ``--config-dir`` (oslo.config reads a group registered after
parsing from the parsed files), and the conductor's bus defaults to
Cinder's own ``transport_url``.  A private file would be a second,
hard-coded path that Cinder's command line does not move.  Registering
lazily keeps importing the module (stevedore scanning entry points, the
config generator) free of side effects on Cinder's configuration.

Threads.  Cinder 29 runs cinder-scheduler under eventlet; the plugins
import nothing of eventlet and do not call ``iothrottle.rpc.threads``
(which would refuse the process): they use oslo.messaging as Cinder set
it up.  A blocking call with a timeout, and a lock around the cache, are
right under either model.
"""

import dataclasses
import threading
import time

from oslo_config import cfg
from oslo_log import log as logging

from iothrottle.cinder import placement
from iothrottle.conf import cinder as cinder_conf
from iothrottle.rpc import wire

LOG = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True)
class Lookup:
    """What the conductor said: ``states`` {pool: PoolState} of the pools
    it has a profile for, ``tiers`` {name: Guarantee}."""
    states: dict
    tiers: dict


class PoolStateClient:
    """Pool states by name, cached; ``fetch(pools)`` returns the
    conductor's reply dict (``ConductorAPI.pool_state``) or raises."""

    def __init__(self, fetch, cache_s, retry_s, clock=time.monotonic):
        self._fetch = fetch
        self.cache_s = cache_s
        self.retry_s = retry_s
        self._clock = clock
        self._states = {}      # pool -> (PoolState or None, fetched_at_s)
        self._tiers = {}
        self._tiers_at_s = None
        self._quiet_until_s = None
        self._reachable = True
        self._logged = set()
        self._lock = threading.Lock()

    def _fresh(self, fetched_at_s, now):
        return fetched_at_s is not None and now - fetched_at_s < self.cache_s

    def lookup(self, pools):
        """A Lookup of ``pools``, or None when the conductor cannot be
        had (the plugins step aside)."""
        pools = sorted(set(pools))
        with self._lock:
            now = self._clock()
            stale = [pool for pool in pools if pool not in self._states
                     or not self._fresh(self._states[pool][1], now)]
            if stale or not self._fresh(self._tiers_at_s, now):
                if (self._quiet_until_s is not None
                        and now < self._quiet_until_s):
                    return None
                try:
                    reply = wire.decode_pool_state_reply(self._fetch(stale))
                    if reply.error:
                        raise RuntimeError(reply.error)
                except Exception as exc:
                    self._unreachable(exc, now)
                    return None
                self._reached()
                for pool in stale:
                    self._states[pool] = (reply.pools.get(pool), now)
                self._tiers, self._tiers_at_s = reply.tiers, now
            return Lookup(
                states={pool: self._states[pool][0] for pool in pools
                        if self._states[pool][0] is not None},
                tiers=dict(self._tiers))

    def _unreachable(self, exc, now):
        self._quiet_until_s = now + self.retry_s
        reason = '%s: %s' % (type(exc).__name__,
                             (str(exc).splitlines() or [''])[0])
        if self._reachable:
            self._reachable = False
            LOG.warning('iothrottle: no pool states from the conductor '
                        '(%s); SeekModelWeigher and SeekModelFilter step '
                        'aside (neutral weight, every pool passes) and ask '
                        'again in %g s', reason, self.retry_s)
        else:
            LOG.debug('iothrottle: still no pool states (%s)', reason)

    def _reached(self):
        self._quiet_until_s = None
        if not self._reachable:
            self._reachable = True
            LOG.info('iothrottle: the conductor answers again')

    def log_once(self, level, key, message, *args):
        """Log ``message`` the first time ``key`` is seen."""
        with self._lock:
            if key in self._logged:
                return
            self._logged.add(key)
        LOG.log(level, message, *args)


def pool_name(backend_state):
    """The Cinder pool name (host@backend#pool) of a scheduler pool state:
    what volumes show as ``os-vol-host-attr:host``."""
    return str(getattr(backend_state, 'host', ''))


def advise(pools, properties, min_headroom_fraction=0.0, client=None):
    """{pool: placement.Assessment, or None to step aside} for the
    request ``properties`` (Cinder's filter or weight properties) on
    ``pools``; ``client`` a PoolStateClient (default :func:`shared`).
    Never raises."""
    pools = list(pools)
    aside = {pool: None for pool in pools}
    try:
        if client is None:
            client = shared()
        lookup = client.lookup(pools)
        if lookup is None:
            return aside
        try:
            volume = placement.volume_from_request(properties, lookup.tiers)
        except ValueError as exc:
            client.log_once(logging.WARNING, ('request', str(exc)),
                            'iothrottle: unusable volume request (%s); '
                            'stepping aside for it', exc)
            return aside
        advice = {}
        for pool in pools:
            state = lookup.states.get(pool)
            if state is None:
                client.log_once(logging.INFO, ('unknown', pool),
                                'iothrottle: pool %s has no profile in the '
                                'conductor; neutral weight, it passes',
                                pool)
                advice[pool] = None
                continue
            advice[pool] = placement.assess(state, volume,
                                            min_headroom_fraction)
            LOG.debug('iothrottle: %s', advice[pool].reason)
        return advice
    except Exception:
        LOG.exception('iothrottle: assessing pools failed; stepping aside')
        return aside


def options(conf=None):
    """The ``[iothrottle_cinder]`` options of ``conf`` (default: Cinder's
    global ``cfg.CONF``), registered there at first use."""
    conf = cfg.CONF if conf is None else conf
    cinder_conf.register_opts(conf)
    return conf.iothrottle_cinder


def option(name, fallback):
    """``[iothrottle_cinder] name`` from Cinder's configuration, or
    ``fallback`` (and one logged traceback) if it cannot be read: the
    scheduler never fails because of iothrottle."""
    try:
        return getattr(options(), name)
    except Exception:
        LOG.exception('iothrottle: [iothrottle_cinder] %s unreadable; '
                      'using %r', name, fallback)
        return fallback


def conductor_fetch(conf):
    """``fetch(pools)`` over oslo.messaging to the conductor on
    ``[iothrottle_cinder] transport_url`` (else Cinder's own); the
    transport is made at the first call, and again after a failure to
    make it."""
    made = []

    def fetch(pools):
        group = options(conf)
        if not made:
            # oslo.messaging, imported here: inside cinder-scheduler Cinder
            # has loaded and configured it already.
            from iothrottle.rpc import api as rpc_api
            transport = rpc_api.get_transport(conf, url=group.transport_url)
            made.append(rpc_api.ConductorAPI(transport))
        return made[0].pool_state(pools, timeout_s=group.rpc_timeout_s)
    return fetch


_SHARED_LOCK = threading.Lock()
_SHARED = []


def shared(conf=None):
    """The process's PoolStateClient (Cinder makes a new weigher and
    filter object per request; the cache must outlive them)."""
    with _SHARED_LOCK:
        if not _SHARED:
            conf = cfg.CONF if conf is None else conf
            group = options(conf)
            _SHARED.append(PoolStateClient(conductor_fetch(conf),
                                           cache_s=group.cache_s,
                                           retry_s=group.retry_s))
        return _SHARED[0]


def reset_shared():
    """Forget the process's client (tests, or a reloaded config)."""
    with _SHARED_LOCK:
        del _SHARED[:]
