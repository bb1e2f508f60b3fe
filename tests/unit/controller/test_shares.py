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
