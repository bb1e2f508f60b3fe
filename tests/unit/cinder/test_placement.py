"""The pure placement core of the Cinder weigher and filter."""

import os.path

from hypothesis import given
from hypothesis import strategies as st
import testtools

from iothrottle.cinder import placement
from iothrottle.controller import model as controller_model
from iothrottle import extra_specs
from iothrottle.seekmodel import model
from iothrottle.seekmodel import profile

PROFILES = os.path.join(os.path.dirname(__file__), '..', '..', '..', 'etc',
                        'iothrottle', 'profiles')
HDD = profile.load(os.path.join(PROFILES, 'wd1600js.json'))
FLASH = profile.load(os.path.join(PROFILES, 'nvme-seed002.json'))
GIB = placement.GIB
GOLD = controller_model.Guarantee(min_iops=25, min_bytes_sec=1e5,
                                  tier='gold')


def two_volumes(min_iops=25):
    return (placement.Volume('v1', 20 * GIB, min_iops=min_iops),
            placement.Volume('v2', 20 * GIB, min_iops=min_iops))


NEW = placement.Volume('new', 20 * GIB, min_iops=25)


class TestWorkedExample(testtools.TestCase):
    """The numbers of the module essay and doc/seekmodel.rst."""

    def test_pool_a_interleaving_breaks_the_promises(self):
        a = placement.assess(placement.PoolState(
            'c1@hdd#a', HDD, two_volumes(), 'mq-deadline'), NEW)
        self.assertAlmostEqual(28.63, a.after.l_ave_bytes / 1e9, places=2)
        self.assertEqual(0.0, a.after.alpha)
        self.assertAlmostEqual(68.0, a.after.iops, places=1)
        self.assertAlmostEqual(71.2, a.before.iops, places=1)
        self.assertEqual(75.0, a.promised_iops)
        self.assertAlmostEqual(-0.10, a.headroom_fraction, places=2)
        self.assertFalse(a.passes)
        self.assertEqual(
            'pool c1@hdd#a with volume new (3 volume(s)): predicted 68.0 '
            'IOPS, 278338 B/s (now 71.2 IOPS); promised 75.0 IOPS, 0 B/s; '
            'headroom -0.10 < 0.00', a.reason)

    def test_pool_b_same_volumes_under_bfq_fit(self):
        b = placement.assess(placement.PoolState(
            'c1@hdd#b', HDD, two_volumes(), 'bfq'), NEW)
        self.assertAlmostEqual(10.92, b.after.l_ave_bytes / 1e9, places=2)
        self.assertEqual(0.99, b.after.alpha)
        self.assertAlmostEqual(90.4, b.after.iops, places=1)
        self.assertAlmostEqual(0.17, b.headroom_fraction, places=2)
        self.assertTrue(b.passes)

    def test_pool_c_empty(self):
        c = placement.assess(placement.PoolState(
            'c2@hdd#c', HDD, (), 'mq-deadline'), NEW)
        self.assertEqual(0.0, c.before.iops)
        self.assertAlmostEqual(90.7, c.after.iops, places=1)
        self.assertAlmostEqual(0.72, c.headroom_fraction, places=2)
        self.assertEqual(c.headroom_fraction, c.weight)


