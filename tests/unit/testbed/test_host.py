"""The KVM verdict of the testbed's host set-up (pure part)."""

import os

import fixtures
import testtools

from iothrottle.testbed import host


class TestKvmVerdict(testtools.TestCase):

    def test_kvm_as_fast_as_tcg_is_usable(self):
        usable, why = host.kvm_verdict(0.08, 0.11)
        self.assertTrue(usable)
        self.assertIn('0.08 s under KVM', why)

    def test_kvm_many_times_slower_than_tcg_is_not(self):
        # The sandboxes' nested KVM: 1.78 s where TCG took 0.10 s.
        usable, why = host.kvm_verdict(1.78, 0.10)
        self.assertFalse(usable)
        self.assertIn('over 3.0 times TCG', why)

    def test_the_limit_is_relative_to_tcg_not_absolute(self):
        # A loaded host slows both: 0.6 s against 0.3 s is still usable,
        # 0.6 s against 0.1 s is not.
        self.assertTrue(host.kvm_verdict(0.6, 0.3)[0])
        self.assertFalse(host.kvm_verdict(0.6, 0.1)[0])

    def test_a_slow_kvm_is_not_usable_beside_a_slowed_tcg(self):
        # The sandboxes' 1.8 s KVM against a TCG a loaded host slowed to
        # 0.7 s: within 3 times, but no working KVM takes 1.8 s.
        usable, why = host.kvm_verdict(1.8, 0.7)
        self.assertFalse(usable)
        self.assertIn('over 1.0 s', why)


class TestKeptVerdict(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.path = os.path.join(self.useFixture(fixtures.TempDir()).path,
                                 'run', 'kvm-usable')

    def test_the_first_verdict_is_kept_and_wins_over_later_ones(self):
        self.assertIsNone(host.read_verdict(self.path))
        self.assertFalse(host.keep_verdict(self.path, False, 'slow'))
        self.assertFalse(host.read_verdict(self.path))
        # A process that probed otherwise (a loaded host) takes the kept
        # verdict: two processes that disagreed restarted each other's
        # libvirtd.
        self.assertFalse(host.keep_verdict(self.path, True, 'fast'))
        with open(self.path) as f:
            self.assertEqual('unusable slow\n', f.read())

    def test_a_kept_verdict_is_used_without_probing(self):
        host.keep_verdict(self.path, True, 'kept')
        self.addCleanup(setattr, host, '_kvm_verdict', host._kvm_verdict)
        host._kvm_verdict = None
        # qemu='/nonexistent' would make a probe answer False.
        self.assertTrue(host.kvm_usable(qemu='/nonexistent',
                                        verdict_path=self.path))

    def test_garbage_in_the_file_is_no_verdict(self):
        os.makedirs(os.path.dirname(self.path))
        with open(self.path, 'w') as f:
            f.write('maybe\n')
        self.assertIsNone(host.read_verdict(self.path))
