"""Reading and writing the conductor's database.

Each function opens its own transaction on the ``engine`` it is given
(:func:`engine_from_conf`) and returns plain immutable values - Guarantee
objects and the dataclasses below - never ORM rows.  Times are naive
UTC datetimes (an aware datetime is converted); rates are in the units
of :class:`iothrottle.controller.model.Guarantee`.

Tiers::

    create_tier(engine, Guarantee(min_iops=100, weight=4, tier='gold'))
    list_tiers(engine)          # {'gold': Guarantee(...)}
    update_tier(engine, Guarantee(min_iops=200, weight=4, tier='gold'))
    delete_tier(engine, 'gold')  # InUse while instances use it

Flavors (a cache of what Nova's extra specs resolved to)::

    cache_flavor(engine, flavor_id, 'm1.large', guarantee=...)
    cache_flavor(engine, flavor_id, 'm1.bad', error='iothrottle:...')
    cached_flavor(engine, 'm1.large', max_age_s=600)

Storage domains::

    declare_capacity(engine, key, max_iops=2000, max_bytes_sec=500e6)
    learn_peak(engine, key, iops=1800, bytes_sec=90e6)
    reset_peak(engine, key)     # forget a poisoned peak
    record_domain_load(engine, key, model.DomainLoad(...))  # last round
    storage_domains(engine)

Instances, as the conductor's Nova directory last saw them::

    record_instances(engine, {uuid: InstanceRecord(...)})
    get_instance(engine, uuid)  # its project and tier

Decisions, and "why is my VM throttled?"::

    record_decisions(engine, key, decisions, policy='guarantee')
    decisions_for_instance(engine, instance_uuid)
    list_decisions(engine, storage_domain=key, since=when, limit=50)
    latest_decisions(engine, storage_domain=key)   # newest per disk
    purge_decisions(engine, older_than)
    purge(engine, older_than_s=30 * 86400)   # decisions and flavor cache

Cinder pools (the seek-model weigher and filter, ``iothrottle.cinder``)::

    set_pool_profile(engine, 'cinder-1@lvm#a', profile, scheduler='bfq')
    pool_profiles(engine)       # [PoolRecord(...)]
    record_pool_volume(engine, 'cinder-1@lvm#a', placement.Volume(...))
    place_volume(engine, 'cinder-1@lvm#a', 'vol-1', {'size_gib': 20},
                 tier='gold')         # checked, from raw values
    get_pool(engine, 'cinder-1@lvm#a')
    forget_pool_volume(engine, volume_id)
    follow_pool_volume(engine, 'cinder-1@lvm#a', placement.Volume(...))
    pool_volumes(engine)        # {volume_id: (pool, Volume)}
    pool_states(engine, ['cinder-1@lvm#a'])   # {pool: PoolState}
    delete_pool(engine, 'cinder-1@lvm#a')
"""

import dataclasses
import datetime

import sqlalchemy as sa
from sqlalchemy import orm

from iothrottle.cinder import placement
from iothrottle.controller import model
from iothrottle.db import models
from iothrottle import extra_specs
from iothrottle.seekmodel import profile as profile_mod
from iothrottle import tiers as tiers_mod


class NotFound(LookupError):
    """What was asked for does not exist; the message is one line."""


class Exists(ValueError):
    """What was to be created exists already; the message is one line."""


class InUse(ValueError):
    """What was to be deleted is still used; the message is one line."""


@dataclasses.dataclass(frozen=True)
class CachedFlavor:
    """What a flavor's extra specs resolved to when last fetched.

    ``guarantee`` is None when the extra specs were invalid; ``error``
    then says why.
    """
    flavor_id: str
    flavor_name: str
    guarantee: model.Guarantee
    error: str
    fetched_at: datetime.datetime


@dataclasses.dataclass(frozen=True)
class StorageDomain:
    """A storage domain's capacity and where it comes from, and its load
    in the conductor's last stored round (``load_at``; the ``load_*``
    fields and ``saturated`` are None until one): see
    :class:`iothrottle.db.models.StorageDomain`."""
    key: str
    max_iops: float
    max_bytes_sec: float
    capacity_source: str
    peak_iops: float
    peak_bytes_sec: float
    updated_at: datetime.datetime
    load_iops: float = None
    load_bytes_sec: float = None
    load_fraction: float = None
    saturated: bool = None
    load_disks: int = None
    load_caps: int = None
    load_at: datetime.datetime = None
    policy_max_iops: float = None
    policy_max_bytes_sec: float = None

    def capacity(self):
        """The controller's Capacity; None until both axes are known."""
        if self.max_iops > 0 and self.max_bytes_sec > 0:
            return model.Capacity(max_iops=self.max_iops,
                                  max_bytes_sec=self.max_bytes_sec)
        return None


@dataclasses.dataclass(frozen=True)
class InstanceRecord:
    """An instance as Nova placed it when its host was last listed:
    its project and the tier its flavor names ('' if none)."""
    instance_uuid: str
    project_id: str
    tier: str = ''
    seen_at: datetime.datetime = None


@dataclasses.dataclass(frozen=True)
class DecisionRecord:
    """One stored decision."""
    decided_at: datetime.datetime
    storage_domain: str
    instance_uuid: str
    device: str
    action: str
    cap_iops: float
    cap_bytes_sec: float
    lease_expires_at: datetime.datetime
    reason: str
    policy: str


def create_engine(url, recycle_s=3600):
    """An engine for the SQLAlchemy ``url``.

    Pooled connections are checked before use and replaced after
    ``recycle_s`` seconds, so a restarted or idle-dropping server does
    not fail the next query.
    """
    return sa.create_engine(url, pool_pre_ping=True, pool_recycle=recycle_s)


def engine_from_conf(conf):
    """An engine for ``[database] connection`` of ``conf``."""
    return create_engine(conf.database.connection,
                         conf.database.connection_recycle_time)


