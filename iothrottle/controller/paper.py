"""The ``paper`` policy: Algorithm 1 of seed 000, kept as the reference.

The problem
-----------
Many instances share one storage domain.  When one of them raises its
I/O parallelism it fills the storage queue and every neighbour slows
down: in seed 000's Fig. 1, four VMs get ~600 KB/s each until VM1 runs
10 processes, then VM1 gets ~1,750 KB/s and the others ~270 KB/s.

The model
---------
None beyond two borders.  ``b_border`` and ``i_border`` sit just under
the domain's maximum bandwidth and IOPS for the workload (seed 000 used
90 % of the measured maximum).  Here they are ``border_fraction`` times
the domain's ``max_bytes_sec`` and ``max_iops``.

The control loop (seed 000, section 3.4, Table 1)
--------------------------------------------------
Every ``cap_interval`` (the service's ``[controller] interval_s``)::

    B, I = bandwidth and IOPS of each VM over the last interval
    if sum(B) > b_border:
        cap the VM with the highest bandwidth at rate x its bandwidth
        for cap_time
    if sum(I) > i_border:
        cap the VM with the highest IOPS at rate x its IOPS for cap_time

A VM that is picked again loses its old cap and gets the new one with a
fresh timer; the compute agent's leases implement ``cap_time``, so this
module keeps no state.  Worked numbers, the testbed store of
``iothrottle-bench seed000`` (100 IOPS, 64 KB writes, border 0.9): VM1
at 70 IOPS and three neighbours at 9 IOPS sum to 97 > 90, so VM1 is
capped at 0.5 x 70 = 35 IOPS for 60 s.  If the sum still exceeds 90 at
the next interval, VM1 (now at 35) is picked again if it is still the
top consumer, and gets 17.5: a VM that stays on top is squeezed
geometrically, and one that was briefly on top (seed 000's VM2) keeps
its cap for a full ``cap_time``.  These are the weaknesses seed 000
section 5 names and that ``iothrottle.controller.guarantee`` fixes.

Tunables
--------
``[controller] border_fraction``  0.9  fraction of max_iops/max_bytes_sec
``[controller] paper_rate``       0.5  the cap as a fraction of the
                                       target's last rate (not in seed 000)
``[controller] paper_cap_time_s`` 60   lease of each cap, seconds
``[controller] interval_s``       5    cap_interval, seconds (the shell)
``[controller] min_cap_iops``     10   least cap on an axis it limits
``[controller] min_cap_bytes_sec`` 1 MiB/s  (not in seed 000: a squeezed
                                       top consumer is never set to 0,
                                       which libvirt reads as unlimited)
"""

import dataclasses

from iothrottle.controller import model
from iothrottle.controller import policy


@dataclasses.dataclass(frozen=True)
class PaperTunables:
    border_fraction: float = 0.9
    rate: float = 0.5
    cap_time_s: float = 60.0
    minimum_cap: model.MinimumCap = model.MinimumCap()


class PaperPolicy(policy.Policy):

    def __init__(self, tunables=PaperTunables()):
        self.tunables = tunables

    @classmethod
    def from_conf(cls, conf):
        c = conf.controller
        return cls(PaperTunables(border_fraction=c.border_fraction,
                                 rate=c.paper_rate,
                                 cap_time_s=c.paper_cap_time_s,
                                 minimum_cap=policy.minimum_cap(conf)))

    def saturation_border(self):
        """``border_fraction`` of either axis: the default load (the
        busier axis) at or above it."""
        return self.tunables.border_fraction

    def decide(self, view, state):
        if not view.disks:
            return policy.Outcome(decisions=(), state=state)
        t = self.tunables
        caps = {}
        reasons = {}
        axes = (('bytes_sec', view.capacity.max_bytes_sec, 'bandwidth',
                 'B/s'),
                ('iops', view.capacity.max_iops, 'IOPS', 'IOPS'))
        for attr, maximum, label, unit in axes:
            border = t.border_fraction * maximum
            total = sum(getattr(d.sample, attr) for d in view.disks)
            if total <= border:
                continue
            target = max(view.disks, key=lambda d: getattr(d.sample, attr))
            value = t.minimum_cap.axis(
                t.rate * getattr(target.sample, attr), attr)
            caps.setdefault(target.disk_id, {})[attr] = value
            reasons.setdefault(target.disk_id, []).append(
                'sum of %s %.1f %s > border %.1f; top consumer at %.1f %s '
                'capped to rate %.2f x that = %.1f %s'
                % (label, total, unit, border, getattr(target.sample, attr),
                   unit, t.rate, value, unit))
        decisions = []
        for disk in view.disks:
            if disk.disk_id not in caps:
                continue
            # The other axis keeps the cap already in force, if any: each
            # loop of Algorithm 1 only sets its own limit.
            prev = t.minimum_cap.raise_limits(
                disk.cap or model.Cap(iops=0.0, bytes_sec=0.0))
            new = caps[disk.disk_id]
            decisions.append(model.Decision(
                instance_uuid=disk.sample.instance_uuid,
                device=disk.sample.device,
                action=model.CAP,
                reason='; '.join(reasons[disk.disk_id]),
                cap=model.Cap(iops=new.get('iops', prev.iops),
                              bytes_sec=new.get('bytes_sec', prev.bytes_sec)),
                lease_s=t.cap_time_s))
        return policy.Outcome(decisions=tuple(decisions), state=state)
