"""The testbed: N tiny libvirt/QEMU guests on one shared nbdkit store."""

import collections
import concurrent.futures
import dataclasses
import json
import logging
import os
import re
import shutil
import subprocess
import threading
import time
import uuid as uuidlib

from iothrottle.testbed import blocklayer as blocklayer_mod
from iothrottle.testbed import domains
from iothrottle.testbed import host
from iothrottle.testbed import images as images_mod
from iothrottle.testbed import store as store_mod

LOG = logging.getLogger(__name__)

DEFAULT_STATE_ROOT = '/var/lib/iothrottle/testbed'
# Where libvirt's QEMU driver writes each running domain's QEMU pid.
QEMU_PIDFILE = '/run/libvirt/qemu/%s.pid'
IONICE = '/usr/bin/ionice'
# The I/O class every guest's QEMU runs in, whatever libvirtd inherited
# from whoever started it: best-effort at level 4, what a process at
# nice 0 has.  BFQ never idles for a queue of the idle class (ionice -c
# 3, as batch jobs are run), so guests that inherited it would share
# the disk under BFQ as under none.
GUEST_IO_CLASS = ('2', '4')     # ionice -c CLASS -n LEVEL
_PREFIX_RE = re.compile(r'^[A-Za-z0-9][A-Za-z0-9_.-]{0,31}$')
_NAME_RE = re.compile(r'^[A-Za-z0-9][A-Za-z0-9_.-]{0,31}$')


class TestbedError(RuntimeError):
    pass


@dataclasses.dataclass
class GuestSpec:
    """One guest: a Nova-like instance with a flavor and an owner."""
    name: str
    flavor: str = None           # default: 'bench.<name>'
    project: str = 'demo'
    memory_mb: int = 192
    # Balloon size at boot (None: memory_mb, the flavor memory).
    current_memory_mb: int = None
    disk_mb: int = 256
    vcpus: int = 1
    user: str = 'admin'
    # Owner uuids in Nova's metadata; derived from the names by default.
    user_id: str = None
    project_id: str = None
    # Where the guest's disk starts in the store (block-layer testbeds
    # only, where all guests share one device): None puts it right after
    # the previous guest's.
    disk_offset_mb: int = None

    def __post_init__(self):
        if not _NAME_RE.match(self.name):
            raise ValueError('bad guest name %r' % (self.name,))
        if self.flavor is None:
            self.flavor = 'bench.%s' % self.name
        if self.user_id is None:
            self.user_id = str(uuidlib.uuid5(uuidlib.NAMESPACE_DNS,
                                             'user.%s' % self.user))
        if self.project_id is None:
            self.project_id = str(uuidlib.uuid5(uuidlib.NAMESPACE_DNS,
                                                'project.%s' % self.project))


