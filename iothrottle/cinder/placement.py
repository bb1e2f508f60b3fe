"""Where a new volume fits: the seek model in Cinder's scheduler (pure).

The problem
-----------
Cinder places a volume by free gigabytes; what its neighbours will get
from the disk is nobody's concern.  A volume type that promises
``iothrottle:min_iops`` (or a tier) is only worth something if the pool
can deliver the sum of its volumes' promises, and on a disk every
volume added lowers what the disk delivers: the head seeks between more
volumes, farther apart (seed 003).  How much depends on the host I/O
scheduler, which decides how often consecutive requests stay in one
volume (seed 001).  So the question for each candidate pool is: *with
the new volume on it, is the predicted throughput still at least the
sum of the guarantees placed there, and by how much?*

The model
---------
A pool is a device profile (``iothrottle.seekmodel``: a seek-distance
curve and alpha per scheduler for a disk, IOPS versus queue depth for
flash), the scheduler in front of it and the volumes placed on it, each
with its size, optional offset, guarantee and stream (1 synchronous
reader by default).  Volumes without a recorded offset are laid end to
end in placement order, the new one after them (``model.with_new_volume``).
``model.predict`` gives the pool's IOPS and bytes/s with the new volume
(seed 003's equation (1) and ``B = f(l_ave)`` on a disk; the harmonic
read/write mix on flash).  On each axis the headroom is::

    headroom = (predicted - promised) / predicted      (1 if nothing is
                                                        promised)

with ``promised`` the sum of ``min_iops`` (or ``min_bytes_sec``) of
every volume on the pool, the new one's included; the pool's headroom
is the tighter axis, clamped to [-1, 1].  The filter passes a pool whose
headroom is at least ``min_headroom_fraction`` (0: predicted >=
promised); the weigher's weight is the headroom itself on a fixed scale
(``MIN_WEIGHT``..``MAX_WEIGHT``), so the pool with the most room left
after placement wins, and a pool the conductor has no profile for gets
``NEUTRAL_WEIGHT``, the middle.  The new volume counts as a stream even
without a guarantee of its own: its I/O still moves the heads.

Worked numbers (seed 003's disk; ``tests/cinder`` ranks these pools)
--------------------------------------------------------------------
The WD1600JS profile (``etc/iothrottle/profiles/wd1600js.json``, 4 KiB
random reads, f(1 GB) = 453,000 B/s, f(20 GB) = 294,291, f(40 GB) =
257,334, straight lines between).  Pools A and B each hold two 20 GiB
volumes (21.47 GB) end to end promising 25 IOPS each; the new volume is
20 GiB with ``iothrottle:min_iops=25``, so 75 IOPS are promised.
Centres 10.74, 32.21 and 53.69 GB: ``l_ii`` = 10.74 GB, ``l_12`` =
``l_23`` = 21.47 GB, ``l_13`` = 42.95 GB.

* A, ``mq-deadline`` (alpha 0 in the profile, measured on the
  block-layer testbed: the interleaving of seed 003's Xen):
  ``l_ave`` = (1/3) x (1/2) x 2 x (21.47 + 42.95 + 21.47) = 28.63 GB,
  f = 278,338 B/s = 68.0 IOPS (71.2 before): headroom (68.0 - 75) /
  68.0 = **-0.10**, the filter rejects it.
* B, ``bfq`` (alpha 0.99 in the profile): ``l_ave`` = (1/3) (0.99 x 3 x
  10.74 + 0.01 / 2 x 171.8) = 10.92 GB, f = 370,167 B/s = 90.4 IOPS:
  headroom **0.17**.
* C, the same disk empty: ``l_ave`` = ``l_11`` = 10.74 GB, 90.7 IOPS,
  25 promised: headroom **0.72**.
* D, no profile: neutral, 0.

Cinder normalises on the fixed scale to (w + 1) / 2: C 0.86, B 0.59,
D 0.50, A 0.45.  The same two volumes on the same disk fit under one
scheduler and not under the other: what seed 001 and seed 003 say
together.

Not modelled: the request sizes and read/write mix of real workloads
(every stream is the profile's 4 KiB random reader unless recorded
otherwise), several disks behind one pool, and volumes placed since the
conductor last heard of them.  Nothing here does I/O or reads a clock.
"""

import dataclasses
import math
import re

from iothrottle import extra_specs
from iothrottle.seekmodel import model

# Cinder's unit of volume size: its "GB" are binary.
GIB = 1 << 30

# The weight scale.  Headroom is a fraction of the predicted throughput,
# at most 1 (nothing promised); promising twice what the pool delivers
# or more is as bad as it gets, so the scale stops at -1.  A fixed scale
# (not the spread of the pools at hand) keeps one weight comparable
# between requests and lets the weigher's multiplier mean the same thing
# whichever pools survive the filters.
MIN_WEIGHT = -1.0
MAX_WEIGHT = 1.0

