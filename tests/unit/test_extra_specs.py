"""Guarantees from flavor extra specs: resolution and every error."""

import testtools

from iothrottle.controller import model
from iothrottle import extra_specs
from iothrottle import tiers

TIERS = {
    'gold': model.Guarantee(min_iops=100, min_bytes_sec=6553600, weight=4,
                            tier='gold'),
    'silver': model.Guarantee(min_iops=40, max_iops=400, weight=2,
                              tier='silver'),
}


def resolve(**specs):
    return extra_specs.guarantee_from_extra_specs(
        {'iothrottle:' + key: value for key, value in specs.items()},
        TIERS)


class TestResolve(testtools.TestCase):

    def assertError(self, message, **specs):
        exc = self.assertRaises(extra_specs.ExtraSpecError, resolve, **specs)
        self.assertIsInstance(exc, ValueError)
        self.assertEqual(message, str(exc))
        self.assertNotIn('\n', str(exc))

    def test_no_iothrottle_keys_no_guarantee(self):
        self.assertIs(model.NO_GUARANTEE,
                      extra_specs.guarantee_from_extra_specs(
                          {'hw:cpu_policy': 'dedicated',
                           'quota:disk_read_iops_sec': '500'}, TIERS))
        self.assertIs(model.NO_GUARANTEE,
                      extra_specs.guarantee_from_extra_specs(None, {}))

    def test_tier_alone(self):
        self.assertEqual(TIERS['gold'], resolve(tier='gold'))

    def test_explicit_keys_override_the_tier(self):
        self.assertEqual(
            model.Guarantee(min_iops=150, min_bytes_sec=6553600,
                            max_iops=1000, weight=4, tier='gold'),
            resolve(tier='gold', min_iops='150', max_iops='1000'))
        self.assertEqual(
            model.Guarantee(min_iops=40, max_iops=400, weight=0.5,
                            tier='silver'),
            resolve(tier='silver', weight='0.5'))

    def test_explicit_keys_without_tier(self):
        self.assertEqual(
            model.Guarantee(min_iops=10, min_bytes_sec=1e6,
                            max_bytes_sec=2e6),
            resolve(min_iops='10', min_bytes_sec='1e6',
                    max_bytes_sec='2000000'))

    def test_memory_floor(self):
        self.assertEqual(model.Guarantee(min_memory_mb=2048),
                         resolve(min_memory_mb='2048'))
        self.assertEqual(
            model.Guarantee(min_iops=100, min_bytes_sec=6553600, weight=4,
                            min_memory_mb=512.5, tier='gold'),
            resolve(tier='gold', min_memory_mb='512.5'))
        # A memory floor alone is no I/O guarantee.
        self.assertTrue(resolve(min_memory_mb='2048').is_empty)

    def test_bad_memory_floor(self):
        self.assertError(
            "iothrottle:min_memory_mb: must be a number >= 0, got '2G'",
            min_memory_mb='2G')
        self.assertError(
            "iothrottle:min_memory_mb: must be a number >= 0, got '-1'",
            min_memory_mb='-1')

    def test_other_namespaces_ignored(self):
        specs = {'iothrottle:min_iops': '5', 'hw:mem_page_size': 'large',
                 'iothrottle': 'x', 'resources:VCPU': '0'}
        self.assertEqual(model.Guarantee(min_iops=5),
                         extra_specs.guarantee_from_extra_specs(specs, {}))

    def test_non_numeric(self):
        self.assertError(
            "iothrottle:min_iops: must be a number >= 0, got 'abc'",
            min_iops='abc')

    def test_negative(self):
        self.assertError(
            "iothrottle:max_bytes_sec: must be a number >= 0, got '-1'",
            max_bytes_sec='-1')

    def test_not_finite(self):
        for bad in ('nan', 'inf', '', ' ', '-0', '1_000', '\u0661'):
            exc = self.assertRaises(extra_specs.ExtraSpecError, resolve,
                                    min_iops=bad)
            self.assertIn('iothrottle:min_iops: must be a number >= 0',
                          str(exc))

    def test_long_value_is_cut_in_the_message(self):
        exc = self.assertRaises(extra_specs.ExtraSpecError, resolve,
                                min_iops='x' * 10000)
        self.assertLess(len(str(exc)), 120)

    def test_zero_weight(self):
        self.assertError('iothrottle:weight: must be > 0, got 0',
                         weight='0')

    def test_unknown_tier(self):
        self.assertError(
            "iothrottle:tier: unknown tier 'platinum' (known: gold, silver)",
            tier='platinum')
        exc = self.assertRaises(
            extra_specs.ExtraSpecError,
            extra_specs.guarantee_from_extra_specs,
            {'iothrottle:tier': 'gold'}, {})
        self.assertIn('(known: none)', str(exc))

    def test_malformed_tier_name(self):
        for bad in ('', 'gold tier', '../x', 'x' * 65, '-a'):
            exc = self.assertRaises(extra_specs.ExtraSpecError, resolve,
                                    tier=bad)
            self.assertTrue(str(exc).startswith(
                'iothrottle:tier: must be a tier name'), str(exc))

    def test_explicit_floor_above_explicit_ceiling(self):
        self.assertError(
            'iothrottle:min_iops (500) exceeds iothrottle:max_iops (100)',
            min_iops='500', max_iops='100')
        self.assertError(
            'iothrottle:min_bytes_sec (3) exceeds iothrottle:max_bytes_sec'
            ' (2)', min_bytes_sec='3', max_bytes_sec='2')

    def test_explicit_floor_above_the_tier_ceiling(self):
        self.assertError(
            "iothrottle:min_iops (500) exceeds max_iops of tier 'silver' "
            "(400)", tier='silver', min_iops='500')

    def test_explicit_ceiling_below_the_tier_floor(self):
        self.assertError(
            "iothrottle:max_iops (50) is below min_iops of tier 'gold' "
            "(100)", tier='gold', max_iops='50')

    def test_zero_ceiling_is_none(self):
        self.assertEqual(model.Guarantee(min_iops=500),
                         resolve(min_iops='500', max_iops='0'))

    def test_unknown_key(self):
        exc = self.assertRaises(extra_specs.ExtraSpecError, resolve,
                                min_iop='5')
        self.assertTrue(str(exc).startswith(
            'iothrottle:min_iop: unknown key (expected one of '
            'iothrottle:tier, iothrottle:min_iops,'), str(exc))

    def test_numbers_not_strings(self):
        # Values that did not come through Nova's API (a test, a cache).
        self.assertEqual(model.Guarantee(min_iops=5, weight=2),
                         resolve(min_iops=5, weight=2.0))
        self.assertError(
            'iothrottle:min_iops: must be a number >= 0, got True',
            min_iops=True)