@dataclasses.dataclass
class Load:
    """A load for the guest's load generator (``loadgen.c``).

    ``procs`` processes at start, one more every ``ramp_s`` seconds up to
    ``max_procs``; each issues ``block_kb`` requests (``rw``: randwrite,
    randread, write, read) with O_DIRECT on /dev/vda, optionally paced to
    ``rate_kb_s`` (KiB/s) or ``rate_iops`` per process; stops by itself
    after ``duration_s`` (None: when stopped).  Paced processes started
    together are spread over one slot of their rate: process i starts
    ``phase_slots + i * phase_step_slots`` slots late (by default i /
    procs), so the guest's completions in a window move by one request,
    not by one per process.
    """
    procs: int = 1
    max_procs: int = None
    ramp_s: float = None
    block_kb: int = 64
    rw: str = 'randwrite'
    rate_kb_s: float = None
    duration_s: float = None
    rate_iops: float = None
    offset_mb: int = 0
    size_mb: int = None
    direct: bool = True
    burst: int = 1
    phase_slots: float = 0.0
    phase_step_slots: float = None
    hot_title_pct: int = 20
    hot_access_pct: int = 80
    stats_path: str = '/tmp/files.stats'

    def argv(self):
        if self.rw not in ('randwrite', 'randread', 'write', 'read',
                           'files'):
            raise ValueError('bad rw %r' % (self.rw,))
        self._check_phases()
        args = ['-p', int(self.procs), '-b', '%dk' % int(self.block_kb),
                '-m', self.rw, '-o', '%dm' % int(self.offset_mb),
                '-n', int(self.burst)]
        if self.max_procs is not None:
            args += ['-P', int(self.max_procs)]
        if self.ramp_s:
            args += ['-T', '%g' % self.ramp_s]
        if self.size_mb:
            args += ['-s', '%dm' % int(self.size_mb)]
        if self.rate_kb_s:
            args += ['-B', '%d' % int(self.rate_kb_s * 1024)]
        if self.rate_iops:
            args += ['-r', '%g' % self.rate_iops]
        if self.duration_s:
            args += ['-t', '%g' % self.duration_s]
        if self.phase_slots:
            args += ['-F', '%.6g' % self.phase_slots]
        if self.phase_step_slots is not None:
            args += ['-G', '%.6g' % self.phase_step_slots]
        if not self.direct:
            args.append('-D')
        if self.rw == 'files':
            args += ['-H', int(self.hot_title_pct),
                     '-A', int(self.hot_access_pct), '-S', self.stats_path]
        return [str(a) for a in args]

    def _check_phases(self):
        """loadgen's own check (it exits at once on a bad phase, and a
        guest's load that never ran shows only as a guest doing
        nothing): every process of ``procs`` starts within one slot."""
        step = self.phase_step_slots or 0.0
        last = self.phase_slots + (int(self.procs) - 1) * step
        if not (0 <= self.phase_slots < 1 and step >= 0 and last < 1):
            raise ValueError(
                'bad phases: process 0 at %r of a slot, each next %r '
                'later, for %s processes: all must start within one slot'
                % (self.phase_slots, self.phase_step_slots, self.procs))


FileStats = collections.namedtuple(
    'FileStats', 'accesses app_bytes hit_pages pages')

BlockSample = collections.namedtuple(
    'BlockSample', 'time rd_reqs wr_reqs rd_bytes wr_bytes')
Rates = collections.namedtuple(
    'Rates', 'iops rd_iops wr_iops bytes_s seconds')


def io_cgroup(pid):
    """The cgroup process ``pid`` is charged its block I/O in: its
    path in the blkio hierarchy (cgroup v1), else in the unified one
    (v2); None when it is in neither.  A scheduler that shares a disk
    between cgroups (BFQ) tells two guests apart only when each has
    its own."""
    with open('/proc/%d/cgroup' % pid) as f:
        return io_cgroup_of(f.read())


def io_cgroup_of(proc_cgroup):
    """:func:`io_cgroup` of the text of a ``/proc/PID/cgroup``."""
    entries = [line.split(':', 2) for line in proc_cgroup.splitlines()
               if line.count(':') >= 2]
    for _num, controllers, path in entries:
        if 'blkio' in controllers.split(','):
            return path
    for num, controllers, path in entries:
        if num == '0' and not controllers:
            return path
    return None


def _run_ionice(args):
    proc = subprocess.run([IONICE] + args, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=10)
    if proc.returncode:
        raise TestbedError('ionice %s: %s' % (' '.join(args),
                                              proc.stdout.strip()))
    return proc.stdout.strip()


