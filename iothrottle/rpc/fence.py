"""An agent ignores decisions of a deposed conductor (pure).

With several conductors (``[coordination] backend_url``) each decision
carries its owner (the conductor's member id) and that owner's epoch
(:mod:`iothrottle.conductor.ownership`).  Per disk the agent remembers
the newest epoch it applied and until when that record holds: the lease
the decision granted, at least ``hold_s``.  While it holds, a decision
with an older epoch comes from a conductor that has been replaced (it
has not noticed yet, or its casts were queued) and is ignored; so two
conductors never take turns capping one disk.  Once the record lapses
(its owner went quiet, as when the operator goes back to one conductor
without coordination, whose epoch is 0) any decision is taken again.
"""

import dataclasses


@dataclasses.dataclass(frozen=True)
class Record:
    owner: str
    epoch: int
    until_s: float


@dataclasses.dataclass(frozen=True)
class Verdict:
    """``admitted``; ``previous`` is the Record it replaced when the
    owner changed (to log a handover), else None."""
    admitted: bool
    previous: Record = None


class Fence:
    """See the module docstring.  The caller says what time it is."""

    def __init__(self):
        self._records = {}   # disk_id -> Record

    def admit(self, disk_id, owner, epoch, now_s, hold_s):
        """Whether a decision on ``disk_id`` from ``owner`` at ``epoch``
        is applied; if so it becomes the disk's record for ``hold_s``."""
        record = self._records.get(disk_id)
        if record is not None and now_s < record.until_s \
                and epoch < record.epoch:
            return Verdict(False)
        self._records[disk_id] = Record(owner, epoch, now_s + hold_s)
        handover = record is not None and record.owner != owner
        return Verdict(True, record if handover else None)

    def record(self, disk_id):
        return self._records.get(disk_id)

    def keep(self, disk_ids):
        """Forget the disks not in ``disk_ids`` (gone from the host): the
        table holds at most the agent's own disks."""
        self._records = {disk_id: record
                         for disk_id, record in self._records.items()
                         if disk_id in disk_ids}