class TestCheckSpec(testtools.TestCase):

    def test_every_guarantee_key_has_a_spec(self):
        fields = {spec.field for spec in extra_specs.SPECS if spec.field}
        self.assertEqual(set(tiers.GUARANTEE_KEYS), fields)
        for spec in extra_specs.SPECS:
            self.assertTrue(spec.name.startswith('iothrottle:'))
            self.assertGreater(len(spec.description), 40)

    def test_good_values(self):
        self.assertEqual(150.0, extra_specs.check_spec('iothrottle:min_iops',
                                                       '150'))
        self.assertEqual('gold.v2', extra_specs.check_spec('iothrottle:tier',
                                                           'gold.v2'))
        self.assertEqual(1024.0, extra_specs.check_spec(
            'iothrottle:min_memory_mb', '1024'))

    def test_bad_values_name_the_key(self):
        for name, value in (('iothrottle:min_iops', 'abc'),
                            ('iothrottle:max_iops', '-5'),
                            ('iothrottle:weight', '0'),
                            ('iothrottle:min_memory_mb', 'lots'),
                            ('iothrottle:tier', 'a b')):
            exc = self.assertRaises(extra_specs.ExtraSpecError,
                                    extra_specs.check_spec, name, value)
            self.assertTrue(str(exc).startswith(name + ': '), str(exc))
