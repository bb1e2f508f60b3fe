"""The compute agent against a real libvirt + QEMU (the testbed).

Three TCG guests share the testbed's NBD store: vm1 runs a random-write
load, vm2 stays idle, vm3 is destroyed in the middle of a collection.
Measurement windows are waits on purpose (the agent samples rates over
wall-clock time); nothing waits in place of synchronisation.
"""

import os
import subprocess
import sys
import textwrap
import threading
import time

import fixtures
import libvirt
from oslo_config import cfg
import testtools

from iothrottle.compute import actuator as actuator_mod
from iothrottle.compute import agent as agent_mod
from iothrottle.compute import baseline_record
from iothrottle.compute import capacity as capacity_mod
from iothrottle.compute import collector as collector_mod
from iothrottle.compute import connection
from iothrottle.compute import iotune
from iothrottle import conf as iothrottle_conf
from iothrottle.controller import model
from iothrottle.controller import policy as policy_mod
from iothrottle import tiers as tiers_mod

try:
    from iothrottle import testbed
    HAVE_TESTBED = hasattr(testbed, 'Testbed')
except ImportError:  # pragma: no cover - the testbed is another module
    testbed, HAVE_TESTBED = None, False

# Seconds of load each rate measurement averages over: a few hundred
# requests at the testbed's rates, so the IOPS comparisons are not noise.
WINDOW_S = 3.0
TIERS_YAML = '''
tiers:
  gold: {min_iops: 20, weight: 2}
flavors:
  bench.vm1: gold
default_tier: gold
'''


class CapPolicy:
    """Stand-in policy: caps the disks in ``caps`` every interval."""

    def __init__(self):
        self.caps = {}
        self.release = set()
        self.lease_s = 60.0

    def initial_state(self):
        return None

    def decide(self, view, state):
        decisions = []
        for disk in view.disks:
            sample = disk.sample
            if disk.disk_id in self.caps:
                decisions.append(model.Decision(
                    sample.instance_uuid, sample.device, model.CAP, 'test',
                    cap=self.caps[disk.disk_id], lease_s=self.lease_s))
            elif disk.disk_id in self.release:
                decisions.append(model.Decision(
                    sample.instance_uuid, sample.device, model.RELEASE,
                    'test'))
        return policy_mod.Outcome(decisions=tuple(decisions), state=state)


