"""The operator's limits of a domain's disks, kept in the domain itself.

Before its first cap on a disk the agent records the disk's *baseline*
(the limits to restore when the cap ends) in the domain's own libvirt
metadata, under iothrottle's namespace::

    <metadata>
      <iothrottle:baseline
          xmlns:iothrottle="http://openstack.org/xmlns/iothrottle/1">
        <iothrottle:disk dev="vda" total_iops_sec="500" .../>
      </iothrottle:baseline>
    </metadata>

Why there: the record must travel with whatever carries the cap.  Nova
live-migrates with the source's *live* XML as the destination's
persistent XML, so a cap in force arrives there as the persistent
``<iotune>``, the place the baseline used to be read from: read there, it
would become a permanent cap.  The live metadata travels in that same
XML, so the destination reads the operator's limits from the record and
restores them (live and, as the cap arrived there, persistent).

The record is written live only (``VIR_DOMAIN_AFFECT_LIVE``), and is
removed when the disk's cap ends: it exists exactly while a cap may be in
force.  A restart or a resize starts a new QEMU process from the
persistent XML, which Nova writes from the flavor without the record
(and which never holds a cap on the host that set it): nothing stale
outlives the cap, and a persistent record exists only where a migration
brought one.

This module is pure: it formats and parses the record; the actuator
(:mod:`iothrottle.compute.actuator`) reads and writes it.
"""

import re
from xml.etree import ElementTree as ET

from iothrottle.compute import iotune as iotune_mod

# iothrottle's XML namespace in a domain's <metadata> (the Nova driver
# uses http://openstack.org/xmlns/libvirt/nova/1.1 for its own).
NAMESPACE_URI = 'http://openstack.org/xmlns/iothrottle/1'
# The namespace prefix libvirt writes for it.
KEY = 'iothrottle'
# Disk target names as libvirt accepts them (vda, sdb, hdc, xvda ...).
_DEVICE = re.compile(r'^[a-z][a-z0-9]{0,31}$')


def format_record(baselines):
    """The metadata element for ``{device: IoTune}`` (no namespace:
    libvirt adds it)."""
    root = ET.Element('baseline')
    for device in sorted(baselines):
        attrs = {'dev': _device(device)}
        attrs.update((key, str(value)) for key, value
                     in baselines[device].as_params().items())
        ET.SubElement(root, 'disk', attrs)
    return ET.tostring(root, encoding='unicode')


def parse_record(xml_text):
    """``{device: IoTune}`` from a metadata element; raises ValueError
    with a one-line reason when it is not a baseline record."""
    try:
        root = ET.fromstring(xml_text)
    except (ET.ParseError, TypeError) as exc:
        raise ValueError('iothrottle baseline record is malformed: %s'
                         % exc) from None
    if _local(root.tag) != 'baseline':
        raise ValueError('iothrottle baseline record: root is <%s>, not '
                         '<baseline>' % _local(root.tag))
    baselines = {}
    for element in root:
        if _local(element.tag) != 'disk':
            continue
        device = _device(element.get('dev'))
        params = {_local(key): value for key, value in element.items()}
        baselines[device] = iotune_mod.IoTune.from_params(
            params, owner='baseline record of %s' % device)
    return baselines


def _device(name):
    if not isinstance(name, str) or not _DEVICE.match(name):
        raise ValueError('iothrottle baseline record: bad disk name %r'
                         % (name if not isinstance(name, str)
                            else name[:40]))
    return name


def _local(tag):
    """An XML name without its ``{namespace}``."""
    return tag.rsplit('}', 1)[-1]