class TestHeadroom(testtools.TestCase):

    def test_nothing_promised_is_full_headroom(self):
        self.assertEqual(1.0, placement.headroom_fraction(50.0, 0.0))
        self.assertEqual(1.0, placement.headroom_fraction(0.0, 0.0))

    def test_by_hand_and_clamped(self):
        self.assertEqual(0.25, placement.headroom_fraction(100.0, 75.0))
        self.assertEqual(-1.0, placement.headroom_fraction(100.0, 500.0))
        self.assertEqual(-1.0, placement.headroom_fraction(0.0, 1.0))

    def test_tighter_axis_counts(self):
        state = placement.PoolState('c@h#p', HDD, (), 'bfq')
        # ~90.7 IOPS = 371,662 B/s for one 20 GiB volume.
        need = placement.Volume('n', 20 * GIB, min_iops=10,
                                min_bytes_sec=300000)
        a = placement.assess(state, need)
        self.assertAlmostEqual((371662.2 - 300000) / 371662.2,
                               a.headroom_fraction, places=4)

    def test_threshold(self):
        state = placement.PoolState('c@h#p', HDD, two_volumes(), 'bfq')
        self.assertTrue(placement.assess(state, NEW, 0.17).passes)
        self.assertFalse(placement.assess(state, NEW, 0.18).passes)
        exc = self.assertRaises(ValueError, placement.assess, state, NEW,
                                1.5)
        self.assertEqual('min_headroom_fraction: must be in [-1, 1], got 1.5',
                         str(exc))

    def test_a_volume_without_guarantee_still_takes_its_share(self):
        state = placement.PoolState('c@h#p', HDD, two_volumes(),
                                    'mq-deadline')
        free = placement.Volume('free', 20 * GIB)
        a = placement.assess(state, free)
        self.assertEqual(50.0, a.promised_iops)
        self.assertLess(a.after.iops, a.before.iops)

    def test_flash_depth_and_idle_volumes(self):
        state = placement.PoolState('c@ssd#p', FLASH, (
            placement.Volume('busy', GIB, outstanding_requests=15),
            placement.Volume('idle', GIB, outstanding_requests=0)))
        a = placement.assess(state, placement.Volume('n', GIB,
                                                     min_iops=1000))
        # Depth 16: seed 002's 438k read IOPS, the idle volume left out.
        self.assertEqual(438000.0, a.after.iops)
        self.assertEqual(2, len(a.after.stream_shares))
        self.assertIsNone(a.after.alpha)

    def test_recorded_offsets_are_kept(self):
        far = (placement.Volume('v1', 20 * GIB, offset_bytes=0),
               placement.Volume('v2', 20 * GIB, offset_bytes=100 * GIB))
        streams = placement.streams(far + (NEW,), 4096)
        self.assertEqual([0, 100 * GIB, 120 * GIB],
                         [s.offset_bytes for s in streams])
        self.assertEqual(['v1', 'v2', 'new'], [s.name for s in streams])


class TestBadInput(testtools.TestCase):

    def test_volume_fields_named(self):
        for fields, message in (
                ({'size_bytes': -1}, "volume 'v': size_bytes must be a "
                                     "finite number >= 0, got -1"),
                ({'size_bytes': 1, 'min_iops': 'x'},
                 "volume 'v': min_iops must be a number, got 'x'"),
                ({'size_bytes': 1, 'offset_bytes': -5},
                 "volume 'v': offset_bytes must be a finite number >= 0, "
                 "got -5"),
                ({'size_bytes': 1, 'read_fraction': 2},
                 "volume 'v': read_fraction must be a finite number >= 0 "
                 "and <= 1, got 2"),
                ({'size_bytes': float('nan')},
                 "volume 'v': size_bytes must be a finite number >= 0, "
                 "got nan")):
            exc = self.assertRaises(ValueError, placement.Volume, 'v',
                                    **fields)
            self.assertEqual(message, str(exc))
        exc = self.assertRaises(ValueError, placement.Volume, '', 1)
        self.assertEqual("volume: volume_id must be a non-empty string, "
                         "got ''", str(exc))

    def test_pool_state_fields_named(self):
        exc = self.assertRaises(ValueError, placement.PoolState,
                                'c@h#p', {'kind': 'hdd'})
        self.assertIn("pool 'c@h#p': profile must be", str(exc))
        exc = self.assertRaises(ValueError, placement.PoolState,
                                'c@h#p', HDD, (), 'cfq')
        self.assertIn("pool 'c@h#p': scheduler: unknown scheduler 'cfq'",
                      str(exc))
        exc = self.assertRaises(ValueError, placement.PoolState,
                                'c@h#p', HDD, ('v1',))
        self.assertIn('volumes must be Volume objects', str(exc))
        for name in ('c', 'c@h', 'c#p', 'c@h#p q', '@h#p', None):
            self.assertRaises(ValueError, placement.check_pool_name, name)
        self.assertEqual('cinder-1.example@lvm-1#pool_a',
                         placement.check_pool_name(
                             'cinder-1.example@lvm-1#pool_a'))


