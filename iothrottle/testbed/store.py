"""The shared store: one nbdkit process serving every guest disk.

All guest disks are exports of ONE ``nbdkit`` running the Python plugin
:mod:`iothrottle.testbed.store_plugin` (one sparse image per guest in a
directory, the export name is the file name)::

    nbdkit python .../store_plugin.py dir=DIR delay_ms=N

The plugin serves every request of every connection from one FIFO queue,
one at a time, each taking ``delay_ms``: the store completes at most
``1000 / delay_ms`` requests per second in total, whatever their size,
shared by all guests in proportion to the requests each has queued. One
guest bursting starves its neighbours, as in seed 000. That capacity is
:attr:`NbdStore.max_iops`; why a plugin and not nbdkit's ``noparallel``
filter is said in the plugin's docstring.
"""

import logging
import os
import signal
import subprocess
import time

from iothrottle.testbed import store_plugin

LOG = logging.getLogger(__name__)

NBDKIT = '/usr/bin/nbdkit'
PLUGIN = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                      'store_plugin.py')
SEEKDISK_PLUGIN = os.path.join(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
    'seekmodel', 'seekdisk_plugin.py')


class StoreError(RuntimeError):
    pass


def _cmdline(pid):
    try:
        with open('/proc/%d/cmdline' % pid, 'rb') as f:
            return f.read().split(b'\0')
    except OSError:
        return None


def log_tail(path, size=2000):
    """The last ``size`` bytes of the log at ``path`` as text ('' when it
    cannot be read)."""
    try:
        with open(path, 'rb') as f:
            return f.read()[-size:].decode(errors='replace')
    except OSError:
        return ''


def alive(pid):
    """Whether ``pid`` runs (a zombie does not)."""
    try:
        with open('/proc/%d/stat' % pid) as f:
            return f.read().rsplit(')', 1)[1].split()[0] not in ('Z', 'X')
    except (OSError, IndexError):
        return False


def find_nbdkit(socket_path):
    """PIDs of nbdkit processes serving ``socket_path``."""
    want = os.fsencode(socket_path)
    pids = []
    for entry in os.listdir('/proc'):
        if not entry.isdigit():
            continue
        argv = _cmdline(int(entry))
        if argv and os.path.basename(argv[0]) == b'nbdkit' and want in argv:
            pids.append(int(entry))
    return pids


def stop_pid(pid, socket_path, timeout=10.0):
    """Stop nbdkit ``pid`` if it still is the one serving ``socket_path``."""
    argv = _cmdline(pid)
    if not argv or os.fsencode(socket_path) not in argv:
        return False
    LOG.debug('stopping nbdkit %d', pid)
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return False
    deadline = time.monotonic() + timeout
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    if alive(pid):
        os.kill(pid, signal.SIGKILL)
    return True


