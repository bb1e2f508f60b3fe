"""The values that cross the controller boundary.

The compute agent (or the conductor) turns libvirt counters into
:class:`DiskSample` objects, pairs each with the instance's
:class:`Guarantee` and the :class:`Cap` currently in force, and hands one
:class:`DomainView` per storage domain to a policy.  The policy answers
with :class:`Decision` objects.  Everything here is immutable and
validated on construction, so a policy never sees a negative rate or a
guarantee whose floor exceeds its ceiling.
"""

import dataclasses
import math

CAP = 'cap'
RELEASE = 'release'


def _check_rate(owner, name, value):
    """Reject a rate that is not a finite number >= 0, naming the field."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError('%s: %s must be a number, got %r'
                         % (owner, name, value))
    if not math.isfinite(value) or value < 0:
        raise ValueError('%s: %s must be a finite number >= 0, got %r'
                         % (owner, name, value))


@dataclasses.dataclass(frozen=True)
class Guarantee:
    """What an instance is promised on each of its disks.

    ``min_*`` are floors the controller never caps below; ``max_*`` are the
    operator's static ceilings (0 means none); ``weight`` shares spare
    capacity between capped instances.  ``min_memory_mb`` is not an I/O
    field: the least memory (MiB) the balloon agent leaves the guest (0
    means the ``[balloon] floor_fraction`` of its flavor memory).
    """
    min_iops: float = 0.0
    min_bytes_sec: float = 0.0
    max_iops: float = 0.0
    max_bytes_sec: float = 0.0
    weight: float = 1.0
    tier: str = ''
    min_memory_mb: float = 0.0

    def __post_init__(self):
        owner = 'guarantee' + (' of tier %r' % self.tier if self.tier else '')
        for name in ('min_iops', 'min_bytes_sec', 'max_iops',
                     'max_bytes_sec', 'weight', 'min_memory_mb'):
            _check_rate(owner, name, getattr(self, name))
        if self.weight <= 0:
            raise ValueError('%s: weight must be > 0, got %r'
                             % (owner, self.weight))
        for floor, ceiling in (('min_iops', 'max_iops'),
                               ('min_bytes_sec', 'max_bytes_sec')):
            if 0 < getattr(self, ceiling) < getattr(self, floor):
                raise ValueError('%s: %s (%r) exceeds %s (%r)' % (
                    owner, floor, getattr(self, floor), ceiling,
                    getattr(self, ceiling)))

    @property
    def is_empty(self):
        """No I/O floor (``min_memory_mb`` does not count)."""
        return self.min_iops == 0 and self.min_bytes_sec == 0


NO_GUARANTEE = Guarantee()


@dataclasses.dataclass(frozen=True)
class Capacity:
    """Linear cost model of a storage domain (see ``cost``)."""
    max_iops: float
    max_bytes_sec: float

    def __post_init__(self):
        for name in ('max_iops', 'max_bytes_sec'):
            _check_rate('capacity', name, getattr(self, name))
            if getattr(self, name) <= 0:
                raise ValueError('capacity: %s must be > 0' % name)


@dataclasses.dataclass(frozen=True)
class Cap:
    """A live I/O cap on one disk: libvirt's total_iops_sec and
    total_bytes_sec (0 means not limited on that axis)."""
    iops: float
    bytes_sec: float

    def __post_init__(self):
        _check_rate('cap', 'iops', self.iops)
        _check_rate('cap', 'bytes_sec', self.bytes_sec)

    @property
    def limits(self):
        """Whether it limits either axis: ``Cap(0, 0)`` is libvirt's
        "unlimited", a cap in name only."""
        return self.iops > 0 or self.bytes_sec > 0


@dataclasses.dataclass(frozen=True)
class MinimumCap:
    """The least a cap allows on each axis it limits.

    A limit of 0 means *unlimited* to libvirt, so a policy that wants a
    disk held as hard as it may be must still name a positive number;
    this is that number (``[controller] min_cap_iops`` and
    ``min_cap_bytes_sec``, argued in ``iothrottle.controller.guarantee``).
    """
    iops: float = 10.0
    bytes_sec: float = 1048576.0

    def __post_init__(self):
        for name in ('iops', 'bytes_sec'):
            _check_rate('minimum cap', name, getattr(self, name))
            if getattr(self, name) <= 0:
                raise ValueError('minimum cap: %s must be > 0' % name)

    def cap(self, iops, bytes_sec, guarantee=None):
        """A Cap of ``iops``/``bytes_sec`` raised to this minimum and to
        ``guarantee``'s floors on both axes: never 0, never under a
        floor."""
        g = guarantee or NO_GUARANTEE
        return Cap(iops=max(iops, g.min_iops, self.iops),
                   bytes_sec=max(bytes_sec, g.min_bytes_sec, self.bytes_sec))

    def axis(self, value, name):
        """One limit ``value`` on axis ``name`` ('iops' or 'bytes_sec')
        raised to this minimum."""
        return max(value, getattr(self, name))

    def raise_limits(self, cap, guarantee=None):
        """``cap`` with each limit it sets raised to this minimum and to
        ``guarantee``'s floor; an axis it leaves unlimited (0) stays
        so."""
        g = guarantee or NO_GUARANTEE
        return Cap(
            iops=(self.axis(max(cap.iops, g.min_iops), 'iops')
                  if cap.iops > 0 else 0.0),
            bytes_sec=(self.axis(max(cap.bytes_sec, g.min_bytes_sec),
                                 'bytes_sec')
                       if cap.bytes_sec > 0 else 0.0))


@dataclasses.dataclass(frozen=True)
class DiskSample:
    """One disk's I/O over the last interval, as the host saw it.

    Derived on construction: ``disk_id`` (``<instance_uuid>/<device>``),
    ``iops`` and ``bytes_sec`` (read plus write) and ``inflight``, the
    mean requests in flight over the interval (Little's law: ``iops x
    latency_s``).
    """
    instance_uuid: str
    device: str
    storage_domain: str
    interval_s: float
    read_iops: float = 0.0
    write_iops: float = 0.0
    read_bytes_sec: float = 0.0
    write_bytes_sec: float = 0.0
    latency_s: float = 0.0
    instance_name: str = ''
    flavor: str = ''

    def __post_init__(self):
        for name in _SAMPLE_RATES:
            value = getattr(self, name)
            # A float in [0, inf) passes (NaN fails both comparisons);
            # anything else gets the full check and its message.
            if type(value) is not float or not 0.0 <= value < math.inf:
                _check_rate('sample of %s/%s' % (self.instance_uuid,
                                                 self.device),
                            name, value)
        if self.interval_s <= 0:
            raise ValueError('sample of %s/%s: interval_s must be > 0'
                             % (self.instance_uuid, self.device))
        # Derived once here (the shell decodes on its RPC threads), not
        # on every read: a round reads each a dozen times per disk, and
        # as properties they were a tenth of a round at 10k disks.
        # Instance attributes beside the fields, so equality, repr and
        # dataclasses.replace (which recomputes them) see only fields;
        # set like the fields (through the instance's __dict__, reads of
        # every attribute were three times slower).
        derive = object.__setattr__
        derive(self, 'disk_id', '%s/%s' % (self.instance_uuid, self.device))
        iops = self.read_iops + self.write_iops
        derive(self, 'iops', iops)
        derive(self, 'bytes_sec', self.read_bytes_sec + self.write_bytes_sec)
        derive(self, 'inflight', iops * self.latency_s)


# The float fields of a sample, each checked by __post_init__.
_SAMPLE_RATES = tuple(field.name for field in dataclasses.fields(DiskSample)
                      if field.type == 'float' or field.type is float)


@dataclasses.dataclass(frozen=True, init=False)
class DiskInput:
    """A sample with what the controller must know about its owner
    (``disk_id``: the sample's)."""
    sample: DiskSample
    guarantee: Guarantee = NO_GUARANTEE
    cap: Cap = None

    def __init__(self, sample, guarantee=NO_GUARANTEE, cap=None):
        # Frozen all the same: set once, here, as the generated __init__
        # does, with disk_id beside the fields (as a property it cost a
        # call on each of its many reads a round).
        init = object.__setattr__
        init(self, 'sample', sample)
        init(self, 'guarantee', guarantee)
        init(self, 'cap', cap)
        init(self, 'disk_id', sample.disk_id)


@dataclasses.dataclass(frozen=True)
class DomainView:
    """Every disk of one storage domain over one interval."""
    storage_domain: str
    capacity: Capacity
    disks: tuple
    now_s: float


@dataclasses.dataclass(frozen=True)
class DomainLoad:
    """What one storage domain carried over one interval.

    ``iops``/``bytes_sec``: the totals of its disks; ``load``: the
    fraction of its capacity they take, as the policy measures load
    (against the capacity it learned, for ``guarantee``; see
    :class:`iothrottle.controller.policy.Outcome`); ``saturated``: as the
    policy judged it (``guarantee`` also by latency), else ``load`` at
    or above its saturation border; ``capacity``: the Capacity the
    policy measured ``load`` against when it learns its own (the
    ``guarantee`` policy's learned capacity), else None; ``disks``: the
    disks decided on; ``caps``: those under a cap once the interval's
    decisions are applied.
    """
    iops: float
    bytes_sec: float
    load: float
    saturated: bool
    disks: int
    caps: int
    capacity: Capacity = None


@dataclasses.dataclass(frozen=True)
class Decision:
    """Set (``CAP``) or lift (``RELEASE``) the cap on one disk.

    A cap is a lease: the agent lifts it by itself ``lease_s`` seconds
    after applying it unless a later decision renews it.
    """
    instance_uuid: str
    device: str
    action: str
    reason: str
    cap: Cap = None
    lease_s: float = 0.0

    @property
    def disk_id(self):
        return '%s/%s' % (self.instance_uuid, self.device)