class TestVolumeFromRequest(testtools.TestCase):

    def properties(self, extra=None, qos=None, size=20, volume_id='vol-1'):
        return {'size': size, 'qos_specs': qos,
                'volume_type': {'name': 't', 'extra_specs': extra or {}},
                'request_spec': {'volume_id': volume_id}}

    def test_extra_specs_tier_and_qos(self):
        tiers = {'gold': GOLD}
        v = placement.volume_from_request(self.properties(
            {'iothrottle:tier': 'gold', 'capabilities:x': 'y'}), tiers)
        self.assertEqual(placement.Volume('vol-1', 20 * GIB, min_iops=25,
                                          min_bytes_sec=1e5), v)
        v = placement.volume_from_request(self.properties(
            {'iothrottle:min_iops': '40'},
            qos={'iothrottle:min_iops': '10',
                 'iothrottle:min_bytes_sec': '5e5',
                 'total_iops_sec': '500'}), tiers)
        # Extra specs win over QoS specs; both contribute.
        self.assertEqual((40.0, 5e5), (v.min_iops, v.min_bytes_sec))

    def test_no_iothrottle_keys_is_no_guarantee(self):
        v = placement.volume_from_request(
            {'size': 1, 'volume_type': None, 'qos_specs': None}, {})
        self.assertEqual(placement.Volume(placement.NEW_VOLUME_ID, GIB), v)

    def test_bad_requests_name_the_culprit(self):
        exc = self.assertRaises(
            extra_specs.ExtraSpecError, placement.volume_from_request,
            self.properties({'iothrottle:tier': 'platinum'}), {'gold': GOLD})
        self.assertEqual("iothrottle:tier: unknown tier 'platinum' (known: "
                         "gold)", str(exc))
        exc = self.assertRaises(
            ValueError, placement.volume_from_request,
            self.properties(qos={'iothrottle:min_iops': '-3'}), {})
        self.assertEqual("iothrottle:min_iops: must be a number >= 0, got "
                         "'-3'", str(exc))
        exc = self.assertRaises(ValueError, placement.volume_from_request,
                                self.properties(size=None), {})
        self.assertEqual('size: must be a number of GiB, got None', str(exc))
        exc = self.assertRaises(ValueError, placement.volume_from_request,
                                self.properties(qos=['x']), {})
        self.assertEqual('qos_specs: must be a mapping, got list', str(exc))


volumes_st = st.lists(st.builds(
    placement.Volume,
    volume_id=st.text('abcdef', min_size=1, max_size=6),
    size_bytes=st.floats(1 * GIB, 100 * GIB),
    min_iops=st.floats(0, 100),
    min_bytes_sec=st.floats(0, 1e6),
    outstanding_requests=st.sampled_from([0.0, 1.0, 4.0])), max_size=6)
states_st = st.builds(placement.PoolState, pool=st.just('c@h#p'),
                      profile=st.sampled_from([HDD, FLASH]),
                      volumes=volumes_st,
                      scheduler=st.sampled_from([None, 'bfq', 'none']))


class TestProperties(testtools.TestCase):

    @given(states_st, st.floats(1 * GIB, 100 * GIB), st.floats(0, 200),
           st.floats(0, 200))
    def test_more_guarantee_never_more_headroom(self, state, size, low,
                                                extra):
        small = placement.assess(state, placement.Volume('n', size,
                                                         min_iops=low))
        big = placement.assess(state, placement.Volume(
            'n', size, min_iops=low + extra))
        self.assertLessEqual(big.headroom_fraction,
                             small.headroom_fraction + 1e-12)
        for a in (small, big):
            self.assertTrue(placement.MIN_WEIGHT <= a.headroom_fraction
                            <= placement.MAX_WEIGHT)
            self.assertEqual(a.passes, a.headroom_fraction >= 0)

    @given(states_st, st.floats(1 * GIB, 100 * GIB))
    def test_passes_means_every_promise_kept(self, state, size):
        a = placement.assess(state, placement.Volume('n', size, min_iops=5))
        if a.passes:
            self.assertGreaterEqual(a.after.iops, a.promised_iops)
            self.assertGreaterEqual(a.after.bandwidth_bytes_sec,
                                    a.promised_bytes_sec)
        else:
            self.assertTrue(a.after.iops < a.promised_iops
                            or a.after.bandwidth_bytes_sec
                            < a.promised_bytes_sec)

    @given(volumes_st)
    def test_layout_never_overlaps_unrecorded_volumes(self, volumes):
        streams = placement.streams(volumes, 4096)
        for k in range(1, len(streams)):
            self.assertGreaterEqual(streams[k].offset_bytes,
                                    max(s.end_bytes for s in streams[:k]))
        self.assertTrue(all(isinstance(s, model.Stream) for s in streams))
