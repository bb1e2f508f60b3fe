import testtools

from iothrottle.testbed import core

V1 = ('9:name=systemd:/\n'
      '7:blkio:/machine/qemu-3-vm1.libvirt-qemu\n'
      '1:cpu,cpuacct:/machine/qemu-3-vm1.libvirt-qemu/emulator\n'
      '0::/\n')
V2 = '0::/machine.slice/machine-qemu\\x2d3\\x2dvm1.scope/libvirt\n'


class TestIoCgroup(testtools.TestCase):

    def test_blkio_hierarchy_first(self):
        # Under cgroup v1 the blkio line, not the unified "0::/" that a
        # hybrid host lists too.
        self.assertEqual('/machine/qemu-3-vm1.libvirt-qemu',
                         core.io_cgroup_of(V1))

    def test_unified_hierarchy(self):
        self.assertEqual(
            '/machine.slice/machine-qemu\\x2d3\\x2dvm1.scope/libvirt',
            core.io_cgroup_of(V2))

    def test_neither(self):
        self.assertIsNone(core.io_cgroup_of('4:memory:/x\n'))
        self.assertIsNone(core.io_cgroup_of(''))