def _session(engine):
    return orm.Session(engine, expire_on_commit=False)


def _utc(when):
    """``when`` as naive UTC; now if None."""
    if when is None:
        return models.utcnow()
    if when.tzinfo is not None:
        when = when.astimezone(datetime.timezone.utc).replace(tzinfo=None)
    return when


def _check_length(what, value, length):
    if not isinstance(value, str) or not value or len(value) > length:
        raise ValueError('%s must be a string of 1 to %d characters, got %r'
                         % (what, length, value if not isinstance(value, str)
                            else value[:40]))
    return value


def _rates(guarantee):
    return {key: float(getattr(guarantee, key))
            for key in tiers_mod.GUARANTEE_KEYS}


def _guarantee(row, tier):
    return model.Guarantee(tier=tier, **{key: getattr(row, key)
                                         for key in tiers_mod.GUARANTEE_KEYS})


# Tiers

def create_tier(engine, guarantee):
    """Store ``guarantee`` as the tier named by its ``tier`` field.

    Raises ValueError for a malformed name, Exists if the tier exists.
    """
    try:
        name = extra_specs.parse_tier_name(guarantee.tier)
    except ValueError as exc:
        raise ValueError('tier name: %s' % exc) from None
    with _session(engine) as session, session.begin():
        if session.get(models.Tier, name) is not None:
            raise Exists('tier %r exists' % name)
        session.add(models.Tier(name=name, **_rates(guarantee)))


def get_tier(engine, name):
    """The Guarantee of tier ``name``; raises NotFound."""
    with _session(engine) as session:
        row = session.get(models.Tier, name)
        if row is None:
            raise NotFound('no tier %r' % (name,))
        return _guarantee(row, row.name)


def list_tiers(engine):
    """Every tier: {name: Guarantee}, by name."""
    with _session(engine) as session:
        rows = session.scalars(sa.select(models.Tier)
                               .order_by(models.Tier.name))
        return {row.name: _guarantee(row, row.name) for row in rows}


def update_tier(engine, guarantee):
    """Replace the values of the tier named by ``guarantee.tier`` (its
    instances get them at the conductor's next tier refresh); raises
    NotFound."""
    with _session(engine) as session, session.begin():
        row = session.get(models.Tier, guarantee.tier)
        if row is None:
            raise NotFound('no tier %r' % (guarantee.tier,))
        for key, value in _rates(guarantee).items():
            setattr(row, key, value)
        row.updated_at = models.utcnow()


# How many users an InUse message names.
_SHOWN_USERS = 5


def tier_users(session, name):
    """Instance uuids (from the last listing of their hosts) whose
    flavor names tier ``name``, and the number of them."""
    where = models.Instance.tier == name
    count = session.scalar(sa.select(sa.func.count()).select_from(
        models.Instance).where(where))
    shown = session.scalars(sa.select(models.Instance.instance_uuid)
                            .where(where)
                            .order_by(models.Instance.instance_uuid)
                            .limit(_SHOWN_USERS)).all()
    return shown, count


def _named(what, names, count):
    """'2 flavor(s): a, b' (at most _SHOWN_USERS names, then '...')."""
    return '%d %s(s): %s%s' % (count, what, ', '.join(names[:_SHOWN_USERS]),
                               ', ...' if count > _SHOWN_USERS else '')


def delete_tier(engine, name, flavors=(), force=False):
    """Delete tier ``name``; raises NotFound, or (unless ``force``)
    InUse while ``flavors`` (names of the flavors whose extra specs name
    it, from Nova: :mod:`iothrottle.tier_use`) or instances recorded by
    the conductor (``record_instances``) use it: their guarantee would
    vanish, and flavors naming it are invalid from then on.  The
    message names them (flavors first) and says nothing of ``force``:
    each caller names its own way to give it.  Returns the instance
    uuids and the count of those that used it (a forced delete's log)."""
    flavors = list(flavors)
    with _session(engine) as session, session.begin():
        row = session.get(models.Tier, name)
        if row is None:
            raise NotFound('no tier %r' % (name,))
        shown, count = tier_users(session, name)
        if not force and (flavors or count):
            users = ([_named('flavor', flavors, len(flavors))]
                     if flavors else [])
            users += [_named('instance', shown, count)] if count else []
            raise InUse('tier %r is used by %s'
                        % (name, ' and '.join(users)))
        session.delete(row)
        return shown, count


# Flavor guarantee cache

def cache_flavor(engine, flavor_id, flavor_name, guarantee=None, error=None,
                 fetched_at=None):
    """Remember what flavor ``flavor_id`` resolved to: ``guarantee``, or
    the one-line ``error`` that made it invalid."""
    _check_length('flavor id', flavor_id, models.NAME_LENGTH)
    _check_length('flavor name', flavor_name, models.NAME_LENGTH)
    if (guarantee is None) == (error is None):
        raise ValueError('give a guarantee or an error, not both or none')
    values = dict(flavor_name=flavor_name, fetched_at=_utc(fetched_at))
    if guarantee is not None:
        values.update(_rates(guarantee), tier=guarantee.tier, error=None)
    else:
        values.update(_rates(model.NO_GUARANTEE), tier='',
                      error=str(error)[:models.REASON_LENGTH])
    with _session(engine) as session, session.begin():
        row = session.get(models.FlavorGuarantee, flavor_id)
        if row is None:
            session.add(models.FlavorGuarantee(flavor_id=flavor_id,
                                               **values))
        else:
            for key, value in values.items():
                setattr(row, key, value)


