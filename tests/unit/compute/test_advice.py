"""The advice rules (iothrottle.compute.advice) on the testbed's own
domain XML, variants of it, and block devices as sysfs shows them.

The base XML is what ``iothrottle.testbed.domains.domain_xml`` defines
for a testbed guest (called here, so the test follows the testbed);
each variant changes one thing of it with ElementTree and asserts the
finding it must produce, and the well-configured variant gives none.
"""

import xml.etree.ElementTree as ET

import testtools

from iothrottle.compute import advice
from iothrottle.testbed import core as testbed_core
from iothrottle.testbed import domains
from iothrottle.testbed import images
from iothrottle.testbed import store


def testbed_xml(vcpus=1):
    """The domain XML the testbed defines for guest vm1 (its NBD store
    under /tmp/itb; nothing is started)."""
    spec = testbed_core.GuestSpec(name='vm1', vcpus=vcpus)
    guest_images = images.GuestImages(
        kernel='/tmp/itb/vmlinuz', initrd='/tmp/itb/initrd.img',
        loadgen='/tmp/itb/loadgen', kernel_version='6.1.0', key='k',
        directory='/tmp/itb')
    return domains.domain_xml(
        'itb-vm1', '6f1c9c0e-0d43-4c33-9d8e-8b2d9f1e0a11', spec,
        guest_images, store.NbdStore('/tmp/itb'), 'vm1', '/tmp/itb/c',
        '/tmp/itb/c.log', 'itb-')


def variant(xml_text, change):
    """``xml_text`` after ``change(root)`` (an ElementTree root)."""
    root = ET.fromstring(xml_text)
    change(root)
    return ET.tostring(root, encoding='unicode')


def on_block_device(root, dev='/dev/loop1', cache='none', io='native',
                    discard='unmap'):
    """The disk as the block-layer testbed would have it: a host block
    device, O_DIRECT, native AIO."""
    disk = root.find('devices/disk')
    disk.set('type', 'block')
    for source in disk.findall('source'):
        disk.remove(source)
    ET.SubElement(disk, 'source', dev=dev)
    driver = disk.find('driver')
    for name, value in (('cache', cache), ('io', io), ('discard', discard)):
        if value is None:
            driver.attrib.pop(name, None)
        else:
            driver.set(name, value)


def with_iothread(root, disk_iothread='1'):
    ET.SubElement(root, 'iothreads').text = '1'
    if disk_iothread is not None:
        root.find('devices/disk/driver').set('iothread', disk_iothread)


def device_of(path):
    return {'/dev/loop1': 'loop1', '/dev/nvme0n1': 'nvme0n1',
            '/var/lib/a.img': 'nvme0n1', '/var/lib/b.img': 'nvme0n1'}.get(
        path, 'unresolved')


def well_configured(root):
    on_block_device(root)
    root.find('vcpu').text = '4'
    with_iothread(root)


def findings_of(xml_text, devices=()):
    instance = advice.parse_domain(xml_text, device_of)
    return advice.advise(advice.Inventory('cmp-1', tuple(devices),
                                          (instance,)))


def rules(found):
    return sorted((f.severity, f.subject, f.rule) for f in found)


class TestTestbedXML(testtools.TestCase):

    def test_parsed_as_the_testbed_defines_it(self):
        instance = advice.parse_domain(testbed_xml(), device_of)
        self.assertEqual(('vm1', '6f1c9c0e-0d43-4c33-9d8e-8b2d9f1e0a11', 1),
                         (instance.name, instance.uuid, instance.vcpus))
        disk, = instance.disks
        self.assertEqual(('vda', 'virtio', 'network', 'none', None, None),
                         (disk.target, disk.bus, disk.disk_type, disk.cache,
                          disk.io, disk.iothread))
        self.assertEqual('vm1', disk.source)
        self.assertIsNone(disk.host_device)

    def test_the_testbed_guest_follows_the_seed(self):
        # One vCPU (seed 002's "1 fio/VM" case), virtio-blk, O_DIRECT,
        # on the network: nothing to advise.
        self.assertEqual([], findings_of(testbed_xml()))

    def test_well_configured_on_a_block_device(self):
        xml_text = variant(testbed_xml(), well_configured)
        instance = advice.parse_domain(xml_text, device_of)
        disk, = instance.disks
        self.assertEqual(('block', '/dev/loop1', 'loop1', 'native', 'unmap',
                          1), (disk.disk_type, disk.source, disk.host_device,
                               disk.io, disk.discard, disk.iothread))
        self.assertEqual((4, (1,)), (instance.vcpus, instance.iothreads))
        self.assertEqual([], findings_of(xml_text))


