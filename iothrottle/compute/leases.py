"""The caps this agent has set, each a lease that runs out by itself.

A controller (local policy or remote conductor) grants a cap for
``lease_s`` seconds and renews it while it still wants it.  When a lease
expires the agent restores the disk's baseline on its own, so a lost
controller never leaves a VM throttled.  A lease remembers the baseline
(the operator's own limits) to restore, and a cap is clamped so it never
allows more than that baseline or the guarantee's ``max_*`` ceilings: the
operator's static Nova caps are an upper bound the agent never raises.

A lease is only as safe as its length: a controller (or whoever can cast
to the agent's topic) asking for a NaN, infinite or day-long lease would
throttle a VM for good.  So ``lease_s`` must be finite and > 0 (else the
grant is refused: such a number carries no intent worth honouring), and a
finite one is clamped into ``[min_lease_s, max_lease_s]`` (the agent's
``[controller] interval_s`` and ``[agent] max_lease_s``): a longer lease
still defends the guarantee while it is renewed, only never longer than
the operator allows; a shorter one would lapse before its renewal and
make the cap flap.  An expiry that is not a finite number is impossible.

Pure bookkeeping: the caller passes the time in.
"""

import dataclasses
import math

from iothrottle.compute import iotune as iotune_mod
from iothrottle.controller import model

# The longest lease a LeaseTable grants unless told otherwise: the
# default of [agent] max_lease_s (seconds), 4x the guarantee policy's
# 30 s lease and 2x the paper policy's 60 s cap time.
DEFAULT_MAX_LEASE_S = 120.0


@dataclasses.dataclass(frozen=True)
class Lease:
    """A cap in force on one disk until ``expires_at_s``."""
    disk_id: str
    cap: model.Cap
    expires_at_s: float
    baseline: iotune_mod.IoTune
    requested: model.Cap = None

    def __post_init__(self):
        if not _finite(self.expires_at_s):
            raise ValueError('lease of %s: expiry must be a finite number, '
                             'got %r' % (self.disk_id, self.expires_at_s))


def _finite(value):
    return (isinstance(value, (int, float)) and not isinstance(value, bool)
            and math.isfinite(value))


def bound_lease_s(disk_id, lease_s, min_lease_s, max_lease_s):
    """``lease_s`` clamped into ``[min_lease_s, max_lease_s]``.

    Raises ``ValueError`` naming the disk when ``lease_s`` is not a
    finite number > 0.
    """
    if not _finite(lease_s) or lease_s <= 0:
        raise ValueError('lease of %s: lease_s must be a finite number > 0, '
                         'got %r' % (disk_id, lease_s))
    return min(max(float(lease_s), min_lease_s), max_lease_s)


def clamp_cap(cap, baseline, guarantee=model.NO_GUARANTEE):
    """``cap`` held under the baseline limits and the guarantee's max_*.

    An axis the cap leaves unlimited (0) gets the tightest ceiling.
    """
    return model.Cap(
        iops=iotune_mod.clamp_rate(cap.iops, baseline.iops_ceiling,
                                   guarantee.max_iops),
        bytes_sec=iotune_mod.clamp_rate(cap.bytes_sec,
                                        baseline.bytes_ceiling,
                                        guarantee.max_bytes_sec))


class LeaseTable:
    """Disk id (``<uuid>/<device>``) to :class:`Lease`.

    Every lease granted lasts between ``min_lease_s`` and
    ``max_lease_s`` seconds (see the module docstring).
    """

    def __init__(self, min_lease_s=0.0, max_lease_s=DEFAULT_MAX_LEASE_S):
        if not (_finite(min_lease_s) and _finite(max_lease_s)
                and 0 <= min_lease_s <= max_lease_s and max_lease_s > 0):
            raise ValueError('lease bounds must be finite with 0 <= '
                             'min_lease_s <= max_lease_s, got [%r, %r]'
                             % (min_lease_s, max_lease_s))
        self.min_lease_s = float(min_lease_s)
        self.max_lease_s = float(max_lease_s)
        self._leases = {}

    def __contains__(self, disk_id):
        return disk_id in self._leases

    def __len__(self):
        return len(self._leases)

    def get(self, disk_id):
        return self._leases.get(disk_id)

    def caps(self):
        """``{disk_id: Cap}`` of every lease."""
        return {disk_id: lease.cap
                for disk_id, lease in self._leases.items()}

    def leases(self):
        return tuple(self._leases.values())

    def grant(self, disk_id, cap, lease_s, now_s, baseline,
              guarantee=model.NO_GUARANTEE):
        """Set or renew the lease of ``disk_id``; returns the Lease.

        A renewal keeps the baseline of the first grant: the live limits
        at that time are the operator's, later ones are ours.  ``lease_s``
        is bounded as :func:`bound_lease_s` says; ``now_s`` must be
        finite.
        """
        lease_s = bound_lease_s(disk_id, lease_s, self.min_lease_s,
                                self.max_lease_s)
        if not _finite(now_s):
            raise ValueError('lease of %s: now_s must be a finite number, '
                             'got %r' % (disk_id, now_s))
        previous = self._leases.get(disk_id)
        if previous is not None:
            baseline = previous.baseline
        lease = Lease(disk_id=disk_id,
                      cap=clamp_cap(cap, baseline, guarantee),
                      expires_at_s=now_s + lease_s, baseline=baseline,
                      requested=cap)
        self._leases[disk_id] = lease
        return lease

    def put(self, lease):
        """Put back a lease (undo a grant whose cap could not be set)."""
        self._leases[lease.disk_id] = lease

    def release(self, disk_id):
        """Forget the lease of ``disk_id``; returns it, or None."""
        return self._leases.pop(disk_id, None)

    def expired(self, now_s):
        """Leases whose time is up at ``now_s``, soonest first."""
        return tuple(sorted(
            (lease for lease in self._leases.values()
             if lease.expires_at_s <= now_s),
            key=lambda lease: lease.expires_at_s))