def cached_flavor(engine, flavor_name, max_age_s=None, now=None):
    """The newest cache entry of ``flavor_name``; None if there is none
    or it is older than ``max_age_s`` seconds."""
    with _session(engine) as session:
        row = session.scalars(
            sa.select(models.FlavorGuarantee)
            .where(models.FlavorGuarantee.flavor_name == flavor_name)
            .order_by(models.FlavorGuarantee.fetched_at.desc())
            .limit(1)).first()
        if row is None:
            return None
        if max_age_s is not None:
            age = (_utc(now) - row.fetched_at).total_seconds()
            if age > max_age_s:
                return None
        return CachedFlavor(
            flavor_id=row.flavor_id, flavor_name=row.flavor_name,
            guarantee=(None if row.error is not None
                       else _guarantee(row, row.tier)),
            error=row.error, fetched_at=row.fetched_at)


def forget_flavors(engine, fetched_before):
    """Drop cache entries fetched before ``fetched_before``; the count."""
    with _session(engine) as session, session.begin():
        return session.execute(
            sa.delete(models.FlavorGuarantee)
            .where(models.FlavorGuarantee.fetched_at < _utc(fetched_before))
        ).rowcount


# Stored again at a heartbeat

# A decision (or a storage domain's load) that has not changed is stored
# again after this many seconds anyway, so the history shows the
# controller was alive and still of the same mind (and purging never
# leaves a long-lived cap with no record).
HEARTBEAT_S = 300.0

# Longest duration accepted (heartbeat, purge age): ten years, far past
# any retention, still well inside datetime's range.
MAX_DURATION_S = 10 * 365 * 86400


def _seconds(name, value):
    """A duration: finite, >= 0, at most ten years."""
    if (isinstance(value, bool) or not isinstance(value, (int, float))
            or not 0 <= value <= MAX_DURATION_S):
        raise ValueError('%s must be a number of seconds in [0, %d], got %r'
                         % (name, MAX_DURATION_S, value))
    return float(value)


def _heartbeat(heartbeat_s):
    return datetime.timedelta(seconds=_seconds('heartbeat_s', heartbeat_s))


def _within(stored_at, when, heartbeat):
    """Whether what was stored at ``stored_at`` (None: never) is younger
    than ``heartbeat`` at ``when``: unchanged, it need not be stored
    again yet."""
    return stored_at is not None and when - stored_at < heartbeat


# Storage domains

# A storage domain's load is stored again when it moved by more than
# this fraction of the domain's capacity (one percentage point): a
# relative test would write an idle domain's every wobble (3 -> 3.5
# IOPS is 17 %).
LOAD_TOLERANCE = 0.01

# The columns record_domain_load writes, as StorageDomain names them.
_LOAD_COLUMNS = ('load_iops', 'load_bytes_sec', 'load_fraction',
                 'saturated', 'load_disks', 'load_caps', 'load_at',
                 'policy_max_iops', 'policy_max_bytes_sec')


def _optional_rate(name, value):
    """``_rate`` of ``value``, or None when there is none."""
    return None if value is None else _rate(name, value)


def _domain(row):
    return StorageDomain(
        key=row.key, max_iops=row.max_iops, max_bytes_sec=row.max_bytes_sec,
        capacity_source=row.capacity_source, peak_iops=row.peak_iops,
        peak_bytes_sec=row.peak_bytes_sec, updated_at=row.updated_at,
        **{name: getattr(row, name) for name in _LOAD_COLUMNS})


def _domain_row(session, key):
    _check_length('storage domain key', key, models.NAME_LENGTH)
    row = session.get(models.StorageDomain, key)
    if row is None:
        row = models.StorageDomain(
            key=key, max_iops=0.0, max_bytes_sec=0.0,
            capacity_source=models.CAPACITY_LEARNED, peak_iops=0.0,
            peak_bytes_sec=0.0)
        session.add(row)
    return row


def declare_capacity(engine, key, max_iops, max_bytes_sec):
    """The operator's capacity of storage domain ``key`` (from config):
    used from now on instead of the learned peak.  ValueError naming the
    field for a value that is not a number in (0, tiers.MAX_VALUE]."""
    capacity = model.Capacity(max_iops=_rate('max_iops', max_iops),
                              max_bytes_sec=_rate('max_bytes_sec',
                                                  max_bytes_sec))
    with _session(engine) as session, session.begin():
        row = _domain_row(session, key)
        row.max_iops = float(capacity.max_iops)
        row.max_bytes_sec = float(capacity.max_bytes_sec)
        row.capacity_source = models.CAPACITY_CONFIG
        row.updated_at = models.utcnow()
        return _domain(row)


def learn_peak(engine, key, iops, bytes_sec, capacity=None):
    """Record the peak throughput of storage domain ``key``: one
    interval's total, which replaces the one stored (the conductor
    records a peak only when its load grew,
    ``iothrottle.conductor.core.Capacities``: the IOPS of one interval
    and the bytes of another are no total the domain did).  A domain
    whose capacity was not declared shows ``capacity`` (a Capacity: what
    the conductor derives from the peak,
    ``iothrottle.conductor.core.peak_capacity``) as its learned
    capacity; None shows the peak pair itself.  Returns the domain.
    """
    iops, bytes_sec = _rate('iops', iops), _rate('bytes_sec', bytes_sec)
    learned = _learned(key, capacity)
    with _session(engine) as session, session.begin():
        return _domain(_learn_peak(_domain_row(session, key), iops,
                                   bytes_sec, learned))


def _learned(key, capacity):
    """A learned ``capacity`` (Capacity or None) as a checked
    ``(max_iops, max_bytes_sec)`` pair, or None."""
    if capacity is None:
        return None
    try:
        return (_rate('max_iops', capacity.max_iops),
                _rate('max_bytes_sec', capacity.max_bytes_sec))
    except (AttributeError, ValueError) as exc:
        raise ValueError('storage domain %r: learned capacity %s'
                         % (key, exc)) from None


