"""The values that cross the balloon scheduler's boundary.

The compute agent turns libvirt balloon stats and guest cache reports
into one :class:`GuestMemory` per guest of a host; a balloon policy
answers with one :class:`BalloonTarget` per guest.  Every figure is in
MiB except the ratios; everything is validated on construction so a
policy never sees a negative size or a ratio above 1 - tenant-supplied
figures are checked by the shell before they get here, and again here.
"""

import dataclasses
import math

# Where a guest's cache utilization came from.
SOURCE_GUEST_AGENT = 'guest-agent'     # kernel counters read via QGA
SOURCE_MONITOR = 'monitor'             # iothrottle's in-guest monitor
SOURCE_HOST_ESTIMATE = 'host-estimate'  # balloon stats + disk reads only
SOURCES = (SOURCE_GUEST_AGENT, SOURCE_MONITOR, SOURCE_HOST_ESTIMATE)


def _check(owner, name, value, upper=math.inf):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError('%s: %s must be a number, got %r'
                         % (owner, name, value))
    if not math.isfinite(value) or value < 0 or value > upper:
        raise ValueError('%s: %s must be within [0, %s], got %r'
                         % (owner, name, upper, value))


@dataclasses.dataclass(frozen=True)
class GuestMemory:
    """One guest's memory over the last interval.

    ``current_mb`` is what the balloon lets the guest have now (libvirt's
    ``balloon.current``), ``max_mb`` its flavor memory, ``floor_mb`` the
    least the operator lets it shrink to, ``usable_mb`` what the guest
    could give up without swapping (``balloon.usable``: free memory plus
    reclaimable cache).  ``utilization`` is read-hit pages / cache pages
    over the interval (None: no report), ``read_rate`` the guest's read
    requests per second (the proportional policy's access frequency).
    """
    instance_uuid: str
    current_mb: float
    max_mb: float
    floor_mb: float
    usable_mb: float
    utilization: float = None
    read_rate: float = 0.0
    source: str = SOURCE_HOST_ESTIMATE
    name: str = ''

    def __post_init__(self):
        owner = 'memory of %s' % (self.name or self.instance_uuid)
        for field in ('current_mb', 'max_mb', 'floor_mb', 'usable_mb',
                      'read_rate'):
            _check(owner, field, getattr(self, field))
        if self.utilization is not None:
            _check(owner, 'utilization', self.utilization, upper=1.0)
        if self.source not in SOURCES:
            raise ValueError('%s: unknown source %r' % (owner, self.source))
        if self.floor_mb > self.max_mb:
            raise ValueError('%s: floor_mb (%r) exceeds max_mb (%r)'
                             % (owner, self.floor_mb, self.max_mb))


@dataclasses.dataclass(frozen=True)
class BalloonTarget:
    instance_uuid: str
    target_mb: float
    reason: str
