"""The standalone guarantees file: loading and every error message."""

import os.path
import textwrap

import fixtures
import testtools

from iothrottle.controller import model
from iothrottle import tiers

SAMPLE = '''
tiers:
  gold:   {min_iops: 100, min_bytes_sec: 6553600, weight: 4}
  silver: {min_iops: 40, max_iops: 400, weight: 2}
flavors:
  m1.large: gold
  bench.vm2: {min_bytes_sec: 819200, tier: silver}   # overrides silver
  bare: {min_iops: 5}
default_tier: silver
'''


class TestLoad(testtools.TestCase):

    def _write(self, text):
        path = self.useFixture(fixtures.TempDir()).join('tiers.yaml')
        with open(path, 'w') as stream:
            stream.write(textwrap.dedent(text))
        return path

    def test_sample_guarantees(self):
        loaded = tiers.load_tiers(self._write(SAMPLE))
        self.assertEqual(
            model.Guarantee(min_iops=100, min_bytes_sec=6553600, weight=4,
                            tier='gold'),
            loaded.guarantee_for('m1.large'))
        self.assertEqual(
            model.Guarantee(min_iops=40, min_bytes_sec=819200,
                            max_iops=400, weight=2, tier='silver'),
            loaded.guarantee_for('bench.vm2'))
        self.assertEqual(model.Guarantee(min_iops=5),
                         loaded.guarantee_for('bare'))
        # Not listed: the default tier.
        self.assertEqual('silver', loaded.guarantee_for('m1.tiny').tier)
        self.assertTrue(loaded.covers('m1.tiny'))

    def test_unlisted_flavor_without_default(self):
        loaded = tiers.parse_tiers('tiers: {}\nflavors: {}\n')
        self.assertFalse(loaded.covers('m1.tiny'))
        self.assertIs(model.NO_GUARANTEE, loaded.guarantee_for('m1.tiny'))

    def test_shipped_sample_file_loads(self):
        loaded = tiers.load_tiers(os.path.join(
            os.path.dirname(__file__), '..', '..', 'etc', 'iothrottle',
            'tiers.yaml.sample'))
        self.assertTrue(loaded.tiers)
        self.assertEqual({'db.large': 2048}, loaded.memory_floors())

    def test_memory_floors(self):
        loaded = tiers.parse_tiers(textwrap.dedent('''
            tiers:
              gold: {min_iops: 100, min_memory_mb: 2048}
              silver: {min_iops: 40}
            flavors:
              m1.large: gold
              m1.medium: silver
              db.small: {min_memory_mb: 512.5, tier: silver}
              db.large: {min_memory_mb: 4096, tier: gold}
              io.only: {min_memory_mb: 0, tier: gold}
            default_tier: gold
            '''))
        self.assertEqual(model.Guarantee(min_iops=100, min_memory_mb=2048,
                                         tier='gold'),
                         loaded.guarantee_for('m1.large'))
        self.assertEqual(model.Guarantee(min_iops=40, min_memory_mb=512.5,
                                         tier='silver'),
                         loaded.guarantee_for('db.small'))
        # Listed flavors with a floor of their own or their tier's; an
        # explicit 0 drops the tier's; the default tier does not count.
        self.assertEqual({'db.large': 4096, 'db.small': 512.5,
                          'm1.large': 2048},
                         loaded.memory_floors())

    def test_no_memory_floors(self):
        loaded = tiers.parse_tiers(SAMPLE)
        self.assertEqual({}, loaded.memory_floors())

    def test_exponent_written_without_dot(self):
        loaded = tiers.parse_tiers('tiers: {t: {min_bytes_sec: 1e6}}\n')
        self.assertEqual(1e6, loaded.tiers['t'].min_bytes_sec)

    def test_missing_file(self):
        exc = self.assertRaises(tiers.TiersError, tiers.load_tiers,
                                '/nonexistent/tiers.yaml')
        self.assertEqual('/nonexistent/tiers.yaml: cannot read: No such '
                         'file or directory', str(exc))