def _learn_peak(row, iops, bytes_sec, learned=None):
    """learn_peak's update of ``row`` (values checked; ``learned``: the
    checked capacity pair, None for the peak's)."""
    row.peak_iops, row.peak_bytes_sec = iops, bytes_sec
    if row.capacity_source == models.CAPACITY_LEARNED:
        row.max_iops, row.max_bytes_sec = (
            (iops, bytes_sec) if learned is None else learned)
    row.updated_at = models.utcnow()
    return row


def reset_peak(engine, key):
    """Forget the throughput learned on storage domain ``key`` (a peak
    poisoned by a bogus report, or hardware replaced): its peaks become
    0, and so does a learned capacity until it is learned again; a
    declared capacity stays.  Returns the domain; raises NotFound."""
    with _session(engine) as session, session.begin():
        row = session.get(models.StorageDomain, key)
        if row is None:
            raise NotFound('no storage domain %r' % (key,))
        row.peak_iops = row.peak_bytes_sec = 0.0
        if row.capacity_source == models.CAPACITY_LEARNED:
            row.max_iops = row.max_bytes_sec = 0.0
        row.updated_at = models.utcnow()
        return _domain(row)


def _rate(name, value):
    """A measured rate: a number >= 0 (not a string of one)."""
    if isinstance(value, str):
        raise ValueError('%s must be a number >= 0, got %r'
                         % (name, value[:40]))
    try:
        return tiers_mod.parse_number(value)
    except ValueError as exc:
        raise ValueError('%s %s' % (name, exc)) from None


