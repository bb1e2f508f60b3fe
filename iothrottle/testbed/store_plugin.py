"""An nbdkit Python plugin: a shared disk with one FIFO queue.

Run by ``nbdkit python`` (Debian: ``nbdkit-plugin-python``) with
nbdkit's own Python, so it imports nothing of iothrottle; started by
``iothrottle.testbed.store.NbdStore``.  It serves the image files of one
directory (``dir=``; the NBD export name is the file name) and models a
disk with a single actuator and a FIFO request queue:

* every request, from any connection, takes a ticket when it arrives and
  is served strictly in ticket order, one at a time;
* serving takes ``delay_ms`` (reads and writes alike, any size), then
  the data is read from or written to the image.

So the store completes ``1000 / delay_ms`` requests per second in total,
and a guest's share of it is its share of the requests in the queue: a
guest with ten requests outstanding gets ten times the service of a
guest with one, as on a real disk under a FIFO (noop) elevator.  That is
the contention of seed 000.

Why not ``nbdkit --filter=noparallel --filter=delay file``: that store
serialises with a plain mutex, and with nbdkit's SERIALIZE_ALL_REQUESTS
model each connection has one request in flight at most, so the share a
guest gets depends on which thread the kernel wakes first.  On the same
2-core machine one run of the seed-000 experiment gave the 1-process
neighbour 19 % of its intervals satisfied without control and another
run 100 %: an experiment that only sometimes has contention.  Tickets
make the order, and so the experiment, repeatable.

Parameters: ``dir`` (required), ``delay_ms`` (default 4; fractions
allowed), ``slowdown_file`` (optional): a file holding a factor >= 1
by which every request's ``delay_ms`` is multiplied while it exists
(the fault bench's store slowdown; re-read when its mtime changes, a
factor that is not a finite number >= 1 is ignored and logged).
"""

import builtins
import math
import os
import sys
import threading
import time

API_VERSION = 2

PARAMS = {'dir': None, 'delay_ms': 4.0, 'slowdown_file': None}

# The slowdown factor in force and the mtime of the file it was read
# from (None: no file); touched only by the request being served.
_slowdown = {'mtime_ns': None, 'factor': 1.0}

# Ticket dispenser of the FIFO queue: the next ticket to hand out and
# the ticket being served; guarded by _cv.
_queue = {'next': 0, 'serving': 0}
_cv = threading.Condition()


def config(key, value):
    if key == 'dir':
        PARAMS['dir'] = os.path.realpath(value)
    elif key == 'delay_ms':
        delay_ms = float(value)
        if delay_ms < 0:
            raise RuntimeError('delay_ms must be >= 0, got %r' % value)
        PARAMS['delay_ms'] = delay_ms
    elif key == 'slowdown_file':
        PARAMS['slowdown_file'] = os.path.realpath(value)
    else:
        raise RuntimeError('unknown parameter %r (known: dir, delay_ms, '
                           'slowdown_file)' % key)


def config_complete():
    if not PARAMS['dir'] or not os.path.isdir(PARAMS['dir']):
        raise RuntimeError('dir=%r is not a directory' % PARAMS['dir'])


def thread_model():
    import nbdkit   # only inside nbdkit
    return nbdkit.THREAD_MODEL_PARALLEL


def _image_path(name):
    """The image of export ``name``, refusing anything outside dir."""
    if not name or '/' in name or name.startswith('.'):
        raise RuntimeError('bad export name %r' % name)
    path = os.path.join(PARAMS['dir'], name)
    if not os.path.isfile(path):
        raise RuntimeError('no export %r' % name)
    return path


def open(readonly):
    import nbdkit   # only inside nbdkit
    flags = os.O_RDONLY if readonly else os.O_RDWR
    return {'fd': os.open(_image_path(nbdkit.export_name()), flags)}


def close(h):
    os.close(h['fd'])


def get_size(h):
    return os.fstat(h['fd']).st_size


def can_multi_conn(h):
    return True


def can_flush(h):
    return True


def flush(h, flags):
    # The images are test scratch space; the page cache is durable enough
    # and a real fsync would add the host disk's latency to the model.
    pass


def is_factor(value):
    """Whether ``value`` is a slowdown factor: a finite number >= 1."""
    return (isinstance(value, (int, float)) and math.isfinite(value)
            and value >= 1)


def parse_factor(text):
    """The slowdown factor in ``text``, or None if it is not one
    (``is_factor``)."""
    try:
        factor = float(text)
    except ValueError:
        return None
    return factor if is_factor(factor) else None


def _factor():
    """The slowdown factor now: the number in ``slowdown_file``, read
    again whenever its mtime changes, 1 without the file."""
    path = PARAMS['slowdown_file']
    if path is None:
        return 1.0
    try:
        mtime_ns = os.stat(path).st_mtime_ns
    except FileNotFoundError:
        _slowdown.update(mtime_ns=None, factor=1.0)
        return 1.0
    if mtime_ns != _slowdown['mtime_ns']:
        # builtins: this module's open() is nbdkit's callback.
        with builtins.open(path) as f:
            text = f.read().strip()
        factor = parse_factor(text)
        if factor is None:
            sys.stderr.write('store: slowdown factor %r in %s is not a '
                             'finite number >= 1; ignored\n' % (text, path))
        _slowdown.update(mtime_ns=mtime_ns, factor=factor or 1.0)
    return _slowdown['factor']


def _serve(io):
    """Run ``io`` in FIFO order after ``delay_ms`` (times the slowdown
    factor), one request at a time over all connections."""
    with _cv:
        ticket = _queue['next']
        _queue['next'] += 1
        while _queue['serving'] != ticket:
            _cv.wait()
    try:
        time.sleep(PARAMS['delay_ms'] * _factor() / 1e3)
        return io()
    finally:
        with _cv:
            _queue['serving'] += 1
            _cv.notify_all()


def pread(h, buf, offset, flags):
    def io():
        data = os.pread(h['fd'], len(buf), offset)
        buf[:len(data)] = data
        buf[len(data):] = bytes(len(buf) - len(data))
    _serve(io)


def pwrite(h, buf, offset, flags):
    def io():
        view = memoryview(buf)
        done = 0
        while done < len(view):
            done += os.pwrite(h['fd'], view[done:], offset + done)
    _serve(io)