# The middle of the scale, for a pool the model knows nothing about: it
# ranks below the pools known to keep their promises with room to spare
# and above those known to break them, so the weigher speaks only about
# pools it knows.
NEUTRAL_WEIGHT = 0.0

# A Cinder pool name as volumes' ``os-vol-host-attr:host`` shows it and
# the scheduler's pool states carry it: host@backend#pool.
POOL_NAME_PATTERN = r'[^@#\s]+@[^@#\s]+#[^#\s]+'

# The id of the volume being placed when Cinder's request has none.
NEW_VOLUME_ID = 'new'


def check_pool_name(pool):
    """``pool`` if it is a Cinder pool name, else a one-line ValueError."""
    if not isinstance(pool, str) or not re.fullmatch(POOL_NAME_PATTERN,
                                                     pool):
        raise ValueError('pool: must be a Cinder pool name host@backend#pool,'
                         ' got %r' % (pool if not isinstance(pool, str)
                                      else pool[:80],))
    return pool


def _number(owner, name, value, maximum=None):
    """``value`` as a float if it is a finite number >= 0 (<= maximum)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError('%s: %s must be a number, got %r'
                         % (owner, name, value))
    if not math.isfinite(value) or value < 0 or (
            maximum is not None and value > maximum):
        raise ValueError('%s: %s must be a finite number >= 0%s, got %r'
                         % (owner, name, '' if maximum is None
                            else ' and <= %g' % maximum, value))
    return float(value)


@dataclasses.dataclass(frozen=True)
class Volume:
    """One volume on a pool, or the one being placed.

    ``min_iops``/``min_bytes_sec``: its guarantee (0: none).
    ``offset_bytes``: where it starts on the device, None when unknown
    (then it lies right after the volumes before it).  ``read_fraction``
    and ``outstanding_requests``: its stream, as ``model.Stream`` has
    them (1 synchronous reader by default, seed 003's case; 0
    outstanding requests: idle, no part in the prediction).
    """
    volume_id: str
    size_bytes: float
    min_iops: float = 0.0
    min_bytes_sec: float = 0.0
    offset_bytes: float = None
    read_fraction: float = 1.0
    outstanding_requests: float = 1.0

    def __post_init__(self):
        if not isinstance(self.volume_id, str) or not self.volume_id:
            raise ValueError('volume: volume_id must be a non-empty string, '
                             'got %r' % (self.volume_id,))
        owner = 'volume %r' % self.volume_id
        for name in ('size_bytes', 'min_iops', 'min_bytes_sec',
                     'outstanding_requests'):
            object.__setattr__(self, name,
                               _number(owner, name, getattr(self, name)))
        object.__setattr__(self, 'read_fraction', _number(
            owner, 'read_fraction', self.read_fraction, maximum=1.0))
        if self.offset_bytes is not None:
            object.__setattr__(self, 'offset_bytes', _number(
                owner, 'offset_bytes', self.offset_bytes))


@dataclasses.dataclass(frozen=True)
class PoolState:
    """What the conductor knows of a pool: its device profile, the host
    I/O scheduler in front of it (HDD: picks the calibrated alpha; None:
    ``model.DEFAULT_ALPHA``) and the volumes placed on it, in the order
    they were placed."""
    pool: str
    profile: object
    volumes: tuple = ()
    scheduler: str = None

    def __post_init__(self):
        check_pool_name(self.pool)
        if not isinstance(self.profile, (model.HddProfile,
                                         model.FlashProfile)):
            raise ValueError('pool %r: profile must be an HDD or flash '
                             'profile, got %r' % (self.pool, self.profile))
        if self.scheduler is not None and (
                self.scheduler not in model.SCHEDULERS):
            raise ValueError('pool %r: scheduler: unknown scheduler %r '
                             '(known: %s)' % (self.pool, self.scheduler,
                                              ', '.join(model.SCHEDULERS)))
        volumes = tuple(self.volumes)
        for volume in volumes:
            if not isinstance(volume, Volume):
                raise ValueError('pool %r: volumes must be Volume objects, '
                                 'got %r' % (self.pool, volume))
        object.__setattr__(self, 'volumes', volumes)


@dataclasses.dataclass(frozen=True)
class Assessment:
    """The pool with the new volume, as predicted.

    ``promised_*``: the sum of the guarantees on the pool, the new
    volume's included; ``headroom_fraction``: the share of the predicted
    throughput left once every promise is kept, on the tighter axis, in
    [MIN_WEIGHT, MAX_WEIGHT]; ``passes``: whether that is at least the
    threshold; ``reason``: one line saying all of it.
    """
    pool: str
    volume_id: str
    before: model.Prediction
    after: model.Prediction
    promised_iops: float
    promised_bytes_sec: float
    headroom_fraction: float
    passes: bool
    reason: str

    @property
    def weight(self):
        return self.headroom_fraction


def streams(volumes, request_size_bytes):
    """The ``model.Stream`` of each volume, laid out on the device."""
    laid_out = ()
    for volume in volumes:
        laid_out = model.with_new_volume(
            laid_out, volume.size_bytes, offset_bytes=volume.offset_bytes,
            name=volume.volume_id, read_fraction=volume.read_fraction,
            outstanding_requests=volume.outstanding_requests,
            request_size_bytes=request_size_bytes)
    return laid_out


def promised(volumes):
    """``(sum of min_iops, sum of min_bytes_sec)`` of ``volumes``."""
    volumes = tuple(volumes)
    return (sum(v.min_iops for v in volumes),
            sum(v.min_bytes_sec for v in volumes))


def headroom_fraction(predicted, promised_rate):
    """``(predicted - promised) / predicted`` on one axis, in
    [MIN_WEIGHT, MAX_WEIGHT]: 1 when nothing is promised."""
    if promised_rate <= 0:
        return MAX_WEIGHT
    if predicted <= 0:
        return MIN_WEIGHT
    return max(MIN_WEIGHT, min(MAX_WEIGHT,
                               (predicted - promised_rate) / predicted))


def predict(state, volumes):
    """``model.predict`` for ``volumes`` on the pool of ``state``."""
    return model.predict(state.profile,
                         streams(volumes, state.profile.request_size_bytes),
                         scheduler=state.scheduler)


def assess(state, volume, min_headroom_fraction=0.0):
    """Place ``volume`` on the pool of ``state`` (a PoolState), in the
    model only: an Assessment.  The new volume joins after the placed
    ones unless it has an offset; it takes part in the prediction even
    with no guarantee of its own (its I/O still moves the heads)."""
    if not MIN_WEIGHT <= min_headroom_fraction <= MAX_WEIGHT:
        raise ValueError('min_headroom_fraction: must be in [%g, %g], got %r'
                         % (MIN_WEIGHT, MAX_WEIGHT, min_headroom_fraction))
    before = predict(state, state.volumes)
    placed = state.volumes + (volume,)
    after = predict(state, placed)
    iops, bytes_sec = promised(placed)
    headroom = min(headroom_fraction(after.iops, iops),
                   headroom_fraction(after.bandwidth_bytes_sec, bytes_sec))
    passes = headroom >= min_headroom_fraction
    reason = ('pool %s with volume %s (%d volume(s)): predicted %.1f IOPS, '
              '%.0f B/s (now %.1f IOPS); promised %.1f IOPS, %.0f B/s; '
              'headroom %.2f %s %.2f' % (
                  state.pool, volume.volume_id, len(placed), after.iops,
                  after.bandwidth_bytes_sec, before.iops, iops, bytes_sec,
                  headroom, '>=' if passes else '<', min_headroom_fraction))
    return Assessment(pool=state.pool, volume_id=volume.volume_id,
                      before=before, after=after, promised_iops=iops,
                      promised_bytes_sec=bytes_sec,
                      headroom_fraction=headroom, passes=passes,
                      reason=reason)


def guarantee_for_type(type_extra_specs, qos_specs, known_tiers):
    """The Guarantee a volume type asks for: the ``iothrottle:`` keys of
    its QoS specs and of its extra specs (which win where both set a
    key), resolved as a flavor's (``extra_specs``), tiers from
    ``known_tiers``.  Raises ExtraSpecError naming the key."""
    merged = dict(extra_specs.own_specs(qos_specs))
    merged.update(extra_specs.own_specs(type_extra_specs))
    return extra_specs.guarantee_from_extra_specs(merged, known_tiers)


def _specs(value, what):
    """A dict of specs from what Cinder passes (dict, object, None)."""
    if value is None:
        return {}
    try:
        return dict(value)
    except (TypeError, ValueError):
        raise ValueError('%s: must be a mapping, got %s'
                         % (what, type(value).__name__)) from None


def volume_from_request(properties, known_tiers):
    """The Volume Cinder's scheduler is placing, from its filter (or
    weight) properties: ``size`` in GiB, ``volume_type.extra_specs``,
    ``qos_specs``, ``request_spec.volume_id``.  Raises ValueError (one
    line) when they are unusable."""
    size_gib = properties.get('size')
    if isinstance(size_gib, bool) or not isinstance(size_gib, (int, float)):
        raise ValueError('size: must be a number of GiB, got %r'
                         % (size_gib,))
    volume_type = properties.get('volume_type') or {}
    type_specs = _specs(volume_type.get('extra_specs'),
                        'volume_type.extra_specs')
    qos_specs = _specs(properties.get('qos_specs'), 'qos_specs')
    guarantee = guarantee_for_type(type_specs, qos_specs, known_tiers)
    request_spec = properties.get('request_spec') or {}
    volume_id = request_spec.get('volume_id') or NEW_VOLUME_ID
    return Volume(volume_id=str(volume_id), size_bytes=size_gib * GIB,
                  min_iops=guarantee.min_iops,
                  min_bytes_sec=guarantee.min_bytes_sec)
