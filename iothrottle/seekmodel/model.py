"""How much a storage pool delivers to the volumes placed on it.

The problem
-----------
A Cinder scheduler that places a new volume needs to know what the pool
will deliver with it, not what its datasheet says.  On a disk, N
volumes read at once cost more than N times one volume: each switch
between volumes is a long head movement, and how often the disk
switches depends on the I/O scheduler.  Seed 003 (Baba and Tanaka)
predicts the total throughput of N files read concurrently on one disk
from where they lie; seed 001 says the host scheduler is what decides
how often consecutive requests stay in one file.  On flash, distance
means nothing and the limits are parallelism and the read/write mix
(seed 002).  This module answers both with one call, ``predict``.

The seek model (seed 003, equation 1)
-------------------------------------
The *continuous access ratio* ``alpha`` in [0, 1] is the probability that
the next request goes to the same file as the last one; each of the
other N-1 files gets ``(1 - alpha) / (N - 1)``.  ``l_ii`` is the mean
seek inside file i (uniform random access: half its size), ``l_ij`` the
distance between the centres of files i and j.  The mean seek distance
is::

    l_ave = (1/N) (alpha sum_i l_ii + (1-alpha)/(N-1) sum_i sum_j!=i l_ij)

(``l_ave = l_11`` for N = 1), and the predicted total bandwidth is
``B_est = f(l_ave)``, where ``f`` is the disk's measured seek distance
to bandwidth curve at the calibration request size (4 KiB random
reads).  ``l_ave`` is a convex combination of the ``l_ii`` and
``l_ij``, so it lies between the smallest and the largest of them, and
when the files are farther apart than they are large (``l_ij > l_ii``) a
higher ``alpha`` means shorter seeks and more bandwidth.

``f`` is either a measured table (``DistanceTable``: bandwidth
interpolated linearly in distance between points, flat beyond the first
and last point) or the paper's fit ``f(l) = 1 / (a l + b)``
(``InverseLinearCurve``, with ``fit_inverse_linear`` for least squares
on table points).  ``1/f`` is the time per byte, so ``b`` is the
distance-independent cost (rotation, transfer, command overhead) and
``a`` the cost of moving the head by one more byte.

The symmetric chain gives every file the same long-run share of
requests, 1/N, whatever ``alpha``; what ``alpha`` changes is how evenly
the requests are spread over a short window.  Consecutive requests to
one file come in runs of mean length ``1 / (1 - alpha)``, and the share
one stream gets over a window of W requests has a standard deviation of
about ``sqrt(p (1 - p) / W x (1 + lam) / (1 - lam))`` with ``p = 1/N``
and ``lam = alpha - (1 - alpha)/(N - 1)`` the chain's second eigenvalue
(at most ``sqrt(p (1 - p))``: the whole window to one stream).  That is
seed 003's figure 3: Xen (alpha 0) strictly alternates and every file
gets an even throughput; native Linux (alpha 0.99) serves one file for
~100 requests and the per-file throughputs over one second are uneven.
``Prediction.stream_shares`` is the long-run share and
``Prediction.share_stddev_1s`` that spread over one second.

Where alpha comes from (seed 001)
---------------------------------
``alpha`` belongs to the platform, not the disk: the host scheduler
(``mq-deadline``, ``bfq``, ``none``, ``kyber``) decides whether it keeps
serving the stream it just served.  A ``HddProfile`` holds the alpha that
calibration *measured* under each scheduler, and ``select_alpha`` picks
the one for the pool's current scheduler.  A scheduler the profile has
not measured gets ``DEFAULT_ALPHA`` (0.0) and the prediction says so in
``alpha_source``.  Reading ``/sys/block/X/queue/scheduler`` belongs to
the caller (``iothrottle.seekmodel.probe``); this module does no I/O and
reads no clock.

Worked numbers: seed 003's own case
-----------------------------------
WD1600JS, 4 KiB random reads in 2 GB files (``l_ii`` = 1 GB), two files
20 GB apart.  The paper gives ``f(1 GB)`` = 0.453 MB/s and, for
``l > 20 GB``, ``f(l) = 1 / (0.0244 l + 2.91)`` MB/s with l in GB; it
says nothing of ``f`` between 1 and 20 GB.  We take MB and GB as 10^6
and 10^9 bytes (the paper does not say; the ratios below do not depend
on it) and the sample profile ``etc/iothrottle/profiles/wd1600js.json``
is a table: (1 GB, 0.453 MB/s), then the fit at 20, 40, ... 160 GB, so
between 1 and 20 GB ``f`` is the straight line, our assumption.

* Xen, alpha 0.0: ``l_ave`` = (0 + 1 x (20 + 20)) / 2 = 20 GB,
  ``f(20 GB)`` = 1 / 3.398 = **0.294 MB/s**; measured 0.264 MB/s, the
  model is 11.5 % high.  No alpha can do better: 0.294 MB/s is the
  least ``f`` gives at any distance up to 20 GB, and the fit reaches
  0.264 MB/s only at 36 GB.  The gap, 1/0.264 - 1/0.294 = 0.39 s/MB or
  1.6 ms per 4 KiB request, is what Xen's split-driver path added on
  top of the disk (the paper does not say under which platform ``f``
  was measured).
* native Linux, alpha 0.99: ``l_ave`` = (0.99 x 2 + 0.01 x 40) / 2 =
  1.19 GB, ``f(1.19 GB)`` = **0.451 MB/s** on the straight line;
  measured 0.389 MB/s, 16 % high.  Every reading of ``f`` that matches
  the paper's two anchors puts 1.19 GB close to 0.453 MB/s: the per
  request time grows by only 0.1 ms per GB in the fitted range (0.0244
  s/MB/GB x 4 KiB), so 0.19 GB more seek cannot cost 14 %.  Inverting
  our table instead, 0.389 MB/s is ``l`` = 8.7 GB, alpha = 0.60.  With
  only the printed constants the model cannot reproduce both 0.99 and
  0.389 MB/s.  A fitted alpha is an *effective* one: equation (1)
  averages distances, the disk averages times, and ``1/f`` is concave,
  so many short seeks and a few long ones beat ``f(l_ave)``; on the
  seek-disk fixture (``doc/seekmodel.rst``) streams that switch on
  8.6 % of requests fit alpha 0.991, and predict N = 2..8 within 5 %
  with it.  Predict with the alpha calibration fitted.
* one file (N = 1): ``l_ave = l_11`` = 1 GB, 0.453 MB/s by definition.

The unit tests (``tests/unit/seekmodel/test_model.py``) compute these
numbers; the paper claims 10 % for its own ``f``, which we cannot check.

The flash model (beyond the paper)
----------------------------------
On SSD and NVMe the head does not exist; throughput depends on how many
requests are outstanding and on the read/write mix.  A ``FlashProfile``
holds two measured curves, IOPS versus outstanding requests for reads
and for writes (at ``request_size_bytes``), each non-decreasing and
interpolated linearly (through the origin below the first point, by
Little's law at constant latency; flat beyond the last, where the
device is busy 100 % of the time, seed 002).  Streams share the device
in proportion to their outstanding requests; at the total depth ``q`` a
read costs ``1/iops_read(q)`` seconds of device time and a write
``1/iops_write(q)`` (or ``size / *_bytes_sec_limit`` if that is larger),
and the device does ``1 / sum(share x cost)`` requests per second: the
harmonic mix.  Seed 002's NVMe at its limit, 438k read and 90k write
IOPS, does 1 / (0.7 / 438k + 0.3 / 90k) = 203k IOPS at 70 % reads, not
the 334k an arithmetic mix would claim.

Tunables
--------
``DEFAULT_ALPHA``        0.0     alpha for a scheduler the profile lacks
``SHARE_WINDOW_S``       1.0     window of ``share_stddev_1s``, seconds
Per device (the profile, ``iothrottle.seekmodel.profile``): the curve,
``request_size_bytes`` (4096), alpha per scheduler, QD curves.
"""

