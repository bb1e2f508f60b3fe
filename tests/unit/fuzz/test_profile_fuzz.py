"""Property tests: pool profiles from files and from the conductor.

Profiles cross the RPC boundary (the conductor's pool_state reply,
decoded with ``profile.from_dict``) and come from operators' files.  Any
document gives either a profile whose numbers are finite and bounded,
whose predictions are finite, or a ValueError with one line naming the
field; never another exception.
"""

import json
import math
import os
import tempfile

from hypothesis import example
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
import testtools

from iothrottle.seekmodel import model
from iothrottle.seekmodel import profile as profile_mod

SPECIAL = (float('nan'), float('inf'), -float('inf'), -0.0, 0, 1, -1,
           5e-324, 1e-300, 1e300, 10 ** 400, True, None, 'x', 4096, 1e9,
           0.5, 2.0)
numbers = st.one_of(st.sampled_from(SPECIAL), st.floats(),
                    st.integers(), st.floats(min_value=0, max_value=1e12))
json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), numbers, st.text(max_size=8)),
    lambda inner: st.one_of(st.lists(inner, max_size=3),
                            st.dictionaries(st.text(max_size=6), inner,
                                            max_size=3)),
    max_leaves=10)
points = st.one_of(
    st.lists(st.lists(numbers, min_size=2, max_size=2), max_size=5),
    st.lists(st.tuples(st.floats(min_value=0, max_value=1e12),
                       st.floats(min_value=1e-3, max_value=1e9)).map(list),
             max_size=5).map(sorted),
    json_values)
curves = st.one_of(
    st.fixed_dictionaries({'kind': st.just('table'), 'points': points}),
    st.fixed_dictionaries({'kind': st.just('inverse_linear'),
                           'a_sec_per_byte2': numbers,
                           'b_sec_per_byte': numbers}),
    json_values)
optional = {
    'name': st.one_of(st.text(max_size=8), json_values),
    'request_size_bytes': numbers,
    'description': st.one_of(st.text(max_size=8), json_values),
    'calibration': json_values,
}
hdd_docs = st.fixed_dictionaries(
    {'kind': st.just('hdd'), 'distance_curve': curves},
    optional=dict(optional, alpha_by_scheduler=st.one_of(
        st.dictionaries(st.sampled_from(model.SCHEDULERS + ('cfq',)),
                        numbers, max_size=3), json_values)))
flash_docs = st.fixed_dictionaries(
    {'kind': st.just('flash'), 'read_qd_curve': points,
     'write_qd_curve': points},
    optional=dict(optional, read_bytes_sec_limit=numbers,
                  write_bytes_sec_limit=numbers))
documents = st.one_of(hdd_docs, flash_docs, json_values)
STREAMS = (model.Stream(size_bytes=2e9, offset_bytes=0),
           model.Stream(size_bytes=2e9, offset_bytes=4e12,
                        read_fraction=0.3, outstanding_requests=64))


def _numbers(profile):
    yield profile.request_size_bytes
    if profile.kind == model.HDD:
        curve = profile.distance_curve
        if curve.kind == 'table':
            for point in curve.points:
                yield from point
        else:
            yield curve.a_sec_per_byte2
            yield curve.b_sec_per_byte
        for _scheduler, alpha in profile.alpha_by_scheduler:
            yield alpha
    else:
        for curve in (profile.read_qd_curve, profile.write_qd_curve):
            for point in curve.points:
                yield from point
        for limit in (profile.read_bytes_sec_limit,
                      profile.write_bytes_sec_limit):
            if limit is not None:
                yield limit


def _check(test, decode, document):
    try:
        profile = decode(document)
    except ValueError as exc:
        message = str(exc)
        test.assertNotIn('\n', message)
        test.assertLess(len(message), 600)
        return
    for value in _numbers(profile):
        test.assertTrue(math.isfinite(value), value)
        test.assertTrue(0 <= value <= profile_mod.MAX_DISTANCE_BYTES, value)
    # What the scheduler does with it: predictions stay finite.
    for streams in (STREAMS[:1], STREAMS):
        prediction = model.predict(profile, streams)
        test.assertTrue(math.isfinite(prediction.bandwidth_bytes_sec))
        test.assertTrue(math.isfinite(prediction.iops))
    # And it survives the trip back to JSON.
    test.assertEqual(profile,
                     profile_mod.loads(profile_mod.dumps(profile)))


