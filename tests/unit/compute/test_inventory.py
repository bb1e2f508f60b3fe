"""Gathering the advice inventory (iothrottle.compute.inventory) from a
sysfs tree and libvirt, and ``iothrottle-compute --advise``.

The sysfs trees are built in a temporary directory as the kernel lays
them out (``block/<name>`` a symlink into ``devices/``).  ``vda`` and
``loop0`` (unbound) are copied from the 2-core development VM
(``cat /sys/block/vda/{size,queue/scheduler,queue/rotational,
queue/nr_requests}``, ``ls /sys/block/vda/mq``, ``readlink
/sys/block/vda``); the others are made to the kernel's formats (a bound
loop device under bfq as the block-layer testbed makes them, an NVMe
namespace, a SATA SSD with NCQ off, a device mapper volume, values a
broken driver could show).
"""

import io
import json
import os

import fixtures
import libvirt
import testtools

from iothrottle.cmd import compute as cmd
from iothrottle.compute import advice
from iothrottle.compute import inventory
from iothrottle.rpc import wire
from tests.unit.compute import test_advice

DEVICES = {
    # Copied from the development VM.
    'vda': {'path': 'devices/pci0000:00/0000:00:02.0/virtio1/block/vda',
            'size': '536870912\n',
            'queue/scheduler': 'none [mq-deadline] kyber bfq \n',
            'queue/rotational': '1\n', 'queue/nr_requests': '256\n',
            'mq': ['0']},
    'loop0': {'path': 'devices/virtual/block/loop0', 'size': '0\n',
              'queue/scheduler': '[none] mq-deadline kyber bfq \n',
              'queue/rotational': '0\n', 'queue/nr_requests': '128\n',
              'mq': ['0']},
    # The block-layer testbed's kind: a bound loop device under bfq.
    'loop7': {'path': 'devices/virtual/block/loop7', 'size': '2097152\n',
              'queue/scheduler': 'none mq-deadline kyber [bfq] \n',
              'queue/rotational': '0\n', 'queue/nr_requests': '128\n',
              'mq': ['0']},
    'nvme0n1': {'path': 'devices/pci0000:00/0000:00:04.0/nvme/nvme0/'
                        'nvme0n1',
                'size': '1953525168\n',
                'queue/scheduler': 'none [mq-deadline] kyber bfq \n',
                'queue/rotational': '0\n', 'queue/nr_requests': '1023\n',
                'mq': ['0', '1', '2', '3']},
    'sdb': {'path': 'devices/pci0000:00/0000:00:1f.2/ata2/host1/'
                    'target1:0:0/1:0:0:0/block/sdb',
            'size': '937703088\n',
            'queue/scheduler': '[mq-deadline] kyber bfq none\n',
            'queue/rotational': '0\n', 'queue/nr_requests': '64\n',
            'device/queue_depth': '1\n', 'mq': ['0']},
    'dm-0': {'path': 'devices/virtual/block/dm-0', 'size': '41943040\n',
             'queue/scheduler': 'none\n', 'queue/rotational': '1\n',
             'queue/nr_requests': '128\n'},
    # bio-based: no scheduler file at all.
    'zram0': {'path': 'devices/virtual/block/zram0', 'size': '8388608\n',
              'queue/rotational': '0\n'},
    # A driver showing what no kernel should.
    'sdz': {'path': 'devices/pci0000:00/0000:00:1f.2/ata9/host8/'
                    'target8:0:0/8:0:0:0/block/sdz',
            'size': '1000\n', 'queue/scheduler': 'none [mq-deadline\n',
            'queue/rotational': '2\n', 'queue/nr_requests': 'lots\n',
            'device/queue_depth': '99999999\n'},
}


def make_sysfs(root, devices):
    """A sysfs tree under ``root``; returns its ``block`` directory."""
    block = os.path.join(root, 'block')
    os.makedirs(block, exist_ok=True)
    for name, files in devices.items():
        real = os.path.join(root, files['path'])
        for relative, text in files.items():
            if relative == 'path':
                continue
            if relative == 'mq':
                for entry in text:
                    os.makedirs(os.path.join(real, 'mq', entry))
                continue
            path = os.path.join(real, relative)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, 'w') as handle:
                handle.write(text)
        os.makedirs(os.path.join(real, 'queue'), exist_ok=True)
        os.symlink(os.path.relpath(real, block), os.path.join(block, name))
    return block


