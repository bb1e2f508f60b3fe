"""Property tests: any tiers file loads or fails with one line.

Arbitrary YAML documents (nested structures, wrong types, duplicate and
non-string names, huge numbers, nan) and arbitrary text give either a
valid Tiers object or a TiersError naming the tier or field; never
another exception.
"""

import math
import os
import tempfile

from hypothesis import example
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
import testtools
import yaml

from iothrottle.controller import model
from iothrottle import tiers

SPECIAL_NUMBERS = (float('nan'), float('inf'), -float('inf'), -0.0, 1e300,
                   10 ** 400, -1, 1e15, 1e16, 1e-300, 0, True, None)

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(),
    st.sampled_from(SPECIAL_NUMBERS), st.text(max_size=12),
    st.sampled_from(['gold', 'silver', '1e6', 'nan', '.inf', '']))
anything = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.one_of(st.text(max_size=8), st.integers()),
                        inner, max_size=3)),
    max_leaves=12)
names = st.one_of(st.sampled_from(['gold', 'silver', 'm1.large', 1, '1',
                                   '', ' ', 'a\nb', 'x' * 300]),
                  st.text(max_size=10), st.integers())
number_values = st.one_of(scalars, st.floats(min_value=0, max_value=1e16))
guarantee_entries = st.dictionaries(
    st.one_of(st.sampled_from(tiers.GUARANTEE_KEYS + ('tier',)),
              st.text(max_size=6)),
    st.one_of(number_values, names), max_size=5)
documents = st.one_of(
    anything,
    st.fixed_dictionaries({}, optional={
        'tiers': st.one_of(anything,
                           st.dictionaries(names, guarantee_entries,
                                           max_size=4)),
        'flavors': st.one_of(anything,
                             st.dictionaries(names, st.one_of(
                                 names, guarantee_entries), max_size=4)),
        'default_tier': st.one_of(names, anything)}))


def _check(test, text):
    try:
        loaded = tiers.parse_tiers(text, 'tiers.yaml')
    except tiers.TiersError as exc:
        message = str(exc)
        test.assertTrue(message.startswith('tiers.yaml: '), message)
        test.assertNotIn('\n', message)
        test.assertLess(len(message), 1000)
        return None
    test.assertIsInstance(loaded, tiers.Tiers)
    for name, guarantee in list(loaded.tiers.items()) + list(
            loaded.flavors.items()):
        test.assertIsInstance(name, str)
        test.assertIsInstance(guarantee, model.Guarantee)
        for field in tiers.GUARANTEE_KEYS:
            value = getattr(guarantee, field)
            test.assertTrue(math.isfinite(value))
            test.assertTrue(0 <= value <= tiers.MAX_VALUE, (field, value))
        test.assertTrue(
            tiers.MIN_WEIGHT <= guarantee.weight <= tiers.MAX_WEIGHT)
    if loaded.default_tier:
        test.assertIn(loaded.default_tier, loaded.tiers)
    return loaded


class TestParseTiers(testtools.TestCase):

    @settings(max_examples=300, deadline=None)
    @given(documents)
    @example({'tiers': 5})
    @example({'tiers': {'gold': {'min_iops': 10 ** 400}}})
    @example({'tiers': {1: {}, '1': {}}})
    def test_any_document(self, document):
        _check(self, yaml.safe_dump(document))

    @settings(max_examples=300, deadline=None)
    @given(st.text(max_size=200))
    @example('{[1]: x}')
    @example('[' * 5000)
    @example('tiers: {gold: {min_iops: %s}}' % ('1' * 5000))
    @example('a: &a [*a, *a]\nb: &b [*a, *a, *a]\nc: &c [*b, *b, *b]\n'
             'd: &d [*c, *c, *c]\ne: &e [*d, *d, *d]\nf: [*e, *e, *e]\n')
    def test_any_text(self, text):
        _check(self, text)