def _count(name, value):
    """A count: an int >= 0 (not a bool)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError('%s must be an integer >= 0, got %r'
                         % (name, value))
    return value


def _load_changed(row, load):
    """Whether ``load`` (a model.DomainLoad) differs noticeably from the
    one stored in ``row``: its fraction moved by more than
    LOAD_TOLERANCE of the capacity, saturation flipped, or the number of
    disks or caps changed."""
    return (row.load_fraction is None
            or abs(row.load_fraction - load.load) > LOAD_TOLERANCE
            or bool(row.saturated) != bool(load.saturated)
            or row.load_disks != load.disks or row.load_caps != load.caps
            or _capacity_changed(row.policy_max_iops, load.capacity))


def _capacity_changed(stored_iops, capacity):
    """Whether the policy's capacity appeared, went, or moved by more
    than LOAD_TOLERANCE of itself."""
    if capacity is None or stored_iops is None:
        return (capacity is None) != (stored_iops is None)
    return abs(capacity.max_iops - stored_iops) > (LOAD_TOLERANCE
                                                   * stored_iops)


def record_domain_load(engine, key, load, measured_at=None,
                       heartbeat_s=HEARTBEAT_S):
    """Store ``load`` (a :class:`iothrottle.controller.model.DomainLoad`)
    as the last round of storage domain ``key``, measured at
    ``measured_at`` (default now), when it changed noticeably
    (:func:`_load_changed`) or the stored one is ``heartbeat_s`` seconds
    old or older: a 5 s interval does not write every round.  Returns
    whether it was stored.  An unknown domain is created (learned, no
    capacity yet); its ``updated_at`` stays the time of its capacity.
    ValueError naming the field for a value out of range."""
    return bool(record_domain_loads(engine, {key: load}, measured_at,
                                    heartbeat_s))


# Storage domains read in one SELECT by record_domain_loads: a bounded
# IN list (MariaDB and SQLite take far more; a round of 5,000 domains is
# ten statements, not 5,000).
LOAD_BATCH = 500


def record_domain_loads(engine, loads, measured_at=None,
                        heartbeat_s=HEARTBEAT_S):
    """:func:`record_domain_load` for ``loads`` ({key: DomainLoad}) in
    one transaction (a round of a 10k-instance cloud has a thousand
    domains: one transaction each took longer than the interval).
    Returns how many were stored; ValueError naming the domain and field
    of a value out of range, before anything is written."""
    values = _load_values(loads, _utc(measured_at))
    with _session(engine) as session, session.begin():
        return _store_loads(_domain_rows(session, values), loads, values,
                            _heartbeat(heartbeat_s))


def _domain_rows(session, keys):
    """{key: StorageDomain row} of ``keys`` (checked), read LOAD_BATCH at
    a time, the unknown ones created (learned, no capacity yet)."""
    keys = sorted(keys)
    rows = {}
    with session.no_autoflush:
        for start in range(0, len(keys), LOAD_BATCH):
            batch = keys[start:start + LOAD_BATCH]
            rows.update((row.key, row) for row in session.scalars(
                sa.select(models.StorageDomain)
                .where(models.StorageDomain.key.in_(batch))))
        for key in keys:
            if key not in rows:
                rows[key] = _domain_row(session, key)
    return rows


def _load_values(loads, when):
    """The checked column values of ``loads`` ({key: DomainLoad}) at
    ``when``; ValueError naming the domain (when several) and field."""
    values = {}
    for key, load in loads.items():
        _check_length('storage domain key', key, models.NAME_LENGTH)
        try:
            values[key] = dict(
                load_iops=_rate('iops', load.iops),
                load_bytes_sec=_rate('bytes_sec', load.bytes_sec),
                load_fraction=_rate('load', load.load),
                saturated=bool(load.saturated),
                load_disks=_count('disks', load.disks),
                load_caps=_count('caps', load.caps),
                load_at=when,
                policy_max_iops=_optional_rate(
                    'capacity max_iops',
                    load.capacity and load.capacity.max_iops),
                policy_max_bytes_sec=_optional_rate(
                    'capacity max_bytes_sec',
                    load.capacity and load.capacity.max_bytes_sec))
        except ValueError as exc:
            if len(loads) == 1:
                raise
            raise ValueError('storage domain %s: %s' % (key, exc)) from None
    return values


def _store_loads(rows, loads, values, heartbeat):
    """record_domain_loads's updates of ``rows`` ({key: row}); how many
    stored."""
    stored = 0
    for key in sorted(values):
        row = rows[key]
        if (_within(row.load_at, values[key]['load_at'], heartbeat)
                and not _load_changed(row, loads[key])):
            continue
        for name, value in values[key].items():
            setattr(row, name, value)
        if row.updated_at is not None:   # stored: keep it as it is
            # (in the UPDATE's SET, its onupdate does not fire)
            orm.attributes.flag_modified(row, 'updated_at')
        stored += 1
    return stored


def storage_domains(engine):
    """Every known storage domain, by key."""
    with _session(engine) as session:
        return [_domain(row) for row in session.scalars(
            sa.select(models.StorageDomain)
            .order_by(models.StorageDomain.key))]


def get_storage_domain(engine, key):
    """Storage domain ``key``; raises NotFound."""
    with _session(engine) as session:
        row = session.get(models.StorageDomain, key)
        if row is None:
            raise NotFound('no storage domain %r' % (key,))
        return _domain(row)


# Instances

def _check_instance(record):
    _check_length('instance uuid', record.instance_uuid, 36)
    _check_length('project id', record.project_id, models.NAME_LENGTH)
    if record.tier:
        _check_length('tier', record.tier, models.TIER_NAME_LENGTH)


def record_instances(engine, records, seen_at=None):
    """Store ``records`` (InstanceRecord objects; their ``seen_at`` is
    ignored) as seen at ``seen_at`` (default now), replacing what was
    stored for the same uuids.  ValueError for a malformed field."""
    records = list(records)
    for record in records:
        _check_instance(record)
    when = _utc(seen_at)
    with _session(engine) as session, session.begin():
        uuids = [record.instance_uuid for record in records]
        rows = {row.instance_uuid: row for row in session.scalars(
            sa.select(models.Instance)
            .where(models.Instance.instance_uuid.in_(uuids)))}
        for record in records:
            row = rows.get(record.instance_uuid)
            if row is None:
                row = models.Instance(instance_uuid=record.instance_uuid)
                session.add(row)
                rows[record.instance_uuid] = row
            row.project_id = record.project_id
            row.tier = record.tier or ''
            row.seen_at = when


def get_instance(engine, instance_uuid):
    """The InstanceRecord of ``instance_uuid``; raises NotFound."""
    with _session(engine) as session:
        row = session.get(models.Instance, instance_uuid)
        if row is None:
            raise NotFound('no instance %r recorded' % (instance_uuid,))
        return InstanceRecord(instance_uuid=row.instance_uuid,
                              project_id=row.project_id, tier=row.tier,
                              seen_at=row.seen_at)


def forget_instances(engine, seen_before):
    """Drop instances last seen before ``seen_before``; the count."""
    with _session(engine) as session, session.begin():
        return session.execute(
            sa.delete(models.Instance)
            .where(models.Instance.seen_at < _utc(seen_before))).rowcount


# Decisions

# A cap within this fraction of the stored one is the same cap: the
# policies re-derive caps from noisy rates every interval, and a 0.3 %
# wobble is not a decision an operator needs to read.
CAP_TOLERANCE = 0.01


def _check_decision(decision):
    _check_length('instance uuid', decision.instance_uuid, 36)
    _check_length('device', decision.device, 64)
    if decision.action not in (model.CAP, model.RELEASE):
        raise ValueError('action must be %r or %r, got %r'
                         % (model.CAP, model.RELEASE, decision.action))


def _close(stored, new):
    """Whether limit ``new`` is ``stored`` within CAP_TOLERANCE (0, no
    limit, is only close to 0)."""
    stored, new = stored or 0.0, new or 0.0
    if not stored or not new:
        return stored == new
    return abs(stored - new) <= CAP_TOLERANCE * max(stored, new)


def _same_decision(row, storage_domain, decision, policy):
    """Whether stored ``row`` says what ``decision`` says (its reason
    aside: the numbers in a reason change every interval)."""
    if (row.action != decision.action or row.storage_domain != storage_domain
            or row.policy != policy):
        return False
    cap = decision.cap
    return _close(row.cap_iops, cap.iops if cap is not None else None) and \
        _close(row.cap_bytes_sec, cap.bytes_sec if cap is not None else None)


def _last_decisions(session, uuids):
    """{(instance_uuid, device): newest stored row} of the disks of the
    instances ``uuids``, in one query."""
    uuids = sorted(uuids)
    if not uuids:
        return {}
    newest = (sa.select(sa.func.max(models.Decision.id))
              .where(models.Decision.instance_uuid.in_(uuids))
              .group_by(models.Decision.instance_uuid,
                        models.Decision.device))
    return {(row.instance_uuid, row.device): row
            for row in session.scalars(sa.select(models.Decision).where(
                models.Decision.id.in_(newest.scalar_subquery())))}


def _lease_expiry(when, decision):
    if decision.lease_s > 0:
        return when + datetime.timedelta(seconds=decision.lease_s)
    return None


def record_decisions(engine, storage_domain, decisions, policy,
                     decided_at=None, heartbeat_s=HEARTBEAT_S):
    """Store what changed in ``decisions`` (model.Decision) of one
    interval of ``storage_domain``, decided by ``policy``; returns how
    many rows were stored.

    A disk's decision is stored when its action, policy, storage domain
    or a cap limit (beyond CAP_TOLERANCE) differs from the last one
    stored for the disk, or when that one is ``heartbeat_s`` seconds old
    or older.  An unchanged cap only extends the lease of the stored row,
    so "throttle why" still tells whether it is in force; a cap whose
    stored lease has ended (it lapsed, or :func:`end_caps` ended it) is
    a new cap, stored as a row of its own.
    """
    _check_decisions(storage_domain, decisions)
    with _session(engine) as session, session.begin():
        return _store_decisions(session, storage_domain, decisions,
                                str(policy)[:64], _utc(decided_at),
                                _heartbeat(heartbeat_s))


def _check_decisions(storage_domain, decisions):
    _check_length('storage domain key', storage_domain, models.NAME_LENGTH)
    for decision in decisions:
        _check_decision(decision)


def _store_decisions(session, storage_domain, decisions, policy, when,
                     heartbeat):
    """record_decisions's rows in ``session`` (checked); how many."""
    last = _last_decisions(session, {decision.instance_uuid
                                     for decision in decisions})
    rows, renewed = [], {}
    for decision in decisions:
        row = last.get((decision.instance_uuid, decision.device))
        if (row is not None and _within(row.decided_at, when, heartbeat)
                and _same_decision(row, storage_domain, decision, policy)
                and not _ended(row, when)):
            if decision.action == model.CAP:
                renewed.setdefault(_lease_expiry(when, decision),
                                   []).append(row.id)
            continue
        cap = decision.cap
        rows.append(models.Decision(
            decided_at=when, storage_domain=storage_domain,
            instance_uuid=decision.instance_uuid,
            device=decision.device, action=decision.action,
            cap_iops=cap.iops if cap is not None else None,
            cap_bytes_sec=cap.bytes_sec if cap is not None else None,
            lease_expires_at=_lease_expiry(when, decision),
            reason=str(decision.reason)[:models.REASON_LENGTH],
            policy=policy))
    for expires, ids in renewed.items():
        session.execute(sa.update(models.Decision)
                        .where(models.Decision.id.in_(ids))
                        .values(lease_expires_at=expires))
    session.add_all(rows)
    return len(rows)


