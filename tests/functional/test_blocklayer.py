"""Functional tests of the block-layer testbed (``block_layer=SCHED``):
one tiny guest whose disk is a partition of a loop device over nbdfuse
over nbdkit, and what a crash leaves behind.

Run as root (the testbed does its own set-up), under the shared lock::

    flock /work/bench.lock stestr --test-path=./tests/functional \
        run test_blocklayer
"""

import glob
import mmap
import os
import signal
import stat
from xml.etree import ElementTree

import testtools

try:
    import libvirt
except ImportError:   # pragma: no cover (testbed_skip_reason says so)
    libvirt = None

from iothrottle.bench import peers_libvirt
from iothrottle.cmd import testbed as testbed_cmd
from iothrottle.controller import model
from iothrottle import testbed
from iothrottle.testbed import blocklayer
from iothrottle.testbed import core
from iothrottle.testbed import domains
from iothrottle.testbed import store as store_mod
from tests.functional import testbed_skip_reason

STEM = os.environ.get('IOTHROTTLE_TESTBED_PREFIX', 'bl-ft')
PREFIX = '%s%d-' % (STEM, os.getpid())
# Not the loop device's default ('none'): seeing it proves it was set.
SCHEDULER = 'mq-deadline'
MARK = b'ITB-BLOCK-LAYER-MARK'
MARK_SECTOR = 8


def _skip_reason():
    reason = testbed_skip_reason()
    if reason:
        return reason
    for path in ('/dev/loop-control', '/dev/fuse'):
        if not os.path.exists(path):
            return 'no %s on this host' % path
    return None


def _loops_backed_under(directory):
    """Every loop device whose backing file is under ``directory``, read
    straight from sysfs (not through the code under test)."""
    found = []
    prefix = directory.rstrip('/') + '/'
    for path in glob.glob('/sys/block/loop*/loop/backing_file'):
        with open(path) as f:
            if f.read().strip().startswith(prefix):
                found.append(path.split('/')[3])
    return found


def _mounts_under(directory):
    prefix = directory.rstrip('/') + '/'
    with open('/proc/self/mountinfo') as f:
        return [line.split()[4] for line in f
                if line.split()[4].startswith(prefix)]


def _disk_of(node):
    """(disk name, is a partition) of a block device node, from sysfs."""
    st = os.stat(node)
    sys_path = os.path.realpath('/sys/dev/block/%d:%d' % (
        os.major(st.st_rdev), os.minor(st.st_rdev)))
    if os.path.exists(os.path.join(sys_path, 'partition')):
        return os.path.basename(os.path.dirname(sys_path)), True
    return os.path.basename(sys_path), False


def _cgroup_file(tb, vm, name):
    """A file of the blkio cgroup of ``vm``'s QEMU process, read from
    /proc and the cgroup mount (not through libvirt)."""
    with open('/sys/fs/cgroup/blkio%s/%s' % (tb.io_group(vm), name)) as f:
        return f.read().strip()


def _read_direct(device, offset, length=4096):
    fd = os.open(device, os.O_RDONLY | os.O_DIRECT)
    try:
        buf = mmap.mmap(-1, length)
        os.preadv(fd, [buf], offset)
        return bytes(buf)
    finally:
        os.close(fd)


