"""Lease bookkeeping: grant, renew, clamp, expire, release."""

import testtools

from iothrottle.compute import iotune
from iothrottle.compute import leases
from iothrottle.controller import model

UNLIMITED = iotune.IoTune()


class TestClamp(testtools.TestCase):

    def test_static_total_is_an_upper_bound(self):
        baseline = iotune.IoTune(total_iops_sec=80,
                                 total_bytes_sec=1000000)
        self.assertEqual(model.Cap(80, 1000000), leases.clamp_cap(
            model.Cap(500, 5e6), baseline))
        self.assertEqual(model.Cap(20, 500), leases.clamp_cap(
            model.Cap(20, 500), baseline))

    def test_guarantee_max_is_an_upper_bound(self):
        guarantee = model.Guarantee(min_iops=10, max_iops=60,
                                    max_bytes_sec=7000)
        self.assertEqual(model.Cap(60, 7000), leases.clamp_cap(
            model.Cap(100, 0), UNLIMITED, guarantee))

    def test_split_baseline_bounds_the_sum(self):
        baseline = iotune.IoTune(read_iops_sec=30, write_iops_sec=20)
        self.assertEqual(50, leases.clamp_cap(model.Cap(90, 0),
                                              baseline).iops)

    def test_tightest_ceiling_wins(self):
        guarantee = model.Guarantee(max_iops=40)
        self.assertEqual(30, leases.clamp_cap(
            model.Cap(90, 0), iotune.IoTune(total_iops_sec=30),
            guarantee).iops)


class TestLeaseTable(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.table = leases.LeaseTable()

    def test_grant_records_clamped_cap_and_expiry(self):
        lease = self.table.grant('u/vda', model.Cap(900, 0), 30.0, 100.0,
                                 iotune.IoTune(total_iops_sec=400))
        self.assertEqual(model.Cap(400, 0), lease.cap)
        self.assertEqual(model.Cap(900, 0), lease.requested)
        self.assertEqual(130.0, lease.expires_at_s)
        self.assertEqual({'u/vda': model.Cap(400, 0)}, self.table.caps())

    def test_renewal_keeps_first_baseline_and_extends(self):
        first = iotune.IoTune(total_iops_sec=400)
        self.table.grant('u/vda', model.Cap(100, 0), 30.0, 0.0, first)
        capped_live = iotune.IoTune(total_iops_sec=100)
        lease = self.table.grant('u/vda', model.Cap(150, 0), 30.0, 10.0,
                                 capped_live)
        self.assertEqual(first, lease.baseline)
        self.assertEqual(40.0, lease.expires_at_s)
        self.assertEqual(150, lease.cap.iops)

    def test_expired_only_past_leases_soonest_first(self):
        self.table.grant('a/vda', model.Cap(1, 0), 10.0, 0.0, UNLIMITED)
        self.table.grant('b/vda', model.Cap(1, 0), 5.0, 0.0, UNLIMITED)
        self.table.grant('c/vda', model.Cap(1, 0), 50.0, 0.0, UNLIMITED)
        self.assertEqual((), self.table.expired(4.9))
        self.assertEqual(['b/vda', 'a/vda'],
                         [le.disk_id for le in self.table.expired(10.0)])
        # expired() only reports; release() forgets.
        self.assertEqual(3, len(self.table))

    def test_release(self):
        self.table.grant('a/vda', model.Cap(1, 0), 10.0, 0.0, UNLIMITED)
        self.assertEqual('a/vda', self.table.release('a/vda').disk_id)
        self.assertNotIn('a/vda', self.table)
        self.assertIsNone(self.table.release('a/vda'))

    def test_non_positive_lease_rejected(self):
        exc = self.assertRaises(ValueError, self.table.grant, 'a/vda',
                                model.Cap(1, 0), 0, 0.0, UNLIMITED)
        self.assertIn('a/vda', str(exc))

    def test_nan_and_infinite_leases_refused(self):
        # Before the fix a NaN lease was granted with a NaN expiry that
        # never came (NaN <= now is False): a cap for ever.
        for lease_s in (float('nan'), float('inf'), -float('inf'), -1.0,
                        '30', True, None):
            exc = self.assertRaises(ValueError, self.table.grant, 'a/vda',
                                    model.Cap(1, 0), lease_s, 0.0,
                                    UNLIMITED)
            self.assertIn('a/vda', str(exc))
        self.assertEqual(0, len(self.table))

    def test_nan_now_refused(self):
        self.assertRaises(ValueError, self.table.grant, 'a/vda',
                          model.Cap(1, 0), 10.0, float('nan'), UNLIMITED)

    def test_a_nan_expiry_is_impossible(self):
        self.assertRaises(ValueError, leases.Lease, 'a/vda',
                          model.Cap(1, 0), float('nan'), UNLIMITED)

    def test_lease_clamped_into_bounds(self):
        table = leases.LeaseTable(min_lease_s=5.0, max_lease_s=120.0)
        self.assertEqual(100.0 + 120.0, table.grant(
            'a/vda', model.Cap(1, 0), 1e300, 100.0, UNLIMITED).expires_at_s)
        self.assertEqual(100.0 + 5.0, table.grant(
            'a/vda', model.Cap(1, 0), 0.5, 100.0, UNLIMITED).expires_at_s)
        self.assertEqual(100.0 + 30.0, table.grant(
            'a/vda', model.Cap(1, 0), 30, 100.0, UNLIMITED).expires_at_s)

    def test_bad_bounds_refused(self):
        for bounds in ((0.0, float('inf')), (10.0, 5.0), (float('nan'), 9),
                       (0.0, 0.0)):
            self.assertRaises(ValueError, leases.LeaseTable, *bounds)
