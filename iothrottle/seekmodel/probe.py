"""The I/O shell of calibration: O_DIRECT probes of a device or file.

Everything that touches a disk or a clock for ``iothrottle-calibrate``
is here; the arithmetic is in ``iothrottle.seekmodel.model``.

* ``Target`` opens a block device or a large regular file with
  ``O_DIRECT`` (read-only unless writes are allowed), finds its size
  and the I/O scheduler of the block device beneath it
  (``/sys/dev/block/MAJ:MIN/queue/scheduler``, the parent's for a
  partition).  ``NbdTarget`` speaks NBD itself to an
  ``nbd+unix:///?socket=PATH`` export (the seek-disk fixture,
  ``iothrottle.seekmodel.fixture``), one connection per stream.
* ``measure_distance`` is one point of ``f(l)``: a single synchronous
  stream of ``request_size`` reads that alternates between two windows
  whose centres are ``l`` apart, each read at a fresh random aligned
  offset inside its window (``window = min(l / 4, 64 MiB)``, so the
  drive's read-ahead cache rarely hits and the mean distance between
  consecutive reads is exactly ``l``).
* ``measure_streams`` runs N threads, each a synchronous random reader
  of its own "file" (a region of the target), as seed 003's N processes
  did, and records every completion in order: aggregate bandwidth,
  per-stream shares and the service order from which alpha is counted.
* ``measure_qd`` runs ``q`` synchronous random readers (or writers) over
  the whole target: IOPS at ``q`` outstanding requests, for flash.

Buffers are anonymous ``mmap``s (page aligned, as ``O_DIRECT`` wants);
offsets and sizes are multiples of ``request_size`` (4096).  Threads do
the waiting: ``os.preadv`` releases the GIL, so N threads keep N
requests in flight at ~20 us of Python per request, fine for a disk and
far below what an NVMe device can do (a flash curve measured here stops
at what one Python process issues; say so when you use it).

In a regular file, offsets are file offsets: a file written in one go
on an ext4 or XFS filesystem is a few large extents, so file distance
is disk distance within a few percent, but a fragmented or sparse file
lies (holes are read without touching the disk: ``Target`` refuses a
file with less than 90 % of its size allocated).
"""

import mmap
import os
import random
import socket
import stat
import struct
import threading
import time
import urllib.parse

# The widest window a distance point reads in: large enough that the
# drive's read-ahead cache (8-64 MiB) rarely holds the next read.
MAX_WINDOW_BYTES = 64 << 20

# A target smaller than this cannot hold 8 streams' files and a
# distance curve worth calibrating.
MIN_TARGET_BYTES = 64 << 20

# A file with less of its size allocated is sparse: reads of holes
# never reach the device.
MIN_ALLOCATED_FRACTION = 0.9

# Chunk used to fill a new file: large writes, bounded memory.
FILL_CHUNK_BYTES = 1 << 20


class ProbeError(Exception):
    """Bad target or arguments; the message is one line for the user."""


class ProbeIOError(ProbeError):
    """An I/O error in the middle of a measurement."""


def parse_scheduler(text):
    """The active scheduler of a ``queue/scheduler`` file ("none
    [mq-deadline] kyber bfq" -> "mq-deadline"), None if none is marked.
    """
    for word in text.split():
        if word.startswith('[') and word.endswith(']'):
            return word[1:-1]
    return None


def block_device_of(st):
    """The sysfs directory of the whole block device under ``st``."""
    dev = st.st_rdev if stat.S_ISBLK(st.st_mode) else st.st_dev
    path = os.path.realpath('/sys/dev/block/%d:%d' % (os.major(dev),
                                                      os.minor(dev)))
    if os.path.exists(os.path.join(path, 'partition')):
        path = os.path.dirname(path)
    return path


def find_scheduler(st):
    """``(device name, scheduler or None)`` of the device under ``st``."""
    sysdir = block_device_of(st)
    try:
        with open(os.path.join(sysdir, 'queue', 'scheduler')) as f:
            return os.path.basename(sysdir), parse_scheduler(f.read())
    except OSError:
        return os.path.basename(sysdir), None