class NbdStore(object):
    """One nbdkit serving the sparse images of a directory over a socket.

    :param workdir: directory owned by this store's testbed; gets
        ``store/`` (the images), ``nbd.sock``, ``nbdkit.pid``,
        ``nbdkit.log``. It must be reachable by the qemu user.
    :param delay_ms: service time of every read and write, milliseconds.
    :param detach: keep nbdkit running when this process exits (for the
        ``iothrottle-testbed up`` command); otherwise nbdkit runs with
        ``--exit-with-parent`` and dies with its owner.
    """

    def __init__(self, workdir, delay_ms=4.0, detach=False):
        if not delay_ms >= 0:
            raise ValueError('delay_ms must be a number of ms >= 0, '
                             'got %r' % (delay_ms,))
        self.workdir = workdir
        self.delay_ms = float(delay_ms)
        self.detach = detach
        self.image_dir = os.path.join(workdir, 'store')
        self.socket = os.path.join(workdir, 'nbd.sock')
        self.pidfile = os.path.join(workdir, 'nbdkit.pid')
        self.logfile = os.path.join(workdir, 'nbdkit.log')
        self.slowdown_file = os.path.join(workdir, 'slowdown')
        self.pid = None
        self._proc = None

    #: Whether guests may write (the seek disk is read-only).
    readonly = False

    def slow_down(self, factor):
        """Make every request take ``factor`` x ``delay_ms`` from now on
        (1: the store's own speed again), as a store whose neighbours,
        garbage collection or host steal its time: the plugin reads the
        factor from :attr:`slowdown_file` when it changes."""
        if not store_plugin.is_factor(factor):
            raise ValueError('slowdown factor must be a finite number >= '
                             '1, got %r' % (factor,))
        if factor == 1:
            if os.path.exists(self.slowdown_file):
                os.unlink(self.slowdown_file)
            return
        tmp = self.slowdown_file + '.tmp'
        with open(tmp, 'w') as f:
            f.write('%r\n' % float(factor))
        os.replace(tmp, self.slowdown_file)

    def nbd_uri(self, export):
        """The NBD URI of ``export`` (for nbdfuse)."""
        return 'nbd+unix:///%s?socket=%s' % (export, self.socket)

    def create_domain_image(self, size_bytes, name='domain'):
        """Create (sparse) ONE image holding every guest's disk at its
        offset, for the block layer (one block device per storage domain:
        see :mod:`iothrottle.testbed.blocklayer`); return its export."""
        os.makedirs(self.image_dir, exist_ok=True)
        export = self.export_name(name)
        with open(os.path.join(self.image_dir, export), 'wb') as f:
            f.truncate(int(size_bytes))
        return export

    @property
    def max_iops(self):
        """Nominal capacity of the store (requests/s, all guests)."""
        return 1000.0 / self.delay_ms if self.delay_ms else float('inf')

    @property
    def domain_key(self):
        """Storage domain key of the store, as the compute agent names it."""
        return 'nbd+unix://%s' % self.socket

    def export_name(self, name):
        return '%s.img' % name

    def create_disk(self, name, size_mb):
        """Create (sparse) the image of export ``name``; return its name."""
        os.makedirs(self.image_dir, exist_ok=True)
        export = self.export_name(name)
        with open(os.path.join(self.image_dir, export), 'wb') as f:
            f.truncate(int(size_mb) * 1024 * 1024)
        return export

    def command(self):
        cmd = [NBDKIT, '-U', self.socket, '-P', self.pidfile]
        if not self.detach:
            # nbdkit -f dies with its parent anyway (it sets PDEATHSIG).
            cmd += ['-f', '--exit-with-parent']
        cmd += ['python', PLUGIN, 'dir=%s' % self.image_dir,
                'delay_ms=%g' % self.delay_ms,
                'slowdown_file=%s' % self.slowdown_file]
        return cmd

    def start(self, timeout=30.0):
        os.makedirs(self.image_dir, exist_ok=True)
        for stale in (self.socket, self.pidfile):
            if os.path.exists(stale):
                os.unlink(stale)
        cmd = self.command()
        LOG.info('starting store: %s', ' '.join(cmd))
        with open(self.logfile, 'ab') as log:
            proc = subprocess.Popen(
                cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                start_new_session=self.detach, close_fds=True)
        if self.detach:
            # nbdkit daemonises itself (not a child of ours, so it outlives
            # this process): its first process exits once it forked.
            try:
                rc = proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
                raise StoreError('nbdkit did not daemonise')
            if rc != 0:
                raise StoreError('nbdkit exited (%s): %s' % (
                    rc, self._log_tail()))
        else:
            self._proc = proc
            self.pid = proc.pid
        # nbdkit writes its pid file once it listens on the socket.
        deadline = time.monotonic() + timeout
        while not (os.path.exists(self.pidfile) and
                   os.path.exists(self.socket)):
            if self._proc is not None and self._proc.poll() is not None:
                raise StoreError('nbdkit exited (%s): %s' % (
                    self._proc.returncode, self._log_tail()))
            if time.monotonic() > deadline:
                self.stop()
                raise StoreError('nbdkit did not listen within %.0f s'
                                 % timeout)
            time.sleep(0.02)
        if self.detach:
            with open(self.pidfile) as f:
                self.pid = int(f.read().strip())
        # The qemu user (libvirt-qemu) connects to the socket.
        os.chmod(self.socket, 0o666)
        return self.pid

    def _log_tail(self):
        return log_tail(self.logfile)

    def running(self):
        return bool(self.pid) and alive(self.pid) and \
            bool(find_nbdkit(self.socket))

    def stop(self):
        if self._proc is not None:
            # Our own child: terminate and reap it.
            if self._proc.poll() is None:
                self._proc.terminate()
            try:
                self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
            self._proc = None
        pids = set(find_nbdkit(self.socket))
        if self.pid:
            pids.add(self.pid)
        for pid in pids:
            stop_pid(pid, self.socket)
        self.pid = None
        for path in (self.socket, self.pidfile):
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass


class SeekDiskStore(NbdStore):
    """nbdkit serving the seek disk (``seekdisk_plugin.py``) instead.

    A read-only disk of ``size`` (160 GiB by default) whose requests take
    a seek time that grows with the distance from the previous one (see
    :mod:`iothrottle.seekmodel.seekdisk_plugin`): where consolidated
    guests' disks lie on it, and in which order the host serves them,
    decide its throughput, as on seed 001's and seed 003's disks.  One
    export; guests get slices of it through the block layer only.

    :param params: plugin parameters (``{'time_scale': 0.5}``); its own
        anticipation (``idle_ms``) is left at 0 unless given: the host
        I/O scheduler is the one under test.
    """

    readonly = True

    def __init__(self, workdir, params=None, detach=False):
        super().__init__(workdir, delay_ms=0.0, detach=detach)
        self.params = dict(params or {})
        from iothrottle.seekmodel import seekdisk_plugin
        self.size_bytes = seekdisk_plugin.parse_size(
            str(self.params.get('size', seekdisk_plugin.PARAMS['size'])))

    @property
    def max_iops(self):
        return None

    def create_disk(self, name, size_mb):
        raise StoreError('the seek disk has one export: its guests need '
                         'the block layer')

    def slow_down(self, factor):
        raise StoreError('the seek disk models its own service times; it '
                         'has no slowdown')

    def create_domain_image(self, size_bytes, name='domain'):
        if size_bytes > self.size_bytes:
            raise StoreError('guests need %d bytes, the seek disk has %d'
                             % (size_bytes, self.size_bytes))
        return ''

    def command(self):
        cmd = [NBDKIT, '-U', self.socket, '-P', self.pidfile, '--readonly']
        if not self.detach:
            cmd += ['-f', '--exit-with-parent']
        cmd += ['python', SEEKDISK_PLUGIN]
        cmd += ['%s=%s' % item for item in sorted(self.params.items())]
        return cmd