class TestSysfs(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.root = self.useFixture(fixtures.TempDir()).path
        self.block = make_sysfs(self.root, DEVICES)

    def devices(self):
        notes = []
        found = {device.name: device
                 for device in inventory.read_devices(self.block, notes)}
        return found, notes

    def test_devices_as_sysfs_shows_them(self):
        found, notes = self.devices()
        self.assertEqual(['dm-0', 'loop7', 'nvme0n1', 'sdb', 'sdz', 'vda',
                          'zram0'], sorted(found))
        self.assertEqual(advice.BlockDevice(
            'vda', scheduler='mq-deadline',
            schedulers=('none', 'mq-deadline', 'kyber', 'bfq'),
            rotational=True, nr_requests=256, hw_queues=1), found['vda'])
        nvme = found['nvme0n1']
        self.assertEqual((True, False, 4, 1023), (nvme.nvme, nvme.virtual,
                                                  nvme.hw_queues,
                                                  nvme.nr_requests))
        self.assertEqual((1, False), (found['sdb'].queue_depth,
                                      found['sdb'].nvme))
        self.assertTrue(found['loop7'].virtual)
        self.assertEqual('bfq', found['loop7'].scheduler)
        self.assertEqual((None, ()), (found['zram0'].scheduler,
                                      found['zram0'].schedulers))

    def test_values_not_trusted_are_unknown_with_a_note(self):
        found, notes = self.devices()
        sdz = found['sdz']
        self.assertEqual((None, None, None, None),
                         (sdz.scheduler, sdz.rotational, sdz.nr_requests,
                          sdz.queue_depth))
        self.assertEqual(4, len(notes), notes)
        self.assertTrue(all(note.startswith('sdz: ') for note in notes))

    def test_a_device_that_vanished_is_skipped(self):
        # Detached between the listing and the read: its sysfs
        # directory is gone, the link dangles.
        os.symlink('../devices/virtual/block/loop3',
                   os.path.join(self.block, 'loop3'))
        found, notes = self.devices()
        self.assertNotIn('loop3', found)
        self.assertIn('vda', found)

    def test_advice_of_the_tree(self):
        found, _notes = self.devices()
        subjects = {(f.subject, f.rule) for f in advice.advise(
            advice.Inventory('cmp-1', tuple(found.values())))}
        self.assertEqual({('nvme0n1', 'nvme-scheduler'),
                          ('sdb', 'queue-depth'),
                          ('vda', 'rotational-scheduler')}, subjects)

    def test_no_sysfs(self):
        notes = []
        self.assertEqual((), inventory.read_devices(
            os.path.join(self.root, 'nowhere'), notes))
        self.assertEqual(1, len(notes))


class FakeDomain:

    def __init__(self, name, xml_text=None, error=None):
        self._name = name
        self._xml = xml_text
        self._error = error

    def name(self):
        return self._name

    def UUIDString(self):
        return 'uuid-' + self._name

    def XMLDesc(self, flags):
        if self._error is not None:
            raise self._error
        return self._xml


class FakeConn:

    def __init__(self, domains, error=None):
        self.domains = domains
        self.error = error

    def listAllDomains(self, flags):
        if self.error is not None:
            raise self.error
        return list(self.domains)


def libvirt_error(message):
    exc = libvirt.libvirtError(message)
    exc.err = (libvirt.VIR_ERR_NO_DOMAIN, 0, message, 0, None, None, None,
               0, 0)
    return exc


class TestInstances(testtools.TestCase):

    def test_a_domain_that_vanished_or_lies_is_skipped(self):
        conn = FakeConn([
            FakeDomain('itb-vm1', test_advice.testbed_xml(vcpus=2)),
            FakeDomain('gone', error=libvirt_error('Domain not found')),
            FakeDomain('odd', '<!DOCTYPE x [<!ENTITY e "e">]><domain/>'),
        ])
        found = inventory.gather(conn, 'cmp-1', sys_block='/nonexistent',
                                 device_of=test_advice.device_of)
        self.assertEqual(['vm1'], [i.name for i in found.instances])
        self.assertEqual(3, len(found.errors), found.errors)
        self.assertIn('domain gone skipped: Domain not found',
                      found.errors[1])
        self.assertIn('domain odd skipped: domain XML with a DOCTYPE',
                      found.errors[2])

    def test_the_advisor_answers_a_wire_reply(self):
        conn = FakeConn([FakeDomain('itb-vm1', test_advice.testbed_xml(
            vcpus=2))])
        reply = inventory.Advisor(conn, 'cmp-1', sys_block='/nonexistent',
                                  device_of=test_advice.device_of)()
        decoded = wire.decode_advice_reply(reply)
        self.assertEqual(('cmp-1', 0, 1, None),
                         (decoded.host, decoded.devices, decoded.instances,
                          decoded.error))
        self.assertEqual(['iothreads-missing'],
                         [f.rule for f in decoded.findings])

    def test_a_libvirt_that_cannot_list_is_an_error_reply(self):
        reply = inventory.Advisor(
            FakeConn([], error=libvirt_error('connection closed')),
            'cmp-1', sys_block='/nonexistent')()
        self.assertEqual('cannot list the domains: connection closed',
                         reply['error'])
        self.assertEqual('cannot list the domains: connection closed',
                         wire.decode_advice_reply(reply).error)


class TestAdviseCommand(testtools.TestCase):
    """``iothrottle-compute --advise`` on libvirt's test driver (one
    running domain, ``test``, whose disk has no cache mode) and this
    machine's /sys/block."""

    def setUp(self):
        super().setUp()
        tmp = self.useFixture(fixtures.TempDir())
        self.conf = tmp.join('iothrottle.conf')
        with open(self.conf, 'w') as handle:
            handle.write('[compute]\nlibvirt_uri = test:///default\n'
                         '[agent]\nhost = cmp-test\n')

    def run_command(self, *argv):
        out = io.StringIO()
        conf = cmd.build_conf(['--config-file', self.conf, '--advise']
                              + list(argv))
        self.assertEqual(0, cmd.run(conf, out))
        return out.getvalue()

    def test_json(self):
        reply = json.loads(self.run_command('--format', 'json'))
        decoded = wire.decode_advice_reply(reply)
        self.assertEqual(('cmp-test', 1), (decoded.host, decoded.instances))
        self.assertIn(('test/vda', 'cache-mode'),
                      [(f.subject, f.rule) for f in decoded.findings])

    def test_table(self):
        text = self.run_command()
        first, header = text.splitlines()[:2]
        self.assertTrue(first.startswith('host cmp-test: '), first)
        self.assertEqual(['SEVERITY', 'SUBJECT', 'RULE', 'FINDING'],
                         header.split())
        self.assertIn("fix: <driver cache='none'/>", text)
        self.assertIn("seed 002 section 3.2: every figure was measured with "
                      'O_DIRECT', text)
        self.assertIn("(the seed's figures, not measured on this testbed)",
                      text)

    def test_unreachable_libvirt_is_one_line(self):
        with open(self.conf, 'w') as handle:
            handle.write('[compute]\nlibvirt_uri = qemu+unix:///system?'
                         'socket=/nonexistent\n')
        stderr = io.StringIO()
        self.useFixture(fixtures.MonkeyPatch('sys.stderr', stderr))
        self.assertEqual(1, cmd.main(['--config-file', self.conf,
                                      '--advise']))
        line = stderr.getvalue()
        self.assertTrue(line.startswith(
            'iothrottle-compute: cannot connect to libvirt at '), line)
        self.assertEqual(1, line.count('\n'))


class TestAdvisorOfTheAgent(testtools.TestCase):

    def test_the_agents_own_connection(self):
        from iothrottle.compute import collector as collector_mod
        from iothrottle.rpc import agent as remote_mod
        conn = FakeConn([])
        agent = type('Agent', (), {})()
        agent.collector = remote_mod.OwnedCollector(
            collector_mod.Collector(conn, host='cmp-1'), ['itb-'])
        advisor = cmd.advisor_of(agent, 'cmp-1')
        self.assertIs(conn, advisor.conn)
        self.assertEqual('cmp-1', advisor.host)
        agent.collector = object()
        self.assertIsNone(cmd.advisor_of(agent, 'cmp-1'))
