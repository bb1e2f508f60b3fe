from hypothesis import given
from hypothesis import strategies as st
import testtools

from iothrottle.balloon import cams
from iothrottle.balloon import model


def guest(name, current, util=None, usable=200.0, floor=128.0, max_mb=512.0,
          rate=0.0):
    return model.GuestMemory(
        instance_uuid=name, name=name, current_mb=current, max_mb=max_mb,
        floor_mb=floor, usable_mb=usable, utilization=util, read_rate=rate,
        source=model.SOURCE_GUEST_AGENT if util is not None
        else model.SOURCE_HOST_ESTIMATE)


def targets(policy, guests):
    return {t.instance_uuid: t.target_mb for t in policy.decide(guests)}


class TestCams(testtools.TestCase):

    def test_worked_numbers_of_the_essay(self):
        t = targets(cams.CamsPolicy(), [guest('vm1', 384, 0.60),
                                        guest('vm2', 384, 0.05)])
        self.assertEqual({'vm1': 400.0, 'vm2': 368.0}, t)

    def test_converges_to_flavor_memory_and_stops(self):
        guests = [guest('vm1', 384, 0.60), guest('vm2', 384, 0.05)]
        policy = cams.CamsPolicy()
        for _ in range(20):
            t = targets(policy, guests)
            guests = [guest(g.name, t[g.name], g.utilization)
                      for g in guests]
        self.assertEqual(512.0, t['vm1'])
        self.assertEqual(256.0, t['vm2'])

    def test_even_ratios_move_nothing(self):
        t = targets(cams.CamsPolicy(), [guest('vm1', 384, 0.50),
                                        guest('vm2', 384, 0.46)])
        self.assertEqual({'vm1': 384.0, 'vm2': 384.0}, t)

    def test_never_below_what_a_guest_uses(self):
        # vm2 uses all but 40 MiB: it can give 8 MiB (margin 32).
        t = targets(cams.CamsPolicy(), [guest('vm1', 384, 0.9),
                                        guest('vm2', 384, 0.01,
                                              usable=40)])
        self.assertEqual(376.0, t['vm2'])

    def test_guest_under_pressure_gets_memory_first(self):
        # vm2 has only 10 MiB usable: its lower bound is 384 - 10 + 32.
        t = targets(cams.CamsPolicy(), [guest('vm1', 384, 0.01),
                                        guest('vm2', 384, 0.9, usable=10)])
        self.assertEqual(384 + 22 + 16, t['vm2'])

    def test_a_liar_cannot_take_memory_below_a_floor(self):
        t = targets(cams.CamsPolicy(), [guest('liar', 256, 1.0),
                                        guest('vm2', 128, 0.0, usable=128,
                                              floor=128)])
        self.assertEqual({'liar': 256.0, 'vm2': 128.0}, t)

    def test_unreported_guests_are_left_alone(self):
        t = targets(cams.CamsPolicy(), [guest('vm1', 384, 0.9),
                                        guest('vm2', 384, None),
                                        guest('vm3', 384, 0.1)])
        self.assertEqual({'vm1': 400.0, 'vm2': 384.0, 'vm3': 368.0}, t)


class TestProportional(testtools.TestCase):

    def test_memory_follows_read_rate(self):
        t = targets(cams.ProportionalPolicy(cams.BalloonTunables(
            max_step_mb=1024)), [guest('vm1', 384, rate=10),
                                 guest('vm2', 384, rate=30, usable=300)])
        # 768 MiB split 1:3 = 192 / 576, but vm2 may hold at most 512.
        self.assertEqual({'vm1': 256.0, 'vm2': 512.0}, t)

    def test_step_is_bounded(self):
        t = targets(cams.ProportionalPolicy(), [guest('vm1', 384, rate=10),
                                                guest('vm2', 384, rate=30)])
        self.assertEqual({'vm1': 320.0, 'vm2': 448.0}, t)


class TestNone(testtools.TestCase):

    def test_nothing_moves(self):
        t = targets(cams.NoBalloonPolicy(), [guest('vm1', 384, 0.9),
                                             guest('vm2', 300, 0.0,
                                                   usable=0)])
        self.assertEqual({'vm1': 384.0, 'vm2': 300.0}, t)


guests_strategy = st.lists(
    st.tuples(st.floats(128, 512), st.one_of(st.none(), st.floats(0, 1)),
              st.floats(0, 512), st.floats(0, 100)),
    min_size=1, max_size=5)


class TestSafetyProperties(testtools.TestCase):

    @given(guests_strategy,
           st.sampled_from([cams.CamsPolicy, cams.ProportionalPolicy]))
    def test_total_kept_bounds_respected(self, rows, policy_cls):
        guests = [guest('vm%d' % i, cur, util, usable=min(usable, cur),
                        rate=rate)
                  for i, (cur, util, usable, rate) in enumerate(rows)]
        tunables = cams.BalloonTunables()
        t = targets(policy_cls(tunables), guests)
        self.assertAlmostEqual(sum(g.current_mb for g in guests),
                               sum(t.values()), places=6)
        for g in guests:
            new = t[g.instance_uuid]
            self.assertLessEqual(abs(new - g.current_mb),
                                 tunables.max_step_mb + 1e-6)
            self.assertLessEqual(new, max(g.max_mb, g.current_mb) + 1e-6)
            if new < g.current_mb:   # only a guest with slack gives
                self.assertGreaterEqual(
                    new, cams.low_mb(g, tunables.margin_mb) - 1e-6)


class TestModel(testtools.TestCase):

    def test_ratio_above_one_is_rejected_naming_the_guest(self):
        exc = self.assertRaises(ValueError, guest, 'vm9', 256, 1.5)
        self.assertIn('vm9', str(exc))
        self.assertIn('utilization', str(exc))

    def test_negative_and_nan_sizes_are_rejected(self):
        self.assertRaises(ValueError, guest, 'vm1', -1)
        self.assertRaises(ValueError, guest, 'vm1', float('nan'))

    def test_floor_above_flavor_memory_is_rejected(self):
        exc = self.assertRaises(ValueError, guest, 'vm1', 256, floor=600)
        self.assertIn('floor_mb', str(exc))