class TestDiskRules(testtools.TestCase):

    def assertOnly(self, expected, change, vcpus=4):
        xml_text = variant(testbed_xml(vcpus), change)
        found = findings_of(xml_text)
        self.assertEqual(sorted(expected), rules(found))
        for finding in found:
            self.assertTrue(finding.finding and finding.recommendation
                            and finding.effect, finding)
            self.assertIsNone(finding.measured)
        return found

    def test_cache_writeback(self):
        def change(root):
            well_configured(root)
            on_block_device(root, cache='writeback', io=None)
        found = self.assertOnly([('warning', 'vm1/vda', 'cache-mode')],
                                change)
        self.assertEqual(('002', '3.2'), (found[0].seed, found[0].section))
        self.assertIn("cache='writeback'", found[0].finding)

    def test_no_cache_mode_is_qemus_writeback(self):
        def change(root):
            well_configured(root)
            on_block_device(root, cache=None, io=None)
        found = self.assertOnly([('warning', 'vm1/vda', 'cache-mode')],
                                change)
        self.assertIn('writeback', found[0].finding)

    def test_cache_unsafe_is_an_error(self):
        def change(root):
            well_configured(root)
            on_block_device(root, cache='unsafe', io=None)
        self.assertOnly([('error', 'vm1/vda', 'cache-mode')], change)

    def test_io_threads(self):
        def change(root):
            well_configured(root)
            on_block_device(root, io='threads')
        found = self.assertOnly([('info', 'vm1/vda', 'io-mode')], change)
        self.assertIsNone(found[0].seed)

    def test_io_native_without_o_direct(self):
        def change(root):
            well_configured(root)
            on_block_device(root, cache='writeback')
        self.assertOnly([('warning', 'vm1/vda', 'cache-mode'),
                         ('warning', 'vm1/vda', 'io-mode')], change)

    def test_no_iothreads(self):
        def change(root):
            on_block_device(root)
            root.find('vcpu').text = '4'
        found = self.assertOnly(
            [('warning', 'vm1/vda', 'iothreads-missing')], change)
        self.assertEqual('002', found[0].seed)
        self.assertIn('4.3', found[0].section)
        self.assertIn('0.21x', found[0].effect)
        self.assertIn('342k', found[0].effect)

    def test_one_vcpu_needs_no_iothread(self):
        self.assertOnly([], on_block_device, vcpus=1)

    def test_iothread_the_disk_does_not_use(self):
        def change(root):
            well_configured(root)
            root.find('devices/disk/driver').attrib.pop('iothread')
        self.assertOnly([('warning', 'vm1/vda', 'iothread-unused')], change)

    def test_pinned_vcpus_and_a_floating_iothread(self):
        def change(root):
            well_configured(root)
            cputune = ET.SubElement(root, 'cputune')
            ET.SubElement(cputune, 'vcpupin', vcpu='0', cpuset='2')
        self.assertOnly([('info', 'vm1', 'iothread-unpinned')], change)

    def test_pinned_iothread(self):
        def change(root):
            well_configured(root)
            cputune = ET.SubElement(root, 'cputune')
            ET.SubElement(cputune, 'vcpupin', vcpu='0', cpuset='2')
            ET.SubElement(cputune, 'iothreadpin', iothread='1', cpuset='3')
        self.assertOnly([], change)

    def test_ide_bus(self):
        def change(root):
            well_configured(root)
            root.find('devices/disk/target').set('bus', 'ide')
        found = self.assertOnly([('warning', 'vm1/vda', 'emulated-bus')],
                                change)
        self.assertIn('ide', found[0].finding)

    def test_sata_bus(self):
        def change(root):
            well_configured(root)
            root.find('devices/disk/target').set('bus', 'sata')
        self.assertOnly([('warning', 'vm1/vda', 'emulated-bus')], change)

    def test_a_cdrom_on_ide_is_fine(self):
        def change(root):
            well_configured(root)
            cdrom = ET.SubElement(root.find('devices'), 'disk',
                                  type='file', device='cdrom')
            ET.SubElement(cdrom, 'driver', name='qemu', type='raw')
            ET.SubElement(cdrom, 'target', dev='hdc', bus='ide')
            ET.SubElement(cdrom, 'readonly')
        self.assertOnly([], change)

    def _on_scsi(self, root, model, iothread=None):
        well_configured(root)
        root.find('devices/disk/target').set('bus', 'scsi')
        controller = ET.SubElement(root.find('devices'), 'controller',
                                   type='scsi', index='0', model=model)
        if iothread is not None:
            ET.SubElement(controller, 'driver', iothread=iothread)

    def test_emulated_scsi_controller(self):
        self.assertOnly([('warning', 'vm1/vda', 'emulated-bus')],
                        lambda root: self._on_scsi(root, 'lsilogic'))

    def test_virtio_scsi_without_iothread(self):
        self.assertOnly([('info', 'vm1/vda', 'virtio-scsi-iothread')],
                        lambda root: self._on_scsi(root, 'virtio-scsi'))

    def test_virtio_scsi_with_iothread(self):
        self.assertOnly([], lambda root: self._on_scsi(root, 'virtio-scsi',
                                                       iothread='1'))

    def test_fewer_virtio_blk_queues_than_vcpus(self):
        def change(root):
            well_configured(root)
            root.find('devices/disk/driver').set('queues', '1')
        found = self.assertOnly([('info', 'vm1/vda', 'virtio-blk-queues')],
                                change)
        self.assertIn("queues='4'", found[0].recommendation)

    def test_queues_for_every_vcpu(self):
        def change(root):
            well_configured(root)
            root.find('devices/disk/driver').set('queues', '4')
        self.assertOnly([], change)

    def test_no_discard(self):
        def change(root):
            well_configured(root)
            on_block_device(root, discard=None)
        self.assertOnly([('info', 'vm1/vda', 'discard')], change)

    def test_a_read_only_disk_skips_cache_and_discard(self):
        def change(root):
            well_configured(root)
            on_block_device(root, cache='writeback', io=None, discard=None)
            ET.SubElement(root.find('devices/disk'), 'readonly')
        self.assertOnly([], change)