@testtools.skipIf(_skip_reason(), _skip_reason())
class TestBlockLayerTestbed(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.workdir = os.path.join(testbed.DEFAULT_STATE_ROOT, PREFIX)
        self.addCleanup(self._force_cleanup)

    def _force_cleanup(self):
        try:
            testbed.Testbed.cleanup_stale(PREFIX, force=True)
        except Exception:
            pass

    def _assert_nothing_left(self, conn):
        self.assertEqual([], [d.name() for d in conn.listAllDomains()
                              if d.name().startswith(PREFIX)])
        self.assertEqual([], _loops_backed_under(self.workdir))
        self.assertEqual([], _mounts_under(self.workdir))
        self.assertEqual([], blocklayer.find_nbdfuse(self.workdir))
        self.assertEqual([], store_mod.find_nbdkit(
            os.path.join(self.workdir, 'nbd.sock')))
        self.assertFalse(os.path.exists(self.workdir))

    def _start(self, **kw):
        tb = testbed.Testbed(
            [testbed.GuestSpec(name='vm1', memory_mb=128, disk_mb=64)],
            prefix=PREFIX, block_layer=SCHEDULER, **kw)
        tb.start()
        return tb

    def test_guest_disk_is_a_partition_under_the_scheduler(self):
        tb = self._start()
        conn = libvirt.open(tb.uri)
        self.addCleanup(conn.close)
        try:
            node = tb.disk_path('vm1')
            self.assertTrue(stat.S_ISBLK(os.stat(node).st_mode))
            loop, is_partition = _disk_of(node)
            self.assertTrue(is_partition)
            self.assertEqual(tb.blocklayer.loop, loop)
            self.assertEqual([loop], _loops_backed_under(self.workdir))
            with open('/sys/block/%s/queue/scheduler' % loop) as f:
                self.assertIn('[%s]' % SCHEDULER, f.read())
            with open('/sys/block/%s/loop/dio' % loop) as f:
                self.assertEqual('1', f.read().strip())
            self.assertEqual('local:%s:%s' % (os.uname().nodename, loop),
                             tb.domain_key)
            disk = ElementTree.fromstring(
                tb.domain('vm1').XMLDesc()).find('devices/disk')
            self.assertEqual('block', disk.get('type'))
            self.assertEqual(node, disk.find('source').get('dev'))
            self.assertEqual(('none', 'native'),
                             (disk.find('driver').get('cache'),
                              disk.find('driver').get('io')))

            # The guest's writes reach the loop device, at the guest's
            # place in the store.
            with open('/sys/block/%s/stat' % loop) as f:
                writes_before = int(f.read().split()[4])
            rc, out = tb.run('vm1', 'echo %s | dd of=/dev/vda bs=512 '
                             'seek=%d conv=notrunc,fsync'
                             % (MARK.decode(), MARK_SECTOR))
            self.assertEqual(0, rc, out)
            with open('/sys/block/%s/stat' % loop) as f:
                self.assertGreater(int(f.read().split()[4]), writes_before)
            offset = tb._guest('vm1')['disk_offset_bytes']
            data = _read_direct('/dev/' + loop, offset + MARK_SECTOR * 512)
            self.assertEqual(MARK, data[:len(MARK)])
        finally:
            tb.stop()
        self._assert_nothing_left(conn)

    def _start_with_bfq(self, scheduler):
        """The testbed and a connection to it, once a switch to BFQ
        loaded it, with the queue left under ``scheduler``; skipped
        without a cgroup v1 blkio hierarchy or a kernel BFQ.  libvirt
        (9.0) writes blkio device settings only where a proportional
        scheduler's weight files exist, which BFQ adds once loaded
        ("blkio device weight is valid only for bfq or cfq scheduler",
        on a kernel built without BFQ, 2026-12-04)."""
        if not os.path.isdir('/sys/fs/cgroup/blkio'):
            self.skipTest('no cgroup v1 blkio hierarchy on this host')
        if not blocklayer.scheduler_offered('bfq'):
            self.skipTest('this kernel has no BFQ scheduler')
        tb = self._start()
        conn = libvirt.open(tb.uri)
        self.addCleanup(conn.close)
        try:
            tb.blocklayer.set_scheduler('bfq')
            tb.blocklayer.set_scheduler(scheduler)
        except Exception:
            tb.stop()
            raise
        return tb, conn

    def test_the_bfq_peer_weights_the_guests_cgroup(self):
        # What iothrottle-bench's bfq-weight peer sets through libvirt:
        # a BFQ weight in the guest's blkio cgroup, with the queue under
        # BFQ as the peer puts it (peers_libvirt.bfq_weighted).
        tb, conn = self._start_with_bfq('bfq')
        try:
            peers_libvirt.set_weight(conn, tb.instance_uuid('vm1'), 700)
            self.assertEqual('700', _cgroup_file(tb, 'vm1',
                                                 'blkio.bfq.weight'))
        finally:
            tb.stop()
        self._assert_nothing_left(conn)

    def test_the_blk_throttle_peer_holds_the_guest(self):
        # What iothrottle-bench's blk-throttle peer sets through libvirt:
        # limits on the whole disk in the guest's blkio cgroup that hold
        # the guest's I/O.
        tb, conn = self._start_with_bfq(SCHEDULER)
        try:
            uuid = tb.instance_uuid('vm1')
            node = tb.blocklayer.disk_node
            self.assertEqual((tb.blocklayer.loop, False), _disk_of(node))
            actuator = peers_libvirt.BlkThrottleActuator(conn, node)
            cap = model.Cap(iops=20, bytes_sec=0)
            actuator.set_cap(uuid, 'vda', cap, None)
            self.assertTrue(actuator.in_force(uuid, 'vda', cap, None))
            self.assertFalse(actuator.in_force(uuid, 'vda',
                                               model.Cap(30, 0), None))
            tb.start_load('vm1', testbed.Load(procs=4, block_kb=4,
                                              rw='randwrite'))
            tb.measure(2.0)                  # the load gets going
            held = tb.measure(4.0)['vm1'].iops
            actuator.restore(uuid, 'vda', None)
            free = tb.measure(4.0)['vm1'].iops
            tb.stop_load('vm1')
            self.assertLess(held, 20 * 1.2)
            self.assertGreater(held, 20 * 0.5)
            # 4 ms a request on the store: about 250 IOPS unheld.
            self.assertGreater(free, 2 * 20)
            self.assertEqual('', _cgroup_file(
                tb, 'vm1', 'blkio.throttle.write_iops_device'))

            # A limit the agent set again after releasing its leases (its
            # drain steps decide) is lifted when the peer's run ends.
            with peers_libvirt.throttle_lifted(conn, tb):
                actuator.set_cap(uuid, 'vda', cap, None)
                self.assertIn(' 20', _cgroup_file(
                    tb, 'vm1', 'blkio.throttle.write_iops_device'))
            self.assertEqual('', _cgroup_file(
                tb, 'vm1', 'blkio.throttle.write_iops_device'))
        finally:
            tb.stop()
        self._assert_nothing_left(conn)

    def test_down_force_after_a_crash(self):
        tb = self._start(detach=True)
        loop = tb.blocklayer.loop
        tb.close()
        conn = libvirt.open(tb.uri)
        self.addCleanup(conn.close)
        # The crash: nbdkit and nbdfuse die, the loop device, the FUSE
        # mount and the domain stay; the state file is lost too (the
        # strays must be found by the testbed's name alone).
        nbdfuse = blocklayer.find_nbdfuse(self.workdir)
        nbdkit = store_mod.find_nbdkit(os.path.join(self.workdir,
                                                    'nbd.sock'))
        self.assertEqual(1, len(nbdfuse))
        self.assertEqual(1, len(nbdkit))
        for pid in nbdfuse + nbdkit:
            os.kill(pid, signal.SIGKILL)
        tb.blocklayer._proc.wait()          # our child: reap it
        os.unlink(os.path.join(self.workdir, 'state.json'))
        self.assertIsNone(core.read_state(testbed.DEFAULT_STATE_ROOT,
                                          PREFIX))
        self.assertEqual([loop], _loops_backed_under(self.workdir))
        self.assertEqual([os.path.join(self.workdir, 'fuse')],
                         _mounts_under(self.workdir))
        self.assertEqual([PREFIX + 'vm1'], [
            d.name() for d in conn.listAllDomains()
            if domains.testbed_prefix_of(d) == PREFIX])

        rc = testbed_cmd.main(['--prefix', PREFIX, 'down', '--force'])
        self.assertEqual(0, rc)
        self._assert_nothing_left(conn)
        # And again: nothing to do is no error.
        self.assertEqual(0, testbed_cmd.main(['--prefix', PREFIX, 'down',
                                              '--force']))