@testtools.skipUnless(HAVE_TESTBED, 'iothrottle.testbed is not there yet')
class TestAgentOnLibvirt(testtools.TestCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        # Expected errors (a vanished domain) need not reach stderr.
        connection.silence_default_errors()
        testbed.host.ensure_libvirt()
        cls.tb = testbed.Testbed([
            testbed.GuestSpec(name=name, flavor='bench.' + name,
                              project='demo', memory_mb=192, disk_mb=256)
            for name in ('vm1', 'vm2', 'vm3')],
            delay_ms=10.0, prefix='itb-agent-')
        cls.tb.__enter__()
        cls.conn = libvirt.open(cls.tb.uri)
        cls.uuid = {name: cls.tb.instance_uuid(name)
                    for name in ('vm1', 'vm2', 'vm3')}

    @classmethod
    def tearDownClass(cls):
        try:
            cls.conn.close()
        finally:
            cls.tb.__exit__(None, None, None)
        super().tearDownClass()

    def setUp(self):
        super().setUp()
        self.useFixture(fixtures.FakeLogger(name='iothrottle'))
        self.conf = cfg.ConfigOpts()
        iothrottle_conf.register_opts(self.conf)
        self.conf([])

    # -- helpers --------------------------------------------------------

    def _dom(self, name):
        return self.conn.lookupByUUIDString(self.uuid[name])

    def _disk(self, name):
        """Target dev of the guest's (first) disk on the store."""
        collection = collector_mod.Collector(self.conn).collect()
        return collection.instances[self.uuid[name]].disks[0].device

    def _load(self, name):
        self.tb.start_load(name, testbed.Load(procs=2, block_kb=64,
                                              rw='randwrite'))
        self.addCleanup(self.tb.stop_load, name)

    def _rates(self, collector, window_s=WINDOW_S):
        """IOPS per instance uuid over the next ``window_s`` seconds."""
        collector.collect()
        threading.Event().wait(window_s)
        rates = {}
        for sample in collector.collect().samples:
            rates[sample.instance_uuid] = (
                rates.get(sample.instance_uuid, 0.0) + sample.write_iops)
        return rates

    def _agent(self, policy):
        agent = agent_mod.Agent(
            self.conf, collector_mod.Collector(self.conn),
            actuator_mod.Actuator(self.conn), policy,
            tiers_mod.parse_tiers(TIERS_YAML),
            capacity_mod.CapacityTable.from_conf(self.conf))
        self.addCleanup(agent.release_all)
        return agent

    def _ours(self, errors):
        """The errors about this testbed's guests.

        Other testbeds may share the host and come and go while we
        collect; their vanishing is not our failure.
        """
        marks = ['itb-agent-'] + list(self.uuid.values())
        return [e for e in errors if any(mark in e for mark in marks)]

    def _live(self, name, dev):
        return iotune.IoTune.from_params(self._dom(name).blockIoTune(
            dev, libvirt.VIR_DOMAIN_AFFECT_LIVE))

    def _set_static(self, name, dev, limits):
        """Make ``limits`` the operator's baseline of the disk."""
        dom = self._dom(name)
        flags = libvirt.VIR_DOMAIN_AFFECT_LIVE
        if dom.isPersistent():
            flags |= libvirt.VIR_DOMAIN_AFFECT_CONFIG
        dom.setBlockIoTune(dev, limits.as_params(), flags)
        self.addCleanup(dom.setBlockIoTune, dev,
                        iotune.IoTune().as_params(), flags)

    # -- tests ----------------------------------------------------------

    def test_collection_loaded_vs_idle(self):
        self._load('vm1')
        collector = collector_mod.Collector(self.conn)
        started = time.monotonic()
        collection = collector.collect()
        elapsed_s = time.monotonic() - started
        for name in ('vm1', 'vm2', 'vm3'):
            instance = collection.instances[self.uuid[name]]
            self.assertEqual('bench.' + name, instance.flavor)
            self.assertTrue(instance.disks)
        self.assertLess(elapsed_s, 1.0)
        rates = self._rates(collector)
        self.assertGreater(rates[self.uuid['vm1']], 5.0)
        self.assertLess(rates[self.uuid['vm2']], 1.0)

    def test_cap_brings_iops_down_and_release_restores(self):
        dev = self._disk('vm1')
        disk_id = '%s/%s' % (self.uuid['vm1'], dev)
        baseline = self._live('vm1', dev)
        self._load('vm1')
        measure = collector_mod.Collector(self.conn)
        uncapped = self._rates(measure)[self.uuid['vm1']]
        cap_iops = max(5.0, round(uncapped / 4.0))
        policy = CapPolicy()
        agent = self._agent(policy)
        agent.step()
        policy.caps[disk_id] = model.Cap(cap_iops, 0)
        threading.Event().wait(1.0)
        report = agent.step()
        self.assertEqual([], self._ours(report.errors))
        self.assertEqual(model.Cap(cap_iops, 0), report.caps[disk_id])
        self.assertEqual(int(cap_iops), self._live('vm1', dev)
                         .total_iops_sec)
        if self._dom('vm1').isPersistent():
            persistent = iotune.IoTune.from_params(self._dom(
                'vm1').blockIoTune(dev, libvirt.VIR_DOMAIN_AFFECT_CONFIG))
            self.assertEqual(baseline, persistent)
        capped = self._rates(measure)[self.uuid['vm1']]
        self.assertLess(capped, cap_iops * 1.5 + 2.0)
        self.assertLess(capped, uncapped * 0.6)
        del policy.caps[disk_id]
        policy.release.add(disk_id)
        report = agent.step()
        self.assertNotIn(disk_id, report.caps)
        self.assertEqual(baseline, self._live('vm1', dev))

    def test_lease_expiry_restores_static_baseline_and_clamps(self):
        dev = self._disk('vm2')
        disk_id = '%s/%s' % (self.uuid['vm2'], dev)
        static = iotune.IoTune(total_iops_sec=40, total_bytes_sec=4000000)
        self._set_static('vm2', dev, static)
        policy = CapPolicy()
        policy.lease_s = 5.0
        agent = self._agent(policy)
        agent.step()
        policy.caps[disk_id] = model.Cap(1000, 0)
        now_s = time.monotonic() + 1.0
        report = agent.step(now_s)
        # Asked for 1000 IOPS: the operator's 40 is the ceiling.
        self.assertEqual(model.Cap(40, 4000000), report.caps[disk_id])
        policy.caps[disk_id] = model.Cap(10, 0)
        report = agent.step(now_s + 1.0)
        self.assertEqual(iotune.IoTune(total_iops_sec=10,
                                       total_bytes_sec=4000000),
                         self._live('vm2', dev))
        policy.caps.clear()
        report = agent.step(now_s + 6.0)
        self.assertEqual((disk_id,), report.expired)
        self.assertEqual(static, self._live('vm2', dev))

    def test_split_baseline_is_scaled(self):
        dev = self._disk('vm2')
        disk_id = '%s/%s' % (self.uuid['vm2'], dev)
        static = iotune.IoTune(read_iops_sec=300, write_iops_sec=100)
        self._set_static('vm2', dev, static)
        policy = CapPolicy()
        agent = self._agent(policy)
        agent.step()
        policy.caps[disk_id] = model.Cap(40, 0)
        self.assertEqual([], self._ours(agent.step().errors))
        self.assertEqual(iotune.IoTune(read_iops_sec=30, write_iops_sec=10),
                         self._live('vm2', dev))
        self.assertEqual((), agent.release_all())
        self.assertEqual(static, self._live('vm2', dev))

    def test_reconcile_restores_a_leftover_cap(self):
        if not self._dom('vm2').isPersistent():
            self.skipTest('transient guests have no baseline to reconcile '
                          'against')
        dev = self._disk('vm2')
        self._dom('vm2').setBlockIoTune(
            dev, iotune.IoTune(total_iops_sec=7).as_params(),
            libvirt.VIR_DOMAIN_AFFECT_LIVE)
        agent = self._agent(CapPolicy())
        self.assertIn('%s/%s' % (self.uuid['vm2'], dev), agent.reconcile())
        self.assertEqual(iotune.IoTune(), self._live('vm2', dev))

    def test_migration_xml_does_not_make_the_cap_a_baseline(self):
        """Nova's live migration defines the destination with the live
        XML: a cap in force becomes its persistent <iotune>.  The agent
        that finds the domain there (here: a fresh one on the same host)
        restores the operator's limits from the domain's baseline record,
        live and persistent, not the cap."""
        dom = self._dom('vm2')
        dev = self._disk('vm2')
        disk_id = '%s/%s' % (self.uuid['vm2'], dev)
        static = iotune.IoTune(total_iops_sec=400)
        self._set_static('vm2', dev, static)
        if not dom.isPersistent():
            # Defining it below makes it persistent; leave it as found.
            self.addCleanup(dom.undefine)
        policy = CapPolicy()
        source = self._agent(policy)
        source.step()
        policy.caps[disk_id] = model.Cap(25, 0)
        threading.Event().wait(1.0)
        self.assertEqual([], self._ours(source.step().errors))
        self.assertEqual(25, self._live('vm2', dev).total_iops_sec)
        self.conn.defineXML(dom.XMLDesc(libvirt.VIR_DOMAIN_XML_MIGRATABLE))
        self.assertEqual(25, iotune.IoTune.from_params(dom.blockIoTune(
            dev, libvirt.VIR_DOMAIN_AFFECT_CONFIG)).total_iops_sec)
        # The source loses the domain: its lease goes without a restore.
        source.leases.release(disk_id)
        destination = self._agent(CapPolicy())
        self.assertIn(disk_id, destination.reconcile())
        self.assertEqual(static, self._live('vm2', dev))
        self.assertEqual(static, iotune.IoTune.from_params(dom.blockIoTune(
            dev, libvirt.VIR_DOMAIN_AFFECT_CONFIG)))
        self.assertNotIn(baseline_record.NAMESPACE_URI,
                         dom.XMLDesc(libvirt.VIR_DOMAIN_XML_INACTIVE))
        self.assertNotIn(baseline_record.NAMESPACE_URI, dom.XMLDesc(0))

    def test_standalone_once(self):
        tmp = self.useFixture(fixtures.TempDir())
        tiers_path = tmp.join('tiers.yaml')
        with open(tiers_path, 'w') as stream:
            stream.write(TIERS_YAML)
        conf_path = tmp.join('iothrottle.conf')
        with open(conf_path, 'w') as stream:
            stream.write(textwrap.dedent('''
                [compute]
                libvirt_uri = %s
                tiers_file = %s
                [controller]
                interval_s = 1.0
                # Observe only: other testbeds may share this host.
                policy = none
                ''' % (self.tb.uri, tiers_path)))
        proc = subprocess.run(
            [sys.executable, '-m', 'iothrottle.cmd.compute', '--standalone',
             '--once', '--config-file', conf_path],
            capture_output=True, text=True, timeout=120)
        self.assertEqual(0, proc.returncode, proc.stderr)
        self.assertIn('step at', proc.stdout)
        self.assertNotIn(' 0 samples', proc.stdout)
        listing = subprocess.run(
            [sys.executable, '-m', 'iothrottle.cmd.compute', '--list-disks',
             '--config-file', conf_path],
            capture_output=True, text=True, timeout=120)
        self.assertEqual(0, listing.returncode, listing.stderr)
        self.assertIn('STORAGE DOMAIN', listing.stdout)
        for name in ('vm1', 'vm2'):
            self.assertIn('bench.' + name, listing.stdout)

    def test_z_vanished_domain_mid_collection(self):
        """Runs last (alphabetically): it removes vm3 for good."""
        victim = self._dom('vm3')
        conn = self.conn

        class Vanishing:
            """A connection on which vm3 goes away right after the stats
            call, before the collector reads its XML."""

            def getAllDomainStats(self, stats, flags):
                records = conn.getAllDomainStats(stats, flags)
                victim.destroy()
                victim.undefine()
                return records

        self._load('vm1')
        collector = collector_mod.Collector(Vanishing())
        collection = collector.collect()
        self.assertIn(self.uuid['vm1'], collection.instances)
        self.assertIn(self.uuid['vm2'], collection.instances)
        self.assertNotIn(self.uuid['vm3'], collection.instances)
        ours = self._ours(collection.errors)
        self.assertEqual(1, len(ours), collection.errors)
        self.assertIn(self.tb.domain_name('vm3'), ours[0])
        collector.conn = conn
        threading.Event().wait(1.0)
        collection = collector.collect()
        self.assertEqual([], self._ours(collection.errors))
        rates = {s.instance_uuid: s.write_iops for s in collection.samples}
        self.assertGreater(rates[self.uuid['vm1']], 0.0)
        self.assertNotIn(self.uuid['vm3'], rates)


class TestCommandErrors(testtools.TestCase):
    """Bad input: one line on stderr, non-zero exit, no traceback."""

    def _run(self, *argv):
        return subprocess.run(
            [sys.executable, '-m', 'iothrottle.cmd.compute'] + list(argv),
            capture_output=True, text=True, timeout=60,
            env=dict(os.environ, PYTHONWARNINGS='ignore'))

    def setUp(self):
        super().setUp()
        self.tmp = self.useFixture(fixtures.TempDir())

    def test_bad_tiers_file(self):
        path = self.tmp.join('tiers.yaml')
        with open(path, 'w') as stream:
            stream.write('flavors: {bench.vm2: {min_iops: abc}}\n')
        proc = self._run('--standalone', '--tiers-file', path)
        self.assertEqual(1, proc.returncode)
        self.assertEqual(
            "iothrottle-compute: %s: flavors.bench.vm2.min_iops: must be a "
            "number >= 0, got 'abc'\n" % path, proc.stderr)

    def test_unknown_tier(self):
        path = self.tmp.join('tiers.yaml')
        with open(path, 'w') as stream:
            stream.write('tiers: {gold: {}}\nflavors: {m1.large: lead}\n')
        proc = self._run('--standalone', '--tiers-file', path)
        self.assertEqual(1, proc.returncode)
        self.assertIn("flavors.m1.large: unknown tier 'lead'", proc.stderr)
        self.assertEqual(1, proc.stderr.count('\n'))

    def test_unreachable_uri(self):
        tiers_path = self.tmp.join('tiers.yaml')
        with open(tiers_path, 'w') as stream:
            stream.write('tiers: {}\n')
        conf_path = self.tmp.join('iothrottle.conf')
        uri = 'qemu+unix:///system?socket=/nonexistent'
        with open(conf_path, 'w') as stream:
            stream.write('[compute]\nlibvirt_uri = %s\ntiers_file = %s\n'
                         % (uri, tiers_path))
        proc = self._run('--standalone', '--config-file', conf_path)
        self.assertEqual(1, proc.returncode)
        self.assertTrue(proc.stderr.startswith(
            'iothrottle-compute: cannot connect to libvirt at %s: ' % uri),
            proc.stderr)
        self.assertEqual(1, proc.stderr.count('\n'))
        self.assertNotIn('Traceback', proc.stderr)
