"""Profiles as JSON: the samples load, bad input names its field."""

import copy
import json
import os

import fixtures
import testtools

from iothrottle.seekmodel import model
from iothrottle.seekmodel import profile

SAMPLES = os.path.join(os.path.dirname(__file__), '..', '..', '..', 'etc',
                       'iothrottle', 'profiles')

HDD = {'kind': 'hdd', 'name': 'disk',
       'distance_curve': {'kind': 'table',
                          'points': [[1e9, 4.5e5], [2e10, 2.9e5]]},
       'alpha_by_scheduler': {'mq-deadline': 0.1, 'bfq': 0.9}}
FLASH = {'kind': 'flash', 'name': 'ssd',
         'read_qd_curve': [[1, 1e4], [32, 4e5]],
         'write_qd_curve': [[1, 2e4], [32, 9e4]]}


def _with(doc, path, value):
    """A copy of ``doc`` with the key path set (None value: deleted)."""
    doc = copy.deepcopy(doc)
    node = doc
    for key in path[:-1]:
        node = node[key]
    if value is None:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return doc


class TestSamples(testtools.TestCase):

    def test_wd1600js(self):
        p = profile.load(os.path.join(SAMPLES, 'wd1600js.json'))
        self.assertEqual(model.HDD, p.kind)
        self.assertEqual({'bfq': 0.99, 'kyber': 0.0, 'mq-deadline': 0.0,
                          'none': 0.0}, p.alphas())
        self.assertEqual(0.453e6, p.distance_curve.bandwidth_bytes_sec(1e9))
        streams = (model.Stream(2e9), model.Stream(2e9, offset_bytes=2e10))
        self.assertAlmostEqual(
            0.2943e6, model.predict(p, streams, 'mq-deadline')
            .bandwidth_bytes_sec, delta=50)

    def test_nvme(self):
        p = profile.load(os.path.join(SAMPLES, 'nvme-seed002.json'))
        self.assertEqual(model.FLASH, p.kind)
        self.assertEqual(438000, p.read_qd_curve.iops(16))


class TestRoundTrip(testtools.TestCase):

    def test_hdd(self):
        p = profile.from_dict(HDD)
        text = profile.dumps(p, 'd', {'machine': 'm'})
        self.assertEqual(p, profile.loads(text))
        doc = json.loads(text)
        self.assertEqual(('d', {'machine': 'm'}),
                         (doc['description'], doc['calibration']))
        self.assertIn('[1000000000.0, 450000.0]', text)

    def test_inverse_linear(self):
        doc = _with(HDD, ['distance_curve'], {
            'kind': 'inverse_linear', 'a_sec_per_byte2': 2.44e-17,
            'b_sec_per_byte': 2.91e-6})
        p = profile.from_dict(doc)
        self.assertIsInstance(p.distance_curve, model.InverseLinearCurve)
        self.assertEqual(p, profile.loads(profile.dumps(p)))

    def test_flash(self):
        p = profile.from_dict(FLASH)
        self.assertEqual(4096, p.request_size_bytes)
        self.assertIsNone(p.read_bytes_sec_limit)
        self.assertEqual(p, profile.loads(profile.dumps(p)))

    def test_file(self):
        path = self.useFixture(fixtures.TempDir()).join('p.json')
        profile.dump(profile.from_dict(FLASH), path)
        self.assertEqual(profile.from_dict(FLASH), profile.load(path))


