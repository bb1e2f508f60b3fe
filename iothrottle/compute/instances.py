"""What a libvirt domain is, as far as I/O guarantees go.

:func:`parse_instance` reads a domain XML into an :class:`Instance`: the
Nova identity of the guest (from Nova's ``<metadata>``) and its disks, each
with the *storage domain key* that names the physical capacity it shares
with other disks, and the static ``<iotune>`` limits the XML carries
(Nova's ``quota:disk_*`` flavor extra specs end up there).

Storage domain keys:

* local file      ``local:<host>:<block device holding the file>``
* block device    ``local:<host>:<device>``
* NBD over unix   ``nbd+unix://<socket path>``
* NBD over TCP    ``nbd://<host>:<port>``
* Ceph RBD        ``rbd:<pool>`` or ``rbd:<pool>@<cluster>``
* iSCSI           ``iscsi:<target iqn>``

Resolving a local path to its block device needs the file system, so the
caller passes that in as ``device_of``; this module is pure.
"""

import dataclasses
import os.path
import xml.etree.ElementTree as ET

from iothrottle.compute import iotune as iotune_mod

NOVA_NS = 'http://openstack.org/xmlns/libvirt/nova/1.1'
_NOVA = '{%s}' % NOVA_NS
# Port an NBD server listens on when the XML gives none (IANA, 10809).
NBD_DEFAULT_PORT = 10809
# Disk devices that carry guest I/O; floppies and LUN passthrough aside,
# a cdrom with media still reads from storage.
_IO_DEVICES = ('disk', 'cdrom', 'lun')


@dataclasses.dataclass(frozen=True)
class Disk:
    """One disk of a domain and where its I/O lands."""
    device: str
    kind: str
    source: str
    storage_domain: str
    iotune: iotune_mod.IoTune = iotune_mod.IoTune()


@dataclasses.dataclass(frozen=True)
class Instance:
    """A domain with Nova's view of it.

    ``flavor`` is '' for non-Nova domains, which are still tracked: their
    I/O loads the storage too.
    """
    uuid: str
    domain_name: str
    name: str = ''
    flavor: str = ''
    project: str = ''
    disks: tuple = ()
    # libvirt's id of the running domain (None when it does not run): a
    # restart, a resize or a migration gives the same uuid a new one.
    domain_id: int = None

    @property
    def is_nova(self):
        return bool(self.flavor)

    def disk(self, device):
        """The disk with target ``device``, or None."""
        for disk in self.disks:
            if disk.device == device:
                return disk
        return None


def parse_instance(xml_text, host, device_of):
    """Parse a domain XML into an :class:`Instance`.

    ``host`` names this hypervisor in local storage domain keys;
    ``device_of(path)`` returns the name of the block device that holds
    ``path`` (a file or a device node).  Raises ``ValueError`` naming the
    domain when the XML is not a domain description.
    """
    try:
        root = ET.fromstring(xml_text)
    except ET.ParseError as exc:
        raise ValueError('domain XML is malformed: %s' % exc) from None
    if root.tag != 'domain':
        raise ValueError('domain XML: root element is <%s>, not <domain>'
                         % root.tag)
    domain_name = (root.findtext('name') or '').strip()
    uuid = (root.findtext('uuid') or '').strip()
    if not uuid:
        raise ValueError('domain XML of %r has no <uuid>' % domain_name)
    meta = root.find('metadata/%sinstance' % _NOVA)
    name = flavor = project = ''
    if meta is not None:
        name = (meta.findtext(_NOVA + 'name') or '').strip()
        flavor_el = meta.find(_NOVA + 'flavor')
        if flavor_el is not None:
            flavor = flavor_el.get('name', '')
        project = (meta.findtext('%sowner/%sproject' % (_NOVA, _NOVA))
                   or '').strip()
    disks = []
    for disk_el in root.findall('devices/disk'):
        disk = _parse_disk(disk_el, host, device_of, domain_name)
        if disk is not None:
            disks.append(disk)
    return Instance(uuid=uuid, domain_name=domain_name, name=name,
                    flavor=flavor, project=project, disks=tuple(disks),
                    domain_id=_domain_id(root.get('id')))


def _domain_id(text):
    """The running domain's id attribute as an int; None if absent."""
    try:
        number = int(text)
    except (TypeError, ValueError):
        return None
    return number if number >= 0 else None


def _parse_disk(disk_el, host, device_of, domain_name):
    """A :class:`Disk`, or None for a disk that does no storage I/O."""
    if disk_el.get('device', 'disk') not in _IO_DEVICES:
        return None
    target = disk_el.find('target')
    source = disk_el.find('source')
    if target is None or source is None or not target.get('dev'):
        # No target, or an empty cdrom drive: nothing to measure.
        return None
    device = target.get('dev')
    kind = disk_el.get('type', 'file')
    if kind == 'file':
        path = source.get('file')
        if not path:
            return None
        source_name, key = path, _local_key(host, device_of(path))
    elif kind == 'block':
        path = source.get('dev')
        if not path:
            return None
        source_name, key = path, _local_key(host, device_of(path))
    elif kind == 'network':
        protocol = source.get('protocol', '')
        kind = 'network:' + protocol
        source_name = source.get('name', '')
        key = _network_key(protocol, source)
    elif kind == 'volume':
        source_name = '%s/%s' % (source.get('pool', ''),
                                 source.get('volume', ''))
        key = 'volume:%s' % source.get('pool', '')
    else:
        source_name = ''
        key = '%s:%s/%s' % (kind, domain_name, device)
    iotune = iotune_mod.IoTune()
    iotune_el = disk_el.find('iotune')
    if iotune_el is not None:
        iotune = iotune_mod.IoTune.from_params(
            {child.tag: (child.text or '').strip() for child in iotune_el},
            owner='domain %s disk %s <iotune>' % (domain_name, device))
    return Disk(device=device, kind=kind, source=source_name,
                storage_domain=key, iotune=iotune)


def _local_key(host, device):
    return 'local:%s:%s' % (host, device)


def _network_key(protocol, source):
    hosts = source.findall('host')
    first = hosts[0] if hosts else None
    name = source.get('name', '')
    if protocol == 'nbd':
        if first is not None and first.get('transport') == 'unix':
            return 'nbd+unix://%s' % first.get('socket', '')
        host = first.get('name', '') if first is not None else ''
        port = first.get('port') if first is not None else None
        return 'nbd://%s:%s' % (host or 'localhost',
                                port or NBD_DEFAULT_PORT)
    if protocol == 'rbd':
        pool = name.split('/', 1)[0]
        cluster = _rbd_cluster(source, hosts)
        return 'rbd:%s@%s' % (pool, cluster) if cluster else 'rbd:' + pool
    if protocol == 'iscsi':
        # The name is "<target iqn>/<lun>"; every LUN of a target shares it.
        return 'iscsi:' + name.rsplit('/', 1)[0] if '/' in name else (
            'iscsi:' + name)
    host = first.get('name', '') if first is not None else ''
    return '%s://%s/%s' % (protocol, host, name)


def _rbd_cluster(source, hosts):
    """The Ceph cluster of an RBD disk, '' if the XML does not say.

    That is the name of its config file (``/etc/ceph/<cluster>.conf``) or
    else its monitors.
    """
    config = source.find('config')
    if config is not None and config.get('file'):
        return os.path.splitext(os.path.basename(config.get('file')))[0]
    # '+' joins monitors: ',' would split a [storage] domain_capacity entry.
    return '+'.join(sorted(h.get('name', '') for h in hosts
                           if h.get('name')))
