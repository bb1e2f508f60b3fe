"""Property tests: any Cinder notification is recorded or dropped in one
line, never raised.

Arbitrary payloads (nested structures, wrong types, nan, huge numbers,
long strings) under every event type the conductor follows, and under
others: ``from_notification`` returns a Placed, a Gone or None, or
raises a one-line ValueError; ``Follower.notified`` never raises.
"""

import math

import fixtures
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
import testtools

from iothrottle.cinder import placement
from iothrottle.conductor import volumes

SPECIAL = (float('nan'), float('inf'), -1, 0, 1e300, 10 ** 400, True, None,
           '', 'x' * 300, 'cinder@lvm#a', 'cinder@lvm', '20')

scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(),
                    st.text(max_size=12), st.sampled_from(SPECIAL))
anything = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=3),
                            st.dictionaries(st.text(max_size=8), inner,
                                            max_size=3)),
    max_leaves=8)
payloads = st.one_of(
    anything,
    st.fixed_dictionaries(
        {}, optional={'volume_id': anything, 'host': anything,
                      'size': anything, 'volume_type': anything,
                      'status': anything}))
events = st.sampled_from(sorted(volumes.PLACING_EVENTS
                                | volumes.LEAVING_EVENTS)
                         + ['volume.create.start', 'snapshot.create.end'])


class RecordingFollower(volumes.Follower):
    """A Follower whose database is a list of what it was asked to do."""

    def __init__(self):
        super().__init__(engine=None, types=volumes.Types(None, dict, 60))
        self.done = []

    def _place(self, placed):
        self.done.append(placed)

    def _forget(self, volume_id):
        self.done.append(volume_id)


class TestNotificationFuzz(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.useFixture(fixtures.FakeLogger())

    @settings(max_examples=400, deadline=None)
    @given(events, payloads)
    def test_a_payload_is_read_or_refused_in_one_line(self, event, body):
        try:
            what = volumes.from_notification(event, body)
        except ValueError as exc:
            self.assertNotIn('\n', str(exc))
            self.assertIn(event, str(exc))
            return
        if isinstance(what, volumes.Placed):
            placement.check_pool_name(what.pool)
            self.assertTrue(math.isfinite(what.size_gib))
            self.assertGreater(what.size_gib, 0)
            self.assertEqual(what.volume_id, body['volume_id'])
        elif isinstance(what, volumes.Gone):
            self.assertIn(event, volumes.LEAVING_EVENTS)
        else:
            self.assertIsNone(what)

    @settings(max_examples=200, deadline=None)
    @given(events, payloads)
    def test_the_follower_never_raises(self, event, body):
        follower = RecordingFollower()
        follower.notified(event, body)
        self.assertLessEqual(len(follower.done), 1)