def record_round(engine, decisions, peaks, loads, policy, when=None,
                 heartbeat_s=HEARTBEAT_S, learned=None):
    """A conductor's round in one transaction (one commit, where one per
    domain took longer than the interval at a thousand domains):
    ``decisions`` ({domain: [Decision]}, as :func:`record_decisions`),
    grown ``peaks`` ({domain: (iops, bytes_sec)}, as :func:`learn_peak`,
    with ``learned`` {domain: Capacity} the capacities derived from them)
    and ``loads`` ({domain: DomainLoad}, as
    :func:`record_domain_loads`).  Everything is checked before anything
    is written (ValueError naming the domain and field); returns the
    number of decision rows stored."""
    when = _utc(when)
    heartbeat = _heartbeat(heartbeat_s)
    policy = str(policy)[:64]
    for domain, domain_decisions in decisions.items():
        _check_decisions(domain, domain_decisions)
    checked_peaks = {}
    for domain, (iops, bytes_sec) in peaks.items():
        _check_length('storage domain key', domain, models.NAME_LENGTH)
        checked_peaks[domain] = (_rate('iops', iops),
                                 _rate('bytes_sec', bytes_sec),
                                 _learned(domain, (learned or {}).get(domain)))
    values = _load_values(loads, when)
    stored = 0
    with _session(engine) as session, session.begin():
        rows = _domain_rows(session, set(checked_peaks) | set(values))
        for domain, domain_decisions in sorted(decisions.items()):
            stored += _store_decisions(session, domain, domain_decisions,
                                       policy, when, heartbeat)
        for domain, peak in sorted(checked_peaks.items()):
            _learn_peak(rows[domain], *peak)
        _store_loads(rows, loads, values, heartbeat)
    return stored


def _ended(row, when):
    """Whether stored cap ``row``'s lease had ended by ``when``."""
    return (row.action == model.CAP and row.lease_expires_at is not None
            and row.lease_expires_at <= when)


def end_caps(engine, disk_ids, ended_at=None):
    """End at ``ended_at`` (None: now) the stored caps of ``disk_ids``
    (``<uuid>/<device>``) whose lease runs past it: their agents report
    them no longer in force.  A disk whose newest decision is a release,
    or a cap ended already, is left alone.  Returns how many ended."""
    when = _utc(ended_at)
    keys = set()
    for disk_id in disk_ids:
        uuid, sep, device = str(disk_id).partition('/')
        if sep:
            keys.add((uuid, device))
    if not keys:
        return 0
    with _session(engine) as session, session.begin():
        last = _last_decisions(session, {uuid for uuid, _ in keys})
        rows = [row for key, row in last.items()
                if key in keys and row.action == model.CAP
                and (row.lease_expires_at is None
                     or row.lease_expires_at > when)]
        for row in rows:
            # Never before the cap was stored (a writer behind the
            # rounds stores a cap after the round that saw it lifted).
            row.lease_expires_at = max(when, row.decided_at)
    return len(rows)


def _record(row):
    return DecisionRecord(
        decided_at=row.decided_at, storage_domain=row.storage_domain,
        instance_uuid=row.instance_uuid, device=row.device,
        action=row.action, cap_iops=row.cap_iops,
        cap_bytes_sec=row.cap_bytes_sec,
        lease_expires_at=row.lease_expires_at, reason=row.reason,
        policy=row.policy)


def decisions_for_instance(engine, instance_uuid, limit=20):
    """The newest ``limit`` decisions about ``instance_uuid``, newest
    first: why it is (or was) throttled."""
    return list_decisions(engine, instance_uuid=instance_uuid, limit=limit)


def list_decisions(engine, storage_domain=None, instance_uuid=None,
                   since=None, limit=100):
    """The newest ``limit`` decisions, newest first, of storage domain
    ``storage_domain`` and instance ``instance_uuid`` (None: any),
    decided at or after ``since`` (None: any time)."""
    query = sa.select(models.Decision)
    if storage_domain is not None:
        query = query.where(models.Decision.storage_domain == storage_domain)
    if instance_uuid is not None:
        query = query.where(models.Decision.instance_uuid == instance_uuid)
    if since is not None:
        query = query.where(models.Decision.decided_at >= _utc(since))
    with _session(engine) as session:
        return [_record(row) for row in session.scalars(
            query.order_by(models.Decision.decided_at.desc(),
                           models.Decision.id.desc())
            .limit(limit))]


