"""Which host runs an instance, and its guarantee, as Nova records them.

A compute host is trusted only for the instances Nova places on it.  The
:class:`Directory` answers, for an instance uuid, the compute host Nova
says runs it (``OS-EXT-SRV-ATTR:host``) and the guarantee of the flavor
*embedded in the server* (API microversion >= 2.47 returns the flavor
with its extra specs inside each server), so that a flavor renamed or
deleted in Nova keeps its instances' guarantees, and a reported flavor
name is never believed.

Fetching.  The directory lists the servers of one compute host at a time
(``servers.list(search_opts={'all_tenants': True, 'host': host})``,
paged through by novaclient).  With 10,000 instances on a few hundred
hosts that is one small request per reporting host and refresh period,
where a request per instance (``servers.get``) would be 10,000; it also
answers "what runs on this host" in one go, which is the question a
report asks.  Only hosts that report are listed, and only if Nova knows
them as compute hosts (``services.list(binary='nova-compute')``, read
every ``refresh_s``, or ``retry_s`` when a host not in it reports): a
report under an invented host name costs Nova nothing.

Cache.  A host's listing is read again once it is ``refresh_s`` old.  A
reported instance that the cache does not place on the reporting host is
*unverified*; its host is listed again at most every ``retry_s`` (the
negative cache), so a new instance (or a finished live migration) is
verified within ``retry_s`` and a host reporting instances it does not
run costs Nova at most one listing of that host per ``retry_s``.

Never blocking.  Listings run on a background executor with the
keystoneauth session's timeout ([nova] timeout); :meth:`Directory.verify`
only reads the cache (under a lock held for dictionary operations, never
for I/O) and asks for a listing without waiting for it.  When Nova
fails, a host's last known listing is kept and the failure is logged
once (and the recovery once).

Owners.  Each listing also records, in the database, the project that
owns each listed instance (``tenant_id``) and the tier its flavor names
(:func:`iothrottle.db.api.record_instances`): the operator API shows a
project member its own instances only, and refuses to delete a tier in
use.  An instance is written when it is new or changed, or once its
record is ``RECORD_EVERY_S`` old (so ``db purge`` keeps the running
ones); a failed write is logged once and retried at the next listing.

Tenant data.  Extra specs are untrusted: they go through
:func:`iothrottle.extra_specs.guarantee_from_extra_specs`; invalid specs
give the instance no guarantee and one warning.  Tiers named by
``iothrottle:tier`` come from the database (read at most every
``refresh_s``; the last known tiers are kept when it is unreachable).
"""

import dataclasses
import threading
import time

from oslo_log import log as logging

from iothrottle.controller import model
from iothrottle.db import api
from iothrottle import extra_specs

LOG = logging.getLogger(__name__)

# The first microversion that embeds the flavor, with its extra specs,
# in a server body (and the last one before it cannot give a guarantee).
MIN_API_VERSION = (2, 47)
# The server attribute (admin only) naming the compute host that runs it.
HOST_ATTR = 'OS-EXT-SRV-ATTR:host'
# Listings in flight at once: one hung request must not stop the others,
# and Nova must not see a burst from one conductor.
WORKERS = 4

# An unchanged instance's record is written again once this old
# (seconds), so its ``seen_at`` tells ``db purge`` it still runs.
RECORD_EVERY_S = 3600.0

# The key of the compute host listing among the per-host listings.
COMPUTE_HOSTS = None

# Verdicts of Directory.verify.
VERIFIED = 'verified'
UNKNOWN = 'unknown'          # Nova does not (yet) place it anywhere known
ELSEWHERE = 'elsewhere'      # Nova places it on another host


def check_api_version(version):
    """Raise ValueError (one line) unless ``version`` is >= 2.47."""
    major, sep, minor = str(version).partition('.')
    if not (sep and major.isdigit() and minor.isdigit()):
        raise ValueError('[nova] api_version: %r is not a microversion '
                         '"2.N"' % (version,))
    if (int(major), int(minor)) < MIN_API_VERSION:
        raise ValueError('[nova] api_version: %s is below %d.%d, the first '
                         'that gives a server\'s flavor extra specs'
                         % ((version,) + MIN_API_VERSION))


@dataclasses.dataclass(frozen=True)
class Placement:
    """Where Nova says an instance runs, and its guarantee."""
    host: str
    guarantee: model.Guarantee