class TestRegressions(testtools.TestCase):
    """Examples the fuzzing found: each crashed, or was accepted, before."""

    def assertError(self, text, message):
        exc = self.assertRaises(tiers.TiersError, tiers.parse_tiers, text,
                                'tiers.yaml')
        self.assertEqual(message, str(exc))

    def test_tiers_not_a_mapping(self):
        # TypeError: 'int' object is not iterable.
        self.assertError('tiers: 5\n',
                         'tiers.yaml: tiers: must be a mapping, got 5')

    def test_integer_too_large_for_a_float(self):
        # OverflowError in math.isfinite.
        self.assertError(
            'tiers: {gold: {min_iops: 1%s}}\n' % ('0' * 400),
            'tiers.yaml: tiers.gold.min_iops: must be at most 1e+15, got '
            '100000000000000000...0000000000000000000')

    def test_integer_of_too_many_digits(self):
        # ValueError from int() inside PyYAML, a multi-line message.
        exc = self.assertRaises(
            tiers.TiersError, tiers.parse_tiers,
            'tiers: {gold: {min_iops: %s}}\n' % ('1' * 5000), 'tiers.yaml')
        self.assertTrue(str(exc).startswith('tiers.yaml: malformed YAML: '),
                        str(exc))
        self.assertNotIn('\n', str(exc))

    def test_nesting_deeper_than_the_stack(self):
        # RecursionError inside PyYAML's composer.
        exc = self.assertRaises(tiers.TiersError, tiers.parse_tiers,
                                '[' * 5000 + ']' * 5000, 'tiers.yaml')
        self.assertTrue(str(exc).startswith('tiers.yaml: malformed YAML'),
                        str(exc))

    def test_unhashable_key(self):
        # TypeError: unhashable type: 'list', in the duplicate check.
        self.assertError(
            '{[1]: x}\n',
            'tiers.yaml: malformed YAML at line 1 column 2: a key must be '
            'a name, got a list')

    def test_same_name_as_integer_and_text(self):
        # Both kept as '1' before: the second silently won.
        self.assertError("tiers: {1: {}, '1': {}}\n",
                         'tiers.yaml: tiers.1: given twice')
        self.assertEqual(
            ['123'],
            list(tiers.parse_tiers('tiers: {123: {}}\n').tiers))

    def test_unprintable_or_long_names(self):
        self.assertError('tiers: {"a\\nb": {}}\n',
                         "tiers.yaml: tiers.'a\\nb': must be a name of 1 to "
                         "255 printable characters")
        self.assertRaises(tiers.TiersError, tiers.parse_tiers,
                          'flavors: {%s: {}}\n' % ('x' * 256))

    def test_alias_bomb_quoted_bounded(self):
        # The message quoted the whole expanded structure: 9 ** 6 items.
        levels = ['&a [%s]' % ', '.join(['x'] * 9)]
        for level in 'bcdef':
            levels.append('&%s [%s]' % (level, ', '.join(
                ['*' + chr(ord(level) - 1)] * 9)))
        exc = self.assertRaises(tiers.TiersError, tiers.parse_tiers,
                                'tiers: {gold: [%s]}\n' % ', '.join(levels))
        self.assertLess(len(str(exc)), 300)

    def test_empty_default_tier_is_none(self):
        self.assertEqual('', tiers.parse_tiers(
            "tiers: {}\ndefault_tier: ''\n").default_tier)


class TestLoadTiers(testtools.TestCase):

    def write(self, data):
        fd, path = tempfile.mkstemp(suffix='.yaml')
        self.addCleanup(os.unlink, path)
        with os.fdopen(fd, 'wb') as stream:
            stream.write(data)
        return path

    def test_oversized_file_refused_unread(self):
        path = self.write(b'#' * (tiers.MAX_FILE_BYTES + 1))
        exc = self.assertRaises(tiers.TiersError, tiers.load_tiers, path)
        self.assertEqual('%s: larger than %d bytes, not a tiers file'
                         % (path, tiers.MAX_FILE_BYTES), str(exc))

    def test_not_utf8(self):
        # UnicodeDecodeError, a multi-line ValueError, before.
        path = self.write(b'tiers: {gold: {}}\n\xff\xfe\n')
        exc = self.assertRaises(tiers.TiersError, tiers.load_tiers, path)
        self.assertEqual('%s: not UTF-8 text (byte 18)' % path, str(exc))
