"""Live I/O caps through libvirt (shell).

Caps are set with ``setBlockIoTune(..., VIR_DOMAIN_AFFECT_LIVE)`` only,
never in the persistent config: the persistent config keeps the
operator's limits (Nova's ``quota:disk_*``), which are the *baseline* the
agent restores.  A transient domain has no persistent config; its
baseline is the live limits seen before the agent's first cap.

Before a cap goes live, the disk's baseline is recorded in the domain's
own metadata (:mod:`iothrottle.compute.baseline_record`), and that record
comes first whenever a baseline is read: after a live migration the
persistent config may hold the cap, the record never does.  Restoring a
disk puts its baseline back live, repairs the persistent limits if a
migration brought the cap there (the record is in the persistent config
too), and removes the disk from the record.

What to set is computed by :mod:`iothrottle.compute.iotune`; this module
only talks to libvirt.  A disk whose domain is gone raises
:class:`DiskGone`; other libvirt failures raise ``libvirt.libvirtError``.
"""

import libvirt
from oslo_log import log as logging

from iothrottle.compute import baseline_record
from iothrottle.compute import iotune as iotune_mod

LOG = logging.getLogger(__name__)

# libvirt errors that mean the domain is gone or no longer runs.
_GONE = (libvirt.VIR_ERR_NO_DOMAIN, libvirt.VIR_ERR_OPERATION_INVALID)
_LIVE = libvirt.VIR_DOMAIN_AFFECT_LIVE
_CONFIG = libvirt.VIR_DOMAIN_AFFECT_CONFIG


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
        """The operator's limits: the domain's baseline record, else the
        persistent config, else the live limits now."""
        recorded = self.recorded(uuid).get(device)
        if recorded is not None:
            return recorded
        persistent = self.persistent(uuid, device)
        if persistent is not None:
            return persistent
        return self.live(uuid, device)

    # -- the baseline record in the domain's metadata ------------------

    def recorded(self, uuid, flags=_LIVE):
        """``{device: IoTune}`` of the domain's baseline record (live, or
        persistent with ``VIR_DOMAIN_AFFECT_CONFIG``); {} if none.

        A record that does not parse is logged and read as none: the
        persistent config is then the baseline, as without a record.
        """
        dom = self._domain(uuid)
        try:
            text = dom.metadata(libvirt.VIR_DOMAIN_METADATA_ELEMENT,
                                baseline_record.NAMESPACE_URI, flags)
        except libvirt.libvirtError as exc:
            if exc.get_error_code() == libvirt.VIR_ERR_NO_DOMAIN_METADATA:
                return {}
            if _is_gone(exc):
                raise DiskGone('domain %s: %s' % (
                    uuid, exc.get_error_message() or exc)) from None
            raise
        try:
            return baseline_record.parse_record(text)
        except ValueError as exc:
            LOG.warning('domain %s: %s; ignored', uuid, exc)
            return {}

    def _write_record(self, uuid, baselines, flags):
        dom = self._domain(uuid)
        text = baseline_record.format_record(baselines) if baselines \
            else None
        self._call(uuid, '*', dom.setMetadata,
                   libvirt.VIR_DOMAIN_METADATA_ELEMENT, text,
                   baseline_record.KEY if text else None,
                   baseline_record.NAMESPACE_URI, flags)

    def record_baseline(self, uuid, device, baseline):
        """Record ``baseline`` as ``device``'s in the live domain."""
        baselines = self.recorded(uuid)
        if baselines.get(device) != baseline:
            baselines[device] = baseline
            self._write_record(uuid, baselines, _LIVE)

    def _unrecord(self, uuid, device, baseline):
        """Drop ``device`` from the record; where a migration brought the
        record (and so the cap) into the persistent config, put the
        persistent limits back to ``baseline`` first."""
        baselines = self.recorded(uuid)
        if device in baselines:
            del baselines[device]
            self._write_record(uuid, baselines, _LIVE)
        dom = self._domain(uuid)
        if not self._call(uuid, device, dom.isPersistent):
            return
        persisted = self.recorded(uuid, _CONFIG)
        if device not in persisted:
            return
        if self.persistent(uuid, device) != baseline:
            self._call(uuid, device, dom.setBlockIoTune, device,
                       baseline.as_params(), _CONFIG)
            LOG.warning('%s/%s: the persistent limits held a cap (a live '
                        'migration brings the live XML as the persistent '
                        'one); the recorded baseline is restored there',
                        uuid, device)
        del persisted[device]
        self._write_record(uuid, persisted, _CONFIG)

    # -- caps ------------------------------------------------------------

    def set_cap(self, uuid, device, cap, baseline):
        """Enforce ``cap`` live, never above ``baseline``; returns params.

        ``baseline`` is recorded in the domain first (a read, and a write
        only when the record lacks it).
        """
        params = iotune_mod.cap_params(baseline, cap)
        self.record_baseline(uuid, device, baseline)
        dom = self._domain(uuid)
        self._call(uuid, device, dom.setBlockIoTune, device, params, _LIVE)
        return params

    def in_force(self, uuid, device, cap, baseline):
        """Whether the live limits are the ones :meth:`set_cap` would
        set for ``cap`` (anyone with access to libvirt can change them:
        an operator's ``virsh blkdeviotune``, another agent)."""
        wanted = iotune_mod.IoTune.from_params(
            iotune_mod.cap_params(baseline, cap))
        return self.live(uuid, device) == wanted

    def restore(self, uuid, device, baseline):
        """Put the ``baseline`` limits back, live (and persistent where a
        migration brought the cap there), and drop the record."""
        dom = self._domain(uuid)
        self._call(uuid, device, dom.setBlockIoTune, device,
                   baseline.as_params(), _LIVE)
        self._unrecord(uuid, device, baseline)

    def reconcile(self, instances, leased):
        """Restore caps a previous run (or another host) left behind.

        A disk with no lease in ``leased`` (disk ids) whose live limits
        differ from its baseline (the record, else the persistent
        config), or which is still in the record, is restored.  Returns
        ``(restored disk ids, error messages)``; one disk's failure does
        not stop the others.  A transient domain without a record is
        skipped: nothing tells its baseline from a leftover cap.
        """
        restored, errors = [], []
        for instance in instances:
            try:
                recorded = self.recorded(instance.uuid)
            except (libvirt.libvirtError, DiskGone) as exc:
                errors.append('reconcile %s: %s' % (instance.uuid, exc))
                continue
            for disk in instance.disks:
                disk_id = '%s/%s' % (instance.uuid, disk.device)
                if disk_id in leased:
                    continue
                try:
                    baseline = recorded.get(disk.device)
                    if baseline is None:
                        baseline = self.persistent(instance.uuid,
                                                   disk.device)
                    if baseline is None:
                        continue
                    live = self.live(instance.uuid, disk.device)
                    if live != baseline or disk.device in recorded:
                        self.restore(instance.uuid, disk.device, baseline)
                    if live != baseline:
                        restored.append(disk_id)
                        LOG.info('restored the baseline limits of %s, '
                                 'left capped by a previous run or host',
                                 disk_id)
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
