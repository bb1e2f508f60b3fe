"""Floors, and balloons a guest does not honour (pure).

A balloon target is a request: the guest's virtio-balloon driver inflates
or deflates towards it, or does not (no driver, a driver that is stuck,
or a guest that cannot free the pages).  :class:`BalloonWatch` compares
``balloon.current`` with the last target each interval; a guest still
off target by more than ``TOLERANCE_MB`` after ``stuck_intervals`` is not
honouring it.  Its balloon is then left alone for a back-off of
``stuck_intervals x 2^n`` intervals (n: how many times in a row it was
found stuck, capped), and the scheduler treats its memory as fixed - so
no request is re-sent in a tight loop and no other guest is promised
memory that will not come.
"""

import dataclasses

# Balloons move in whole pages and the guest reports with some lag: a
# current within this of the target counts as on target.
TOLERANCE_MB = 4.0
# Back-off stops doubling here (2^6 x stuck_intervals intervals).
MAX_DOUBLINGS = 6


def floor_mb(max_mb, floor_fraction, override_mb=None):
    """The least memory a guest may be ballooned to, MiB: its override
    (``iothrottle:min_memory_mb``) if any, else a fraction of its flavor
    memory; never above the flavor memory."""
    if override_mb is not None:
        return min(max_mb, max(0.0, float(override_mb)))
    return max_mb * floor_fraction


@dataclasses.dataclass
class _Track:
    target_mb: float = None
    off_intervals: int = 0
    strikes: int = 0
    hold_until: int = -1


class BalloonWatch:
    """Per guest: is its balloon honoured, may we send it a target?"""

    def __init__(self, stuck_intervals=3):
        self.stuck_intervals = stuck_intervals
        self.tick = 0
        self._tracks = {}

    def observe(self, uuid, current_mb):
        """Note the guest's balloon this interval; returns True when it
        just turned out not to honour its target (log it once)."""
        track = self._tracks.setdefault(uuid, _Track())
        if track.target_mb is None or self.held(uuid):
            return False
        if abs(current_mb - track.target_mb) <= TOLERANCE_MB:
            track.off_intervals = 0
            track.strikes = 0
            return False
        track.off_intervals += 1
        if track.off_intervals < self.stuck_intervals:
            return False
        track.strikes = min(track.strikes + 1, MAX_DOUBLINGS)
        track.hold_until = self.tick + 1 + self.stuck_intervals * (
            2 ** track.strikes)
        track.off_intervals = 0
        track.target_mb = None
        return True

    def held(self, uuid):
        track = self._tracks.get(uuid)
        return track is not None and self.tick < track.hold_until

    def sent(self, uuid, target_mb):
        self._tracks.setdefault(uuid, _Track()).target_mb = target_mb

    def next_interval(self, present=()):
        self.tick += 1
        for uuid in set(self._tracks) - set(present):
            del self._tracks[uuid]
