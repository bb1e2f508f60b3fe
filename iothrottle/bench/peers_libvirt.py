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


def lift_throttle(conn, node, uuids):
    """Lift every blk-throttle limit of the domains ``uuids`` on the
    whole disk ``node``."""
    for uuid in uuids:
        conn.lookupByUUIDString(uuid).setBlkioParameters(
            peers.lifted_params(node), _LIVE)


@contextlib.contextmanager
def throttle_lifted(conn, tb):
    """While in the block: the blk-throttle arm; before and after it, no
    blk-throttle limit on any guest of ``tb``.

    The agent cannot be relied on to leave none: its drain steps, after
    the loads stop and every lease was released, decide again (the
    static policy caps every disk every interval), and no later agent
    sees a blk-throttle limit to lift it (the QEMU actuator reconciles
    only QEMU's own caps).  Left, plan 3's caps held the next plan's
    arms: a 256 KB guest got 1536 KB/s, its previous 24 IOPS cap at 64
    KB, under ``none`` (2026-11-24).
    """
    node = tb.blocklayer.disk_node
    uuids = [tb.instance_uuid(name) for name in tb.guests]
    lift_throttle(conn, node, uuids)
    try:
        yield
    finally:
        lift_throttle(conn, node, uuids)


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
        self._blkio(uuid, device, peers.lifted_params(self.node))
