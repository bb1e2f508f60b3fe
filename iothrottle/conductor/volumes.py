"""Which volume sits on which Cinder pool, as Cinder says: nothing by hand.

The seek-model weigher and filter (``iothrottle.cinder``) count the
volumes recorded on each pool (``pool_volumes``).  The conductor keeps
that record in step with Cinder from two sources:

Notifications.  Cinder 29 announces a volume's life on its notification
bus with ``volume_utils.notify_about_volume_usage`` (publisher
``volume.<host>``, event type ``volume.<suffix>``, payload
``volume_utils._usage_from_volume``: ``volume_id``, ``host`` as
``host@backend#pool``, ``size`` in GiB, ``volume_type`` the type's id,
``status``...).  The events that move a volume in or out of a pool:

* ``volume.create.end`` (``flows/manager/create_volume.py``, only for
  volumes that count against quota: the temporary volume of a migration
  is never announced) and ``volume.manage_existing.end``: placed;
* ``volume.retype`` (``manager.py`` ``retype``, once the volume has its
  new type, and its new host when the retype migrated it; the payload's
  ``volume_type`` is the new type's id) and ``volume.resize.end`` (new
  ``size``): placed again, with the new type's guarantee or size;
* ``volume.delete.end`` and ``volume.unmanage.end``: gone.

Cinder 29 sends no notification when a migration ends
(``manager.py`` ``migrate_volume`` and ``migrate_volume_completion``
announce nothing); neither does a retype that migrates an attached
volume say where it ends, since Nova finishes that copy later.  The
reconciliation below catches these.

Reconciliation.  With ``[cinder]`` credentials, the conductor lists every
volume from Cinder's API (``/volumes/detail?all_tenants=1``, page by
page) at start-up and every ``[cinder] reconcile_interval_s``, on a
background thread, and makes the record match (:func:`reconcile`):
volumes Cinder does not list are forgotten, the others placed where
Cinder says with their type's guarantee.

Guarantees.  A volume's guarantee is its type's: the ``iothrottle:``
keys of its extra specs and QoS specs, resolved as the scheduler
plugins do (``placement.guarantee_for_type``, tiers from the database).
Notifications carry the type's id only, so the types come from Cinder's
API (``/types``, ``/qos-specs``, read every ``[cinder] type_refresh_s``);
without credentials volumes are recorded without a guarantee (said once
at start-up).

Untrusted input.  Payloads and API records are checked field by field
(:func:`from_notification`, :func:`from_api`): a bad one is dropped with
one warning naming the field; the listener never dies.  The pure
functions here take dicts and return what to do; :class:`Follower` does
it to the database.
"""

import dataclasses
import math
import threading
import time

from oslo_log import log as logging

from iothrottle.cinder import placement
from iothrottle.controller import model
from iothrottle.db import api as db_api
from iothrottle.db import models

LOG = logging.getLogger(__name__)

# Event types that place a volume on the pool in the payload's ``host``.
PLACING_EVENTS = frozenset(['volume.create.end',
                            'volume.manage_existing.end',
                            'volume.retype', 'volume.resize.end'])
# Event types after which the volume is on no pool.
LEAVING_EVENTS = frozenset(['volume.delete.end', 'volume.unmanage.end'])

# Volume statuses that hold no place on a pool (failed or going away).
UNPLACED_STATUSES = frozenset(['error', 'deleting', 'error_deleting',
                               'error_managing', 'error_managing_deleting'])

# The largest volume believed, in GiB (Cinder's sizes are integers of
# GiB; 1 PiB is far beyond any one volume).
MAX_SIZE_GIB = 1 << 20

# Cinder API: volumes asked for per page, and the most pages followed (a
# loop of ``next`` links must end).
PAGE_SIZE = 1000
MAX_PAGES = 10000

# The catalog's service type of Cinder's v3 API.
SERVICE_TYPE = 'volumev3'


