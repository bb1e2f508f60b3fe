"""One cost unit for IOPS and bytes: the fraction of a device's time.

Seed 000 (section 5) notes that IOPS alone and bandwidth alone both
mis-measure load: a burst of 4 KB requests barely moves a neighbour's
bandwidth yet keeps the disks seeking, while a few 512 KB requests move
a lot of bytes for little seek work.  iothrottle therefore measures load
like Linux's blk-iocost does, with a linear model of a storage domain::

    cost of one request of s bytes = 1 / max_iops + s / max_bytes_sec

in seconds of device time, where ``max_iops`` is the rate of small
requests the domain completes and ``max_bytes_sec`` its rate for large
ones.  The *load* of a stream doing ``n`` requests/s and ``b`` bytes/s
is ``n / max_iops + b / max_bytes_sec``: the fraction of the domain's
time it occupies, so 1.0 is a saturated domain whatever the request
sizes.  Worked numbers for a 7200 rpm disk (200 IOPS, 150 MB/s):

    4 KB random    200 req/s x (1/200 + 4096/150e6)   = 1.005 (saturated)
    64 KB random   100 req/s x (1/200 + 65536/150e6)  = 0.544
    512 KB stream  250 req/s x (1/200 + 524288/150e6) = 2.12 (impossible:
                   the model says at most 117.7 such requests per second)

A cap expressed as a load ``L`` turns into the pair of libvirt limits
``total_iops_sec = L / cost(s)`` and ``total_bytes_sec = that x s`` for
the stream's mean request size ``s``; whatever sizes the guest then
uses, the two limits together keep its load at or below ``L``.  A mean
size is taken between one 512-byte sector and 64 MiB
(``MIN_REQUEST_BYTES``, ``MAX_REQUEST_BYTES``).
"""

# A request of unknown size (a disk that did no I/O in the interval) is
# costed as a 64 KiB one: the size of seed 000's workload and a common
# guest readahead, between a 4 KiB page and a 512 KiB merged request.
DEFAULT_REQUEST_BYTES = 65536.0

# No request moves fewer bytes than one 512-byte sector: a sample that
# counts requests but no bytes (a flush, a discard, a counter that wrapped
# or a host that lies) is costed as sector-sized requests, never as
# requests of 0 bytes, which would make a byte floor infinitely many
# requests.
MIN_REQUEST_BYTES = 512.0

# Nor more than 64 MiB: no block device takes larger requests (Linux
# splits at max_hw_sectors_kb, a few MiB on common hardware), so a larger
# mean comes from a counter glitch or a host that lies, and unbounded it
# makes the cost of one request infinite and every cap 0 x inf = NaN.
MAX_REQUEST_BYTES = 64.0 * 1024 * 1024


def request_cost_s(capacity, request_bytes):
    """Device seconds one request of ``request_bytes`` costs."""
    return 1.0 / capacity.max_iops + request_bytes / capacity.max_bytes_sec


def load(capacity, iops, bytes_sec):
    """Fraction of the domain's time a stream of ``iops``/``bytes_sec``
    occupies (1.0 = the whole domain)."""
    return iops / capacity.max_iops + bytes_sec / capacity.max_bytes_sec


def mean_request_bytes(iops, bytes_sec, fallback=DEFAULT_REQUEST_BYTES):
    """Mean request size of a stream, ``fallback`` when it did no I/O,
    within ``MIN_REQUEST_BYTES`` .. ``MAX_REQUEST_BYTES``."""
    if iops <= 0:
        return fallback
    return min(MAX_REQUEST_BYTES, max(MIN_REQUEST_BYTES, bytes_sec / iops))


def at_cap(sample, cap, fraction, slack_requests=0.0):
    """Whether a disk runs at its ``cap`` (a Cap, or None) on either
    axis: at ``fraction`` of it, or within ``slack_requests`` of it over
    the sample's span (a short span sees a cap as a few whole requests,
    which QEMU's throttle lets through one at a time)."""
    if cap is None:
        return False
    slack_s = slack_requests / sample.interval_s
    return ((cap.iops > 0 and sample.iops
             >= min(fraction * cap.iops, cap.iops - slack_s))
            or (cap.bytes_sec > 0 and sample.bytes_sec
                >= min(fraction * cap.bytes_sec, cap.bytes_sec
                       - slack_s * mean_request_bytes(
                           sample.iops, sample.bytes_sec))))


def floor_load(capacity, min_iops, min_bytes_sec, request_bytes):
    """The load a floor of ``min_iops`` and ``min_bytes_sec`` is worth for
    a stream of mean request size ``request_bytes``: whichever floor asks
    for more requests, each at its cost."""
    floor_iops = max(min_iops, min_bytes_sec / request_bytes)
    return floor_iops * request_cost_s(capacity, request_bytes)


def cap_for_load(capacity, load_share, request_bytes):
    """The (iops, bytes_sec) limits that hold a stream of mean request
    size ``request_bytes`` at ``load_share`` of the domain."""
    iops = load_share / request_cost_s(capacity, request_bytes)
    return iops, iops * request_bytes


def load_of_cap(capacity, cap_iops, cap_bytes_sec, request_bytes):
    """The largest load a disk under this cap can put on the domain.

    A 0 limit is no limit on that axis; with both 0 the load is unbounded
    (``float('inf')``).
    """
    per_request_s = request_cost_s(capacity, request_bytes)
    bounds = []
    if cap_iops > 0:
        bounds.append(cap_iops * per_request_s)
    if cap_bytes_sec > 0:
        bounds.append(cap_bytes_sec / request_bytes * per_request_s)
    return min(bounds) if bounds else float('inf')