def guarantee_of(uuid, flavor, tiers, warn):
    """The guarantee of a server's embedded ``flavor`` dict; an invalid
    one gives NO_GUARANTEE and ``warn(message)``."""
    specs = flavor.get('extra_specs') if isinstance(flavor, dict) else None
    if specs is None:
        specs = {}
    if not isinstance(specs, dict):
        warn('instance %s: flavor extra_specs is a %s, not a mapping; no '
             'guarantee' % (uuid, type(specs).__name__))
        return model.NO_GUARANTEE
    try:
        return extra_specs.guarantee_from_extra_specs(specs, tiers)
    except extra_specs.ExtraSpecError as exc:
        warn('instance %s: %s; no guarantee' % (uuid, exc))
        return model.NO_GUARANTEE


def default_executor():
    """A futurist thread pool (imported here: futurist pulls eventlet in
    unless :func:`iothrottle.rpc.threads.setup` ran first)."""
    import futurist
    return futurist.ThreadPoolExecutor(max_workers=WORKERS)


class Directory:
    """See the module docstring.

    ``client``: a novaclient ``Client`` (anything with ``servers.list``);
    ``engine``: the database holding the tiers (None: no tiers);
    ``executor``: runs the listings (default :func:`default_executor`;
    tests pass ``futurist.SynchronousExecutor``).
    """

    def __init__(self, client, engine=None, refresh_s=60.0, retry_s=15.0,
                 executor=None, clock=time.monotonic):
        self.client = client
        self.engine = engine
        self.refresh_s = refresh_s
        self.retry_s = retry_s
        self.clock = clock
        self.executor = executor or default_executor()
        self._lock = threading.Lock()         # the cache: never held for I/O
        self._worker_lock = threading.Lock()  # the workers' own state
        self._placements = {}     # uuid -> Placement
        self._host_uuids = {}     # host -> uuids of its last listing
        self._hosts = None        # Nova's compute hosts, once listed
        self._listed_at = {}      # host or COMPUTE_HOSTS -> last attempt
        self._in_flight = set()   # hosts (or COMPUTE_HOSTS) being listed
        self._tiers = {}
        self._tiers_at = None
        self._recorded = {}       # uuid -> (InstanceRecord, written at)
        self._nova_down = False
        self._warned = set()      # warnings logged already

    # -- the core's side: cache reads only ----------------------------

    def verify(self, host, uuid):
        """``(verdict, Placement or None)`` for a disk of ``uuid``
        reported by ``host``; never waits for Nova."""
        if self._claim(COMPUTE_HOSTS, self._hosts_wait_s(host)):
            self._submit(COMPUTE_HOSTS)
        with self._lock:
            placement = self._placements.get(uuid)
            verified = placement is not None and placement.host == host
            known = self._hosts is not None and host in self._hosts
        if known and self._claim(host, self.refresh_s if verified
                                 else self.retry_s):
            self._submit(host)
            with self._lock:    # an executor that ran it already
                placement = self._placements.get(uuid)
            verified = placement is not None and placement.host == host
        if verified:
            return VERIFIED, placement
        return (UNKNOWN if placement is None else ELSEWHERE), placement

    def close(self):
        self.executor.shutdown(wait=False)

    def _hosts_wait_s(self, host):
        """How old the compute host list may be: refresh_s, or retry_s
        when ``host`` is not in it (a compute host added since)."""
        with self._lock:
            if self._hosts is None or host not in self._hosts:
                return self.retry_s
        return self.refresh_s

    def _claim(self, key, wait_s):
        """Whether the listing ``key`` is due and now ours to start."""
        now = self.clock()
        with self._lock:
            listed_at = self._listed_at.get(key)
            if key in self._in_flight or (listed_at is not None
                                          and now - listed_at < wait_s):
                return False
            self._in_flight.add(key)
            return True

    # -- the worker's side --------------------------------------------

    def _submit(self, key):
        try:
            self.executor.submit(self._refresh, key)
        except RuntimeError as exc:     # shut down
            LOG.debug('not listing %s: %s', key, exc)
            with self._lock:
                self._in_flight.discard(key)

    def _refresh(self, key):
        try:
            if key is COMPUTE_HOSTS:
                self._list_compute_hosts()
            else:
                self._list_host(key)
            self._nova_answered()
        except Exception as exc:
            self._nova_failed('the compute hosts' if key is COMPUTE_HOSTS
                              else 'the instances of %s' % key, exc)
        finally:
            with self._lock:
                self._listed_at[key] = self.clock()
                self._in_flight.discard(key)

    def _list_compute_hosts(self):
        hosts = {service.host for service in
                 self.client.services.list(binary='nova-compute')
                 if isinstance(getattr(service, 'host', None), str)}
        with self._lock:
            self._hosts = hosts

    def _list_host(self, host):
        servers = self.client.servers.list(
            detailed=True, search_opts={'all_tenants': True, 'host': host})
        tiers = self._known_tiers()
        listed, owners = {}, []
        for server in servers:
            uuid = getattr(server, 'id', None)
            if not isinstance(uuid, str) or getattr(server, HOST_ATTR,
                                                    None) != host:
                continue
            listed[uuid] = Placement(host, guarantee_of(
                uuid, getattr(server, 'flavor', None), tiers, self._warn))
            project_id = getattr(server, 'tenant_id', None)
            if isinstance(project_id, str) and project_id:
                owners.append(api.InstanceRecord(
                    uuid, project_id, listed[uuid].guarantee.tier))
        self._record_owners(owners)
        with self._lock:
            for uuid in self._host_uuids.get(host, frozenset()) - set(listed):
                placement = self._placements.get(uuid)
                if placement is not None and placement.host == host:
                    del self._placements[uuid]   # gone, or moved unseen
            self._placements.update(listed)
            self._host_uuids[host] = frozenset(listed)
        if servers and not any(hasattr(server, HOST_ATTR)
                               for server in servers):
            self._warn('Nova gives no %s: the [nova] credentials need the '
                       'admin role; no instance can be verified'
                       % HOST_ATTR)

    def _record_owners(self, records):
        """Write the instance records that are new, changed or
        RECORD_EVERY_S old (worker thread)."""
        if self.engine is None:
            return
        now = self.clock()
        with self._worker_lock:
            due = [record for record in records
                   if self._recorded.get(record.instance_uuid, (None, None))
                   [0] != record
                   or now - self._recorded[record.instance_uuid][1]
                   >= RECORD_EVERY_S]
        if not due:
            return
        try:
            api.record_instances(self.engine, due)
        except Exception as exc:
            self._warn('cannot record the projects of instances (%s); '
                       'project members cannot read their throttle state '
                       'until it works' % str(exc).splitlines()[0])
            return
        with self._worker_lock:
            for record in due:
                self._recorded[record.instance_uuid] = (record, now)

    def _nova_answered(self):
        with self._worker_lock:
            was_down, self._nova_down = self._nova_down, False
        if was_down:
            LOG.info('Nova answers again: instance placements are '
                     'refreshed')

    def _nova_failed(self, what, exc):
        with self._worker_lock:
            was_down, self._nova_down = self._nova_down, True
        if not was_down:
            LOG.warning('cannot read %s from Nova (%s); keeping the last '
                        'known placements and guarantees', what,
                        str(exc).splitlines()[0] if str(exc) else
                        type(exc).__name__)
        else:
            LOG.debug('reading %s failed: %s', what, exc)

    def _known_tiers(self):
        """The tiers, read again once ``refresh_s`` old (one worker
        reads; the others wait for it, never the decision round)."""
        with self._worker_lock:
            now = self.clock()
            if self.engine is None or (
                    self._tiers_at is not None
                    and now - self._tiers_at < self.refresh_s):
                return self._tiers
            self._tiers_at = now
            try:
                self._tiers = api.list_tiers(self.engine)
            except Exception as exc:
                LOG.warning('tiers: database unreachable (%s); using the '
                            'last %d known', str(exc).splitlines()[0],
                            len(self._tiers))
            return self._tiers

    def _warn(self, message):
        """Log ``message`` once for the life of the conductor."""
        with self._worker_lock:
            first = message not in self._warned
            self._warned.add(message)
        if first:
            LOG.warning('%s', message)