ROTATIONAL = dict(rotational=True, schedulers=('none', 'mq-deadline',
                                               'kyber', 'bfq'))
NVME = dict(rotational=False, nvme=True, nr_requests=1023, hw_queues=4,
            schedulers=('none', 'mq-deadline', 'kyber', 'bfq'))


def device_findings(*devices):
    return advice.advise(advice.Inventory('cmp-1', devices))


class TestDeviceRules(testtools.TestCase):

    def test_rotational_disk_under_none(self):
        found = device_findings(advice.BlockDevice('sda', scheduler='none',
                                                   **ROTATIONAL))
        self.assertEqual([('warning', 'sda', 'rotational-scheduler')],
                         rules(found))
        self.assertEqual('001', found[0].seed)
        self.assertIn('+20 %', found[0].effect)
        self.assertIn('bfq', found[0].recommendation)

    def test_rotational_disk_under_bfq(self):
        self.assertEqual([], device_findings(advice.BlockDevice(
            'sda', scheduler='bfq', **ROTATIONAL)))

    def test_rotational_disk_under_mq_deadline(self):
        self.assertEqual([('info', 'sda', 'rotational-scheduler')],
                         rules(device_findings(advice.BlockDevice(
                             'sda', scheduler='mq-deadline', **ROTATIONAL))))

    def test_device_mapper_offers_no_choice(self):
        self.assertEqual([], device_findings(advice.BlockDevice(
            'dm-0', scheduler='none', schedulers=('none',), rotational=True,
            virtual=True)))

    def test_nvme_under_mq_deadline(self):
        found = device_findings(advice.BlockDevice(
            'nvme0n1', scheduler='mq-deadline', **NVME))
        self.assertEqual([('warning', 'nvme0n1', 'nvme-scheduler')],
                         rules(found))
        self.assertIn('438k', found[0].effect)
        self.assertIn('echo none > /sys/block/nvme0n1/queue/scheduler',
                      found[0].recommendation)

    def test_nvme_under_none(self):
        self.assertEqual([], device_findings(advice.BlockDevice(
            'nvme0n1', scheduler='none', **NVME)))

    def test_ssd_without_ncq(self):
        self.assertEqual(
            [('warning', 'sdb', 'queue-depth')],
            rules(device_findings(advice.BlockDevice(
                'sdb', scheduler='mq-deadline', rotational=False,
                queue_depth=1, nr_requests=64))))

    def test_nr_requests_below_the_device_queue_depth(self):
        found = device_findings(advice.BlockDevice(
            'sdc', scheduler='mq-deadline', rotational=False, queue_depth=32,
            nr_requests=16))
        self.assertEqual([('info', 'sdc', 'nr-requests')], rules(found))
        self.assertIn('echo 32 > /sys/block/sdc/queue/nr_requests',
                      found[0].recommendation)

    def test_disks_crowding_one_nvme_while_another_idles(self):
        def two_file_disks(root):
            well_configured(root)
            disk = root.find('devices/disk')
            disk.set('type', 'file')
            disk.remove(disk.find('source'))
            ET.SubElement(disk, 'source', file='/var/lib/a.img')
        first = advice.parse_domain(variant(testbed_xml(), two_file_disks),
                                    device_of)
        second = advice.parse_domain(variant(
            testbed_xml(), lambda root: (two_file_disks(root), root.find(
                'devices/disk/source').set('file', '/var/lib/b.img'))),
            device_of)
        devices = (advice.BlockDevice('nvme0n1', scheduler='none', **NVME),
                   advice.BlockDevice('nvme1n1', scheduler='none', **NVME))
        found = advice.advise(advice.Inventory('cmp-1', devices,
                                               (first, second)))
        self.assertEqual([('info', 'nvme0n1', 'spread-devices')],
                         rules(found))
        self.assertIn('nvme1n1', found[0].finding)
        self.assertIn('1.57x', found[0].effect)
        # Alone on the host's NVMe: nowhere to spread to.
        self.assertEqual([], advice.advise(advice.Inventory(
            'cmp-1', devices[:1], (first, second))))

    def test_most_severe_first(self):
        found = device_findings(
            advice.BlockDevice('sdc', scheduler='mq-deadline',
                               rotational=False, queue_depth=32,
                               nr_requests=16),
            advice.BlockDevice('nvme0n1', scheduler='bfq', **NVME))
        self.assertEqual(['warning', 'info'],
                         [f.severity for f in found])