@dataclasses.dataclass(frozen=True)
class Placed:
    """Cinder has volume ``volume_id`` of ``size_gib`` and type
    ``volume_type`` (id or name; None: none) on ``pool``."""
    volume_id: str
    pool: str
    size_gib: float
    volume_type: str = None


@dataclasses.dataclass(frozen=True)
class Gone:
    """Volume ``volume_id`` is on no pool any more."""
    volume_id: str


def _text(owner, name, value, optional=False):
    if value is None and optional:
        return None
    if not isinstance(value, str) or not value or len(value) > (
            models.NAME_LENGTH):
        raise ValueError('%s: %s must be a non-empty string of at most %d '
                         'characters, got %r' % (
                             owner, name, models.NAME_LENGTH,
                             value if not isinstance(value, str)
                             else value[:80]))
    return value


def _size_gib(owner, name, value):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or (
            not math.isfinite(value)) or not 0 < value <= MAX_SIZE_GIB:
        raise ValueError('%s: %s must be a number of GiB in (0, %d], got %r'
                         % (owner, name, MAX_SIZE_GIB, value))
    return float(value)


def _pool(owner, name, value):
    try:
        return placement.check_pool_name(value)
    except ValueError:
        raise ValueError('%s: %s must be a Cinder pool name '
                         'host@backend#pool, got %r'
                         % (owner, name, value if not isinstance(value, str)
                            else value[:80])) from None


def from_notification(event_type, payload):
    """What Cinder's notification ``event_type`` with ``payload`` says: a
    Placed, a Gone, or None (an event that moves no volume, or a volume
    that failed).  Raises ValueError (one line naming the field)."""
    if event_type not in PLACING_EVENTS and event_type not in LEAVING_EVENTS:
        return None
    if not isinstance(payload, dict):
        raise ValueError('%s: payload must be a mapping, got %s'
                         % (event_type, type(payload).__name__))
    volume_id = _text(event_type, 'payload.volume_id',
                      payload.get('volume_id'))
    if event_type in LEAVING_EVENTS:
        return Gone(volume_id)
    status = _text(event_type, 'payload.status', payload.get('status'),
                   optional=True)
    if status in UNPLACED_STATUSES:
        return None
    return Placed(
        volume_id=volume_id,
        pool=_pool(event_type, 'payload.host', payload.get('host')),
        size_gib=_size_gib(event_type, 'payload.size', payload.get('size')),
        volume_type=_text(event_type, 'payload.volume_type',
                          payload.get('volume_type'), optional=True))


def from_api(record):
    """The Placed of one volume of Cinder's ``/volumes/detail``, or None
    when it holds no place (no host yet, failed, being deleted, or the
    temporary target of a migration).  Raises ValueError (one line)."""
    if not isinstance(record, dict):
        raise ValueError('volume: must be a mapping, got %s'
                         % type(record).__name__)
    volume_id = _text('volume', 'id', record.get('id'))
    owner = 'volume %s' % volume_id
    status = _text(owner, 'status', record.get('status'), optional=True)
    migration = _text(owner, 'migration_status',
                      record.get('migration_status'), optional=True)
    host = record.get('os-vol-host-attr:host')
    if (host is None or status in UNPLACED_STATUSES
            or (migration or '').startswith('target:')):
        return None
    return Placed(
        volume_id=volume_id,
        pool=_pool(owner, 'os-vol-host-attr:host', host),
        size_gib=_size_gib(owner, 'size', record.get('size')),
        volume_type=_text(owner, 'volume_type', record.get('volume_type'),
                          optional=True))


@dataclasses.dataclass(frozen=True)
class Diff:
    """What makes the record match Cinder: ``place`` {volume_id: (pool,
    Volume)} to record or correct, ``forget`` the volume ids to drop."""
    place: dict
    forget: tuple


def _same(recorded, wanted):
    (pool, volume), (want_pool, want) = recorded, wanted
    return (pool == want_pool and volume.size_bytes == want.size_bytes
            and volume.min_iops == want.min_iops
            and volume.min_bytes_sec == want.min_bytes_sec)


