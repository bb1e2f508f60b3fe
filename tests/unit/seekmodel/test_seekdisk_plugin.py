"""The seek curve of the nbdkit fixture plugin (pure functions)."""

import math

import testtools

from iothrottle.seekmodel import seekdisk_plugin as plugin

GIB = 1 << 30


class TestSeekCurve(testtools.TestCase):

    def test_sequential_costs_no_seek(self):
        self.assertEqual(0.0, plugin.seek_ms(0))

    def test_short_seeks_grow_with_the_square_root(self):
        # 1 + 4 x sqrt(d / 4 GiB): 1 GiB -> 3 ms, 1/16 of that distance
        # -> 1 + 4/8 = 1.5 ms.
        self.assertAlmostEqual(3.0, plugin.seek_ms(GIB))
        self.assertAlmostEqual(1.5, plugin.seek_ms(GIB / 16))

    def test_long_seeks_are_linear_and_continuous_at_the_knee(self):
        knee = plugin.PARAMS['knee']
        self.assertAlmostEqual(5.0, plugin.seek_ms(knee - 1), places=5)
        self.assertAlmostEqual(5.0, plugin.seek_ms(knee))
        self.assertAlmostEqual(5.0 + 0.1 * 156, plugin.seek_ms(160 * GIB))

    def test_service_time(self):
        # 20 GiB: 5 + 1.6 ms seek, 4.17 ms rotation, 4096 B at 60 MB/s.
        expected = (6.6 + 4.17 + 4096 / 60e3) / 1e3
        self.assertTrue(math.isclose(expected,
                                     plugin.service_s(20 * GIB, 4096)))

    def test_parameters(self):
        params = dict(plugin.PARAMS, time_scale=0.5)
        self.assertAlmostEqual(plugin.service_s(GIB, 4096) / 2,
                               plugin.service_s(GIB, 4096, params))
        self.assertEqual(160 * GIB, plugin.parse_size('160G'))
        self.assertEqual(4096, plugin.parse_size('4096'))