def latest_decisions(engine, storage_domain=None):
    """The newest decision of every disk (of ``storage_domain``; None:
    of any), by instance uuid and device: the disks the controller acted
    on there, and whether a cap is in force (``action`` 'cap' with a
    lease not expired)."""
    newest = sa.select(sa.func.max(models.Decision.id))
    if storage_domain is not None:
        newest = newest.where(
            models.Decision.storage_domain == storage_domain)
    newest = newest.group_by(models.Decision.instance_uuid,
                             models.Decision.device)
    with _session(engine) as session:
        return [_record(row) for row in session.scalars(
            sa.select(models.Decision)
            .where(models.Decision.id.in_(newest.scalar_subquery()))
            .order_by(models.Decision.instance_uuid,
                      models.Decision.device))]


def purge_decisions(engine, older_than):
    """Delete decisions made before ``older_than``; the count."""
    with _session(engine) as session, session.begin():
        return session.execute(
            sa.delete(models.Decision)
            .where(models.Decision.decided_at < _utc(older_than))).rowcount


@dataclasses.dataclass(frozen=True)
class Purged:
    """What :func:`purge` deleted."""
    decisions: int
    flavors: int
    instances: int = 0


def purge(engine, older_than_s, now=None):
    """Delete decisions made, flavor cache entries fetched and instances
    last seen more than ``older_than_s`` seconds before ``now``; the
    counts.  A cap in force keeps its newest row as long as
    ``older_than_s`` exceeds record_decisions' heartbeat (which stores it
    again), a running instance its record as long as it exceeds the
    directory's RECORD_EVERY_S (an hour)."""
    before = _utc(now) - datetime.timedelta(
        seconds=_seconds('older_than_s', older_than_s))
    return Purged(decisions=purge_decisions(engine, before),
                  flavors=forget_flavors(engine, before),
                  instances=forget_instances(engine, before))


# Cinder pools

@dataclasses.dataclass(frozen=True)
class PoolRecord:
    """A Cinder pool's stored profile and what is placed on it."""
    pool: str
    profile: object
    scheduler: str
    volumes: tuple
    updated_at: datetime.datetime


def _profile(row):
    try:
        return profile_mod.loads(row.profile)
    except ValueError as exc:
        raise ValueError('pool %r: stored profile: %s'
                         % (row.pool, exc)) from None


def set_pool_profile(engine, pool, profile, scheduler=None):
    """Store ``profile`` (an ``iothrottle.seekmodel`` profile) as the
    device of Cinder pool ``pool`` behind I/O ``scheduler`` (None:
    unknown), replacing what was there.  ValueError (one line) for a
    malformed pool name, profile or scheduler."""
    placement.PoolState(pool=pool, profile=profile, scheduler=scheduler)
    text = profile_mod.dumps(profile)
    with _session(engine) as session, session.begin():
        row = session.get(models.PoolProfile, pool)
        if row is None:
            session.add(models.PoolProfile(pool=pool, profile=text,
                                           scheduler=scheduler))
        else:
            row.profile = text
            row.scheduler = scheduler
            row.updated_at = models.utcnow()


def _volume(row):
    return placement.Volume(
        volume_id=row.volume_id, size_bytes=row.size_bytes,
        min_iops=row.min_iops, min_bytes_sec=row.min_bytes_sec,
        offset_bytes=row.offset_bytes, read_fraction=row.read_fraction,
        outstanding_requests=row.outstanding_requests)


def _pool_volumes(session, pools=None):
    """{pool: (Volume, ...)} in placement order."""
    query = sa.select(models.PoolVolume).order_by(
        models.PoolVolume.pool, models.PoolVolume.recorded_at,
        models.PoolVolume.volume_id)
    if pools is not None:
        query = query.where(models.PoolVolume.pool.in_(pools))
    found = {}
    for row in session.scalars(query):
        found.setdefault(row.pool, []).append(_volume(row))
    return {pool: tuple(volumes) for pool, volumes in found.items()}


def pool_profiles(engine):
    """Every pool with a profile, by name, with its volumes."""
    with _session(engine) as session:
        volumes = _pool_volumes(session)
        return [PoolRecord(pool=row.pool, profile=_profile(row),
                           scheduler=row.scheduler,
                           volumes=volumes.get(row.pool, ()),
                           updated_at=row.updated_at)
                for row in session.scalars(
                    sa.select(models.PoolProfile)
                    .order_by(models.PoolProfile.pool))]


def get_pool(engine, pool):
    """The PoolRecord of ``pool``; raises NotFound if it has no
    profile."""
    with _session(engine) as session:
        row = session.get(models.PoolProfile, pool)
        if row is None:
            raise NotFound('no pool %r' % (pool,))
        return PoolRecord(pool=row.pool, profile=_profile(row),
                          scheduler=row.scheduler,
                          volumes=_pool_volumes(session, [pool]).get(
                              pool, ()),
                          updated_at=row.updated_at)


def pool_states(engine, pools):
    """``{pool: placement.PoolState}`` of the pools in ``pools`` that
    have a profile; the others are left out (unknown to the model)."""
    pools = sorted(set(pools))
    with _session(engine) as session:
        rows = session.scalars(sa.select(models.PoolProfile).where(
            models.PoolProfile.pool.in_(pools))).all()
        volumes = _pool_volumes(session, [row.pool for row in rows])
        return {row.pool: placement.PoolState(
            pool=row.pool, profile=_profile(row),
            volumes=volumes.get(row.pool, ()), scheduler=row.scheduler)
            for row in rows}


