"""A disk's I/O limits as libvirt knows them, and how a cap maps onto them.

libvirt expresses limits as ``<iotune>`` elements in the domain XML and as
the typed parameters of ``virDomainSetBlockIoTune``; both use the same
names (``total_iops_sec``, ``read_bytes_sec`` ...).  The agent only ever
touches the six average-rate limits; bursts, request sizes and throttle
groups stay as the operator set them.

libvirt refuses a ``total_*`` limit together with a ``read_*``/``write_*``
limit on the same axis, so a cap on a disk whose baseline is split between
reads and writes is applied by scaling the split (see :func:`cap_params`).
Every function here is pure.
"""

import dataclasses
import math

# The limits the agent sets and restores; libvirt's parameter names.
RATE_KEYS = ('total_iops_sec', 'read_iops_sec', 'write_iops_sec',
             'total_bytes_sec', 'read_bytes_sec', 'write_bytes_sec')


def _limit(owner, name, value):
    """A libvirt limit as an int >= 0 (0 means unlimited)."""
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise ValueError('%s: %s must be an integer >= 0, got %r'
                         % (owner, name, value)) from None
    if number < 0 or isinstance(value, bool):
        raise ValueError('%s: %s must be an integer >= 0, got %r'
                         % (owner, name, value))
    return number


@dataclasses.dataclass(frozen=True)
class IoTune:
    """The six average-rate limits of one disk; 0 means unlimited."""
    total_iops_sec: int = 0
    read_iops_sec: int = 0
    write_iops_sec: int = 0
    total_bytes_sec: int = 0
    read_bytes_sec: int = 0
    write_bytes_sec: int = 0

    @classmethod
    def from_params(cls, params, owner='iotune'):
        """Build from a libvirt ``blockIoTune`` dict or parsed ``<iotune>``.

        Keys other than the six rate limits (bursts, group_name ...) are
        ignored: the agent never changes them.
        """
        return cls(**{key: _limit(owner, key, params[key])
                      for key in RATE_KEYS if key in params})

    def as_params(self):
        """The libvirt typed parameters that set exactly these limits."""
        return {key: getattr(self, key) for key in RATE_KEYS}

    @property
    def is_unlimited(self):
        return not any(self.as_params().values())

    @property
    def iops_ceiling(self):
        """Most IOPS these limits ever allow in total (0: unlimited)."""
        return _ceiling(self.total_iops_sec, self.read_iops_sec,
                        self.write_iops_sec)

    @property
    def bytes_ceiling(self):
        """Most bytes/s these limits ever allow in total (0: unlimited)."""
        return _ceiling(self.total_bytes_sec, self.read_bytes_sec,
                        self.write_bytes_sec)


def _ceiling(total, read, write):
    if total:
        return total
    if read and write:
        return read + write
    # Reads or writes (or both) are unlimited: so is the sum.
    return 0


def _whole(rate):
    """A non-zero rate as libvirt's integer: the nearest one (halves up),
    never 0 (= unlimited).

    The nearest whole number holds a cap within half a request (or
    byte) a second of the policy's decision, as often over as under it.
    Rounded down, every cap ran under its decision by half a request a
    second on average: 5 % of a 10 IOPS cap.  Caps that small are an
    overbooked domain's shares (``guarantee``'s essay, Overbooked
    domains), and small-request guests' bytes limits sit at the minimum
    cap's, so the IOPS limit alone held them: a share of 18.9 requests/s
    ran at 18 (scenario plan 0 of seed 23, doc/scenarios.rst, "Caps
    rounded to the nearest request")."""
    return max(1, int(math.floor(rate + 0.5)))


def _axis(cap, total, read, write):
    """(total, read, write) limits that hold one axis to ``cap``.

    ``cap`` is assumed already clamped to the baseline's ceiling.
    """
    if not cap:
        return total, read, write
    if not read and not write:
        return _whole(min(cap, total) if total else cap), 0, 0
    if read and write:
        # Keep the operator's read/write proportion, scaled down.
        factor = min(1.0, cap / float(read + write))
        return 0, _whole(read * factor), _whole(write * factor)
    # Only one direction is limited: give it at most half of the cap
    # (never more than its baseline) and the other direction the rest.
    limited = read or write
    share = min(limited, cap / 2.0)
    rest = cap - share
    if read:
        return 0, _whole(share), _whole(rest)
    return 0, _whole(rest), _whole(share)


def cap_params(baseline, cap):
    """libvirt parameters that enforce ``cap`` (a model ``Cap``) on a disk.

    ``baseline`` holds the operator's limits; the result never allows more
    than they do, on either axis or in either direction.
    """
    t_iops, r_iops, w_iops = _axis(
        clamp_rate(cap.iops, baseline.iops_ceiling),
        baseline.total_iops_sec, baseline.read_iops_sec,
        baseline.write_iops_sec)
    t_bytes, r_bytes, w_bytes = _axis(
        clamp_rate(cap.bytes_sec, baseline.bytes_ceiling),
        baseline.total_bytes_sec, baseline.read_bytes_sec,
        baseline.write_bytes_sec)
    return IoTune(t_iops, r_iops, w_iops, t_bytes, r_bytes,
                  w_bytes).as_params()


def same_limits(baseline, cap, other):
    """Whether caps ``cap`` and ``other`` set the same libvirt limits on
    a disk whose operator limits are ``baseline`` (:func:`cap_params`):
    a decision that moved by less than half a request (or byte) a
    second, on either axis, leaves the cap in force as it is.

    Setting it again would not be free.  QEMU zeroes its throttle
    buckets on every set, new limits or the same ones
    (``throttle_config`` in util/throttle.c), and a disk pushing against
    the cap passes what the emptied bucket holds on top of it.  Measured
    on the testbed (``tools/throttle-reset-burst``: one guest, eight 64
    KB writers, a cap of 14 IOPS): 14.00 requests/s with the limits left
    alone, 14.90 with the same limits set again every 2 s, three rounds
    of 20 s each way."""
    return cap == other or (cap_params(baseline, cap)
                            == cap_params(baseline, other))


def clamp_rate(value, *ceilings):
    """``value`` held under every non-zero ceiling; 0 stands for none."""
    limits = [c for c in ceilings if c]
    if value:
        limits.append(value)
    return min(limits) if limits else 0