class TestErrors(testtools.TestCase):
    """Each error is one line naming the file and the culprit."""

    def assertError(self, text, message):
        exc = self.assertRaises(tiers.TiersError, tiers.parse_tiers,
                                textwrap.dedent(text), 'tiers.yaml')
        self.assertEqual(message, str(exc))
        self.assertIsInstance(exc, ValueError)

    def test_non_numeric(self):
        self.assertError(
            '''
            tiers: {silver: {min_iops: 40}}
            flavors:
              bench.vm2: {min_iops: abc, tier: silver}
            ''',
            "tiers.yaml: flavors.bench.vm2.min_iops: must be a number >= 0,"
            " got 'abc'")

    def test_negative(self):
        self.assertError(
            'tiers: {gold: {min_bytes_sec: -5}}\n',
            'tiers.yaml: tiers.gold.min_bytes_sec: must be a number >= 0,'
            ' got -5')

    def test_boolean_is_not_a_number(self):
        self.assertError(
            'tiers: {gold: {weight: yes}}\n',
            'tiers.yaml: tiers.gold.weight: must be a number >= 0,'
            ' got True')

    def test_bad_memory_floor(self):
        self.assertError(
            'flavors: {m1: {min_memory_mb: 2G}}\n',
            "tiers.yaml: flavors.m1.min_memory_mb: must be a number >= 0, "
            "got '2G'")
        self.assertError(
            'tiers: {gold: {min_memory_mb: -1}}\n',
            'tiers.yaml: tiers.gold.min_memory_mb: must be a number >= 0, '
            'got -1')

    def test_zero_weight(self):
        self.assertError('tiers: {gold: {weight: 0}}\n',
                         'tiers.yaml: tiers.gold.weight: must be > 0, got 0')

    def test_min_above_max(self):
        self.assertError(
            'tiers: {gold: {min_iops: 500, max_iops: 400}}\n',
            'tiers.yaml: tiers.gold: min_iops (500) exceeds max_iops (400)')

    def test_override_above_tier_max(self):
        self.assertError(
            '''
            tiers: {silver: {min_iops: 40, max_iops: 400}}
            flavors: {big: {tier: silver, min_iops: 401}}
            ''',
            'tiers.yaml: flavors.big: min_iops (401) exceeds max_iops (400)')

    def test_unknown_tier(self):
        self.assertError(
            'tiers: {gold: {}}\nflavors: {m1.large: platinum}\n',
            "tiers.yaml: flavors.m1.large: unknown tier 'platinum' "
            "(known: gold)")

    def test_unknown_tier_in_override(self):
        self.assertError(
            'tiers: {}\nflavors: {m1.large: {tier: tin}}\n',
            "tiers.yaml: flavors.m1.large.tier: unknown tier 'tin' "
            "(known: none)")

    def test_unknown_default_tier(self):
        self.assertError(
            'tiers: {gold: {}}\ndefault_tier: bronze\n',
            "tiers.yaml: default_tier: unknown tier 'bronze' (known: gold)")

    def test_unknown_top_key(self):
        self.assertError(
            'tiers: {}\nflavours: {}\n',
            'tiers.yaml: flavours: unknown key (expected one of tiers, '
            'flavors, default_tier)')

    def test_unknown_guarantee_key(self):
        self.assertError(
            'tiers: {gold: {min_iosp: 3}}\n',
            'tiers.yaml: tiers.gold.min_iosp: unknown key (expected one of '
            'min_iops, min_bytes_sec, max_iops, max_bytes_sec, weight, '
            'min_memory_mb)')

    def test_tier_not_a_mapping(self):
        self.assertError('tiers: {gold: 7}\n',
                         'tiers.yaml: tiers.gold: must be a mapping, got 7')

    def test_malformed_yaml(self):
        self.assertError(
            'tiers: {gold: {min_iops: 1}\n',
            "tiers.yaml: malformed YAML at line 2 column 1: expected ',' "
            "or '}', but got '<stream end>'")

    def test_duplicate_key(self):
        self.assertError(
            'tiers: {gold: {}}\nflavors:\n  m1.a: gold\n  m1.a: gold\n',
            "tiers.yaml: malformed YAML at line 4 column 3: duplicate key "
            "'m1.a'")

    def test_empty_file(self):
        self.assertError(
            '', "tiers.yaml: empty file, expected 'tiers' and 'flavors'")