def nova_client(conf):
    """A novaclient Client from the ``[nova]`` section (keystoneauth1
    session with ``[nova] timeout``); raises ValueError on a microversion
    below 2.47."""
    from keystoneauth1 import loading as ks_loading
    from novaclient import client as nova_client_mod
    check_api_version(conf.nova.api_version)
    if not conf.nova.timeout or conf.nova.timeout <= 0:
        raise ValueError('[nova] timeout: %r must be a positive number of '
                         'seconds' % (conf.nova.timeout,))
    auth = ks_loading.load_auth_from_conf_options(conf, 'nova')
    session = ks_loading.load_session_from_conf_options(conf, 'nova',
                                                        auth=auth)
    return nova_client_mod.Client(
        conf.nova.api_version, session=session,
        region_name=conf.nova.region_name,
        endpoint_type=conf.nova.interface)


def nova_configured(conf):
    """Whether ``[nova]`` names credentials (``auth_type``, or an
    ``auth_section`` holding them)."""
    return bool(conf.nova.auth_type or conf.nova.auth_section)


def nova_factory(conf):
    """A function returning one :func:`nova_client` of ``conf``, made on
    first use (most API requests never need Nova); None when ``[nova]``
    has no credentials."""
    if not nova_configured(conf):
        return None
    made = []

    def nova():
        if not made:
            made.append(nova_client(conf))
        return made[0]
    return nova
