"""The store under a real Linux block layer: nbdkit -> nbdfuse -> loop.

Over plain NBD (the default testbed) QEMU talks to nbdkit directly and no
host I/O scheduler ever sees a guest's request.  With ``block_layer=SCHED``
each storage domain's store becomes a host block device::

    nbdkit (the store, as today)
      -> nbdfuse          the export as the file MOUNT/disk on a FUSE mount
      -> losetup --direct-io=on -P MOUNT/disk
                          /dev/loopN, a block device with a request queue
                          whose queue/scheduler is SCHED (none,
                          mq-deadline, kyber, bfq)
      -> BLKPG partitions loopNp1, p2, ...: one per guest, at the
                          guest's offset and size in the store, each with
                          a device node WORKDIR/disks/<guest> (and the
                          whole disk one at WORKDIR/blockdev: the kernel
                          takes cgroup limits, blk-throttle's, on a whole
                          disk only)
      -> <disk type='block'> with cache='none' io='native' (seed 002's
                          recommendation), one partition per guest

Why partitions and not one loop device per guest (``--offset``/
``--sizelimit``), nor device-mapper: the point is that ONE request queue
sees every consolidated guest's requests, as the disk queue of seed 001's
host did; a scheduler only arbitrates among the requests of its own queue,
so loop devices per guest would give each guest a private queue and
nothing to arbitrate.  Partitions share their disk's queue and its
scheduler (and the compute agent resolves a partition to its disk, so all
guests are one storage domain, ``local:<host>:loopN``).  device-mapper
linear targets would do the same, but this host's kernel has no
device-mapper; partitions need nothing but ``losetup -P``.  They are
added with the BLKPG ioctl (``addpart``), not from a partition table in
the store, so the store's bytes stay the guests' bytes (the seek disk is
read-only and reads as zeros anyway) and each guest's disk keeps the
size it was given.

The queue is marked rotational: both stores model a single-actuator
disk, and BFQ and mq-deadline decide (e.g. whether to idle for a
synchronous queue) by that flag.  A loop device over a FUSE file would
otherwise report itself non-rotational, as if it were flash.

Set-up and tear-down leave nothing behind.  What a block layer creates
is named after the testbed's work directory, so :func:`cleanup` finds it
even with no state file (a crash between two steps): the loop devices
whose backing file lies under the directory, the FUSE mounts under it and
the nbdfuse processes serving them.  Tear-down order matters: the loop
device first (it holds the FUSE file open), then the mount (nbdfuse
exits with it), then nbdkit (the caller's store).
"""

import dataclasses
import glob
import logging
import os
import signal
import socket
import stat
import subprocess
import time

from iothrottle.testbed import store as store_mod

LOG = logging.getLogger(__name__)

SCHEDULERS = ('none', 'mq-deadline', 'kyber', 'bfq')

NBDFUSE = '/usr/bin/nbdfuse'
LOSETUP = '/usr/sbin/losetup'
ADDPART = '/usr/bin/addpart'
FUSERMOUNT = '/usr/bin/fusermount3'
UMOUNT = '/usr/bin/umount'

SECTOR = 512
# Guests' partitions start on MiB boundaries: any request a guest aligns
# to its own disk is then aligned on the loop device (and on the store's
# 4 KiB O_DIRECT granularity) too.
ALIGN_BYTES = 1 << 20
# How long nbdfuse may take to mount (it connects to nbdkit first), and
# a device node may take to appear after the ioctl that adds it.
START_TIMEOUT_S = 20.0
NODE_TIMEOUT_S = 5.0


class BlockLayerError(RuntimeError):
    pass


@dataclasses.dataclass(frozen=True)
class Slice:
    """One guest's disk inside the store: bytes [offset, offset+size)."""
    name: str
    offset_bytes: int
    size_bytes: int

    @property
    def end_bytes(self):
        return self.offset_bytes + self.size_bytes