import bisect
import dataclasses
import math

HDD = 'hdd'
FLASH = 'flash'

# The schedulers of a current Linux multiqueue block layer (seed 001's
# CFQ and AS are gone; BFQ with a larger slice_idle is closest to CFQ8).
SCHEDULERS = ('mq-deadline', 'bfq', 'none', 'kyber')

# Alpha for a scheduler nobody calibrated: 0 is the paper's Xen value and
# the pessimistic end whenever volumes lie farther apart than they are
# large, so a placement decision never counts on locality it has not seen.
DEFAULT_ALPHA = 0.0

# Window over which ``share_stddev_1s`` measures a stream's share: the
# sampling interval of a throughput graph like seed 003's figure 3.
SHARE_WINDOW_S = 1.0

# The paper's units, taken as decimal like the drive's "160 GB" label.
MB = 10 ** 6
GB = 10 ** 9


def _check_number(owner, name, value, minimum=0.0, strict=False):
    """Reject a value that is not a finite number >= (or >) minimum."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError('%s: %s must be a number, got %r'
                         % (owner, name, value))
    if not math.isfinite(value) or value < minimum or (
            strict and value == minimum):
        raise ValueError('%s: %s must be a finite number %s %g, got %r'
                         % (owner, name, '>' if strict else '>=', minimum,
                            value))


def _points(owner, points, x_name, y_name, x_min, x_strict):
    """Validate and normalise a curve's points to a tuple of float pairs,
    strictly increasing in x, y > 0."""
    try:
        points = tuple(tuple(p) for p in points)
    except TypeError:
        raise ValueError('%s: points must be a list of [%s, %s] pairs'
                         % (owner, x_name, y_name))
    if not points:
        raise ValueError('%s: points must not be empty' % owner)
    out = []
    for k, point in enumerate(points):
        where = '%s: points[%d]' % (owner, k)
        if len(point) != 2:
            raise ValueError('%s must be a [%s, %s] pair, got %r'
                             % (where, x_name, y_name, point))
        _check_number(where, x_name, point[0], x_min, x_strict)
        _check_number(where, y_name, point[1], 0.0, strict=True)
        if out and point[0] <= out[-1][0]:
            raise ValueError('%s: %s must increase from point to point '
                             '(%r after %r)' % (where, x_name, point[0],
                                                out[-1][0]))
        out.append((float(point[0]), float(point[1])))
    return tuple(out)


def _interpolate(points, x):
    """Linear interpolation in ``points`` (sorted by x), flat beyond."""
    xs = [p[0] for p in points]
    k = bisect.bisect_right(xs, x)
    if k == 0:
        return points[0][1]
    if k == len(points):
        return points[-1][1]
    (x0, y0), (x1, y1) = points[k - 1], points[k]
    return y0 + (y1 - y0) * (x - x0) / (x1 - x0)


@dataclasses.dataclass(frozen=True)
class DistanceTable:
    """A measured seek distance to bandwidth curve.

    ``points`` are ``(distance_bytes, bandwidth_bytes_sec)`` pairs,
    distance strictly increasing, bandwidth > 0 and never increasing
    with distance.  Bandwidth is interpolated linearly in distance and
    held flat beyond the first and the last point.
    """
    points: tuple

    kind = 'table'

    def __post_init__(self):
        owner = 'distance_curve'
        points = _points(owner, self.points, 'distance_bytes',
                         'bandwidth_bytes_sec', 0.0, False)
        for k in range(1, len(points)):
            if points[k][1] > points[k - 1][1]:
                raise ValueError(
                    '%s: points[%d]: bandwidth must not increase with '
                    'distance (%r B/s at %r B after %r B/s at %r B)' % (
                        owner, k, points[k][1], points[k][0],
                        points[k - 1][1], points[k - 1][0]))
        object.__setattr__(self, 'points', points)

    def bandwidth_bytes_sec(self, distance_bytes):
        return _interpolate(self.points, distance_bytes)

    def distance_for_bandwidth(self, bandwidth_bytes_sec):
        """The distance at which the curve gives ``bandwidth_bytes_sec``
        (the shortest one on a flat stretch), clamped to the table."""
        points = self.points
        if bandwidth_bytes_sec >= points[0][1]:
            return points[0][0]
        for (x0, y0), (x1, y1) in zip(points, points[1:]):
            if y1 <= bandwidth_bytes_sec < y0:
                return x0 + (x1 - x0) * (y0 - bandwidth_bytes_sec) / (
                    y0 - y1)
        return points[-1][0]


def non_increasing(points):
    """The least squares non-increasing fit of ``(x, y)`` points sorted by
    x (pool adjacent violators): a measured, noisy distance curve made
    into one ``DistanceTable`` accepts.  Points pooled together keep
    their x and share their mean y."""
    blocks = []   # [sum_y, count]
    for _x, y in points:
        blocks.append([float(y), 1])
        while len(blocks) > 1 and (blocks[-2][0] / blocks[-2][1]
                                   < blocks[-1][0] / blocks[-1][1]):
            total, count = blocks.pop()
            blocks[-1][0] += total
            blocks[-1][1] += count
    ys = []
    for total, count in blocks:
        ys.extend([total / count] * count)
    return [(x, y) for (x, _y), y in zip(points, ys)]


@dataclasses.dataclass(frozen=True)
class InverseLinearCurve:
    """Seed 003's fit: ``1 / f(l) = a l + b``.

    ``a_sec_per_byte2``: seconds per byte transferred, per byte of seek
    distance (>= 0); ``b_sec_per_byte``: seconds per byte transferred at
    distance 0 (> 0).
    """
    a_sec_per_byte2: float
    b_sec_per_byte: float

    kind = 'inverse_linear'

    def __post_init__(self):
        _check_number('distance_curve', 'a_sec_per_byte2',
                      self.a_sec_per_byte2)
        _check_number('distance_curve', 'b_sec_per_byte',
                      self.b_sec_per_byte, strict=True)

    @classmethod
    def from_paper_units(cls, a_sec_per_mb_per_gb, b_sec_per_mb):
        """The paper's form: 1/f [s/MB] = a [s/MB/GB] x l [GB] + b [s/MB].
        """
        return cls(a_sec_per_byte2=a_sec_per_mb_per_gb / MB / GB,
                   b_sec_per_byte=b_sec_per_mb / MB)

    def bandwidth_bytes_sec(self, distance_bytes):
        return 1.0 / (self.a_sec_per_byte2 * max(0.0, distance_bytes)
                      + self.b_sec_per_byte)

    def distance_for_bandwidth(self, bandwidth_bytes_sec):
        if self.a_sec_per_byte2 == 0:
            return 0.0
        return max(0.0, (1.0 / bandwidth_bytes_sec - self.b_sec_per_byte)
                   / self.a_sec_per_byte2)


def fit_inverse_linear(points):
    """Least squares fit of ``1/B = a l + b`` to ``(l, B)`` points.

    Needs two distinct distances; raises ``ValueError`` if the fitted
    ``a`` is negative (bandwidth rising with distance: a device without
    seeks, use a flash profile) or ``b`` is not positive.
    """
    points = _points('fit', points, 'distance_bytes', 'bandwidth_bytes_sec',
                     0.0, False)
    if len(points) < 2:
        raise ValueError('fit: needs at least 2 points, got %d'
                         % len(points))
    n = float(len(points))
    xs = [p[0] for p in points]
    ys = [1.0 / p[1] for p in points]
    mean_x = sum(xs) / n
    mean_y = sum(ys) / n
    sxx = sum((x - mean_x) ** 2 for x in xs)
    sxy = sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys))
    a = sxy / sxx
    b = mean_y - a * mean_x
    if a < 0:
        raise ValueError('fit: bandwidth rises with distance (a = %g s/B^2)'
                         % a)
    if b <= 0:
        raise ValueError('fit: intercept b = %g s/B is not positive' % b)
    return InverseLinearCurve(a_sec_per_byte2=a, b_sec_per_byte=b)


@dataclasses.dataclass(frozen=True)
class QdCurve:
    """IOPS versus outstanding requests, for one direction.

    ``points`` are ``(outstanding_requests, iops)`` pairs, outstanding
    strictly increasing and > 0, IOPS > 0 and never decreasing with more
    outstanding requests.  Interpolated linearly; below the first point
    through the origin (Little's law at constant latency), flat beyond
    the last (the device is saturated).
    """
    points: tuple
    name: str = 'qd_curve'

    def __post_init__(self):
        points = _points(self.name, self.points, 'outstanding_requests',
                         'iops', 0.0, True)
        for k in range(1, len(points)):
            if points[k][1] < points[k - 1][1]:
                raise ValueError(
                    '%s: points[%d]: iops must not decrease with more '
                    'outstanding requests (%r at %r after %r at %r)' % (
                        self.name, k, points[k][1], points[k][0],
                        points[k - 1][1], points[k - 1][0]))
        object.__setattr__(self, 'points', points)

    def iops(self, outstanding_requests):
        q0, iops0 = self.points[0]
        if outstanding_requests < q0:
            return iops0 * max(0.0, outstanding_requests) / q0
        return _interpolate(self.points, outstanding_requests)


def _alphas(owner, alpha_by_scheduler):
    try:
        items = dict(alpha_by_scheduler).items()
    except (TypeError, ValueError):
        raise ValueError('%s: alpha_by_scheduler must map scheduler names '
                         'to alpha' % owner)
    out = []
    for scheduler, alpha in sorted(items):
        if scheduler not in SCHEDULERS:
            raise ValueError('%s: alpha_by_scheduler: unknown scheduler %r '
                             '(known: %s)' % (owner, scheduler,
                                              ', '.join(SCHEDULERS)))
        check_alpha('%s: alpha_by_scheduler[%s]' % (owner, scheduler),
                    alpha)
        out.append((scheduler, float(alpha)))
    return tuple(out)


def check_alpha(owner, alpha):
    """Reject an alpha that is not a number in [0, 1]."""
    _check_number(owner, 'alpha', alpha)
    if alpha > 1:
        raise ValueError('%s: alpha must be in [0, 1], got %r'
                         % (owner, alpha))


@dataclasses.dataclass(frozen=True)
class HddProfile:
    """A disk: its distance curve and the alpha each scheduler showed.

    ``alpha_by_scheduler`` is given as a mapping and kept as sorted
    ``(scheduler, alpha)`` pairs; ``request_size_bytes`` is the size the
    curve was measured with.
    """
    name: str
    distance_curve: object
    alpha_by_scheduler: tuple = ()
    request_size_bytes: int = 4096

    kind = HDD

    def __post_init__(self):
        owner = 'hdd profile %r' % self.name
        if not isinstance(self.distance_curve,
                          (DistanceTable, InverseLinearCurve)):
            raise ValueError('%s: distance_curve must be a DistanceTable or '
                             'an InverseLinearCurve' % owner)
        _check_number(owner, 'request_size_bytes', self.request_size_bytes,
                      strict=True)
        object.__setattr__(self, 'alpha_by_scheduler',
                           _alphas(owner, self.alpha_by_scheduler))

    def alphas(self):
        return dict(self.alpha_by_scheduler)


@dataclasses.dataclass(frozen=True)
class FlashProfile:
    """An SSD or NVMe device: read and write IOPS versus outstanding
    requests at ``request_size_bytes``, optional bandwidth ceilings
    (None: the IOPS curve is the only limit)."""
    name: str
    read_qd_curve: QdCurve
    write_qd_curve: QdCurve
    request_size_bytes: int = 4096
    read_bytes_sec_limit: float = None
    write_bytes_sec_limit: float = None

    kind = FLASH

    def __post_init__(self):
        owner = 'flash profile %r' % self.name
        for name in ('read_qd_curve', 'write_qd_curve'):
            if not isinstance(getattr(self, name), QdCurve):
                raise ValueError('%s: %s must be a QdCurve' % (owner, name))
        _check_number(owner, 'request_size_bytes', self.request_size_bytes,
                      strict=True)
        for name in ('read_bytes_sec_limit', 'write_bytes_sec_limit'):
            if getattr(self, name) is not None:
                _check_number(owner, name, getattr(self, name), strict=True)


@dataclasses.dataclass(frozen=True)
class Stream:
    """One volume placed on the device, as the model sees it.

    ``offset_bytes`` is where the volume starts on the device (its
    position in the pool), ``size_bytes`` its size; access inside it is
    uniform random.  ``outstanding_requests`` is how many requests it
    keeps in flight (0: idle, it takes no part); ``read_fraction`` the
    fraction of its requests that are reads.  The HDD model (seed 003)
    is for synchronous random reads and uses neither of the last two
    except to leave idle streams out.
    """
    size_bytes: float
    offset_bytes: float = 0.0
    read_fraction: float = 1.0
    outstanding_requests: float = 1.0
    request_size_bytes: float = 4096
    name: str = ''

    def __post_init__(self):
        owner = 'stream %r' % self.name if self.name else 'stream'
        _check_number(owner, 'size_bytes', self.size_bytes)
        _check_number(owner, 'offset_bytes', self.offset_bytes)
        _check_number(owner, 'read_fraction', self.read_fraction)
        if self.read_fraction > 1:
            raise ValueError('%s: read_fraction must be in [0, 1], got %r'
                             % (owner, self.read_fraction))
        _check_number(owner, 'outstanding_requests',
                      self.outstanding_requests)
        _check_number(owner, 'request_size_bytes', self.request_size_bytes,
                      strict=True)

    @property
    def centre_bytes(self):
        return self.offset_bytes + self.size_bytes / 2.0

    @property
    def end_bytes(self):
        return self.offset_bytes + self.size_bytes

    @property
    def in_file_distance_bytes(self):
        """``l_ii``: mean seek inside the volume, half its size."""
        return self.size_bytes / 2.0

    @property
    def active(self):
        return self.outstanding_requests > 0


@dataclasses.dataclass(frozen=True)
class Prediction:
    """What the model predicts for a device and its streams.

    ``alpha`` and ``l_ave_bytes`` are None where the model has no use for
    them (flash, or no active stream); ``alpha_source`` says where the
    alpha came from or why there is none.  ``stream_shares`` are the
    long-run shares of requests of the *active* streams, in order;
    ``share_stddev_1s`` the spread of one stream's share over one second
    (HDD only; 0 elsewhere).
    """
    kind: str
    bandwidth_bytes_sec: float
    iops: float
    l_ave_bytes: float
    alpha: float
    alpha_source: str
    stream_shares: tuple = ()
    share_stddev_1s: float = 0.0

    def stream_bandwidths_bytes_sec(self):
        return tuple(self.bandwidth_bytes_sec * s for s in self.stream_shares)


def mean_seek_distance(in_file_bytes, between_bytes, alpha):
    """Equation (1) of seed 003.

    ``in_file_bytes[i]`` is ``l_ii``; ``between_bytes[i][j]`` is ``l_ij``
    (the diagonal is ignored).  N = 1 gives ``l_11``.
    """
    check_alpha('mean_seek_distance', alpha)
    n = len(in_file_bytes)
    if n == 0:
        raise ValueError('mean_seek_distance: needs at least one file')
    if len(between_bytes) != n or any(len(row) != n for row in between_bytes):
        raise ValueError('mean_seek_distance: between_bytes must be %dx%d'
                         % (n, n))
    if n == 1:
        return float(in_file_bytes[0])
    inside = sum(in_file_bytes)
    between = sum(between_bytes[i][j] for i in range(n) for j in range(n)
                  if i != j)
    return (alpha * inside + (1.0 - alpha) / (n - 1) * between) / n


def stream_distances(streams):
    """``(l_ii list, l_ij matrix)`` of streams: half sizes and distances
    between centres."""
    centres = [s.centre_bytes for s in streams]
    return ([s.in_file_distance_bytes for s in streams],
            [[abs(ci - cj) for cj in centres] for ci in centres])


def streams_l_ave(streams, alpha):
    """``l_ave`` of the streams' placement at ``alpha``."""
    inside, between = stream_distances(streams)
    return mean_seek_distance(inside, between, alpha)


def share_stddev(alpha, n, window_requests):
    """Standard deviation of one stream's share of ``window_requests``
    consecutive requests when N streams interleave with ratio alpha."""
    check_alpha('share_stddev', alpha)
    if n <= 1 or window_requests <= 0:
        return 0.0
    p = 1.0 / n
    bound = p * (1.0 - p)
    lam = alpha - (1.0 - alpha) / (n - 1)
    if lam >= 1.0:
        return math.sqrt(bound)
    return math.sqrt(min(bound,
                         bound / window_requests * (1 + lam) / (1 - lam)))


def select_alpha(profile, scheduler):
    """``(alpha, alpha_source)`` for ``scheduler`` on an HDD profile."""
    if scheduler is not None and scheduler not in SCHEDULERS:
        raise ValueError('scheduler: unknown scheduler %r (known: %s)'
                         % (scheduler, ', '.join(SCHEDULERS)))
    alphas = profile.alphas()
    if scheduler in alphas:
        return alphas[scheduler], 'profile %r, scheduler %s' % (
            profile.name, scheduler)
    if scheduler is None:
        why = 'no scheduler given'
    else:
        why = 'profile %r has no alpha for scheduler %s' % (profile.name,
                                                            scheduler)
    return DEFAULT_ALPHA, 'default %g (%s)' % (DEFAULT_ALPHA, why)


def alpha_for_l_ave(streams, l_ave_bytes):
    """The alpha at which the streams' ``l_ave`` equals ``l_ave_bytes``,
    clamped to [0, 1]: the paper's inversion of equation (1).

    None when alpha does not move ``l_ave`` (one stream, or in-file and
    between-file distances that average out the same).
    """
    streams = [s for s in streams if s.active]
    if len(streams) < 2:
        return None
    near = streams_l_ave(streams, 1.0)
    far = streams_l_ave(streams, 0.0)
    if math.isclose(near, far, rel_tol=1e-9, abs_tol=1.0):
        return None
    return min(1.0, max(0.0, (far - l_ave_bytes) / (far - near)))


def alpha_for_bandwidth(profile, streams, bandwidth_bytes_sec):
    """Fit alpha to a measured total bandwidth (seed 003 did this with
    its 2-process runs): invert ``f`` to a distance, then equation (1).
    """
    l_ave = profile.distance_curve.distance_for_bandwidth(
        bandwidth_bytes_sec)
    return alpha_for_l_ave(streams, l_ave)


def alpha_from_sequence(stream_ids):
    """Alpha counted directly: the fraction of consecutive requests (in
    service order) that went to the same stream.  None below 2 requests.
    """
    stream_ids = list(stream_ids)
    if len(stream_ids) < 2:
        return None
    same = sum(1 for a, b in zip(stream_ids, stream_ids[1:]) if a == b)
    return same / (len(stream_ids) - 1.0)


def with_new_volume(streams, size_bytes, offset_bytes=None, **fields):
    """The streams plus one new volume of ``size_bytes``.

    Without ``offset_bytes`` the volume goes right after the end of the
    last one (LVM and most pools allocate from the lowest free extent
    upward, and the end is where that is on a pool that never freed
    anything); the caller that knows the pool's free extents passes the
    real offset.  ``fields`` are further ``Stream`` fields.
    """
    streams = tuple(streams)
    if offset_bytes is None:
        offset_bytes = max((s.end_bytes for s in streams), default=0.0)
    fields.setdefault('name', 'new')
    return streams + (Stream(size_bytes=size_bytes,
                             offset_bytes=offset_bytes, **fields),)


def _mean_request_bytes(streams, shares):
    return sum(s.request_size_bytes * w for s, w in zip(streams, shares))


def predict_hdd(profile, streams, scheduler=None, alpha=None):
    """Seed 003 on an HDD profile.  ``alpha`` given: used as is;
    otherwise ``select_alpha(profile, scheduler)``."""
    active = [s for s in streams if s.active]
    if not active:
        return Prediction(HDD, 0.0, 0.0, None, None, 'no active stream')
    n = len(active)
    if alpha is not None:
        check_alpha('predict', alpha)
        source = 'given by the caller'
    else:
        alpha, source = select_alpha(profile, scheduler)
    if n == 1:
        source = 'not used: one stream (%s)' % source
    l_ave = streams_l_ave(active, alpha)
    curve_bw = profile.distance_curve.bandwidth_bytes_sec(l_ave)
    iops = curve_bw / profile.request_size_bytes
    shares = tuple(1.0 / n for _ in active)
    return Prediction(
        kind=HDD,
        bandwidth_bytes_sec=iops * _mean_request_bytes(active, shares),
        iops=iops, l_ave_bytes=l_ave, alpha=alpha, alpha_source=source,
        stream_shares=shares,
        share_stddev_1s=share_stddev(alpha, n, iops * SHARE_WINDOW_S))


def _request_cost_s(qd_curve, limit, depth, size):
    cost = 1.0 / qd_curve.iops(depth)
    if limit is not None:
        cost = max(cost, size / limit)
    return cost


def predict_flash(profile, streams):
    """Harmonic read/write mix at the streams' total queue depth."""
    active = [s for s in streams if s.active]
    source = 'not used: flash has no seeks'
    if not active:
        return Prediction(FLASH, 0.0, 0.0, None, None, source)
    depth = sum(s.outstanding_requests for s in active)
    shares = tuple(s.outstanding_requests / depth for s in active)
    per_request_s = 0.0
    for s, share in zip(active, shares):
        read = _request_cost_s(profile.read_qd_curve,
                               profile.read_bytes_sec_limit, depth,
                               s.request_size_bytes)
        write = _request_cost_s(profile.write_qd_curve,
                                profile.write_bytes_sec_limit, depth,
                                s.request_size_bytes)
        per_request_s += share * (s.read_fraction * read
                                  + (1.0 - s.read_fraction) * write)
    iops = 1.0 / per_request_s
    return Prediction(
        kind=FLASH, bandwidth_bytes_sec=iops * _mean_request_bytes(
            active, shares),
        iops=iops, l_ave_bytes=None, alpha=None, alpha_source=source,
        stream_shares=shares)


def predict(profile, streams, scheduler=None, alpha=None):
    """Predicted aggregate throughput of ``profile``'s device serving
    ``streams`` (``Stream`` objects, idle ones ignored).

    ``scheduler``: the host I/O scheduler of the device (HDD: picks the
    calibrated alpha); ``alpha``: force one (HDD only).
    """
    if profile.kind == HDD:
        return predict_hdd(profile, streams, scheduler, alpha)
    if profile.kind == FLASH:
        return predict_flash(profile, streams)
    raise ValueError('profile: unknown kind %r' % (profile.kind,))