class TestFromDict(testtools.TestCase):

    @settings(max_examples=300, deadline=None)
    @given(documents)
    @example({'kind': 'hdd', 'request_size_bytes': 10 ** 400,
              'distance_curve': {'kind': 'table', 'points': [[0, 1e5]]}})
    @example({'kind': 'hdd', 'distance_curve': {
        'kind': 'inverse_linear', 'a_sec_per_byte2': 0,
        'b_sec_per_byte': 5e-324}})
    @example({'kind': 'flash', 'read_qd_curve': [[1, 10 ** 400]],
              'write_qd_curve': [[1, 1]]})
    @example({'kind': ['hdd']})
    def test_any_document(self, document):
        _check(self, profile_mod.from_dict, document)

    @settings(max_examples=200, deadline=None)
    @given(st.text(max_size=200))
    @example('[' * 100000)
    def test_any_text(self, text):
        _check(self, profile_mod.loads, text)


class TestRegressions(testtools.TestCase):
    """Examples the fuzzing found: each crashed, or was accepted, before."""

    def error(self, document):
        return str(self.assertRaises(ValueError, profile_mod.from_dict,
                                     document))

    def test_integer_too_large_for_a_float(self):
        # OverflowError in math.isfinite.
        self.assertEqual(
            'request_size_bytes must be a number in (0, 1.07374e+09], got '
            '1000000000000000000000000000000000000000...',
            self.error({'kind': 'hdd', 'request_size_bytes': 10 ** 400,
                        'distance_curve': {'kind': 'table',
                                           'points': [[0, 1e5]]}}))
        self.assertIn(
            'read_qd_curve: points[0]: iops must be a number in '
            '[0.001, 1e+09]',
            self.error({'kind': 'flash', 'read_qd_curve': [[1, 10 ** 400]],
                        'write_qd_curve': [[1, 1]]}))

    def test_infinite_bandwidth_from_a_tiny_b(self):
        # Accepted: f(0) = 1 / 5e-324 = inf, every prediction inf.
        self.assertEqual(
            'distance_curve.b_sec_per_byte must be a number in '
            '[1e-13, 1], got 5e-324',
            self.error({'kind': 'hdd', 'distance_curve': {
                'kind': 'inverse_linear', 'a_sec_per_byte2': 0,
                'b_sec_per_byte': 5e-324}}))

    def test_kind_unhashable(self):
        self.assertEqual("kind: unknown kind ['hdd'] (known: hdd, flash)",
                         self.error({'kind': ['hdd']}))

    def test_too_many_points_and_long_strings(self):
        table = {'kind': 'table',
                 'points': [[k, 1e5] for k in range(2000)]}
        self.assertIn('must be at most 1024',
                      self.error({'kind': 'hdd', 'distance_curve': table}))
        curve = {'kind': 'table', 'points': [[0, 1e5]]}
        self.assertEqual('name: longer than 255 characters', self.error(
            {'kind': 'hdd', 'name': 'x' * 256, 'distance_curve': curve}))
        self.assertEqual(
            'calibration: larger than 65536 characters of JSON',
            self.error({'kind': 'hdd', 'distance_curve': curve,
                        'calibration': {'log': 'x' * 70000}}))

    def test_json_nested_deeper_than_the_stack(self):
        # RecursionError out of json.loads.
        exc = self.assertRaises(ValueError, profile_mod.loads,
                                '[' * 100000)
        self.assertTrue(str(exc).startswith('profile: not valid JSON: '))


class TestLoad(testtools.TestCase):

    def write(self, data):
        fd, path = tempfile.mkstemp(suffix='.json')
        self.addCleanup(os.unlink, path)
        with os.fdopen(fd, 'wb') as stream:
            stream.write(data)
        return path

    def test_oversized_file_refused(self):
        path = self.write(b' ' * (profile_mod.MAX_FILE_BYTES + 1))
        exc = self.assertRaises(ValueError, profile_mod.load, path)
        self.assertEqual('%s: profile: larger than %d bytes'
                         % (path, profile_mod.MAX_FILE_BYTES), str(exc))

    def test_not_utf8(self):
        path = self.write(json.dumps({'kind': 'hdd'}).encode() + b'\xff')
        exc = self.assertRaises(ValueError, profile_mod.load, path)
        self.assertEqual('%s: not UTF-8 text (byte 15)' % path, str(exc))