def layout(disks, align=ALIGN_BYTES):
    """Place guest disks in one store; pure.

    ``disks`` is a sequence of ``(name, size_bytes, offset_bytes or
    None)``: a disk without an offset goes right after the previous one
    (rounded up to ``align``).  Returns the :class:`Slice` list in the
    given order; raises ``ValueError`` naming the culprit for a size that
    is not positive, an offset or size off the alignment, or two disks
    that overlap.
    """
    slices, end = [], 0
    for name, size, offset in disks:
        if size <= 0 or size % SECTOR:
            raise ValueError('disk %r: size %r is not a positive multiple '
                             'of %d bytes' % (name, size, SECTOR))
        if offset is None:
            offset = -(-end // align) * align
        elif offset < 0 or offset % align:
            raise ValueError('disk %r: offset %r is not a non-negative '
                             'multiple of %d bytes' % (name, offset, align))
        slices.append(Slice(name, int(offset), int(size)))
        end = max(end, offset + size)
    ordered = sorted(slices, key=lambda s: s.offset_bytes)
    for a, b in zip(ordered, ordered[1:]):
        if b.offset_bytes < a.end_bytes:
            raise ValueError('disks %r and %r overlap in the store'
                             % (a.name, b.name))
    return slices


def store_size(slices, align=ALIGN_BYTES):
    """Bytes a store needs to hold ``slices`` (rounded up to ``align``)."""
    end = max(s.end_bytes for s in slices)
    return -(-end // align) * align


def active_scheduler(text):
    """'none mq-deadline [bfq]' -> 'bfq' (None if none is marked)."""
    for word in text.split():
        if word.startswith('[') and word.endswith(']'):
            return word[1:-1]
    return None


# The module file of each scheduler that can be one (block/Makefile).
SCHEDULER_MODULES = {'mq-deadline': 'mq-deadline.ko',
                     'kyber': 'kyber-iosched.ko', 'bfq': 'bfq.ko'}


def scheduler_offered(name, sys_block='/sys/block', modules_dir=None):
    """Whether the running kernel has I/O scheduler ``name``: registered
    (listed in a queue's ``scheduler`` file) or a module it can load on
    a switch (named in ``modules.dep`` or ``modules.builtin`` under
    ``/lib/modules/RELEASE``).  A kernel built without it offers it
    nowhere, and a switch to it fails with EINVAL."""
    check_scheduler(name)
    if name == 'none':
        return True
    for path in glob.glob(os.path.join(sys_block, '*', 'queue',
                                       'scheduler')):
        try:
            with open(path) as f:
                if name in (w.strip('[]') for w in f.read().split()):
                    return True
        except OSError:
            continue
    if modules_dir is None:
        modules_dir = os.path.join('/lib/modules', os.uname().release)
    module = '/' + SCHEDULER_MODULES[name]
    for index in ('modules.dep', 'modules.builtin'):
        try:
            with open(os.path.join(modules_dir, index)) as f:
                if any(module in line.split(':')[0] for line in f):
                    return True
        except OSError:
            continue
    return False


def check_scheduler(name):
    if name not in SCHEDULERS:
        raise ValueError('unknown I/O scheduler %r (known: %s)'
                         % (name, ', '.join(SCHEDULERS)))
    return name


# --------------------------------------------------------------------------
# Discovery (by path: works without any state)

def _under(path, directory):
    directory = os.path.realpath(directory).rstrip('/') + '/'
    return path.startswith(directory)


def find_loops(directory, sys_block='/sys/block'):
    """Loop devices ('loop3', ...) whose backing file is under
    ``directory``."""
    found = []
    for backing in glob.glob(os.path.join(sys_block,
                                          'loop*/loop/backing_file')):
        try:
            with open(backing) as f:
                path = f.read().strip()
        except OSError:
            continue
        # The kernel appends ' (deleted)' when the file is gone.
        if path.endswith(' (deleted)'):
            path = path[:-len(' (deleted)')]
        if _under(path, directory):
            found.append(os.path.basename(os.path.dirname(
                os.path.dirname(backing))))
    return sorted(found)


def _unescape(field):
    """A mountinfo path field: octal escapes (\\040 for a space)."""
    return field.encode().decode('unicode_escape')


def find_mounts(directory, mountinfo='/proc/self/mountinfo'):
    """Mount points under ``directory`` (deepest first)."""
    found = []
    try:
        with open(mountinfo) as f:
            for line in f:
                point = _unescape(line.split()[4])
                if _under(point, directory):
                    found.append(point)
    except OSError:
        pass
    return sorted(found, key=len, reverse=True)


def find_nbdfuse(directory):
    """PIDs of nbdfuse processes whose mount point is under
    ``directory``."""
    pids = []
    for entry in os.listdir('/proc'):
        if not entry.isdigit():
            continue
        try:
            with open('/proc/%s/cmdline' % entry, 'rb') as f:
                argv = [a.decode(errors='replace')
                        for a in f.read().split(b'\0') if a]
        except OSError:
            continue
        if argv and os.path.basename(argv[0]) == 'nbdfuse' and any(
                _under(a, directory) for a in argv[1:]):
            pids.append(int(entry))
    return pids


def _run(cmd, check=True, timeout=60):
    LOG.debug('run: %s', ' '.join(cmd))
    proc = subprocess.run(cmd, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True,
                          timeout=timeout)
    if check and proc.returncode != 0:
        raise BlockLayerError('%s failed (%d): %s' % (
            ' '.join(cmd), proc.returncode, proc.stdout.strip()))
    return proc


def cleanup(directory, timeout=10.0):
    """Remove every loop device, FUSE mount and nbdfuse of ``directory``.

    Idempotent; never raises.  Returns a list of error strings.
    """
    errors = []
    for loop in find_loops(directory):
        proc = _run([LOSETUP, '-d', '/dev/' + loop], check=False)
        if proc.returncode != 0:
            errors.append('losetup -d /dev/%s: %s' % (loop,
                                                      proc.stdout.strip()))
        else:
            LOG.debug('detached /dev/%s', loop)
    # A detached loop device lets go of its file once its last opener
    # (a partition QEMU still had open) closes it; wait for that before
    # unmounting, within the timeout.
    deadline = time.monotonic() + timeout
    while find_loops(directory) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = find_loops(directory)
    if left:
        errors.append('loop device(s) still bound: %s' % ', '.join(left))
    for point in find_mounts(directory):
        proc = _run([FUSERMOUNT, '-u', point], check=False)
        if proc.returncode != 0:
            # A dead nbdfuse or a busy mount: detach it lazily, so nothing
            # new can reach it and it goes when its last user does.
            proc = _run([UMOUNT, '-l', point], check=False)
            if proc.returncode != 0:
                errors.append('unmount %s: %s' % (point,
                                                  proc.stdout.strip()))
    deadline = time.monotonic() + timeout
    for pid in find_nbdfuse(directory):
        # Unmounting ends nbdfuse; a hung one gets SIGTERM, then SIGKILL.
        while store_mod.alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        for sig in (signal.SIGTERM, signal.SIGKILL):
            if not store_mod.alive(pid):
                break
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                break
            stop = time.monotonic() + 2.0
            while store_mod.alive(pid) and time.monotonic() < stop:
                time.sleep(0.05)
        _reap(pid)
    return errors


def _reap(pid):
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass


# --------------------------------------------------------------------------

class BlockLayer(object):
    """One store as a host block device with guests' partitions.

    :param workdir: the testbed's directory; gets ``fuse/`` (the mount
        point, file ``fuse/disk``), ``nbdfuse.pid`` and ``nbdfuse.log``.
    :param scheduler: one of :data:`SCHEDULERS`.
    :param nbd_uri: the store's NBD URI (``nbd+unix:///EXPORT?socket=S``).
    :param readonly: the store is read-only (the loop device and the
        guests' disks are too).
    :param rotational: what ``queue/rotational`` says (see the module doc).
    """

    def __init__(self, workdir, scheduler, nbd_uri=None, readonly=False,
                 rotational=True):
        self.workdir = workdir
        self.scheduler = check_scheduler(scheduler)
        self.nbd_uri = nbd_uri
        self.readonly = readonly
        self.rotational = rotational
        self.mountpoint = os.path.join(workdir, 'fuse')
        self.file = os.path.join(self.mountpoint, 'disk')
        self.pidfile = os.path.join(workdir, 'nbdfuse.pid')
        self.logfile = os.path.join(workdir, 'nbdfuse.log')
        self.node_dir = os.path.join(workdir, 'disks')
        # The whole disk's node, for what only a whole disk takes (the
        # blk-throttle limits of libvirt's <blkiotune><device>).
        self.disk_node = os.path.join(workdir, 'blockdev')
        self.loop = None           # 'loop3'
        self.nbdfuse_pid = None
        self.partitions = {}       # guest name -> '/dev/loop3p1'
        self._proc = None

    @property
    def device(self):
        return '/dev/%s' % self.loop if self.loop else None

    @property
    def domain_key(self):
        """The storage domain key the compute agent gives the guests'
        disks (a partition resolves to its disk)."""
        return 'local:%s:%s' % (socket.gethostname(), self.loop)

    def sysfs(self, name):
        return '/sys/block/%s/queue/%s' % (self.loop, name)

    def state(self):
        return {'scheduler': self.scheduler, 'loop': self.loop,
                'mountpoint': self.mountpoint,
                'nbdfuse_pid': self.nbdfuse_pid,
                'partitions': dict(self.partitions)}

    # -- set-up
    def start(self, slices, on_step=None):
        """Mount, attach, set the scheduler, add the partitions.

        ``on_step()`` is called after each step that creates something
        (the caller records the state).  On failure what was made is left
        for :func:`cleanup` (the caller's tear-down runs it).
        """
        on_step = on_step or (lambda: None)
        self._mount()
        on_step()
        self._attach()
        self._make_node(self.disk_node, '/sys/block/%s/dev' % self.loop)
        on_step()
        self.set_scheduler(self.scheduler)
        self._write_queue('rotational', '1' if self.rotational else '0')
        for number, piece in enumerate(slices, 1):
            self.partitions[piece.name] = self._add_partition(number, piece)
        on_step()
        return self.device

    def _mount(self):
        os.makedirs(self.mountpoint, exist_ok=True)
        if os.path.exists(self.pidfile):
            os.unlink(self.pidfile)
        cmd = [NBDFUSE, '-P', self.pidfile]
        if self.readonly:
            cmd.append('-r')
        cmd += [self.file, self.nbd_uri]
        LOG.info('mounting the store: %s', ' '.join(cmd))
        with open(self.logfile, 'ab') as log:
            # nbdfuse stays in the foreground; its own session keeps it
            # out of the caller's terminal signals (it is stopped by
            # unmounting, see cleanup()).
            proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL,
                                    stdout=log, stderr=log,
                                    start_new_session=True, close_fds=True)
        self.nbdfuse_pid = proc.pid
        deadline = time.monotonic() + START_TIMEOUT_S
        while not os.path.exists(self.pidfile):
            if proc.poll() is not None:
                raise BlockLayerError('nbdfuse exited (%s): %s' % (
                    proc.returncode, self._log_tail()))
            if time.monotonic() > deadline:
                raise BlockLayerError('nbdfuse did not mount within %.0f s'
                                      % START_TIMEOUT_S)
            time.sleep(0.02)
        self._proc = proc

    def _attach(self):
        cmd = [LOSETUP, '--find', '--show', '--direct-io=on', '-P']
        if self.readonly:
            cmd.append('-r')
        dev = _run(cmd + [self.file]).stdout.strip()
        self.loop = os.path.basename(dev)
        with open('/sys/block/%s/loop/dio' % self.loop) as f:
            if f.read().strip() != '1':
                raise BlockLayerError('%s: direct I/O did not take' % dev)
        LOG.info('store on %s (backing %s)', dev, self.file)

    def _write_queue(self, name, value):
        try:
            with open(self.sysfs(name), 'w') as f:
                f.write(value)
        except OSError as exc:
            raise BlockLayerError('cannot set %s to %r: %s'
                                  % (self.sysfs(name), value, exc))

    def set_scheduler(self, name):
        """Switch the queue's scheduler (also on a running testbed)."""
        check_scheduler(name)
        self._write_queue('scheduler', name)
        active = self.current_scheduler()
        if active != name:
            raise BlockLayerError('%s: scheduler is %r after asking for %r'
                                  % (self.device, active, name))
        self.scheduler = name

    def current_scheduler(self):
        with open(self.sysfs('scheduler')) as f:
            return active_scheduler(f.read())

    def set_iosched(self, name, value):
        """Write a tunable of the scheduler (``queue/iosched/NAME``)."""
        self._write_queue('iosched/%s' % name, str(value))

    def _add_partition(self, number, piece):
        _run([ADDPART, self.device, str(number),
              str(piece.offset_bytes // SECTOR),
              str(piece.size_bytes // SECTOR)])
        os.makedirs(self.node_dir, exist_ok=True)
        return self._make_node(
            os.path.join(self.node_dir, piece.name),
            '/sys/class/block/%sp%d/dev' % (self.loop, number))

    @staticmethod
    def _make_node(node, dev_file):
        """A block device node at ``node`` for the device whose sysfs
        ``dev`` file is ``dev_file`` (waiting for it to appear)."""
        deadline = time.monotonic() + NODE_TIMEOUT_S
        while not os.path.exists(dev_file):
            if time.monotonic() > deadline:
                raise BlockLayerError('%s did not appear' % dev_file)
            time.sleep(0.02)
        with open(dev_file) as f:
            major, minor = (int(x) for x in f.read().split(':'))
        # Nodes live in the testbed's directory, not in /dev: the
        # testbed may run libvirtd in a mount namespace with a private
        # copy of /dev (host.py, the KVM quirk) that never sees a node
        # made after it started; the directory it sees as we do.
        if os.path.lexists(node):
            os.unlink(node)
        os.mknod(node, 0o600 | stat.S_IFBLK, os.makedev(major, minor))
        return node

    def _log_tail(self):
        return store_mod.log_tail(self.logfile)

    # -- tear-down
    def stop(self):
        """Remove what this (or any earlier) block layer of the directory
        left; returns error strings."""
        errors = cleanup(self.workdir)
        if self._proc is not None:
            try:
                self._proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
            self._proc = None
        self.loop = None
        self.nbdfuse_pid = None
        self.partitions = {}
        return errors
