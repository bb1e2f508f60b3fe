"""The KVM verdict of the testbed's host set-up (pure part)."""

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