class TestErrors(testtools.TestCase):

    def _error(self, doc):
        return str(self.assertRaises(ValueError, profile.from_dict, doc))

    def test_messages_are_one_line(self):
        for doc in (_with(HDD, ['kind'], 'tape'),
                    _with(HDD, ['distance_curve', 'points'], [])):
            self.assertNotIn('\n', self._error(doc))

    def test_non_monotonic_distance_curve(self):
        self.assertEqual(
            'distance_curve: points[1]: bandwidth must not increase with '
            'distance (500000.0 B/s at 20000000000.0 B after 450000.0 B/s '
            'at 1000000000.0 B)',
            self._error(_with(HDD, ['distance_curve', 'points', 1],
                              [2e10, 5e5])))

    def test_non_monotonic_qd_curve(self):
        self.assertEqual(
            'write_qd_curve: points[1]: iops must not decrease with more '
            'outstanding requests (1000.0 at 32.0 after 20000.0 at 1.0)',
            self._error(_with(FLASH, ['write_qd_curve', 1], [32, 1e3])))

    def test_empty_curves(self):
        self.assertEqual(
            'distance_curve: points must not be empty',
            self._error(_with(HDD, ['distance_curve', 'points'], [])))
        self.assertEqual('read_qd_curve: points must not be empty',
                         self._error(_with(FLASH, ['read_qd_curve'], [])))

    def test_unsorted_distances(self):
        self.assertEqual(
            'distance_curve: points[1]: distance_bytes must increase from '
            'point to point (100 after 1000000000.0)',
            self._error(_with(HDD, ['distance_curve', 'points', 1],
                              [100, 2e5])))

    def test_alpha_outside_0_1(self):
        self.assertEqual(
            "hdd profile 'disk': alpha_by_scheduler[bfq]: alpha must be in "
            "[0, 1], got 1.5",
            self._error(_with(HDD, ['alpha_by_scheduler', 'bfq'], 1.5)))
        self.assertEqual(
            "hdd profile 'disk': alpha_by_scheduler[none]: alpha must be a "
            "finite number >= 0, got -0.1",
            self._error(_with(HDD, ['alpha_by_scheduler', 'none'], -0.1)))

    def test_negative_distance_and_size(self):
        self.assertEqual(
            'distance_curve: points[0]: distance_bytes must be a number in '
            '[0, 1.15292e+18], got -1',
            self._error(_with(HDD, ['distance_curve', 'points', 0],
                              [-1, 5e5])))
        self.assertEqual(
            "request_size_bytes must be a number in (0, 1.07374e+09], "
            "got -4096",
            self._error(_with(HDD, ['request_size_bytes'], -4096)))
        self.assertEqual(
            "read_bytes_sec_limit must be a number in [1, 1e+13], got 0",
            self._error(_with(FLASH, ['read_bytes_sec_limit'], 0)))

    def test_bad_point(self):
        self.assertEqual(
            "distance_curve: points[0] must be a [distance_bytes, "
            "bandwidth_bytes_sec] pair, got (1,)",
            self._error(_with(HDD, ['distance_curve', 'points', 0], [1])))
        self.assertEqual(
            "distance_curve: points[0]: bandwidth_bytes_sec must be a "
            "number in [1, 1e+13], got 'fast'",
            self._error(_with(HDD, ['distance_curve', 'points', 0],
                              [1, 'fast'])))

    def test_unknown_kind(self):
        self.assertEqual("kind: unknown kind 'tape' (known: hdd, flash)",
                         self._error(_with(HDD, ['kind'], 'tape')))
        self.assertEqual("kind: unknown kind None (known: hdd, flash)",
                         self._error(_with(HDD, ['kind'], None)))
        self.assertEqual(
            "distance_curve: kind: unknown curve kind 'spline' (known: "
            "table, inverse_linear)",
            self._error(_with(HDD, ['distance_curve', 'kind'], 'spline')))

    def test_unknown_scheduler(self):
        self.assertEqual(
            "hdd profile 'disk': alpha_by_scheduler: unknown scheduler "
            "'cfq' (known: mq-deadline, bfq, none, kyber)",
            self._error(_with(HDD, ['alpha_by_scheduler', 'cfq'], 0.5)))

    def test_unknown_and_missing_fields(self):
        self.assertEqual(
            'alpha: unknown field (allowed: kind, name, request_size_bytes, '
            'distance_curve, alpha_by_scheduler, description, calibration)',
            self._error(_with(HDD, ['alpha'], 0.5)))
        self.assertEqual('distance_curve: missing',
                         self._error(_with(HDD, ['distance_curve'], None)))
        self.assertEqual('write_qd_curve: missing',
                         self._error(_with(FLASH, ['write_qd_curve'], None)))
        self.assertEqual(
            'distance_curve.b_sec_per_byte: missing',
            self._error(_with(HDD, ['distance_curve'], {
                'kind': 'inverse_linear', 'a_sec_per_byte2': 1e-17})))

    def test_wrong_types(self):
        self.assertEqual('profile: must be a JSON object, got list',
                         self._error([]))
        self.assertEqual('alpha_by_scheduler: must be a JSON object, got '
                         'list',
                         self._error(_with(HDD, ['alpha_by_scheduler'],
                                           [0.5])))
        self.assertEqual('name: must be a string',
                         self._error(_with(HDD, ['name'], 3)))
        self.assertEqual('calibration: must be a JSON object, got str',
                         self._error(_with(HDD, ['calibration'], 'x')))
        self.assertEqual(
            'read_qd_curve: must be a list of [outstanding_requests, iops] '
            'pairs', self._error(_with(FLASH, ['read_qd_curve'], {})))

    def test_not_json_and_path_prefix(self):
        e = self.assertRaises(ValueError, profile.loads, '{"kind": ')
        self.assertTrue(str(e).startswith('profile: not valid JSON: '))
        path = self.useFixture(fixtures.TempDir()).join('bad.json')
        with open(path, 'w') as f:
            json.dump(_with(HDD, ['kind'], 'tape'), f)
        e = self.assertRaises(ValueError, profile.load, path)
        self.assertEqual("%s: kind: unknown kind 'tape' (known: hdd, flash)"
                         % path, str(e))
