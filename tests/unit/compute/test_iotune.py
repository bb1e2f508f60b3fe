"""Mapping a cap onto libvirt limits without exceeding the baseline."""

import testtools

from iothrottle.compute import iotune
from iothrottle.controller import model


def _params(**limits):
    return iotune.IoTune(**limits).as_params()


class TestIoTune(testtools.TestCase):

    def test_from_libvirt_dict_ignores_bursts_and_groups(self):
        tune = iotune.IoTune.from_params({
            'total_iops_sec': 500, 'total_iops_sec_max': 900,
            'group_name': 'g', 'read_bytes_sec': 7})
        self.assertEqual(iotune.IoTune(total_iops_sec=500,
                                       read_bytes_sec=7), tune)

    def test_negative_limit_rejected_with_owner(self):
        exc = self.assertRaises(ValueError, iotune.IoTune.from_params,
                                {'total_iops_sec': -1}, owner='disk vdb')
        self.assertEqual('disk vdb: total_iops_sec must be an integer >= 0,'
                         ' got -1', str(exc))

    def test_ceilings(self):
        self.assertEqual(0, iotune.IoTune().iops_ceiling)
        self.assertEqual(500, iotune.IoTune(total_iops_sec=500)
                         .iops_ceiling)
        self.assertEqual(400, iotune.IoTune(read_iops_sec=300,
                                            write_iops_sec=100)
                         .iops_ceiling)
        # Writes unlimited: so is the total.
        self.assertEqual(0, iotune.IoTune(read_bytes_sec=10).bytes_ceiling)


class TestCapParams(testtools.TestCase):

    def test_unlimited_baseline_takes_the_cap_as_totals(self):
        self.assertEqual(
            _params(total_iops_sec=121, total_bytes_sec=5000000),
            iotune.cap_params(iotune.IoTune(), model.Cap(120.7, 5e6)))

    def test_a_cap_is_the_nearest_whole_rate(self):
        # libvirt takes whole numbers: 18.9 requests/s is enforced as 19
        # (rounded down, 18: 5 % under the decision), 18.4 as 18, and
        # a half rounds up.
        for cap_iops, whole in ((18.9, 19), (18.4, 18), (18.5, 19)):
            params = iotune.cap_params(iotune.IoTune(),
                                       model.Cap(cap_iops, 1048576.4))
            self.assertEqual(_params(total_iops_sec=whole,
                                     total_bytes_sec=1048576), params,
                             cap_iops)

    def test_a_rounded_cap_stays_under_the_baseline(self):
        baseline = iotune.IoTune(total_iops_sec=18)
        self.assertEqual(18, iotune.cap_params(
            baseline, model.Cap(17.9, 0))['total_iops_sec'])

    def test_never_above_a_total_baseline(self):
        baseline = iotune.IoTune(total_iops_sec=100, total_bytes_sec=10)
        self.assertEqual(
            _params(total_iops_sec=100, total_bytes_sec=10),
            iotune.cap_params(baseline, model.Cap(400, 1e9)))

    def test_unlimited_axis_of_the_cap_keeps_the_baseline(self):
        baseline = iotune.IoTune(total_bytes_sec=2000)
        self.assertEqual(
            _params(total_iops_sec=50, total_bytes_sec=2000),
            iotune.cap_params(baseline, model.Cap(50, 0)))

    def test_tiny_cap_never_rounds_to_unlimited(self):
        params = iotune.cap_params(iotune.IoTune(), model.Cap(0.3, 0))
        self.assertEqual(1, params['total_iops_sec'])

    def test_split_baseline_is_scaled_not_mixed_with_total(self):
        baseline = iotune.IoTune(read_iops_sec=300, write_iops_sec=100)
        params = iotune.cap_params(baseline, model.Cap(200, 0))
        self.assertEqual(_params(read_iops_sec=150, write_iops_sec=50),
                         params)

    def test_split_baseline_cap_above_it_keeps_it(self):
        baseline = iotune.IoTune(read_bytes_sec=300, write_bytes_sec=100)
        self.assertEqual(
            _params(read_bytes_sec=300, write_bytes_sec=100),
            iotune.cap_params(baseline, model.Cap(0, 1000)))

    def test_one_sided_baseline_shares_the_cap(self):
        baseline = iotune.IoTune(write_iops_sec=30)
        params = iotune.cap_params(baseline, model.Cap(200, 0))
        # Writes keep at most their baseline; the sum is the cap.
        self.assertEqual(_params(read_iops_sec=170, write_iops_sec=30),
                         params)
        params = iotune.cap_params(iotune.IoTune(read_iops_sec=500),
                                   model.Cap(200, 0))
        self.assertEqual(_params(read_iops_sec=100, write_iops_sec=100),
                         params)

    def test_never_total_and_split_together(self):
        for baseline in (iotune.IoTune(read_iops_sec=5, write_iops_sec=9),
                         iotune.IoTune(read_iops_sec=5),
                         iotune.IoTune(total_iops_sec=5)):
            for cap in (1, 7, 1000):
                params = iotune.cap_params(baseline, model.Cap(cap, 0))
                self.assertFalse(params['total_iops_sec'] and (
                    params['read_iops_sec'] or params['write_iops_sec']),
                    (baseline, cap, params))


class TestSameLimits(testtools.TestCase):

    def test_caps_within_the_same_whole_rates_are_the_same_limits(self):
        unlimited = iotune.IoTune()
        self.assertTrue(iotune.same_limits(
            unlimited, model.Cap(13.2, 1048576.0), model.Cap(13.4, 1048576.3)))
        self.assertFalse(iotune.same_limits(
            unlimited, model.Cap(13.4, 1048576.0), model.Cap(13.6, 1048576.0)))
        # Either axis counts.
        self.assertFalse(iotune.same_limits(
            unlimited, model.Cap(13.2, 1048576.0), model.Cap(13.2, 1048577.0)))

    def test_the_baseline_decides_what_libvirt_is_given(self):
        # Over a baseline of 10 IOPS, both caps are the baseline's 10.
        baseline = iotune.IoTune(total_iops_sec=10)
        self.assertTrue(iotune.same_limits(
            baseline, model.Cap(12, 0), model.Cap(30, 0)))
        self.assertFalse(iotune.same_limits(
            iotune.IoTune(), model.Cap(12, 0), model.Cap(30, 0)))
        # A read/write split scales both sides: 20 and 20.4 are 10 + 10.
        split = iotune.IoTune(read_iops_sec=50, write_iops_sec=50)
        self.assertTrue(iotune.same_limits(
            split, model.Cap(20, 0), model.Cap(20.4, 0)))
        self.assertFalse(iotune.same_limits(
            split, model.Cap(20, 0), model.Cap(22, 0)))
