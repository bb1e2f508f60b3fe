"""A remote agent steps on the wall clock's grid, as every host's does."""

import types

import testtools

from iothrottle.rpc import agent as remote_mod


class Stopper:
    """A stop event that is set once it has been waited on ``waits``
    times and waited on again."""

    def __init__(self, waits):
        self.left = waits

    def wait(self, timeout_s):
        self.left -= 1
        return self.left < 0


class TestGrid(testtools.TestCase):

    def test_the_wait_ends_on_a_multiple_of_the_interval(self):
        self.assertAlmostEqual(1.5, remote_mod.aligned_wait_s(1000.5, 2.0))
        self.assertAlmostEqual(0.25, remote_mod.aligned_wait_s(1001.75,
                                                               2.0))
        # On a grid point: the next one.
        self.assertAlmostEqual(5.0, remote_mod.aligned_wait_s(1000.0, 5.0))

    def steps(self, start_s, durations_s):
        """The wall-clock instants at which a remote agent started at
        ``start_s`` steps, each step taking the next of
        ``durations_s``, until it has stepped that many times."""
        now = [start_s]
        steps_at = []
        durations = list(durations_s)

        def step():
            steps_at.append(now[0])
            now[0] += durations.pop(0)

        remote = remote_mod.RemoteAgent(
            types.SimpleNamespace(release_all=lambda: None), None, 'h',
            5.0, wall_clock=lambda: now[0])
        remote.step = step
        stop = Stopper(waits=len(durations_s))
        record = stop.wait

        def wait(timeout_s):
            now[0] += timeout_s
            return record(timeout_s)
        stop.wait = wait
        remote.run(stop)
        return steps_at

    def test_agents_started_apart_step_at_the_same_instants(self):
        # Two hosts started 0.7 s and 3.1 s into an interval, each step
        # taking 0.4 s: both step at 1005, 1010, 1015.
        for start_s in (1000.7, 1003.1):
            got = self.steps(start_s, (0.4, 0.4, 0.4))
            self.assertEqual(3, len(got))
            for want, at in zip((1005.0, 1010.0, 1015.0), got):
                self.assertAlmostEqual(want, at, places=6)

    def test_a_step_that_overruns_skips_the_grid_points_it_missed(self):
        got = self.steps(1003.1, (0.4, 6.3, 0.4))
        for want, at in zip((1005.0, 1010.0, 1020.0), got):
            self.assertAlmostEqual(want, at, places=6)
