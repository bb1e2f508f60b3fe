"""Property tests: flavor extra specs are untrusted input.

Any dict of str -> str, with any tiers map, gives either a Guarantee
whose numbers are finite and within the documented bounds, or an
ExtraSpecError with one line naming the key; never another exception.
"""

import math

from hypothesis import example
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
import testtools

from iothrottle.controller import model
from iothrottle import extra_specs
from iothrottle import tiers

NUMBER_FIELDS = ('min_iops', 'min_bytes_sec', 'max_iops', 'max_bytes_sec',
                 'weight', 'min_memory_mb')
SPECIAL_VALUES = ('nan', 'NaN', 'inf', '-inf', 'Infinity', '-0', '0',
                  '1e400', '1e300', '1e15', '1e16', '1e-300', '5e-324',
                  '1_000', '\u0661\u0662', '\uff15', ' 5', '5 ', '\t',
                  '', ' ', '0x10', '1' * 400, '.5', '5.', '1e', 'e5',
                  '+5', '-1', 'gold', 'x' * 10000, '\n')

keys = st.one_of(st.sampled_from(sorted(extra_specs.SPECS_BY_NAME)),
                 st.text(max_size=30).map(lambda k: extra_specs.PREFIX + k),
                 st.text(max_size=30))
values = st.one_of(
    st.sampled_from(SPECIAL_VALUES),
    st.text(max_size=30),
    st.floats().map(repr),
    st.integers().map(str),
    st.from_regex(extra_specs.TIER_NAME_PATTERN, fullmatch=True))
bounded = st.floats(min_value=0, max_value=tiers.MAX_VALUE)
known_guarantees = st.builds(
    model.Guarantee, min_iops=bounded, min_bytes_sec=bounded,
    weight=st.floats(min_value=tiers.MIN_WEIGHT, max_value=tiers.MAX_WEIGHT),
    min_memory_mb=bounded)
known_tiers = st.dictionaries(
    st.one_of(st.sampled_from(['gold', 'silver', '1']), st.text(max_size=8)),
    known_guarantees, max_size=4)
specs = st.dictionaries(keys, values, max_size=8)


def _check_bounded(test, guarantee):
    test.assertIsInstance(guarantee, model.Guarantee)
    for field in NUMBER_FIELDS:
        value = getattr(guarantee, field)
        test.assertTrue(math.isfinite(value), (field, value))
        test.assertTrue(0 <= value <= tiers.MAX_VALUE, (field, value))
    if guarantee != model.NO_GUARANTEE:
        test.assertTrue(
            tiers.MIN_WEIGHT <= guarantee.weight <= tiers.MAX_WEIGHT)


def _check_error(test, exc):
    message = str(exc)
    test.assertNotIn('\n', message)
    test.assertNotIn('\r', message)
    test.assertLess(len(message), 400)


class TestGuaranteeFromExtraSpecs(testtools.TestCase):

    @settings(max_examples=300, deadline=None)
    @given(specs, known_tiers)
    @example({'iothrottle:min_iops': '1e300'}, {})
    @example({'iothrottle:weight': '1e-300'}, {})
    @example({'iothrottle:min_iops': '\u0661'}, {})
    @example({'iothrottle:min_iops': '1_000'}, {})
    @example({'iothrottle:\n': '1'}, {})
    @example({'iothrottle:tier': 'gold'}, {'a\nb': model.NO_GUARANTEE})
    def test_guarantee_or_one_line_error(self, extra, known):
        try:
            guarantee = extra_specs.guarantee_from_extra_specs(extra, known)
        except extra_specs.ExtraSpecError as exc:
            _check_error(self, exc)
            own = extra_specs.own_specs(extra)
            self.assertTrue(own, 'error without any iothrottle: key')
            # Named first, as is or quoted.
            self.assertTrue(str(exc).lstrip('\'"').startswith(
                extra_specs.PREFIX), str(exc))
        else:
            _check_bounded(self, guarantee)

    @settings(max_examples=300, deadline=None)
    @given(keys, values)
    def test_check_spec_one_key(self, name, value):
        """What nova-api's validators call, one key at a time."""
        try:
            extra_specs.check_spec(name, value)
        except extra_specs.ExtraSpecError as exc:
            _check_error(self, exc)


class TestRegressions(testtools.TestCase):
    """Examples the fuzzing found, each accepted or crashing before."""

    def resolve(self, **specs):
        return extra_specs.guarantee_from_extra_specs(
            {extra_specs.PREFIX + k: v for k, v in specs.items()}, {})

    def test_absurd_rate_refused_with_the_bound(self):
        for value in ('1e300', '1e16', '1e400'):
            exc = self.assertRaises(extra_specs.ExtraSpecError,
                                    self.resolve, min_iops=value)
            self.assertEqual(
                'iothrottle:min_iops: must be at most 1e+15, got %r'
                % value, str(exc))
        self.assertEqual(1e15, self.resolve(max_bytes_sec='1e15')
                         .max_bytes_sec)

    def test_weight_bounded(self):
        for value in ('1e-300', '1e6'):
            exc = self.assertRaises(extra_specs.ExtraSpecError,
                                    self.resolve, weight=value)
            self.assertIn('iothrottle:weight: must be in [0.001, 1000]',
                          str(exc))

    def test_only_plain_ascii_decimal(self):
        for value in ('1_000', '\u0661', '\uff15', ' 5', '-0', '+5'):
            exc = self.assertRaises(extra_specs.ExtraSpecError,
                                    self.resolve, min_iops=value)
            self.assertTrue(str(exc).startswith(
                'iothrottle:min_iops: must be a number >= 0, got '),
                str(exc))
        self.assertEqual(0.5, self.resolve(min_iops='.5').min_iops)
        self.assertEqual(5.0, self.resolve(min_iops='5.').min_iops)

    def test_unprintable_key_is_quoted(self):
        exc = self.assertRaises(extra_specs.ExtraSpecError, self.resolve,
                                **{'min\niops': '1'})
        self.assertTrue(str(exc).startswith("'iothrottle:min\\niops': "
                                            'unknown key'), str(exc))

    def test_unprintable_tier_names_listed_quoted(self):
        exc = self.assertRaises(
            extra_specs.ExtraSpecError,
            extra_specs.guarantee_from_extra_specs,
            {'iothrottle:tier': 'gold'}, {'a\nb': model.NO_GUARANTEE})
        self.assertEqual(
            "iothrottle:tier: unknown tier 'gold' (known: 'a\\nb')",
            str(exc))
