"""An nbdkit Python plugin: a disk whose service time follows its seeks.

Run by ``nbdkit python`` (Debian: ``nbdkit-plugin-python``) with
nbdkit's own Python, so it imports nothing of iothrottle; started by
``iothrottle.seekmodel.fixture.SeekDisk``.  Every request is served one
at a time (the Python plugin's default thread model,
SERIALIZE_ALL_REQUESTS: one actuator for all connections) and takes::

    seek(d) + rotation_ms + size / transfer_mb_s

where d is the distance from the end of the previous request to the
start of this one and ``seek`` is Ruemmler and Wilkes' shape (seed 003's
reference [3]): ``settle_ms + b sqrt(d)`` up to ``knee`` (the head is
still accelerating), linear ``knee_ms + (d - knee) x ms_per_gib``
beyond (coasting), continuous at the knee, 0 for d = 0 (sequential).
Defaults resemble a 160 GB 7200 rpm disk like seed 003's WD1600JS:
1 ms settle, 5 ms at 4 GiB, 0.1 ms per GiB beyond (the paper's fit:
0.0244 s/MB/GB x 4 KB), 4.17 ms rotation (half a turn at 7200 rpm),
60 MB/s media rate; full stroke ~20 ms.  ``time_scale`` multiplies
every delay (0.25: the same curve four times as fast).  Data reads as
zeros; the export is read-only.

The order in which waiting connections get the disk is the fixture's
"I/O scheduler", the thing that sets alpha (seed 001).  With
``idle_ms`` = 0 (the default) the disk takes whichever request is
waiting when it frees up; the synchronous client that was just served
needs a moment to send its next request, so the others nearly always
win: alpha near 0, like NOOP or Xen in seed 003.  With ``idle_ms`` > 0
it *anticipates* like AS, CFQ or BFQ's ``slice_idle``: after serving a
connection it keeps the disk idle up to ``idle_ms`` for that
connection's next request, until the connection has held the disk for
``slice_ms``; then the others go first.  Alpha is then about
1 - (service time / slice_ms).

Parameters: ``size`` (160G), ``settle_ms``, ``knee`` (4G), ``knee_ms``,
``ms_per_gib``, ``rotation_ms``, ``transfer_mb_s``, ``time_scale``,
``idle_ms`` (0), ``slice_ms`` (100).
"""

import itertools
import math
import threading
import time

API_VERSION = 2

UNITS = {'': 1, 'K': 1 << 10, 'M': 1 << 20, 'G': 1 << 30, 'T': 1 << 40}
GIB = float(1 << 30)

PARAMS = {
    'size': 160 << 30,
    'settle_ms': 1.0,
    'knee': 4 << 30,
    'knee_ms': 5.0,
    'ms_per_gib': 0.1,
    'rotation_ms': 4.17,
    'transfer_mb_s': 60.0,
    'time_scale': 1.0,
    'idle_ms': 0.0,
    'slice_ms': 100.0,
}
SIZE_PARAMS = ('size', 'knee')

_state = {'head': 0, 'busy': False, 'last': None, 'last_done': 0.0,
          'slice_start': 0.0}
_waiting = set()
_cv = threading.Condition()
_connections = itertools.count(1)


def parse_size(text):
    text = text.strip().upper()
    unit = text[-1] if text[-1:] in UNITS and text[-1:] else ''
    return int(float(text[:-1] if unit else text) * UNITS[unit])


def seek_ms(distance, params=PARAMS):
    """Ruemmler-Wilkes seek time of ``distance`` bytes, milliseconds."""
    if distance <= 0:
        return 0.0
    knee = params['knee']
    if distance < knee:
        b = (params['knee_ms'] - params['settle_ms']) / math.sqrt(knee)
        return params['settle_ms'] + b * math.sqrt(distance)
    return params['knee_ms'] + (distance - knee) / GIB * params['ms_per_gib']


def service_s(distance, count, params=PARAMS):
    """Seconds one request of ``count`` bytes takes after a seek of
    ``distance`` bytes."""
    ms = (seek_ms(distance, params) + params['rotation_ms']
          + count / (params['transfer_mb_s'] * 1e3))
    return ms / 1e3 * params['time_scale']


def config(key, value):
    if key not in PARAMS:
        raise RuntimeError('unknown parameter %r (known: %s)'
                           % (key, ', '.join(sorted(PARAMS))))
    PARAMS[key] = parse_size(value) if key in SIZE_PARAMS else float(value)


def thread_model():
    import nbdkit   # only inside nbdkit
    return nbdkit.THREAD_MODEL_PARALLEL


def open(readonly):
    return next(_connections)


def get_size(h):
    return PARAMS['size']


def can_write(h):
    return False


def _may_go(h, now):
    """Whether connection ``h`` may take the free disk now, else how long
    to wait at most (seconds) before asking again."""
    if h == _state['last'] or PARAMS['idle_ms'] <= 0:
        return True, None
    scale = PARAMS['time_scale']
    if now - _state['slice_start'] >= PARAMS['slice_ms'] / 1e3 * scale:
        return True, None          # the last one's slice is over
    if _state['last'] in _waiting:
        return False, None         # it is back: it goes first
    expires = _state['last_done'] + PARAMS['idle_ms'] / 1e3 * scale
    if now >= expires:
        return True, None
    return False, expires - now


def pread(h, buf, offset, flags):
    count = len(buf)
    with _cv:
        _waiting.add(h)
        while True:
            if not _state['busy']:
                go, wait_s = _may_go(h, time.monotonic())
                if go:
                    break
                _cv.wait(wait_s)
            else:
                _cv.wait()
        _waiting.discard(h)
        _state['busy'] = True
        if h != _state['last']:
            _state['slice_start'] = time.monotonic()
        delay = service_s(abs(offset - _state['head']), count)
        _state['head'] = offset + count
    try:
        time.sleep(delay)
        buf[:] = bytes(count)
    finally:
        with _cv:
            _state['busy'] = False
            _state['last'] = h
            _state['last_done'] = time.monotonic()
            _cv.notify_all()
