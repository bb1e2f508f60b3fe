"""Sharing a capacity that the claims on it exceed, as mClock shares
reservations.

When the floors in demand on a storage domain add up to more than it
delivers, no policy can keep all of them.  mClock (Gulati et al., OSDI
2010) serves reservations first; when they cannot all be met, each gets
the capacity in proportion to its reservation.  ``entitlements`` is that
rule, water-filled: a claim smaller than its proportional share gets the
claim, and what it leaves is shared again among the others.  The
``guarantee`` policy scales the floors it defends by it
(``iothrottle.controller.guarantee``), and the scenario bench scores an
overbooked interval against it (``iothrottle.bench.scenarios``).  Pure.
"""


def entitlements(claims, floors, capacity, minimums=None):
    """Each claim's share of ``capacity``.

    ``claims``: what each party asks for now (its floor, or less if it
    wants less); ``floors``: its nominal floor, the weight of its share;
    ``minimums``: the least each party is held to whatever its share (the
    minimum cap: no cap may go under it), none by default.  Claims that
    fit are returned as they are; otherwise each claim gets
    ``min(claim, max(minimum, level x floor))`` with the one ``level`` at
    which the shares add up to ``capacity`` (every party its minimum, or
    its claim if smaller, when even those do not fit).  All in one unit.

    Worked numbers: claims and floors of 60, 40 and 10 on a capacity of
    50 share at level 50/110 (27.3, 18.2, 4.5); with a minimum of 8 on
    the third, it keeps 8 and the others share 42 (25.2, 16.8).
    """
    if sum(claims) <= capacity:
        return list(claims)
    lows = [min(c, m) for c, m in zip(claims, minimums or [0.0] * len(claims))]

    def filled(level):
        return sum(min(c, max(lo, level * f))
                   for c, f, lo in zip(claims, floors, lows))

    # filled() is piecewise linear in the level, with its breaks where a
    # share leaves its minimum or reaches its claim: find the segment
    # that holds the capacity and solve on it.
    breaks = sorted({x / f for c, f, lo in zip(claims, floors, lows)
                     if f > 0 for x in (lo, c)} | {0.0})
    if filled(breaks[-1]) < capacity or filled(0.0) >= capacity:
        level = 0.0
    else:
        upper = next(b for b in breaks if filled(b) >= capacity)
        lower = max(b for b in breaks if b < upper)
        slope = sum(f for c, f, lo in zip(claims, floors, lows)
                    if f > 0 and lo / f <= lower and c / f >= upper)
        level = lower + (capacity - filled(lower)) / slope
    return [min(c, max(lo, level * f))
            for c, f, lo in zip(claims, floors, lows)]