def reconcile(wanted, recorded):
    """The Diff from ``recorded`` to ``wanted``, both {volume_id: (pool,
    placement.Volume)}; stream fields (offset, read fraction) are the
    operator's and never make a difference."""
    return Diff(
        place={volume_id: where for volume_id, where in sorted(
            wanted.items()) if volume_id not in recorded
            or not _same(recorded[volume_id], where)},
        forget=tuple(sorted(set(recorded) - set(wanted))))


def type_specs(types, qos_specs):
    """{type id and name: (extra specs, QoS specs)} from Cinder's
    ``/types`` and ``/qos-specs`` lists; malformed entries are left out
    with one warning each."""
    qos = {}
    for entry in qos_specs:
        if (isinstance(entry, dict) and isinstance(entry.get('id'), str)
                and isinstance(entry.get('specs'), dict)):
            qos[entry['id']] = entry['specs']
        else:
            LOG.warning('Cinder QoS specs %.80r: malformed, ignored', entry)
    found = {}
    for entry in types:
        specs = entry.get('extra_specs') if isinstance(entry, dict) else None
        if not isinstance(specs, dict) or not isinstance(entry.get('id'),
                                                         str):
            LOG.warning('Cinder volume type %.80r: malformed, ignored',
                        entry)
            continue
        both = (specs, qos.get(entry.get('qos_specs_id'), {}))
        found[entry['id']] = both
        if isinstance(entry.get('name'), str):
            found.setdefault(entry['name'], both)
    return found


class Types:
    """Volume types' guarantees: ``fetch()`` returns :func:`type_specs`'
    mapping (None: no Cinder API, no guarantees); read again once
    ``refresh_s`` old, or when an unknown type is asked for (at most
    every ``refresh_s``).  Tiers come from ``tiers()``."""

    def __init__(self, fetch, tiers, refresh_s, clock=time.monotonic):
        self._fetch = fetch
        self._tiers = tiers
        self.refresh_s = refresh_s
        self._clock = clock
        self._specs = {}
        self._fetched_at_s = None
        self._lock = threading.Lock()

    def _refresh(self):
        now = self._clock()
        stale = (self._fetched_at_s is None
                 or now - self._fetched_at_s >= self.refresh_s)
        if not stale:
            return
        self._fetched_at_s = now
        try:
            self._specs = self._fetch() or {}
        except Exception as exc:
            LOG.warning('Cinder volume types unreadable (%s); keeping the '
                        '%d known', str(exc).splitlines()[0] if str(exc)
                        else type(exc).__name__, len(self._specs))

    def guarantee(self, type_key):
        """The Guarantee of volume type ``type_key`` (id or name; None:
        no type); no guarantee for a type unknown or with invalid
        specs (one warning)."""
        if type_key is None or self._fetch is None:
            return model.NO_GUARANTEE
        with self._lock:
            if type_key not in self._specs:
                self._refresh()
            specs = self._specs.get(type_key)
        if specs is None:
            LOG.warning('Cinder volume type %s unknown; its volumes are '
                        'recorded without a guarantee', type_key)
            return model.NO_GUARANTEE
        try:
            return placement.guarantee_for_type(specs[0], specs[1],
                                                self._tiers())
        except ValueError as exc:
            LOG.warning('Cinder volume type %s: %s; its volumes are '
                        'recorded without a guarantee', type_key, exc)
            return model.NO_GUARANTEE

    def expire(self):
        """Read the types again at the next question."""
        with self._lock:
            self._fetched_at_s = None


def volume_of(placed, guarantee):
    """The placement.Volume of ``placed`` with ``guarantee``."""
    return placement.Volume(volume_id=placed.volume_id,
                            size_bytes=placed.size_gib * placement.GIB,
                            min_iops=guarantee.min_iops,
                            min_bytes_sec=guarantee.min_bytes_sec)


