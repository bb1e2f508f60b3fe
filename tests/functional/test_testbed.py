"""Functional tests of the testbed on real libvirt + QEMU (TCG) guests.

Run as root on Debian 12 (the testbed does its own set-up)::

    stestr --test-path=./tests/functional run test_testbed

Rates come from libvirt's block statistics (virConnectGetAllDomainStats,
VIR_DOMAIN_STATS_BLOCK) over windows timed on the host; the sleeps below
are those measurement windows (and a warm-up window before each), never a
stand-in for synchronisation: loads are started and stopped through the
guests' consoles, which answer once the guest has done it.
"""

import os
import signal
import subprocess
import sys
import textwrap
import time
from xml.etree import ElementTree

import testtools
from testtools import content

try:
    import libvirt
except ImportError:   # pragma: no cover (testbed_skip_reason says so)
    libvirt = None

from iothrottle import testbed
from iothrottle.testbed import core
from iothrottle.testbed import domains
from iothrottle.testbed import host
from iothrottle.testbed import store as store_mod
from tests.functional import testbed_skip_reason

DELAY_MS = 4
CAP_IOPS = 20
# One prefix per process (stestr may split a class over workers); what a
# killed run left is cleaned up by the next one (cleanup_dead).
STEM = os.environ.get('IOTHROTTLE_TESTBED_PREFIX', 'itb-ft')
PREFIX = '%s%d-' % (STEM, os.getpid())
LIFE_PREFIX = '%s%dx-' % (STEM, os.getpid())

WARMUP_S = 1.0
WINDOW_S = 3.0


def _our_domains(conn, prefix):
    return [d.name() for d in conn.listAllDomains()
            if d.name().startswith(prefix)
            and domains.testbed_prefix_of(d) == prefix]


def _fmt(rates):
    return ', '.join('%s %.0f' % (vm, r.iops) for vm, r in sorted(
        rates.items()))


