"""Which conductor decides which storage domain (pure).

With ``[coordination] backend_url`` the conductors are members of one
tooz group; a consistent hash ring of the members
(:class:`tooz.hashring.HashRing`, md5 of the domain's name) gives each
storage domain exactly one owner, and a member joining or leaving moves
only about ``1/members`` of the domains.  Every conductor computes the
same ring from the same member list, so no message decides ownership.

A :class:`View` is one conductor's belief about the members, stamped
with an *epoch*: the wall-clock millisecond at which this conductor
first saw that member list, never lower than its previous epoch + 1.
Decisions carry their owner's epoch; an agent keeps, per disk, the
newest epoch it has applied and ignores older ones while that newest
owner's lease holds (:mod:`iothrottle.rpc.fence`).  A conductor that was
replaced saw its member list before the survivors saw theirs - a member
is dropped only after the backend's membership timeout, seconds, far
more than NTP's skew - so its epoch is older and its casts are ignored.

No clock and no I/O here: the shell (:mod:`iothrottle.conductor.
coordination`) reads the members and says what time it is.
"""

import dataclasses

# tooz.hashring's own default: every conductor must use the same number.
DEFAULT_PARTITIONS = 32


def _ring(members, partitions):
    """tooz's hash ring of ``members`` (imported here: tooz imports
    futurist, which imports eventlet unless
    :func:`iothrottle.rpc.threads.setup` ran first)."""
    from tooz import hashring
    return hashring.HashRing(sorted(members), partitions)


@dataclasses.dataclass(frozen=True)
class View:
    """``me`` among ``members`` (member ids, str) since ``epoch`` (ms).

    ``members`` empty means the member list is not known (the backend
    unreachable, or not read yet): the view owns nothing.
    """
    me: str
    members: frozenset
    epoch: int
    partitions: int = DEFAULT_PARTITIONS

    def __post_init__(self):
        ring = (_ring(self.members, self.partitions) if self.members
                else None)
        object.__setattr__(self, '_ring', ring)
        object.__setattr__(self, '_owners', {})

    def owner_of(self, domain):
        """The member that decides ``domain``, or None (no members)."""
        if self._ring is None:
            return None
        owner = self._owners.get(domain)
        if owner is None:
            owner = next(iter(self._ring.get_nodes(domain.encode('utf-8'))))
            self._owners[domain] = owner
        return owner

    def owns(self, domain):
        return self.me in self.members and self.owner_of(domain) == self.me


def next_view(previous, me, members, now_ms, partitions):
    """The view after reading ``members`` at ``now_ms``: ``previous``
    itself when the member list did not change, else a new view with an
    epoch above every earlier one of this conductor."""
    members = frozenset(members)
    if previous is not None and previous.members == members:
        return previous
    epoch = int(now_ms)
    if previous is not None:
        epoch = max(epoch, previous.epoch + 1)
    return View(me=me, members=members, epoch=epoch, partitions=partitions)


def gained(old, new, domains):
    """The domains of ``domains`` that ``new`` owns and ``old`` did not
    (their policy state, from an earlier spell of ownership, is stale)."""
    return sorted(domain for domain in domains
                  if new.owns(domain) and (old is None
                                           or not old.owns(domain)))


def host_key(host):
    """The ring key of compute host ``host``: what only one conductor
    casts for a host (its memory floors) goes by the owner of this key
    (a prefix no storage domain key has)."""
    return 'host:%s' % host