def create_file(path, size_bytes, progress=None):
    """Write a new file of ``size_bytes`` (rounded up to MiB) of random
    data, in one go so that it is a few large extents; fsync'd."""
    chunk = os.urandom(FILL_CHUNK_BYTES)
    chunks = -(-size_bytes // FILL_CHUNK_BYTES)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        for k in range(chunks):
            # A different first word per chunk: nothing below can dedup.
            os.write(fd, k.to_bytes(8, 'little') + chunk[8:])
            if progress and k % 256 == 255:
                progress('creating %s: %d/%d MiB' % (path, k + 1, chunks))
        os.fsync(fd)
    finally:
        os.close(fd)


class Target:
    """A block device or regular file opened for O_DIRECT probes."""

    def __init__(self, path, request_size=4096, allow_write=False):
        self.path = path
        self.request_size = request_size
        self.allow_write = allow_write
        try:
            st = os.stat(path)
        except FileNotFoundError:
            raise ProbeError('%s: no such file or device' % path)
        except OSError as e:
            raise ProbeError('%s: %s' % (path, e.strerror))
        self.is_block = stat.S_ISBLK(st.st_mode)
        if not (self.is_block or stat.S_ISREG(st.st_mode)):
            raise ProbeError('%s: not a block device or regular file'
                             % path)
        flags = (os.O_RDWR if allow_write else os.O_RDONLY) | os.O_DIRECT
        try:
            self.fd = os.open(path, flags)
        except OSError as e:
            raise ProbeError('%s: cannot open with O_DIRECT: %s'
                             % (path, e.strerror))
        try:
            self.size_bytes = os.lseek(self.fd, 0, os.SEEK_END)
            if self.size_bytes < MIN_TARGET_BYTES:
                raise ProbeError('%s: too small (%d bytes, need at least '
                                 '%d)' % (path, self.size_bytes,
                                          MIN_TARGET_BYTES))
            if not self.is_block and (st.st_blocks * 512 < self.size_bytes
                                      * MIN_ALLOCATED_FRACTION):
                raise ProbeError('%s: sparse file (%d of %d bytes '
                                 'allocated): reads of holes never reach '
                                 'the disk' % (path, st.st_blocks * 512,
                                               self.size_bytes))
            self.device, self.scheduler = find_scheduler(st)
            self.rotational = _rotational(st)
            self._check_direct_read()
        except BaseException:
            os.close(self.fd)
            raise

    def _check_direct_read(self):
        buf = mmap.mmap(-1, self.request_size)
        try:
            os.preadv(self.fd, [buf], 0)
        except OSError as e:
            raise ProbeError('%s: O_DIRECT read failed: %s'
                             % (self.path, e.strerror))
        finally:
            buf.close()

    def close(self):
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def align(self, offset):
        return offset - offset % self.request_size

    @property
    def slots(self):
        """Number of request-sized aligned slots in the target."""
        return self.size_bytes // self.request_size

    def handle(self):
        """A per-thread I/O handle (``read(offset)``, ``write(offset)``,
        ``close()``) with its own page-aligned buffer."""
        return _FileHandle(self)


def _rotational(st):
    try:
        with open(os.path.join(block_device_of(st), 'queue',
                               'rotational')) as f:
            return f.read().strip() == '1'
    except OSError:
        return None


class _FileHandle:
    def __init__(self, target):
        self.fd = target.fd
        self.buf = mmap.mmap(-1, target.request_size)

    def read(self, offset):
        os.preadv(self.fd, [self.buf], offset)

    def write(self, offset):
        os.pwritev(self.fd, [self.buf], offset)

    def close(self):
        self.buf.close()


# NBD protocol constants (the NBD project's doc/proto.md): fixed
# newstyle handshake, NBD_OPT_EXPORT_NAME, simple replies.
NBD_MAGIC = b'NBDMAGIC'
NBD_OPT_MAGIC = b'IHAVEOPT'
NBD_FLAG_FIXED_NEWSTYLE = 1
NBD_FLAG_NO_ZEROES = 2
NBD_OPT_EXPORT_NAME = 1
NBD_REQUEST_MAGIC = 0x25609513
NBD_SIMPLE_REPLY_MAGIC = 0x67446698
NBD_CMD_READ = 0
NBD_CMD_WRITE = 1
NBD_CMD_DISC = 2
NBD_FLAG_READ_ONLY = 2


def parse_nbd_uri(text):
    """The unix socket and export of ``nbd+unix:///EXPORT?socket=PATH``,
    or None if ``text`` is not such a URI."""
    uri = urllib.parse.urlsplit(text)
    if uri.scheme != 'nbd+unix':
        return None
    sockets = urllib.parse.parse_qs(uri.query).get('socket')
    if not sockets:
        raise ProbeError('%s: an nbd+unix URI needs ?socket=PATH' % text)
    return sockets[0], uri.path.lstrip('/')


class _NbdConnection:
    """One NBD connection, one request at a time (a synchronous stream,
    like one process of seed 003).  Enough of the protocol for
    nbdkit: fixed newstyle, NBD_OPT_EXPORT_NAME, simple replies."""

    def __init__(self, socket_path, export, request_size):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.request_size = request_size
        self.buf = bytearray(request_size)
        self.handle_id = 0
        try:
            self.sock.connect(socket_path)
            if self._recv(16) != NBD_MAGIC + NBD_OPT_MAGIC:
                raise OSError('not a newstyle NBD server')
            flags, = struct.unpack('>H', self._recv(2))
            if not flags & NBD_FLAG_FIXED_NEWSTYLE:
                raise OSError('NBD server is not fixed newstyle')
            no_zeroes = flags & NBD_FLAG_NO_ZEROES
            self.sock.sendall(struct.pack(
                '>I', NBD_FLAG_FIXED_NEWSTYLE | no_zeroes))
            name = export.encode()
            self.sock.sendall(NBD_OPT_MAGIC + struct.pack(
                '>II', NBD_OPT_EXPORT_NAME, len(name)) + name)
            self.size_bytes, self.flags = struct.unpack('>QH',
                                                        self._recv(10))
            if not no_zeroes:
                self._recv(124)
        except BaseException:
            self.sock.close()
            raise

    def _recv(self, n):
        data = bytearray()
        while len(data) < n:
            chunk = self.sock.recv(n - len(data))
            if not chunk:
                raise OSError('NBD server closed the connection')
            data += chunk
        return bytes(data)

    def _request(self, command, offset, payload=b''):
        self.handle_id += 1
        self.sock.sendall(struct.pack(
            '>IHHQQI', NBD_REQUEST_MAGIC, 0, command, self.handle_id, offset,
            self.request_size) + payload)
        magic, error, handle = struct.unpack('>IIQ', self._recv(16))
        if magic != NBD_SIMPLE_REPLY_MAGIC or handle != self.handle_id:
            raise OSError('bad NBD reply')
        if error:
            raise OSError(error, os.strerror(error))

    def read(self, offset):
        self._request(NBD_CMD_READ, offset)
        view = memoryview(self.buf)
        got = 0
        while got < self.request_size:
            n = self.sock.recv_into(view[got:])
            if not n:
                raise OSError('NBD server closed the connection')
            got += n

    def write(self, offset):
        self._request(NBD_CMD_WRITE, offset, bytes(self.buf))

    def close(self):
        try:
            self.sock.sendall(struct.pack(
                '>IHHQQI', NBD_REQUEST_MAGIC, 0, NBD_CMD_DISC, 0, 0, 0))
        except OSError:
            pass
        self.sock.close()


class NbdTarget(Target):
    """An NBD export on a unix socket (``nbd+unix:///?socket=PATH``),
    one connection per stream: no kernel nbd module needed.  There is no
    host I/O scheduler in the way: the server decides the order."""

    def __init__(self, path, request_size=4096, allow_write=False):
        self.path = path
        self.request_size = request_size
        self.allow_write = allow_write
        self.socket_path, self.export = parse_nbd_uri(path)
        self.is_block = False
        self.device = 'nbd'
        self.scheduler = None
        self.rotational = None
        self.fd = None
        try:
            conn = self.handle()
        except OSError as e:
            raise ProbeError('%s: cannot connect: %s' % (path, e))
        self.size_bytes = conn.size_bytes
        read_only = conn.flags & NBD_FLAG_READ_ONLY
        conn.close()
        if self.size_bytes < MIN_TARGET_BYTES:
            raise ProbeError('%s: too small (%d bytes, need at least %d)'
                             % (path, self.size_bytes, MIN_TARGET_BYTES))
        if allow_write and read_only:
            raise ProbeError('%s: the export is read-only' % path)

    def handle(self):
        return _NbdConnection(self.socket_path, self.export,
                              self.request_size)

    def close(self):
        pass


def open_target(path, request_size=4096, allow_write=False):
    """A ``Target`` for a device or file path, an ``NbdTarget`` for an
    ``nbd+unix://`` URI."""
    if path.startswith('nbd+unix:'):
        return NbdTarget(path, request_size, allow_write)
    return Target(path, request_size, allow_write)


class _Recorder:
    """Completions of all streams, in the order they were recorded."""

    def __init__(self):
        self.lock = threading.Lock()
        self.order = []      # (stream, offset)

    def add(self, stream, offset):
        with self.lock:
            self.order.append((stream, offset))


def _reader(target, stream, windows, deadline, recorder, seed, write,
            errors):
    """One synchronous stream: a request at a random aligned offset in
    each window in turn, until ``deadline``."""
    rng = random.Random(seed)
    size = target.request_size
    k = offset = 0
    try:
        handle = target.handle()
    except OSError as e:
        errors.append('%s: %s' % (target.path, e))
        return
    io = handle.write if write else handle.read
    try:
        while time.monotonic() < deadline:
            start, slots = windows[k % len(windows)]
            offset = start + rng.randrange(slots) * size
            io(offset)
            recorder.add(stream, offset)
            k += 1
    except OSError as e:
        errors.append('%s: I/O error at offset %d: %s'
                      % (target.path, offset, e.strerror or e))
    finally:
        handle.close()


def _window(target, centre, width):
    """``(start, slots)`` of an aligned window of about ``width`` bytes
    centred on ``centre``, inside the target."""
    size = target.request_size
    slots = max(1, int(width) // size)
    start = target.align(int(centre - slots * size / 2))
    start = min(max(0, start), target.align(target.size_bytes - slots * size))
    return start, slots


def _run(target, stream_windows, seconds, seed, write=False):
    """Run one thread per entry of ``stream_windows`` for ``seconds``;
    returns ``(elapsed_s, completion order)``."""
    if write and not target.allow_write:
        raise ProbeError('%s: refusing to write without --allow-write'
                         % target.path)
    recorder = _Recorder()
    errors = []
    start = time.monotonic()
    deadline = start + seconds
    threads = [threading.Thread(
        target=_reader, args=(target, k, windows, deadline, recorder,
                              seed * 1000 + k, write, errors),
        daemon=True) for k, windows in enumerate(stream_windows)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - start
    if errors:
        raise ProbeIOError(errors[0])
    return elapsed, recorder.order


def measure_distance(target, distance_bytes, seconds, seed=0):
    """One point of f(l): ``(mean distance between consecutive reads,
    bandwidth in bytes/s, requests)``."""
    if distance_bytes <= 0:
        raise ProbeError('distance must be > 0, got %d' % distance_bytes)
    width = min(distance_bytes / 4.0, MAX_WINDOW_BYTES)
    if distance_bytes + width > target.size_bytes:
        raise ProbeError('%s: distance %d does not fit in %d bytes'
                         % (target.path, distance_bytes, target.size_bytes))
    first = (target.size_bytes - distance_bytes) / 2.0
    windows = [_window(target, first, width),
               _window(target, first + distance_bytes, width)]
    elapsed, order = _run(target, [windows], seconds, seed)
    offsets = [offset for _stream, offset in order]
    if len(offsets) > 1:
        mean = sum(abs(b - a) for a, b in zip(offsets, offsets[1:])) / (
            len(offsets) - 1.0)
    else:
        mean = float(distance_bytes)
    return mean, len(order) * target.request_size / elapsed, len(order)


def file_layout(target, n, file_bytes, span_bytes=None):
    """Offsets of ``n`` files of ``file_bytes`` spread evenly over the
    first ``span_bytes`` of the target (default: all of it), first at 0
    and last at the end (seed 003 placed its VM images in fixed
    partitions and moved them to vary l_ij)."""
    span = min(span_bytes or target.size_bytes, target.size_bytes)
    room = span - file_bytes
    if room < 0 or (n > 1 and room < (n - 1) * file_bytes):
        raise ProbeError('%s: %d files of %d bytes do not fit in %d bytes'
                         % (target.path, n, file_bytes, span))
    if n == 1:
        return [0]
    return [target.align(int(room * k / (n - 1))) for k in range(n)]


class StreamRun:
    """The outcome of ``measure_streams``."""

    def __init__(self, offsets, file_bytes, elapsed_s, order, request_size):
        self.offsets = offsets
        self.file_bytes = file_bytes
        self.elapsed_s = elapsed_s
        self.order = order
        self.request_size = request_size

    @property
    def n(self):
        return len(self.offsets)

    @property
    def requests(self):
        return len(self.order)

    @property
    def bandwidth_bytes_sec(self):
        return self.requests * self.request_size / self.elapsed_s

    def shares(self):
        counts = [0] * self.n
        for stream, _offset in self.order:
            counts[stream] += 1
        total = float(sum(counts)) or 1.0
        return [c / total for c in counts]

    def stream_ids(self):
        return [stream for stream, _offset in self.order]

    def mean_distance_bytes(self):
        """Mean distance from the end of each served request to the start
        of the next, in the recorded order: the l_ave the device saw."""
        offsets = [offset for _stream, offset in self.order]
        if len(offsets) < 2:
            return None
        return sum(abs(b - a - self.request_size)
                   for a, b in zip(offsets, offsets[1:])) / (
                       len(offsets) - 1.0)


def measure_streams(target, n, file_bytes, seconds, seed=0,
                    span_bytes=None):
    """N synchronous random readers, one per file of ``file_bytes``,
    the files spread over ``span_bytes``."""
    offsets = file_layout(target, n, file_bytes, span_bytes)
    windows = [[(offset, file_bytes // target.request_size)]
               for offset in offsets]
    elapsed, order = _run(target, windows, seconds, seed)
    return StreamRun(offsets, file_bytes, elapsed, order,
                     target.request_size)


def measure_qd(target, outstanding, seconds, write=False, seed=0):
    """IOPS of ``outstanding`` synchronous random readers (writers) over
    the whole target."""
    whole = [[(0, target.slots)] for _ in range(outstanding)]
    elapsed, order = _run(target, whole, seconds, seed, write)
    return len(order) / elapsed
