"""The libvirt calls behind the kernel's peers (the shell around
:mod:`iothrottle.bench.peers`): a domain's BFQ weight, and an actuator
that puts the agent's caps on blk-throttle instead of QEMU.
"""

import libvirt

from iothrottle.bench import peers
from iothrottle.compute import actuator as actuator_mod

_LIVE = libvirt.VIR_DOMAIN_AFFECT_LIVE


def set_weight(conn, uuid, weight):
    """Set the domain's ``<blkiotune><weight>`` live."""
    conn.lookupByUUIDString(uuid).setBlkioParameters(
        {'weight': int(weight)}, _LIVE)


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
