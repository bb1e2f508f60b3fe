"""The pure pieces of the block-layer testbed: the disks' layout in the
store, the scheduler line, discovery by path and the guests' disk XML."""

import os
import shutil
import tempfile
from unittest import mock
from xml.etree import ElementTree

import fixtures
import testtools

from iothrottle.testbed import blocklayer
from iothrottle.testbed import core
from iothrottle.testbed import domains
from iothrottle.testbed import images

MIB = 1 << 20


class TestLayout(testtools.TestCase):

    def test_disks_follow_each_other_on_mib_boundaries(self):
        slices = blocklayer.layout([('vm1', 64 * MIB, None),
                                    ('vm2', 3 * 512, None),
                                    ('vm3', 64 * MIB, None)])
        self.assertEqual([(0, 64 * MIB), (64 * MIB, 1536),
                          (65 * MIB, 64 * MIB)],
                         [(s.offset_bytes, s.size_bytes) for s in slices])
        self.assertEqual(129 * MIB, blocklayer.store_size(slices))

    def test_given_offsets_are_kept_and_the_next_follows_the_end(self):
        slices = blocklayer.layout([('vm1', 2 * MIB, 100 * MIB),
                                    ('vm2', 2 * MIB, None),
                                    ('vm3', 2 * MIB, 0)])
        self.assertEqual([100 * MIB, 102 * MIB, 0],
                         [s.offset_bytes for s in slices])
        self.assertEqual(104 * MIB, blocklayer.store_size(slices))

    def test_overlap_names_both_disks(self):
        e = self.assertRaises(ValueError, blocklayer.layout,
                              [('vm1', 4 * MIB, 0), ('vm2', MIB, 3 * MIB)])
        self.assertEqual("disks 'vm1' and 'vm2' overlap in the store",
                         str(e))

    def test_bad_size_and_offset_are_refused(self):
        e = self.assertRaises(ValueError, blocklayer.layout,
                              [('vm1', 1000, None)])
        self.assertIn("disk 'vm1': size 1000", str(e))
        e = self.assertRaises(ValueError, blocklayer.layout,
                              [('vm1', MIB, 4096)])
        self.assertIn("disk 'vm1': offset 4096", str(e))

    def test_scheduler_line_and_names(self):
        self.assertEqual('bfq', blocklayer.active_scheduler(
            'none mq-deadline kyber [bfq] \n'))
        self.assertEqual('none', blocklayer.active_scheduler(
            '[none] mq-deadline'))
        self.assertIsNone(blocklayer.active_scheduler('none bfq'))
        e = self.assertRaises(ValueError, blocklayer.check_scheduler, 'cfq')
        self.assertEqual("unknown I/O scheduler 'cfq' (known: none, "
                         "mq-deadline, kyber, bfq)", str(e))

    def test_a_scheduler_is_offered_registered_or_as_a_module(self):
        root = self.useFixture(fixtures.TempDir()).path
        sys_block = os.path.join(root, 'block')
        modules = os.path.join(root, 'modules')
        os.makedirs(os.path.join(sys_block, 'vda', 'queue'))
        os.makedirs(modules)
        with open(os.path.join(sys_block, 'vda', 'queue', 'scheduler'),
                  'w') as f:
            f.write('none [mq-deadline] kyber\n')

        def offered(name):
            return blocklayer.scheduler_offered(name, sys_block, modules)
        # A kernel built without BFQ (Firecracker's, 2026-12-04): the
        # queues list none, mq-deadline and kyber, and no module index.
        self.assertEqual([True, True, True, False],
                         [offered(n) for n in blocklayer.SCHEDULERS])
        # BFQ as a module not loaded yet: a switch to it loads it.
        with open(os.path.join(modules, 'modules.dep'), 'w') as f:
            f.write('kernel/block/bfq.ko:\nkernel/fs/fuse/fuse.ko:\n')
        self.assertTrue(offered('bfq'))
        self.assertRaises(ValueError, offered, 'cfq')

    def test_testbed_refuses_a_bad_scheduler_and_a_seekdisk_over_nbd(self):
        spec = [core.GuestSpec(name='vm1')]
        self.assertRaises(ValueError, core.Testbed, spec, block_layer='cfq')
        e = self.assertRaises(ValueError, core.Testbed, spec,
                              seekdisk={'time_scale': '1'})
        self.assertIn('needs a block layer', str(e))


