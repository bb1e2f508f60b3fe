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


def entitlements(claims, floors, capacity):
    """Each claim's share of ``capacity``.

    ``claims``: what each party asks for now (its floor, or less if it
    wants less); ``floors``: its nominal floor, the weight of its share.
    Claims that fit are returned as they are; otherwise each claim gets
    ``min(claim, level x floor)`` with the one ``level`` at which the
    shares add up to ``capacity``.  All in one unit.
    """
    if sum(claims) <= capacity:
        return list(claims)
    out = [0.0] * len(claims)
    open_ = [i for i, c in enumerate(claims) if c > 0]
    left = max(0.0, capacity)
    while open_:
        weight = sum(floors[i] for i in open_)
        level = left / weight if weight > 0 else 0.0
        settled = [i for i in open_ if claims[i] <= level * floors[i]]
        if not settled:
            for i in open_:
                out[i] = level * floors[i]
            break
        for i in settled:
            out[i] = claims[i]
            left -= claims[i]
        open_ = [i for i in open_ if i not in settled]
    return out