class TestParsing(testtools.TestCase):

    def test_scheduler(self):
        self.assertEqual(('mq-deadline', ('none', 'mq-deadline', 'kyber',
                                          'bfq')),
                         advice.parse_scheduler('none [mq-deadline] kyber '
                                                'bfq\n'))
        self.assertEqual(('none', ('none',)), advice.parse_scheduler('none'))
        for text in ('', '[a] [b]', 'none bfq', '[../x]'):
            self.assertRaises(ValueError, advice.parse_scheduler, text)

    def test_numbers_are_checked(self):
        self.assertEqual(64, advice.parse_whole('64\n', 'nr', 1, 100))
        for text in ('-1', '1e3', '0x10', '', '101', '६४'):
            self.assertRaises(ValueError, advice.parse_whole, text, 'nr', 1,
                              100)

    def test_untrusted_xml_numbers_are_left_unknown(self):
        notes = []

        def change(root):
            root.find('vcpu').text = 'lots'
            root.find('devices/disk/driver').set('iothread', '-1')
        instance = advice.parse_domain(variant(testbed_xml(), change),
                                       device_of, notes)
        self.assertIsNone(instance.vcpus)
        self.assertIsNone(instance.disks[0].iothread)
        self.assertEqual(2, len(notes), notes)
        self.assertIn('vm1 vcpu', notes[0])

    def test_entities_are_refused(self):
        laughs = ('<?xml version="1.0"?><!DOCTYPE domain [<!ENTITY a "aaaa">'
                  '<!ENTITY b "&a;&a;&a;&a;">]><domain><name>&b;</name>'
                  '</domain>')
        exc = self.assertRaises(ValueError, advice.parse_domain, laughs)
        self.assertIn('DOCTYPE', str(exc))
        external = ('<!DOCTYPE domain SYSTEM "file:///etc/passwd">'
                    '<domain/>')
        self.assertRaises(ValueError, advice.parse_domain, external)

    def test_malformed_or_foreign_xml(self):
        self.assertRaises(ValueError, advice.parse_domain, '<domain>')
        exc = self.assertRaises(ValueError, advice.parse_domain,
                                '<network/>')
        self.assertIn('not a domain', str(exc))
        self.assertRaises(ValueError, advice.parse_domain,
                          '<domain>%s</domain>'
                          % ('x' * advice.MAX_XML_CHARS))

    def test_every_rule_has_a_citation(self):
        for rule, citation in advice.CITATIONS.items():
            self.assertTrue(citation.effect, rule)
            self.assertEqual(citation.seed is None,
                             citation.section is None, rule)