@testtools.skipIf(testbed_skip_reason(), testbed_skip_reason())
class TestTestbedIO(testtools.TestCase):
    """Three guests on one store: vm1 bursts, vm2 and vm3 are neighbours."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.spec = [testbed.GuestSpec(name=n, flavor='bench.' + n,
                                      project='demo', memory_mb=160,
                                      disk_mb=256)
                    for n in ('vm1', 'vm2', 'vm3')]
        testbed.cleanup_dead(STEM)
        cls.tb = testbed.Testbed(cls.spec, delay_ms=DELAY_MS, prefix=PREFIX)
        cls.tb.start()

    @classmethod
    def tearDownClass(cls):
        cls.tb.stop()
        super().tearDownClass()

    def setUp(self):
        super().setUp()
        self.addCleanup(self._quiesce)

    def _quiesce(self):
        self.tb.stop_all_loads()
        dom = self.tb.domain('vm1')
        dom.setBlockIoTune('vda', {'total_iops_sec': 0},
                           libvirt.VIR_DOMAIN_AFFECT_LIVE)

    def _measure(self, window=WINDOW_S):
        self.tb.measure(WARMUP_S)     # warm-up window, discarded
        rates = self.tb.measure(window)
        self.addDetail('rates-%d' % len(self.getDetails()),
                       content.text_content(_fmt(rates)))
        return rates

    # ------------------------------------------------------------------
    def test_guests_are_nova_like_and_started_fast(self):
        conn = self.tb.conn
        for g in self.spec:
            dom = conn.lookupByName(self.tb.domain_name(g.name))
            self.assertTrue(dom.isActive())
            self.assertTrue(dom.isPersistent())
            self.assertEqual(self.tb.instance_uuid(g.name), dom.UUIDString())
            xml = dom.metadata(libvirt.VIR_DOMAIN_METADATA_ELEMENT,
                               domains.NOVA_NS)
            inst = ElementTree.fromstring(xml)
            self.assertEqual(g.name, inst.findtext('name'))
            self.assertEqual('bench.%s' % g.name,
                             inst.find('flavor').get('name'))
            self.assertEqual('160', inst.findtext('flavor/memory'))
            self.assertEqual('demo', inst.findtext('owner/project'))
            self.assertIn(g.name, self.tb.start_seconds)
            self.assertIn(g.name, self.tb.boot_seconds)
        # libvirtd sees /dev/kvm only where KVM is usable: an unusable one
        # makes libvirt re-probe QEMU on every domain start (seconds each;
        # 4.2 s for one start in CI while the probe let a KVM 18 times
        # slower than TCG pass).
        status = host.libvirtd_status()
        self.assertTrue(status['libvirtd_pids'])
        if status['dev_kvm'] and not host.kvm_usable():
            self.assertEqual([False] * len(status['libvirtd_pids']),
                             status['libvirtd_sees_kvm'])
        # The guest sees its disk with the size of the spec.
        rc, out = self.tb.run('vm2', 'cat /sys/block/vda/size')
        self.assertEqual(0, rc)
        self.assertEqual([str(256 * 2048)], out)

    def test_counters_grow_under_load_and_stop_after_stop_load(self):
        tb = self.tb
        before = tb.block_stats()
        tb.start_load('vm2', testbed.Load(procs=1, block_kb=64,
                                          rw='randwrite'))
        time.sleep(2.0)           # measurement window
        during = tb.block_stats()
        grew = during['vm2'].wr_reqs - before['vm2'].wr_reqs
        self.assertGreater(grew, 50)
        # 64 KiB O_DIRECT requests reach the store as 64 KiB requests.
        self.assertEqual(64 * 1024 * grew,
                         during['vm2'].wr_bytes - before['vm2'].wr_bytes)
        # Idle guests do no I/O.
        for vm in ('vm1', 'vm3'):
            self.assertEqual(before[vm].wr_reqs, during[vm].wr_reqs)

        tb.stop_load('vm2')       # returns once the load has exited
        stopped = tb.block_stats()
        time.sleep(1.5)           # measurement window
        later = tb.block_stats()
        self.assertEqual(stopped['vm2'].wr_reqs, later['vm2'].wr_reqs)
        self.assertEqual(stopped['vm2'].rd_reqs, later['vm2'].rd_reqs)

    def test_paced_load_keeps_its_rate(self):
        # The paper's demands are rates: 2 processes x 800 KiB/s of 64 KiB
        # requests = 25 IOPS, far below the store's capacity.
        self.tb.start_load('vm3', testbed.Load(procs=2, block_kb=64,
                                               rate_kb_s=800))
        rates = self._measure(4.0)
        self.assertGreater(rates['vm3'].iops, 25 * 0.85)
        self.assertLess(rates['vm3'].iops, 25 * 1.15)

    def test_ramp_adds_processes(self):
        # 1 process at 20 IOPS, one more every 1.5 s up to 3 (60 IOPS).
        tb = self.tb
        tb.start_load('vm3', testbed.Load(procs=1, max_procs=3, ramp_s=1.5,
                                          rate_iops=20, block_kb=16))
        t0 = time.monotonic()
        first = tb.measure(1.2)['vm3'].iops
        time.sleep(max(0.0, 3.5 - (time.monotonic() - t0)))
        late = tb.measure(2.5)['vm3'].iops
        self.assertGreater(first, 12)
        self.assertLess(first, 30)
        self.assertGreater(late, 60 * 0.8)
        self.assertLess(late, 60 * 1.15)

    def test_burster_starves_neighbours_until_capped(self):
        tb = self.tb
        for vm in ('vm2', 'vm3'):
            tb.start_load(vm, testbed.Load(procs=1, block_kb=64))
        alone = self._measure()

        tb.start_load('vm1', testbed.Load(procs=10, block_kb=64))
        burst = self._measure()
        total = sum(r.iops for r in burst.values())
        # The store is saturated (~1000/DELAY_MS IOPS) and serves one FIFO
        # queue, so vm1's 10 outstanding requests get ~10x the service of
        # a neighbour's one (a per-connection lock would give ~1-2x).
        self.assertGreater(total, 0.6 * 1000 / DELAY_MS)
        for vm in ('vm2', 'vm3'):
            self.assertGreater(burst['vm1'].iops, 5 * burst[vm].iops)
            self.assertLess(burst[vm].iops, 0.5 * alone[vm].iops)

        tb.domain('vm1').setBlockIoTune(
            'vda', {'total_iops_sec': CAP_IOPS},
            libvirt.VIR_DOMAIN_AFFECT_LIVE)
        capped = self._measure()
        self.assertGreater(capped['vm1'].iops, 0.7 * CAP_IOPS)
        self.assertLess(capped['vm1'].iops, 1.3 * CAP_IOPS)
        for vm in ('vm2', 'vm3'):
            self.assertGreater(capped[vm].iops, 1.3 * burst[vm].iops)
            self.assertGreater(capped[vm].iops, 0.7 * alone[vm].iops)


@testtools.skipIf(testbed_skip_reason(), testbed_skip_reason())
class TestTestbedLifecycle(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.uri = testbed.ensure_libvirt()
        self.conn = libvirt.open(self.uri)
        self.addCleanup(self.conn.close)
        self.addCleanup(self._force_cleanup)

    def _force_cleanup(self):
        try:
            testbed.Testbed.cleanup_stale(LIFE_PREFIX, force=True)
        except Exception:
            pass

    def _assert_gone(self, prefix):
        self.assertEqual([], _our_domains(self.conn, prefix))
        workdir = os.path.join(testbed.DEFAULT_STATE_ROOT, prefix)
        self.assertFalse(os.path.exists(workdir))
        self.assertEqual(
            [], store_mod.find_nbdkit(os.path.join(workdir, 'nbd.sock')))

    def test_failed_boot_tears_everything_down(self):
        tb = testbed.Testbed([testbed.GuestSpec(name='vm1')],
                             prefix=LIFE_PREFIX, boot_timeout=0.3)
        self.assertRaises(testbed.GuestError, tb.start)
        self._assert_gone(LIFE_PREFIX)

    def test_stale_testbed_of_a_killed_run_is_cleaned(self):
        # The owner is killed as soon as its domain runs (no need to wait
        # for the boot: that would only burn a core the other tests use).
        script = textwrap.dedent('''
            from iothrottle import testbed
            testbed.Testbed([testbed.GuestSpec(name='vm1')],
                            prefix=%r).start()
        ''' % LIFE_PREFIX)
        proc = subprocess.Popen([sys.executable, '-c', script])
        self.addCleanup(proc.wait)
        self.addCleanup(proc.kill)
        name = LIFE_PREFIX + 'vm1'
        deadline = time.monotonic() + 120
        state = None
        while time.monotonic() < deadline and proc.poll() is None:
            state = core.read_state(testbed.DEFAULT_STATE_ROOT, LIFE_PREFIX)
            if state and state.get('nbdkit_pid') and name in [
                    d.name() for d in self.conn.listAllDomains(
                        libvirt.VIR_CONNECT_LIST_DOMAINS_ACTIVE)]:
                break
            time.sleep(0.1)      # polling interval, with a deadline
        else:
            self.fail('the testbed of pid %d never ran its domain'
                      % proc.pid)
        self.assertEqual(proc.pid, state['owner_pid'])
        # A live owner is protected.
        self.assertRaises(testbed.TestbedError,
                          testbed.Testbed.cleanup_stale, LIFE_PREFIX)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        self.assertEqual([name], _our_domains(self.conn, LIFE_PREFIX))
        removed = testbed.Testbed.cleanup_stale(LIFE_PREFIX)
        self.assertEqual([name], removed)
        self._assert_gone(LIFE_PREFIX)