class Follower:
    """Applies what Cinder says to the database ``engine``; guarantees
    from ``types`` (a Types)."""

    def __init__(self, engine, types):
        self.engine = engine
        self.types = types

    def _place(self, placed):
        volume = volume_of(placed, self.types.guarantee(placed.volume_type))
        if db_api.follow_pool_volume(self.engine, placed.pool, volume):
            LOG.info('volume %s recorded on pool %s (%g GiB, min %g IOPS, '
                     '%g B/s)', placed.volume_id, placed.pool,
                     placed.size_gib, volume.min_iops, volume.min_bytes_sec)

    def _forget(self, volume_id):
        try:
            pool = db_api.forget_pool_volume(self.engine, volume_id)
        except db_api.NotFound:
            return
        LOG.info('volume %s left pool %s', volume_id, pool)

    def notified(self, event_type, payload):
        """Apply one notification; never raises (a bad one is dropped
        with one warning)."""
        try:
            what = from_notification(event_type, payload)
        except ValueError as exc:
            LOG.warning('Cinder notification dropped: %s', exc)
            return
        try:
            if isinstance(what, Placed):
                self._place(what)
            elif isinstance(what, Gone):
                self._forget(what.volume_id)
        except Exception as exc:
            LOG.warning('Cinder notification %s of volume %s not recorded: '
                        '%s', event_type, what.volume_id,
                        (str(exc).splitlines() or [type(exc).__name__])[0])

    def reconcile(self, records):
        """Make the record match Cinder's ``records`` (the volumes of
        ``/volumes/detail``); returns the Diff applied."""
        self.types.expire()
        wanted = {}
        for record in records:
            try:
                placed = from_api(record)
            except ValueError as exc:
                LOG.warning('Cinder volume ignored: %s', exc)
                continue
            if placed is not None:
                wanted[placed.volume_id] = (placed.pool, volume_of(
                    placed, self.types.guarantee(placed.volume_type)))
        diff = reconcile(wanted, db_api.pool_volumes(self.engine))
        for volume_id, (pool, volume) in diff.place.items():
            db_api.follow_pool_volume(self.engine, pool, volume)
        for volume_id in diff.forget:
            self._forget(volume_id)
        LOG.info('volumes reconciled with Cinder: %d listed on pools, %d '
                 'recorded or corrected, %d forgotten', len(wanted),
                 len(diff.place), len(diff.forget))
        return diff


class NotificationEndpoint:
    """oslo.messaging notification endpoint: Cinder's INFO notifications
    to the Follower (the others are not about volumes' places)."""

    def __init__(self, follower):
        self.follower = follower

    def info(self, ctxt, publisher_id, event_type, payload, metadata):
        self.follower.notified(event_type, payload)


class CinderAPI:
    """The few reads of Cinder's v3 API the conductor needs, over a
    keystoneauth1 ``session``."""

    def __init__(self, session, interface, region_name=None):
        self.session = session
        self.endpoint_filter = {'service_type': SERVICE_TYPE,
                                'interface': interface,
                                'region_name': region_name}

    def _get(self, url, key):
        body = self.session.get(url, endpoint_filter=self.endpoint_filter,
                                raise_exc=True).json()
        if not isinstance(body, dict) or not isinstance(body.get(key),
                                                        list):
            raise ValueError('Cinder %s: no list %r in the answer'
                             % (url.split('?')[0], key))
        return body

    def volumes(self):
        """Every volume of every project, page by page."""
        url = '/volumes/detail?all_tenants=1&limit=%d' % PAGE_SIZE
        for _page in range(MAX_PAGES):
            body = self._get(url, 'volumes')
            yield from body['volumes']
            nexts = [link.get('href') for link in
                     body.get('volumes_links') or ()
                     if isinstance(link, dict)
                     and link.get('rel') == 'next']
            if not nexts or not isinstance(nexts[0], str):
                return
            url = nexts[0]
        raise ValueError('Cinder /volumes/detail: more than %d pages'
                         % MAX_PAGES)

    def type_specs(self):
        """:func:`type_specs` of every volume type (public or not)."""
        return type_specs(
            self._get('/types?is_public=None', 'volume_types')
            ['volume_types'],
            self._get('/qos-specs', 'qos_specs')['qos_specs'])


