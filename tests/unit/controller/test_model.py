"""Guarantee validation, and min_memory_mb staying out of I/O."""

import testtools

from iothrottle.controller import model


class TestGuarantee(testtools.TestCase):

    def test_min_memory_mb_defaults_to_zero(self):
        self.assertEqual(0.0, model.NO_GUARANTEE.min_memory_mb)
        self.assertEqual(1024, model.Guarantee(min_memory_mb=1024)
                         .min_memory_mb)

    def test_bad_min_memory_mb_names_the_field(self):
        for value, message in (
                (-1, "guarantee of tier 'gold': min_memory_mb must be a "
                     "finite number >= 0, got -1"),
                (float('inf'), "guarantee of tier 'gold': min_memory_mb "
                               "must be a finite number >= 0, got inf"),
                ('512', "guarantee of tier 'gold': min_memory_mb must be a "
                        "number, got '512'"),
                (True, "guarantee of tier 'gold': min_memory_mb must be a "
                       "number, got True")):
            exc = self.assertRaises(ValueError, model.Guarantee,
                                    min_memory_mb=value, tier='gold')
            self.assertEqual(message, str(exc))

    def test_memory_floor_alone_is_no_io_guarantee(self):
        self.assertTrue(model.Guarantee(min_memory_mb=2048).is_empty)
        self.assertFalse(model.Guarantee(min_iops=1,
                                         min_memory_mb=2048).is_empty)
        self.assertFalse(model.Guarantee(min_bytes_sec=1).is_empty)

    def test_memory_floor_is_no_io_ceiling(self):
        # Not paired with any I/O floor: no "exceeds" check applies.
        guarantee = model.Guarantee(min_iops=500, max_iops=1000,
                                    min_memory_mb=64)
        self.assertEqual(64, guarantee.min_memory_mb)