def _proc_start_time(pid):
    try:
        with open('/proc/%d/stat' % pid) as f:
            return f.read().rsplit(')', 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def _owner_alive(state):
    pid = state.get('owner_pid')
    return bool(pid) and _proc_start_time(pid) == state.get('owner_start')


def _libvirt():
    import libvirt
    return libvirt


class Testbed(object):
    """N guests on one shared store; a context manager.

    ``with Testbed(spec, delay_ms=4, prefix='itb-') as tb:`` builds the
    images if needed, starts libvirt and the store, defines and starts the
    domains and waits until every guest is ready; leaving the block stops
    the loads, destroys and undefines the domains, stops nbdkit and removes
    the testbed's files (the image cache is kept).

    Domains are named ``<prefix><guest name>``; two testbeds running at
    once need different prefixes (a second one with a live prefix is
    refused; one left by a killed process is cleaned up first).

    ``block_layer='bfq'`` (or any of
    :data:`~iothrottle.testbed.blocklayer.SCHEDULERS`) puts the store
    under a host block device with that I/O scheduler and gives the
    guests partitions of it (see :mod:`iothrottle.testbed.blocklayer`);
    ``None`` (the default) is the plain NBD testbed.  ``seekdisk={...}``
    serves the seek disk (:class:`~iothrottle.testbed.store.SeekDiskStore`
    with these plugin parameters) instead of the FIFO store; it needs the
    block layer.
    """

    def __init__(self, spec, delay_ms=4.0, prefix='itb-',
                 cache_dir=images_mod.DEFAULT_CACHE_DIR,
                 state_root=DEFAULT_STATE_ROOT, boot_timeout=180.0,
                 detach=False, install=True, block_layer=None,
                 seekdisk=None):
        if not _PREFIX_RE.match(prefix):
            raise ValueError('bad prefix %r' % (prefix,))
        if block_layer is not None:
            blocklayer_mod.check_scheduler(block_layer)
        if seekdisk is not None and block_layer is None:
            raise ValueError('the seek disk store needs a block layer '
                             '(block_layer=SCHED)')
        names = [g.name for g in spec]
        if len(set(names)) != len(names) or not names:
            raise ValueError('guest names must be unique and non-empty')
        self.spec = list(spec)
        self.delay_ms = delay_ms
        self.prefix = prefix
        self.cache_dir = cache_dir
        self.state_root = state_root
        self.workdir = os.path.join(state_root, prefix)
        self.boot_timeout = boot_timeout
        self.detach = detach
        self.install = install
        self.uri = None
        self.conn = None
        self.images = None
        if seekdisk is not None:
            self.store = store_mod.SeekDiskStore(self.workdir, seekdisk,
                                                 detach=detach)
        else:
            self.store = store_mod.NbdStore(self.workdir, delay_ms,
                                            detach=detach)
        self.block_layer = block_layer
        self.seekdisk = seekdisk
        self.blocklayer = None      # a BlockLayer once started
        self.boot_seconds = {}      # guest -> domain start to READY
        self.start_seconds = {}     # guest -> virDomainCreate duration
        self._guests = collections.OrderedDict()   # name -> dict
        self._consoles = {}
        self._started = False

    # ------------------------------------------------------------------
    # Public accessors
    @property
    def guests(self):
        return list(self._guests)

    def domain_name(self, vm):
        return self._guest(vm)['domain']

    def instance_uuid(self, vm):
        return self._guest(vm)['uuid']

    @property
    def domain_key(self):
        """The storage domain key the compute agent sees for the guests'
        disks: the loop device under a block layer, else the socket."""
        if self.blocklayer is not None:
            return self.blocklayer.domain_key
        return self.store.domain_key

    def disk_path(self, vm):
        """The host block device of ``vm``'s disk (block layer only)."""
        return self._guest(vm).get('disk_dev')

    def domain(self, vm):
        """The libvirt virDomain of guest ``vm``."""
        return self.conn.lookupByName(self.domain_name(vm))

    def console(self, vm):
        c = self._consoles.get(vm)
        if c is None:
            g = self._guest(vm)
            c = domains.GuestConsole(g['console'], vm)
            c.connect()
            self._consoles[vm] = c
        return c

    def _guest(self, vm):
        try:
            return self._guests[vm]
        except KeyError:
            raise KeyError('no guest %r in testbed %s' % (vm, self.prefix))

    def restart(self, vm):
        """Destroy guest ``vm`` and start it again, as a hard reboot
        does (a new QEMU process and domain id, nothing of the old live
        state); returns once the guest is ready, its loads gone."""
        console = self._consoles.pop(vm, None)
        if console is not None:
            console.close()
        dom = self.domain(vm)
        dom.destroy()
        t0 = time.monotonic()
        dom.create()
        self._set_io_class(vm)
        self.console(vm).wait_ready(
            self.boot_timeout, alive=lambda: bool(dom.isActive()))
        self.boot_seconds[vm] = time.monotonic() - t0

    # ------------------------------------------------------------------
    # Loads
    def start_load(self, vm, load):
        """Start ``load`` on ``vm``; returns once the guest started it."""
        reply = self.console(vm).command('run', *load.argv())
        LOG.debug('%s: load started (pid %s): %s', vm, reply.fields, load)
        return reply

    def stop_load(self, vm, timeout=30.0):
        """Stop every load on ``vm``; returns once they have exited."""
        return self.console(vm).command('stop', timeout=timeout)

    def stop_all_loads(self):
        for vm in self._guests:
            self.stop_load(vm)

    def run(self, vm, command, timeout=60.0):
        """Run a shell command in ``vm``: returns (exit code, output lines)."""
        reply = self.console(vm).command('sh', command, timeout=timeout)
        return int(reply.fields[0]), reply.output

    def file_stats(self, vm, load=None):
        """The ``rw='files'`` load's cumulative :data:`FileStats` on
        ``vm``, summed over its processes (zeros before the first)."""
        path = (load or Load()).stats_path
        rc, lines = self.run(vm, 'cat %s.[0-9]* 2>/dev/null' % path)
        total = [0, 0, 0, 0]
        for line in lines:
            fields = dict(kv.split('=', 1) for kv in line.split()
                          if '=' in kv)
            for i, key in enumerate(FileStats._fields):
                total[i] += int(fields.get(key, 0))
        return FileStats(*total)

    def guest_agent(self, vm, command, arguments=None, timeout_s=10):
        """Run a QEMU guest agent command in ``vm``; returns its
        ``return`` value (see :mod:`iothrottle.compute.guest_agent`)."""
        from iothrottle.compute import guest_agent
        return guest_agent.command(self.domain(vm), command, arguments,
                                   timeout_s)

    def qemu_pid(self, vm):
        with open(QEMU_PIDFILE % self.domain_name(vm)) as f:
            return int(f.read().strip())

    def io_group(self, vm):
        """The cgroup ``vm``'s QEMU is charged its block I/O in (see
        :func:`io_cgroup`)."""
        return io_cgroup(self.qemu_pid(vm))

    def io_class(self, vm):
        """The I/O class and level of ``vm``'s QEMU, as ``ionice``
        prints it (``best-effort: prio 4``)."""
        return _run_ionice(['-p', str(self.qemu_pid(vm))])

    def _set_io_class(self, vm):
        """Every thread of ``vm``'s QEMU into ``GUEST_IO_CLASS`` (the
        threads it starts later inherit it)."""
        pid = self.qemu_pid(vm)
        cls, level = GUEST_IO_CLASS
        for tid in os.listdir('/proc/%d/task' % pid):
            try:
                _run_ionice(['-c', cls, '-n', level, '-p', tid])
            except TestbedError:
                # A worker thread that exited since the listing has no
                # class to set; any other failure is the testbed's.
                if os.path.exists('/proc/%d/task/%s' % (pid, tid)):
                    raise

    # ------------------------------------------------------------------
    # Measurement
    def block_stats(self):
        """{guest: BlockSample} of vda, read with virConnectGetAllDomainStats
        (VIR_DOMAIN_STATS_BLOCK); ``time`` is the host's monotonic clock."""
        libvirt = _libvirt()
        by_domain = {g['domain']: name for name, g in self._guests.items()}
        stats = self.conn.getAllDomainStats(
            libvirt.VIR_DOMAIN_STATS_BLOCK,
            libvirt.VIR_CONNECT_GET_ALL_DOMAINS_STATS_ACTIVE)
        now = time.monotonic()
        out = {}
        for dom, st in stats:
            vm = by_domain.get(dom.name())
            if vm is None:
                continue
            for i in range(st.get('block.count', 0)):
                if st.get('block.%d.name' % i) == 'vda':
                    out[vm] = BlockSample(
                        now, st.get('block.%d.rd.reqs' % i, 0),
                        st.get('block.%d.wr.reqs' % i, 0),
                        st.get('block.%d.rd.bytes' % i, 0),
                        st.get('block.%d.wr.bytes' % i, 0))
        return out

    @staticmethod
    def rates(before, after):
        """{guest: Rates} between two :meth:`block_stats` samples."""
        out = {}
        for vm, b in before.items():
            a = after.get(vm)
            if a is None:
                continue
            dt = a.time - b.time
            rd = (a.rd_reqs - b.rd_reqs) / dt
            wr = (a.wr_reqs - b.wr_reqs) / dt
            by = (a.rd_bytes - b.rd_bytes + a.wr_bytes - b.wr_bytes) / dt
            out[vm] = Rates(rd + wr, rd, wr, by, dt)
        return out

    def measure(self, window_s):
        """Sleep ``window_s`` and return the {guest: Rates} over it."""
        before = self.block_stats()
        time.sleep(window_s)
        return self.rates(before, self.block_stats())

    # ------------------------------------------------------------------
    # Life cycle
    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def start(self):
        """Bring the whole testbed up (see the class doc)."""
        try:
            self._start()
        except BaseException as exc:
            if not isinstance(exc, KeyboardInterrupt):
                LOG.error('testbed %s failed to start (%s); tearing down',
                          self.prefix, exc)
            try:
                self.stop()
            except Exception as exc2:
                LOG.error('teardown after a failed start: %s', exc2)
            raise

    def _start(self):
        libvirt = _libvirt()
        self.uri = host.ensure_libvirt(install=self.install)
        self.images = images_mod.build_images(self.cache_dir,
                                              install=self.install)
        self.conn = libvirt.open(self.uri)
        self._claim_workdir()
        self._started = True
        slices = None
        if self.block_layer is not None:
            slices = blocklayer_mod.layout([
                (g.name, int(g.disk_mb) << 20,
                 None if g.disk_offset_mb is None
                 else int(g.disk_offset_mb) << 20) for g in self.spec])
            export = self.store.create_domain_image(
                blocklayer_mod.store_size(slices))
        for g in self.spec:
            self._guests[g.name] = {
                'domain': '%s%s' % (self.prefix, g.name),
                'uuid': str(uuidlib.uuid4()),
                'console': os.path.join(self.workdir, '%s.console' % g.name),
                'console_log': os.path.join(self.workdir,
                                            '%s.console.log' % g.name),
                'export': (export if slices is not None
                           else self.store.create_disk(g.name, g.disk_mb)),
            }
        self._save_state()
        self.store.start()
        self._save_state()
        if slices is not None:
            self.blocklayer = blocklayer_mod.BlockLayer(
                self.workdir, self.block_layer, self.store.nbd_uri(export),
                readonly=self.store.readonly)
            self.blocklayer.start(slices, on_step=self._save_state)
            for piece in slices:
                info = self._guests[piece.name]
                info['disk_dev'] = self.blocklayer.partitions[piece.name]
                info['disk_offset_bytes'] = piece.offset_bytes
            self._save_state()
        for g in self.spec:
            info = self._guests[g.name]
            disk = None
            if self.blocklayer is not None:
                disk = domains.block_disk_xml(info['disk_dev'],
                                              readonly=self.store.readonly)
            xml = domains.domain_xml(
                info['domain'], info['uuid'], g, self.images, self.store,
                info['export'], info['console'], info['console_log'],
                self.prefix, disk=disk)
            self.conn.defineXML(xml)
        t_start = {}
        for g in self.spec:
            dom = self.conn.lookupByName(self._guests[g.name]['domain'])
            t0 = time.monotonic()
            dom.create()
            t_start[g.name] = t0
            self.start_seconds[g.name] = time.monotonic() - t0
            self._set_io_class(g.name)
            self.console(g.name)   # connect now: see the READY marker
        self._wait_ready(t_start)

    def _wait_ready(self, t_start):
        libvirt = _libvirt()
        abort = threading.Event()

        def wait(vm):
            dom_name = self._guests[vm]['domain']
            conn = libvirt.open(self.uri)   # one connection per thread

            def alive():
                if abort.is_set():
                    return False
                try:
                    return bool(conn.lookupByName(dom_name).isActive())
                except libvirt.libvirtError:
                    return False
            try:
                self._consoles[vm].wait_ready(self.boot_timeout, alive=alive)
            finally:
                conn.close()
            return vm, time.monotonic()

        ex = concurrent.futures.ThreadPoolExecutor(len(self._guests))
        try:
            futures = [ex.submit(wait, vm) for vm in self._guests]
            for fut in concurrent.futures.as_completed(futures):
                vm, t = fut.result()
                self.boot_seconds[vm] = t - t_start[vm]
                LOG.info('%s ready in %.1f s', vm, self.boot_seconds[vm])
        except BaseException:
            # A guest failed, or KeyboardInterrupt: make the other waits
            # give up now (within a ping period) rather than at their
            # deadline, then let start() tear down.
            abort.set()
            raise
        finally:
            ex.shutdown(wait=True)

    def stop(self):
        """Tear everything down; never raises for a half-built testbed."""
        if not self._started:
            if self.conn is not None:
                self.conn.close()
                self.conn = None
            return

        def stop_loads(item):
            vm, c = item
            try:
                if c.ready_info is not None:   # a booting guest can't answer
                    c.command('stop', timeout=10)
            except Exception as exc:
                LOG.debug('%s: stop loads: %s', vm, exc)
            c.close()

        if self._consoles:
            with concurrent.futures.ThreadPoolExecutor(
                    len(self._consoles)) as ex:
                list(ex.map(stop_loads, list(self._consoles.items())))
        self._consoles.clear()
        errors = _teardown(self.conn, self.prefix, self.workdir, self.store)
        if self.blocklayer is not None:
            errors.extend(self.blocklayer.stop())   # reaps our nbdfuse
            self.blocklayer = None
        try:
            if self.conn is not None:
                self.conn.close()
        except Exception:
            pass
        self.conn = None
        self._started = False
        if errors:
            raise TestbedError('teardown of %s: %s' % (self.prefix,
                                                       '; '.join(errors)))

    # ------------------------------------------------------------------
    # State (for cleanup after a killed run, and for the CLI)
    def _state_path(self):
        return os.path.join(self.workdir, 'state.json')

    def _claim_workdir(self):
        state = read_state(self.state_root, self.prefix)
        if state is not None:
            if state.get('detached'):
                raise TestbedError(
                    'testbed %r is up (detached); run "iothrottle-testbed '
                    'down --prefix %s" first' % (self.prefix, self.prefix))
            if _owner_alive(state):
                raise TestbedError('testbed %r is in use by pid %s' % (
                    self.prefix, state.get('owner_pid')))
        if state is not None or os.path.exists(self.workdir) or \
                blocklayer_mod.find_loops(self.workdir) or \
                _prefixed_domains(self.conn, self.prefix):
            LOG.warning('cleaning up a stale testbed %r', self.prefix)
            _teardown(self.conn, self.prefix, self.workdir, None)
        # qemu (libvirt-qemu) creates nothing here but must reach the
        # sockets (the console sockets are made by libvirt itself).
        os.makedirs(self.workdir, mode=0o755)
        os.chmod(self.workdir, 0o755)
        images_mod.warn_untraversable(self.workdir)
        self._save_state()

    def _save_state(self):
        pid = os.getpid()
        state = {
            'prefix': self.prefix, 'uri': self.uri,
            'owner_pid': pid, 'owner_start': _proc_start_time(pid),
            'detached': self.detach, 'delay_ms': self.delay_ms,
            'nbdkit_pid': self.store.pid, 'nbd_socket': self.store.socket,
            'seekdisk': self.seekdisk,
            'block_layer': (self.blocklayer.state() if self.blocklayer
                            else None),
            'images': self.images._asdict() if self.images else None,
            'guests': self._guests,
        }
        tmp = self._state_path() + '.tmp'
        with open(tmp, 'w') as f:
            json.dump(state, f, indent=1)
        os.rename(tmp, self._state_path())

    @classmethod
    def attach(cls, prefix='itb-', state_root=DEFAULT_STATE_ROOT):
        """A Testbed object for a running (detached) testbed, for the CLI.

        Its :meth:`stop` is a no-op: use :meth:`cleanup_stale` to take the
        testbed down.
        """
        state = read_state(state_root, prefix)
        if state is None:
            raise TestbedError('no testbed %r under %s' % (prefix,
                                                           state_root))
        spec = [GuestSpec(name=n) for n in state['guests']]
        bl = state.get('block_layer')
        tb = cls(spec, delay_ms=state['delay_ms'], prefix=prefix,
                 state_root=state_root, detach=True,
                 block_layer=bl['scheduler'] if bl else None,
                 seekdisk=state.get('seekdisk'))
        if bl:
            tb.blocklayer = blocklayer_mod.BlockLayer(tb.workdir,
                                                      bl['scheduler'])
            tb.blocklayer.loop = bl.get('loop')
            tb.blocklayer.nbdfuse_pid = bl.get('nbdfuse_pid')
            tb.blocklayer.partitions = dict(bl.get('partitions') or {})
        tb.uri = state['uri']
        tb._guests = collections.OrderedDict(state['guests'])
        tb.store.pid = state.get('nbdkit_pid')
        tb.conn = _libvirt().open(tb.uri)
        return tb

    def close(self):
        """Drop the connections of an attached testbed (leave it running)."""
        for c in self._consoles.values():
            c.close()
        self._consoles.clear()
        if self.conn is not None:
            self.conn.close()
            self.conn = None

    @staticmethod
    def cleanup_stale(prefix='itb-', state_root=DEFAULT_STATE_ROOT,
                      force=False):
        """Remove what a testbed ``prefix`` left behind (killed run, or a
        detached one): its domains (those carrying its testbed metadata),
        its block layer (loop device, FUSE mount, nbdfuse: found by the
        testbed's directory, with or without a state file), its nbdkit
        and its files. Refuses a testbed whose owner process is
        alive unless ``force``. Returns the names of the removed domains.
        """
        state = read_state(state_root, prefix)
        if state is not None and not force and not state.get('detached') \
                and _owner_alive(state):
            raise TestbedError('testbed %r is in use by pid %s' % (
                prefix, state.get('owner_pid')))
        uri = host.ensure_libvirt(install=False)
        conn = _libvirt().open(uri)
        try:
            removed = [d.name() for d in _prefixed_domains(conn, prefix)]
            store = store_mod.NbdStore(os.path.join(state_root, prefix))
            if state is not None:
                store.pid = state.get('nbdkit_pid')
            errors = _teardown(conn, prefix, os.path.join(state_root, prefix),
                               store)
        finally:
            conn.close()
        if errors:
            raise TestbedError('cleanup of %s: %s' % (prefix,
                                                      '; '.join(errors)))
        return removed


def read_state(state_root, prefix):
    path = os.path.join(state_root, prefix, 'state.json')
    try:
        with open(path) as f:
            return json.load(f)
    except FileNotFoundError:
        return None
    except ValueError:
        return {}


def list_testbeds(state_root=DEFAULT_STATE_ROOT):
    """{prefix: state} of the testbeds with a state file."""
    out = {}
    if os.path.isdir(state_root):
        for prefix in sorted(os.listdir(state_root)):
            state = read_state(state_root, prefix)
            if state is not None:
                out[prefix] = state
    return out


def cleanup_dead(startswith, state_root=DEFAULT_STATE_ROOT):
    """Clean up every testbed whose prefix starts with ``startswith`` and
    whose owner process is dead (not the detached ones). For users that
    make a prefix per process (e.g. tests under a parallel runner).
    Returns the cleaned prefixes."""
    cleaned = []
    for prefix, state in list_testbeds(state_root).items():
        if prefix.startswith(startswith) and not state.get('detached') \
                and not _owner_alive(state):
            Testbed.cleanup_stale(prefix, state_root)
            cleaned.append(prefix)
    return cleaned


def _prefixed_domains(conn, prefix):
    """Domains whose name starts with ``prefix`` AND whose testbed metadata
    names ``prefix`` (so 'itb-' never takes 'itb-2-vm1' of testbed
    'itb-2-')."""
    return [d for d in conn.listAllDomains()
            if d.name().startswith(prefix)
            and domains.testbed_prefix_of(d) == prefix]


def _teardown(conn, prefix, workdir, store):
    """Destroy + undefine the testbed's domains, remove its block layer,
    stop its nbdkit, remove its files. Returns a list of error strings
    (never raises)."""
    libvirt = _libvirt()
    errors = []
    doms = []
    try:
        doms = _prefixed_domains(conn, prefix) if conn is not None else []
    except libvirt.libvirtError as exc:
        errors.append('list domains: %s' % exc)

    def remove(dom):
        name = dom.name()
        errs = []
        t0 = time.monotonic()
        try:
            if dom.isActive():
                dom.destroy()
                LOG.debug('destroyed %s in %.2f s', name,
                          time.monotonic() - t0)
        except libvirt.libvirtError as exc:
            if dom.isActive():
                errs.append('destroy %s: %s' % (name, exc))
        try:
            dom.undefine()
        except libvirt.libvirtError as exc:
            if exc.get_error_code() != libvirt.VIR_ERR_NO_DOMAIN:
                errs.append('undefine %s: %s' % (name, exc))
        return errs

    # QEMU takes ~2 s to exit after libvirt's SIGTERM: destroy in parallel.
    if doms:
        with concurrent.futures.ThreadPoolExecutor(len(doms)) as ex:
            for errs in ex.map(remove, doms):
                errors.extend(errs)
    # The block layer sits between the domains and nbdkit: the loop
    # device holds the FUSE file open, nbdfuse holds an NBD connection.
    t0 = time.monotonic()
    errors.extend(blocklayer_mod.cleanup(workdir))
    LOG.debug('removed the block layer in %.2f s', time.monotonic() - t0)
    if store is None:
        store = store_mod.NbdStore(workdir)
        state = read_state(os.path.dirname(workdir),
                           os.path.basename(workdir))
        if state:
            store.pid = state.get('nbdkit_pid')
    t0 = time.monotonic()
    try:
        store.stop()
        LOG.debug('stopped the store in %.2f s', time.monotonic() - t0)
    except Exception as exc:
        errors.append('stop nbdkit: %s' % exc)
    mounts = blocklayer_mod.find_mounts(workdir)
    if mounts:
        # Never let rmtree walk into a mounted file system.
        errors.append('not removing %s: still mounted: %s'
                      % (workdir, ', '.join(mounts)))
        return errors
    try:
        shutil.rmtree(workdir)
    except FileNotFoundError:
        pass
    except OSError as exc:
        errors.append('remove %s: %s' % (workdir, exc))
    return errors
