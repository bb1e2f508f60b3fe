"""The ``static`` policy: Nova's ``quota:disk_*`` as operators use it.

The problem
-----------
Without iothrottle, an operator who wants every instance on a shared
storage domain to keep a minimum sets static limits in the flavor
(``quota:disk_total_iops_sec``, ``quota:disk_total_bytes_sec``): each
instance may use no more than its share, whatever the others do.  That
keeps floors when the capacity the operator assumed is right, and wastes
whatever an idle neighbour leaves unused.  This policy is that practice,
kept as the peer the ``guarantee`` policy must beat
(``iothrottle-bench scenarios``).

The model
---------
Loads in the unit of ``iothrottle.controller.cost`` (fraction of the
domain's device time).  With ``n`` disks on the domain, each disk ``i``
with floor load ``f_i`` (its guarantee at its own mean request size)::

    cap_i = max(f_i, min(1 / n, 1 - sum(f_j for j != i)))

its *fair share* ``1/n`` of the capacity the controller is told, but no
more than *capacity minus the others' floors* (so that, when the told
capacity is right and the floors fit, every floor is kept however the
others behave), and never below its own floor.

The control loop
----------------
None: every interval, every disk gets its cap again as a lease of
``lease_s``.  The cap depends only on the disk count, the floors, the
told capacity and each disk's request size (a disk that did no I/O is
costed at ``cost.DEFAULT_REQUEST_BYTES``), never on what anyone did.
A cap is never 0 (0 is "unlimited" to libvirt) nor below the
``[controller]`` minimum cap (``model.MinimumCap``).

Tunables (``[controller]``)
---------------------------
``lease_s``            30       lifetime of each cap, seconds (renewed
                                every interval)
``min_cap_iops``       10       least cap on each axis (see ``guarantee``)
``min_cap_bytes_sec``  1 MiB/s
"""

import dataclasses

from iothrottle.controller import cost
from iothrottle.controller import model
from iothrottle.controller import policy


@dataclasses.dataclass(frozen=True)
class StaticTunables:
    lease_s: float = 30.0
    minimum_cap: model.MinimumCap = model.MinimumCap()


def floor_load(disk, capacity):
    """The load ``disk``'s guarantee is worth at its mean request size."""
    s, g = disk.sample, disk.guarantee
    return cost.floor_load(capacity, g.min_iops, g.min_bytes_sec,
                           cost.mean_request_bytes(s.iops, s.bytes_sec))


def static_shares(floors):
    """Each disk's static share of the domain from the floor loads of
    all of them (see the module docstring)."""
    total = sum(floors)
    fair = 1.0 / len(floors) if floors else 0.0
    return [max(f, min(fair, 1.0 - (total - f))) for f in floors]


class StaticPolicy(policy.Policy):

    def __init__(self, tunables=StaticTunables()):
        self.tunables = tunables

    @classmethod
    def from_conf(cls, conf):
        return cls(StaticTunables(lease_s=conf.controller.lease_s,
                                  minimum_cap=policy.minimum_cap(conf)))

    def decide(self, view, state):
        floors = [floor_load(d, view.capacity) for d in view.disks]
        shares = static_shares(floors)
        decisions = tuple(self._cap(view, d, f, share, len(floors))
                          for d, f, share in zip(view.disks, floors, shares))
        return policy.Outcome(decisions=decisions, state=state)

    def _cap(self, view, disk, floor, share, count):
        s, g = disk.sample, disk.guarantee
        size = cost.mean_request_bytes(s.iops, s.bytes_sec)
        iops, bytes_sec = cost.cap_for_load(view.capacity, share, size)
        cap = self.tunables.minimum_cap.cap(iops, bytes_sec, g)
        return model.Decision(
            instance_uuid=s.instance_uuid, device=s.device,
            action=model.CAP,
            reason='static share %.3f of told capacity (fair share 1/%d, '
                   'own floor %.3f) -> %.1f IOPS, %.0f B/s'
                   % (share, count, floor, cap.iops, cap.bytes_sec),
            cap=cap,
            lease_s=self.tunables.lease_s)