class TestDiscovery(testtools.TestCase):
    """Strays are found by the testbed directory, as a prefix of paths."""

    def test_under_is_a_path_prefix_not_a_string_prefix(self):
        self.assertTrue(blocklayer._under('/var/t/bl-/fuse/disk',
                                          '/var/t/bl-'))
        self.assertFalse(blocklayer._under('/var/t/bl-2/fuse/disk',
                                           '/var/t/bl-'))

    def _tmp(self):
        path = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, path)
        return path

    def test_loops_by_backing_file(self):
        sys_block = self._tmp()
        for loop, backing in (('loop0', '/var/t/bl-/fuse/disk'),
                              ('loop1', '/var/t/bl-x/fuse/disk'),
                              ('loop2', '/var/t/bl-/fuse/disk (deleted)'),
                              ('loop3', '/var/t/other/disk')):
            os.makedirs(os.path.join(sys_block, loop, 'loop'))
            with open(os.path.join(sys_block, loop, 'loop', 'backing_file'),
                      'w') as f:
                f.write(backing + '\n')
        os.makedirs(os.path.join(sys_block, 'loop4'))   # unbound
        self.assertEqual(['loop0', 'loop2'], blocklayer.find_loops(
            '/var/t/bl-', sys_block=sys_block))

    def test_mounts_from_mountinfo(self):
        path = os.path.join(self._tmp(), 'mountinfo')
        with open(path, 'w') as f:
            f.write('22 1 0:20 / /proc rw - proc proc rw\n'
                    '68 27 0:40 / /var/t/bl-/fuse rw - fuse /dev/fuse rw\n'
                    '69 27 0:41 / /var/t/bl-2/fuse rw - fuse /dev/fuse rw\n'
                    '70 27 0:42 / /var/t/bl-/a\\040b/c rw - fuse /dev/fuse '
                    'rw\n')
        self.assertEqual(['/var/t/bl-/a b/c', '/var/t/bl-/fuse'],
                         blocklayer.find_mounts('/var/t/bl-',
                                                mountinfo=path))


class TestDiskXml(testtools.TestCase):

    def _xml(self, disk=None):
        spec = core.GuestSpec(name='vm1', disk_mb=64)
        imgs = images.GuestImages(*['/x/%s' % f
                                    for f in images.GuestImages._fields])
        store = mock.Mock(socket='/w/nbd.sock')
        return ElementTree.fromstring(domains.domain_xml(
            'bl-vm1', '00000000-0000-0000-0000-000000000001', spec, imgs,
            store, 'vm1.img', '/w/c', '/w/c.log', 'bl-', disk=disk))

    def test_block_disk_is_raw_cache_none_io_native(self):
        root = self._xml(domains.block_disk_xml('/w/disks/vm1'))
        disks = root.findall('devices/disk')
        self.assertEqual(1, len(disks))
        disk = disks[0]
        self.assertEqual(('block', 'disk'),
                         (disk.get('type'), disk.get('device')))
        self.assertEqual({'name': 'qemu', 'type': 'raw', 'cache': 'none',
                          'io': 'native'}, disk.find('driver').attrib)
        self.assertEqual('/w/disks/vm1', disk.find('source').get('dev'))
        self.assertEqual('vda', disk.find('target').get('dev'))
        self.assertIsNone(disk.find('readonly'))

    def test_read_only_store_gives_a_read_only_disk(self):
        root = self._xml(domains.block_disk_xml('/w/disks/vm1',
                                                readonly=True))
        self.assertIsNotNone(root.find('devices/disk/readonly'))

    def test_default_is_still_the_nbd_export(self):
        disk = self._xml().find('devices/disk')
        self.assertEqual('network', disk.get('type'))
        self.assertEqual(('nbd', 'vm1.img'),
                         (disk.find('source').get('protocol'),
                          disk.find('source').get('name')))
        self.assertEqual('/w/nbd.sock',
                         disk.find('source/host').get('socket'))
