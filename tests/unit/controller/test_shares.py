import testtools

from iothrottle.controller import shares


class TestEntitlements(testtools.TestCase):

    def test_claims_that_fit_are_kept(self):
        self.assertEqual([3, 4], shares.entitlements([3, 4], [3, 4], 10))

    def test_overbooked_claims_share_in_proportion_to_floors(self):
        # Floors 60 and 40 of 50: shares 30 and 20.
        self.assertEqual([30, 20], shares.entitlements([60, 40], [60, 40], 50))

    def test_a_claim_below_its_share_keeps_it_and_the_rest_is_shared(self):
        out = shares.entitlements([5, 60, 60], [40, 60, 60], 65)
        self.assertEqual(5, out[0])
        self.assertAlmostEqual(30, out[1])
        self.assertAlmostEqual(30, out[2])
        self.assertAlmostEqual(65, sum(out))

    def test_nothing_to_share_gives_nothing(self):
        self.assertEqual([0.0, 0.0], shares.entitlements([5, 5], [5, 5], 0))
        self.assertEqual([0.0, 0.0],
                         shares.entitlements([5, 5], [5, 5], -3))

    def test_a_share_under_its_minimum_keeps_the_minimum(self):
        # The docstring's numbers: 60, 40 and 10 on 50; the third is
        # held to at least 8 (a minimum cap), the others share 42.
        plain = shares.entitlements([60, 40, 10], [60, 40, 10], 50)
        self.assertAlmostEqual(50 * 10 / 110, plain[2])
        out = shares.entitlements([60, 40, 10], [60, 40, 10], 50,
                                  minimums=[8, 8, 8])
        self.assertAlmostEqual(25.2, out[0])
        self.assertAlmostEqual(16.8, out[1])
        self.assertAlmostEqual(8, out[2])
        self.assertAlmostEqual(50, sum(out))

    def test_a_minimum_never_exceeds_the_claim(self):
        out = shares.entitlements([60, 40, 3], [60, 40, 10], 50,
                                  minimums=[8, 8, 8])
        self.assertEqual(3, out[2])
        self.assertAlmostEqual(50, sum(out))

    def test_minimums_that_do_not_fit_are_all_that_is_given(self):
        self.assertEqual([8, 8], shares.entitlements(
            [60, 40], [60, 40], 10, minimums=[8, 8]))

    def test_shares_add_up_to_the_capacity(self):
        claims, floors = [5, 17, 33, 2, 40], [9, 17, 40, 2, 40]
        for capacity in (10, 30, 60, 90):
            out = shares.entitlements(claims, floors, capacity,
                                      minimums=[4] * 5)
            self.assertAlmostEqual(max(capacity, sum(min(c, 4)
                                                     for c in claims)),
                                   sum(out))
            for c, o in zip(claims, out):
                self.assertLessEqual(o, c + 1e-12)
                self.assertGreaterEqual(o, min(c, 4) - 1e-12)