def cinder_api(conf):
    """A CinderAPI from ``[cinder]``, or None when it has no
    ``auth_type``; raises ValueError naming the option."""
    from keystoneauth1 import loading as ks_loading
    group = conf.cinder
    if not group.auth_type:
        return None
    if not group.timeout or group.timeout <= 0:
        raise ValueError('[cinder] timeout: %r must be a positive number of '
                         'seconds' % (group.timeout,))
    auth = ks_loading.load_auth_from_conf_options(conf, 'cinder')
    session = ks_loading.load_session_from_conf_options(conf, 'cinder',
                                                        auth=auth)
    return CinderAPI(session, group.interface, group.region_name)


class Volumes:
    """The conductor's part that follows Cinder: a notification listener
    and a reconciliation thread, each only when configured."""

    def __init__(self, follower, listener=None, api=None,
                 reconcile_interval_s=0.0):
        self.follower = follower
        self.listener = listener
        self.api = api
        self.reconcile_interval_s = reconcile_interval_s
        self._stop = threading.Event()
        self._executor = None

    def reconcile_once(self):
        """One reconciliation; never raises."""
        try:
            return self.follower.reconcile(self.api.volumes())
        except Exception as exc:
            LOG.warning('volumes not reconciled with Cinder: %s',
                        (str(exc).splitlines() or [type(exc).__name__])[0])
            return None

    def _reconcile_loop(self):
        while not self._stop.is_set():
            self.reconcile_once()
            if not self.reconcile_interval_s:
                return
            self._stop.wait(self.reconcile_interval_s)

    def start(self):
        if self.listener is not None:
            self.listener.start()
        if self.api is not None:
            # futurist, imported here: it imports eventlet unless
            # iothrottle.rpc.threads.setup ran first.
            import futurist
            self._executor = futurist.ThreadPoolExecutor(max_workers=1)
            self._executor.submit(self._reconcile_loop)

    def stop(self):
        self._stop.set()
        if self.listener is not None:
            self.listener.stop()
            self.listener.wait()
        if self._executor is not None:
            self._executor.shutdown(wait=False)


def listener(conf, endpoint):
    """An oslo.messaging notification listener (threading executor) of
    Cinder's notifications from ``[cinder]``, not started."""
    import oslo_messaging
    group = conf.cinder
    transport = oslo_messaging.get_notification_transport(
        conf, url=group.notification_transport_url)
    targets = [oslo_messaging.Target(topic=topic,
                                     exchange=group.notification_exchange)
               for topic in group.notification_topics]
    return oslo_messaging.get_notification_listener(
        transport, targets, [endpoint], executor='threading',
        pool=group.notification_pool)


def build(conf, engine):
    """The Volumes of ``conf`` on database ``engine`` (nothing runs until
    ``start``); raises ValueError naming the option."""
    api = cinder_api(conf)
    if api is None and conf.cinder.listen_notifications:
        LOG.warning('[cinder] has no auth_type: volumes are recorded from '
                    'notifications without their types\' guarantees, and '
                    'never reconciled with Cinder\'s API')
    types = Types(api.type_specs if api is not None else None,
                  lambda: db_api.list_tiers(engine),
                  refresh_s=conf.cinder.type_refresh_s)
    follower = Follower(engine, types)
    the_listener = None
    if conf.cinder.listen_notifications:
        if not conf.cinder.notification_topics:
            raise ValueError('[cinder] notification_topics: empty, with '
                             'listen_notifications = true')
        the_listener = listener(conf, NotificationEndpoint(follower))
    return Volumes(follower, the_listener, api,
                   reconcile_interval_s=conf.cinder.reconcile_interval_s)
