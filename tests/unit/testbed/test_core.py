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


class TestLoad(testtools.TestCase):

    def test_paced_processes_take_their_phases_to_loadgen(self):
        argv = core.Load(procs=2, block_kb=4, rate_kb_s=9.5,
                         phase_slots=0.25, phase_step_slots=0.5).argv()
        self.assertEqual(['-F', '0.25', '-G', '0.5'],
                         argv[argv.index('-F'):argv.index('-G') + 2])

    def test_loadgens_own_spread_by_default(self):
        # No phases given: loadgen spreads its own processes (i / -p).
        argv = core.Load(procs=2, rate_kb_s=100).argv()
        self.assertNotIn('-F', argv)
        self.assertNotIn('-G', argv)

    def test_a_lone_process_takes_any_step(self):
        # The scenario runner's lone paced run: one process of one, a
        # step of a whole slot that no second process takes.
        argv = core.Load(procs=1, rate_kb_s=100, phase_slots=0.0,
                         phase_step_slots=1.0).argv()
        self.assertEqual('1', argv[argv.index('-G') + 1])

    def test_phases_past_one_slot_are_refused_before_the_guest(self):
        for phases in ((1.0, None), (-0.1, None), (0.5, 0.5), (0.0, -1)):
            load = core.Load(procs=2, rate_kb_s=100, phase_slots=phases[0],
                             phase_step_slots=phases[1])
            e = self.assertRaises(ValueError, load.argv)
            self.assertIn('bad phases', str(e))