def delete_pool(engine, pool):
    """Forget Cinder pool ``pool``: its profile and the volumes recorded
    on it (their count is returned).  Raises NotFound if there is
    neither."""
    with _session(engine) as session, session.begin():
        row = session.get(models.PoolProfile, pool)
        dropped = session.execute(
            sa.delete(models.PoolVolume)
            .where(models.PoolVolume.pool == pool)).rowcount
        if row is None and not dropped:
            raise NotFound('no pool %r' % (pool,))
        if row is not None:
            session.delete(row)
        return dropped


def record_pool_volume(engine, pool, volume, recorded_at=None):
    """Record ``volume`` (a ``placement.Volume``) as placed on Cinder pool
    ``pool``.  Raises ValueError for a malformed pool name, Exists if the
    volume is recorded already (on whichever pool)."""
    placement.check_pool_name(pool)
    _check_length('volume id', volume.volume_id, models.NAME_LENGTH)
    with _session(engine) as session, session.begin():
        row = session.get(models.PoolVolume, volume.volume_id)
        if row is not None:
            raise Exists('volume %r is recorded on pool %r'
                         % (volume.volume_id, row.pool))
        session.add(models.PoolVolume(
            volume_id=volume.volume_id, pool=pool,
            size_bytes=volume.size_bytes, offset_bytes=volume.offset_bytes,
            min_iops=volume.min_iops, min_bytes_sec=volume.min_bytes_sec,
            read_fraction=volume.read_fraction,
            outstanding_requests=volume.outstanding_requests,
            recorded_at=_utc(recorded_at)))


def forget_pool_volume(engine, volume_id):
    """Drop the record of ``volume_id``; returns its pool.  Raises
    NotFound."""
    with _session(engine) as session, session.begin():
        row = session.get(models.PoolVolume, volume_id)
        if row is None:
            raise NotFound('no volume %r recorded on any pool'
                           % (volume_id,))
        session.delete(row)
        return row.pool


def pool_volumes(engine):
    """``{volume_id: (pool, Volume)}`` of every recorded volume."""
    with _session(engine) as session:
        return {volume.volume_id: (pool, volume)
                for pool, volumes in _pool_volumes(session).items()
                for volume in volumes}


def follow_pool_volume(engine, pool, volume):
    """Make the record of ``volume`` (a ``placement.Volume``) say what
    Cinder says: on ``pool``, of its size and guarantee.  A volume
    recorded on the same pool keeps its place and stream (offset, read
    fraction, outstanding requests: the operator's); one moved to
    another pool joins it last, at no known offset.  Returns False if
    the record said so already.  ValueError for a malformed pool name or
    volume id."""
    placement.check_pool_name(pool)
    _check_length('volume id', volume.volume_id, models.NAME_LENGTH)
    with _session(engine) as session, session.begin():
        row = session.get(models.PoolVolume, volume.volume_id)
        if row is None:
            session.add(models.PoolVolume(
                volume_id=volume.volume_id, pool=pool,
                size_bytes=volume.size_bytes,
                offset_bytes=volume.offset_bytes,
                min_iops=volume.min_iops,
                min_bytes_sec=volume.min_bytes_sec,
                read_fraction=volume.read_fraction,
                outstanding_requests=volume.outstanding_requests,
                recorded_at=_utc(None)))
            return True
        same = (row.pool == pool and row.size_bytes == volume.size_bytes
                and row.min_iops == volume.min_iops
                and row.min_bytes_sec == volume.min_bytes_sec)
        if same:
            return False
        if row.pool != pool:
            row.pool = pool
            row.offset_bytes = None
            row.recorded_at = _utc(None)
        row.size_bytes = volume.size_bytes
        row.min_iops = volume.min_iops
        row.min_bytes_sec = volume.min_bytes_sec
        return True


# What place_volume takes besides the size and the guarantee: the
# optional fields of placement.Volume.
VOLUME_STREAM_KEYS = ('offset_bytes', 'read_fraction',
                      'outstanding_requests')
# Every value place_volume reads from ``values``.
VOLUME_KEYS = (('size_gib', 'min_iops', 'min_bytes_sec')
               + VOLUME_STREAM_KEYS)


def place_volume(engine, pool, volume_id, values, tier=None, name_of=str):
    """Record volume ``volume_id`` of ``values`` (``size_gib``, required,
    and optionally ``min_iops``, ``min_bytes_sec`` and
    VOLUME_STREAM_KEYS: numbers or strings of them) on Cinder pool
    ``pool``, with the guarantee of ``tier`` (None: none) overridden by
    the explicit ``min_*`` values, checked as a flavor's extra specs.
    Returns the Volume recorded.  ValueError (one line, the culprit as
    ``name_of(key)`` names it), Exists if the volume is recorded."""
    placement.check_pool_name(pool)
    numbers = {}
    for key in VOLUME_KEYS:
        if values.get(key) is not None:
            try:
                numbers[key] = tiers_mod.parse_number(values[key])
            except ValueError as exc:
                raise ValueError('%s: %s' % (name_of(key), exc)) from None
    if 'size_gib' not in numbers:
        raise ValueError('%s: required' % name_of('size_gib'))
    known = list_tiers(engine)
    if tier is not None and tier not in known:
        raise ValueError('%s: unknown tier %s (known: %s)'
                         % (name_of('tier'), tiers_mod.shown(tier),
                            tiers_mod.listed(known)))
    specs = {extra_specs.PREFIX + key: numbers[key]
             for key in ('min_iops', 'min_bytes_sec') if key in numbers}
    if tier is not None:
        specs[extra_specs.TIER] = tier
    guarantee = extra_specs.guarantee_from_extra_specs(specs, known)
    volume = placement.Volume(
        volume_id=volume_id, size_bytes=numbers['size_gib'] * placement.GIB,
        min_iops=guarantee.min_iops, min_bytes_sec=guarantee.min_bytes_sec,
        **{key: numbers[key] for key in VOLUME_STREAM_KEYS
           if key in numbers})
    record_pool_volume(engine, pool, volume)
    return volume
