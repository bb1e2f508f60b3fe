"""Live I/O caps through libvirt (shell).

Caps are set with ``setBlockIoTune(..., VIR_DOMAIN_AFFECT_LIVE)`` only,
never in the persistent config: the persistent config keeps the
operator's limits (Nova's ``quota:disk_*``), which are the *baseline* the
agent restores.  A transient domain has no persistent config; its
baseline is the live limits seen before the agent's first cap.

What to set is computed by :mod:`iothrottle.compute.iotune`; this module
only talks to libvirt.  A disk whose domain is gone raises
:class:`DiskGone`; other libvirt failures raise ``libvirt.libvirtError``.
"""

import libvirt
from oslo_log import log as logging

from iothrottle.compute import iotune as iotune_mod

LOG = logging.getLogger(__name__)

# libvirt errors that mean the domain is gone or no longer runs.
_GONE = (libvirt.VIR_ERR_NO_DOMAIN, libvirt.VIR_ERR_OPERATION_INVALID)


class DiskGone(LookupError):
    """The domain (or the disk) no longer exists or no longer runs."""


class Actuator:
    """Reads and sets the I/O limits of disks on one libvirt connection."""

    def __init__(self, conn):
        self.conn = conn

    def _domain(self, uuid):
        try:
            return self.conn.lookupByUUIDString(uuid)
        except libvirt.libvirtError as exc:
            if exc.get_error_code() == libvirt.VIR_ERR_NO_DOMAIN:
                raise DiskGone('domain %s: %s' % (
                    uuid, exc.get_error_message() or exc)) from None
            raise

    def _call(self, uuid, device, func, *args):
        try:
            return func(*args)
        except libvirt.libvirtError as exc:
            if _is_gone(exc):
                raise DiskGone('disk %s/%s: %s' % (
                    uuid, device, exc.get_error_message() or exc)) from None
            raise

    def live(self, uuid, device):
        """The limits in force now."""
        dom = self._domain(uuid)
        return iotune_mod.IoTune.from_params(self._call(
            uuid, device, dom.blockIoTune, device,
            libvirt.VIR_DOMAIN_AFFECT_LIVE))

    def persistent(self, uuid, device):
        """The limits of the persistent config; None if transient."""
        dom = self._domain(uuid)
        if not self._call(uuid, device, dom.isPersistent):
            return None
        return iotune_mod.IoTune.from_params(self._call(
            uuid, device, dom.blockIoTune, device,
            libvirt.VIR_DOMAIN_AFFECT_CONFIG))

    def baseline(self, uuid, device):
        """The operator's limits: persistent config, else live now."""
        persistent = self.persistent(uuid, device)
        if persistent is not None:
            return persistent
        return self.live(uuid, device)

    def set_cap(self, uuid, device, cap, baseline):
        """Enforce ``cap`` live, never above ``baseline``; returns params."""
        params = iotune_mod.cap_params(baseline, cap)
        dom = self._domain(uuid)
        self._call(uuid, device, dom.setBlockIoTune, device, params,
                   libvirt.VIR_DOMAIN_AFFECT_LIVE)
        return params

    def restore(self, uuid, device, baseline):
        """Put the ``baseline`` limits back, live."""
        dom = self._domain(uuid)
        self._call(uuid, device, dom.setBlockIoTune, device,
                   baseline.as_params(), libvirt.VIR_DOMAIN_AFFECT_LIVE)

    def reconcile(self, instances, leased):
        """Restore caps a previous run of the agent left behind.

        A live limit that differs from the persistent one on a disk with
        no lease in ``leased`` (disk ids) is ours from a previous run.
        Returns ``(restored disk ids, error messages)``; one disk's
        failure does not stop the others.  Transient domains are skipped:
        nothing tells their baseline from a leftover cap.
        """
        restored, errors = [], []
        for instance in instances:
            for disk in instance.disks:
                disk_id = '%s/%s' % (instance.uuid, disk.device)
                if disk_id in leased:
                    continue
                try:
                    baseline = self.persistent(instance.uuid, disk.device)
                    if baseline is None:
                        continue
                    live = self.live(instance.uuid, disk.device)
                    if live != baseline:
                        self.restore(instance.uuid, disk.device, baseline)
                        restored.append(disk_id)
                        LOG.info('restored the baseline limits of %s, '
                                 'left capped by a previous run', disk_id)
                except (libvirt.libvirtError, DiskGone) as exc:
                    errors.append('reconcile %s: %s' % (disk_id, exc))
        return restored, errors


def _is_gone(exc):
    code = exc.get_error_code()
    # A missing disk is VIR_ERR_INVALID_ARG "disk 'vdb' was not found",
    # the same code as a bad parameter: only the message tells them apart.
    return code in _GONE or (code == libvirt.VIR_ERR_INVALID_ARG
                             and 'not found' in (exc.get_error_message()
                                                 or ''))
