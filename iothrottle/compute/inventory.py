"""The advice inventory of a compute host (shell): sysfs and libvirt.

:func:`gather` reads every whole block device under ``/sys/block``
(``queue/scheduler``, ``queue/rotational``, ``queue/nr_requests``,
``device/queue_depth``, the entries of ``mq/``, ``size``) and the XML of
every running domain (``listAllDomains`` then ``XMLDesc`` of each); the
rules and the parsing are :mod:`iothrottle.compute.advice`'s.

Robust by construction: a device that disappears while it is read (a
loop device detached, a disk unplugged) or a domain that stops between
the listing and its ``XMLDesc`` is skipped with a note; a sysfs value
or XML number that is not what it should be is left unknown with a
note; a device of size 0 (an unbound loop device, an empty drive) is no
device.  Only a libvirt that cannot list its domains fails the whole
inventory (``libvirt.libvirtError``).
"""

import os
import re

import libvirt

from iothrottle.compute import advice
from iothrottle.compute import collector as collector_mod

SYS_BLOCK = '/sys/block'
# sysfs attributes are one short line; more is not an attribute.
MAX_SYSFS_CHARS = 4096
# Sizes in 512-byte sectors: 2^63 bytes is far past any device.
MAX_SECTORS = 1 << 54
_NVME_RE = re.compile(r'^nvme\d+n\d+$')
_DOMAINS_FLAGS = libvirt.VIR_CONNECT_LIST_DOMAINS_ACTIVE


def _read(path):
    """The text of sysfs file ``path``, None when it is absent (or
    vanished, or unreadable)."""
    try:
        with open(path, 'rb') as handle:
            raw = handle.read(MAX_SYSFS_CHARS + 1)
    except OSError:
        return None
    if len(raw) > MAX_SYSFS_CHARS:
        return None
    return raw.decode('ascii', errors='replace')


def _checked(notes, name, parse, text, *args):
    """``parse(text, *args)``; None (and a note) when it fails, None
    when ``text`` is None."""
    if text is None:
        return None
    try:
        return parse(text, *args)
    except ValueError as exc:
        notes.append('%s: %s' % (name, exc))
        return None


def read_device(root, name, notes):
    """The :class:`~iothrottle.compute.advice.BlockDevice` of ``name``
    under ``root``, or None: no queue (vanished, not a request-based
    device) or size 0."""
    base = os.path.join(root, name)
    real = os.path.realpath(base)
    size = _checked(notes, name, advice.parse_whole,
                    _read(os.path.join(base, 'size')), 'size', 0,
                    MAX_SECTORS)
    if not size or not os.path.isdir(os.path.join(base, 'queue')):
        return None
    scheduler, offered = None, ()
    parsed = _checked(notes, name, advice.parse_scheduler,
                      _read(os.path.join(base, 'queue', 'scheduler')))
    if parsed is not None:
        scheduler, offered = parsed
    try:
        hw_queues = sum(1 for entry in os.listdir(os.path.join(base, 'mq'))
                        if entry.isdigit()) or None
    except OSError:
        hw_queues = None
    if hw_queues is not None and hw_queues > advice.MAX_HW_QUEUES:
        notes.append('%s: %d hardware queues, not trusted'
                     % (name, hw_queues))
        hw_queues = None
    return advice.BlockDevice(
        name=name, scheduler=scheduler, schedulers=offered,
        rotational=_checked(notes, name, advice.parse_rotational,
                            _read(os.path.join(base, 'queue',
                                               'rotational'))),
        nr_requests=_checked(notes, name, advice.parse_whole,
                             _read(os.path.join(base, 'queue',
                                                'nr_requests')),
                             'nr_requests', 1, advice.MAX_NR_REQUESTS),
        queue_depth=_checked(notes, name, advice.parse_whole,
                             _read(os.path.join(base, 'device',
                                                'queue_depth')),
                             'queue_depth', 1, advice.MAX_QUEUE_DEPTH),
        hw_queues=hw_queues,
        nvme=bool(_NVME_RE.match(name)) or '/nvme/' in real,
        virtual='/devices/virtual/' in real)


def read_devices(root=SYS_BLOCK, notes=None):
    """Every whole block device under ``root`` that has one."""
    notes = notes if notes is not None else []
    try:
        names = sorted(os.listdir(root))
    except OSError as exc:
        notes.append('cannot list %s: %s' % (root, exc.strerror or exc))
        return ()
    devices = []
    for name in names:
        device = read_device(root, name, notes)
        if device is not None:
            devices.append(device)
    return tuple(devices)


def _reason(exc):
    if isinstance(exc, libvirt.libvirtError):
        return exc.get_error_message() or str(exc)
    return str(exc)


def read_instances(conn, device_of, notes):
    """The :class:`~iothrottle.compute.advice.InstanceConfig` of every
    running domain; a domain that fails is skipped with a note.
    Raises libvirtError when the domains cannot be listed."""
    found = []
    for dom in conn.listAllDomains(_DOMAINS_FLAGS):
        try:
            found.append(advice.parse_domain(dom.XMLDesc(0), device_of,
                                             notes))
        except (libvirt.libvirtError, ValueError) as exc:
            notes.append('domain %s skipped: %s'
                         % (collector_mod._safe_name(dom), _reason(exc)))
    return tuple(sorted(found, key=lambda i: i.name))


def gather(conn, host, sys_block=SYS_BLOCK,
           device_of=collector_mod.block_device_of):
    """The :class:`~iothrottle.compute.advice.Inventory` of this host."""
    notes = []
    devices = read_devices(sys_block, notes)
    instances = read_instances(conn, device_of, notes)
    return advice.Inventory(host=host, devices=devices, instances=instances,
                            errors=tuple(notes))


class Advisor:
    """``advisor()``: the advice reply of this host (the dict of
    :func:`iothrottle.rpc.wire.advice_reply`); a libvirt that cannot
    list its domains is an error reply."""

    def __init__(self, conn, host, sys_block=SYS_BLOCK,
                 device_of=collector_mod.block_device_of):
        self.conn = conn
        self.host = host
        self.sys_block = sys_block
        self.device_of = device_of

    def inventory(self):
        return gather(self.conn, self.host, self.sys_block, self.device_of)

    def __call__(self):
        from iothrottle.rpc import wire
        try:
            inventory = self.inventory()
        except libvirt.libvirtError as exc:
            return wire.advice_reply(
                self.host, error='cannot list the domains: %s'
                % _reason(exc))
        return wire.advice_reply(self.host, advice.advise(inventory),
                                 len(inventory.devices),
                                 len(inventory.instances), inventory.errors)
