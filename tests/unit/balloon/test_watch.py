import testtools

from iothrottle.balloon import watch


class TestFloor(testtools.TestCase):

    def test_fraction_of_flavor_memory_by_default(self):
        self.assertEqual(128.0, watch.floor_mb(512.0, 0.25))

    def test_override_wins_but_never_exceeds_flavor_memory(self):
        self.assertEqual(300.0, watch.floor_mb(512.0, 0.25, 300))
        self.assertEqual(512.0, watch.floor_mb(512.0, 0.25, 4096))
        self.assertEqual(0.0, watch.floor_mb(512.0, 0.25, -5))


class TestBalloonWatch(testtools.TestCase):

    def run_intervals(self, w, current, n):
        stuck = []
        for _ in range(n):
            stuck.append(w.observe('vm', current))
            w.next_interval(['vm'])
        return stuck

    def test_honoured_target_is_never_stuck(self):
        w = watch.BalloonWatch(stuck_intervals=3)
        w.sent('vm', 200.0)
        self.assertEqual([False] * 10, self.run_intervals(w, 198.0, 10))
        self.assertFalse(w.held('vm'))

    def test_ignored_target_backs_off_and_doubles(self):
        w = watch.BalloonWatch(stuck_intervals=3)
        w.sent('vm', 200.0)
        self.assertEqual([False, False, True],
                         self.run_intervals(w, 300.0, 3))
        # Held for 3 x 2 intervals: no target may be sent meanwhile.
        held = []
        for _ in range(6):
            held.append(w.held('vm'))
            self.assertFalse(w.observe('vm', 300.0))
            w.next_interval(['vm'])
        self.assertEqual([True] * 6, held)
        self.assertFalse(w.held('vm'))
        w.sent('vm', 200.0)
        self.assertEqual([False, False, True],
                         self.run_intervals(w, 300.0, 3))
        held = 0
        while w.held('vm'):
            held += 1
            w.next_interval(['vm'])
        self.assertEqual(12, held)

    def test_gone_guests_are_forgotten(self):
        w = watch.BalloonWatch()
        w.sent('vm', 1.0)
        w.next_interval([])
        self.assertEqual({}, w._tracks)
