"""Which flavors name a tier: Nova's whole flavor list, page by page."""

import fixtures
import testtools

from iothrottle import tier_use
from tests.unit.api import fixtures as api_fixtures


class CountingNova(api_fixtures.FakeNova):

    def __init__(self):
        super().__init__()
        self.markers = []

    def list(self, **kwargs):
        self.markers.append(kwargs['marker'])
        return super().list(**kwargs)


class TestFlavorsNaming(testtools.TestCase):

    def test_every_page_is_read(self):
        self.useFixture(fixtures.MockPatchObject(tier_use, 'FLAVOR_PAGE', 3))
        nova = CountingNova()
        # m1.tin is on the second page, its specs only from get_keys.
        self.assertEqual(['m1.tin (f-tin)'],
                         tier_use.flavors_naming(nova, 'tin'))
        self.assertEqual([None, 'f-plain', 'f-tin'], nova.markers)

    def test_a_tier_no_flavor_names(self):
        self.assertEqual([], tier_use.flavors_naming(api_fixtures.FakeNova(),
                                                     'silver'))
