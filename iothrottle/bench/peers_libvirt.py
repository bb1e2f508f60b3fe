"""The libvirt calls behind the kernel's peers (the shell around
:mod:`iothrottle.bench.peers`): the guests' BFQ weights with the
scheduler tuned for them, and an actuator that puts the agent's caps on
blk-throttle instead of QEMU.
"""

import contextlib

import libvirt

from iothrottle.bench import peers
from iothrottle.compute import actuator as actuator_mod

_LIVE = libvirt.VIR_DOMAIN_AFFECT_LIVE


def set_weight(conn, uuid, weight):
    """Set the domain's ``<blkiotune><weight>`` live."""
    conn.lookupByUUIDString(uuid).setBlkioParameters(
        {'weight': int(weight)}, _LIVE)


@contextlib.contextmanager
def bfq_weighted(conn, tb, floors, out):
    """While in the block: the testbed's queue under BFQ at
    ``peers.BFQ_TUNABLES`` and each guest of ``floors`` ({name: floor})
    at its weight (``peers.bfq_weights``); the scheduler the testbed had
    and the default weights after (a switch back resets BFQ's
    tunables)."""
    names = list(floors)
    weights = dict(zip(names, peers.bfq_weights([floors[n] for n in names])))
    layer = tb.blocklayer
    before = layer.current_scheduler()
    out.write('bfq weights: %s; %s\n' % (
        ', '.join('%s %d' % kv for kv in weights.items()),
        ', '.join('%s %s' % kv for kv in peers.BFQ_TUNABLES.items())))
    try:
        layer.set_scheduler(peers.WEIGHT_SCHEDULER)
        for name, value in peers.BFQ_TUNABLES.items():
            layer.set_iosched(name, value)
        for name, weight in weights.items():
            set_weight(conn, tb.instance_uuid(name), weight)
        yield weights
    finally:
        for name in names:
            set_weight(conn, tb.instance_uuid(name), peers.DEFAULT_WEIGHT)
        layer.set_scheduler(before)


class BlkThrottleActuator(actuator_mod.Actuator):
    """The agent's actuator with the caps put on blk-throttle (the
    domain's ``<blkiotune><device>`` limits on the whole disk ``node``)
    instead of QEMU's throttle groups; everything else as the parent."""

    def __init__(self, conn, node):
        super().__init__(conn)
        self.node = node

    def _blkio(self, uuid, device, params):
        dom = self._domain(uuid)
        self._call(uuid, device, dom.setBlkioParameters, params, _LIVE)

    def set_cap(self, uuid, device, cap, baseline):
        params = peers.throttle_params(self.node, cap)
        self._blkio(uuid, device, params)
        return params

    def in_force(self, uuid, device, cap, baseline):
        dom = self._domain(uuid)
        live = self._call(uuid, device, dom.blkioParameters, _LIVE)
        wanted = peers.throttle_params(self.node, cap)
        return all(peers.device_limit(live.get(p, ''), self.node)
                   == peers.device_limit(wanted[p], self.node)
                   for p in wanted)

    def restore(self, uuid, device, baseline):
        """Lift the limits (the baseline is QEMU's, never touched)."""
        self._blkio(uuid, device, {p: '%s,0' % self.node
                                   for p, _ in peers.THROTTLE_PARAMS})
