"""Per-interval disk samples of every domain on this host (libvirt shell).

One ``getAllDomainStats`` call per interval covers the whole host, however
many domains run: libvirt gathers the counters in one round trip.  Each
domain's XML (who it is, where its disks live) is fetched once and cached;
it is fetched again when the domain restarts (its id changes) or its disk
set changes (hotplug).  A domain that fails (it vanished mid-collection)
is logged once and skipped; the others are still collected.  A check
within an interval (:meth:`Collector.check`, the agent's ``[controller]
idle_check_s``) is one more such call for the disk counters only, its
samples over the span since the last check; it leaves the interval's
own samples whole.

The counter math lives in :mod:`iothrottle.compute.stats`, the XML
parsing in :mod:`iothrottle.compute.instances`.
"""

import dataclasses
import os
import socket
import stat
import time
import types

import libvirt
from oslo_log import log as logging

from iothrottle.compute import instances as instances_mod
from iothrottle.compute import stats

LOG = logging.getLogger(__name__)

# Disk counters, balloon statistics and run state: all the agent reads.
STATS_GROUPS = (libvirt.VIR_DOMAIN_STATS_BLOCK
                | libvirt.VIR_DOMAIN_STATS_BALLOON
                | libvirt.VIR_DOMAIN_STATS_STATE)
# A check within an interval reads disk counters only: the balloon
# group costs libvirt a query of each guest's balloon driver.
CHECK_GROUPS = libvirt.VIR_DOMAIN_STATS_BLOCK
# Shut-off domains do no I/O; asking for them only costs time.
STATS_FLAGS = libvirt.VIR_CONNECT_GET_ALL_DOMAINS_STATS_ACTIVE
# Key part of a file that /sys/dev/block is not told about (tmpfs, ...).
UNRESOLVED = 'unresolved'


def block_device_of(path):
    """Name of the whole block device holding ``path`` (file or node).

    A partition resolves to its disk (partitions of one disk share its
    capacity).  Returns ``'<major>:<minor>'`` for a file system with no
    block device (tmpfs, overlay) and ``'unresolved'`` when ``path``
    cannot be examined.
    """
    try:
        info = os.stat(path)
    except OSError:
        return UNRESOLVED
    is_block = stat.S_ISBLK(info.st_mode)
    number = info.st_rdev if is_block else info.st_dev
    major, minor = os.major(number), os.minor(number)
    sys_path = '/sys/dev/block/%d:%d' % (major, minor)
    real = os.path.realpath(sys_path)
    if not os.path.exists(real):
        return '%d:%d' % (major, minor)
    if os.path.exists(os.path.join(real, 'partition')):
        real = os.path.dirname(real)
    return os.path.basename(real)


@dataclasses.dataclass(frozen=True)
class Collection:
    """What one collection found."""
    taken_at_s: float
    samples: tuple
    instances: types.MappingProxyType
    snapshot: stats.HostSnapshot
    errors: tuple = ()
    duration_s: float = 0.0
    # True when the host itself could not be read (libvirtd down or
    # restarting): the collection then says nothing of which domains
    # run, only that none could be seen.
    unreadable: bool = False


class Collector:
    """Collects samples from one libvirt connection."""

    def __init__(self, conn, host=None, device_of=block_device_of,
                 clock=time.monotonic):
        self.conn = conn
        self.host = host or socket.gethostname()
        self.device_of = device_of
        self.clock = clock
        self._previous = None
        # The snapshot the last collection or check ended on: where the
        # next check's samples start (collect() moves both).
        self._checked = None
        # uuid -> (domain id, disk names in the stats, Instance)
        self._xml_cache = {}
        self._logged = set()

    def collect(self):
        """Sample every running domain; never raises for one domain."""
        collection = self._gather(self._previous)
        if not collection.unreadable:
            self._previous = self._checked = collection.snapshot
        return collection

    def check(self):
        """:meth:`collect` within an interval: samples over the span
        since the last collection or check, which the next
        :meth:`collect` still measures from the last collection (a
        check moves no interval's start)."""
        collection = self._gather(self._checked or self._previous,
                                  CHECK_GROUPS)
        if not collection.unreadable:
            self._checked = collection.snapshot
        return collection

    def _gather(self, previous, groups=STATS_GROUPS):
        """One round trip for the stats ``groups``: the Collection of
        every running domain, its samples measured from ``previous``."""
        started = self.clock()
        errors = []
        try:
            records = self.conn.getAllDomainStats(groups, STATS_FLAGS)
        except libvirt.libvirtError as exc:
            message = 'cannot read domain statistics: %s' % _reason(exc)
            self._log_once('host', message)
            taken = self.clock()
            return Collection(taken, (), types.MappingProxyType({}),
                              stats.HostSnapshot(taken), (message,),
                              taken - started, unreadable=True)
        # libvirt reads the domains one after another during the call;
        # its midpoint is the best single time for all their counters
        # (the end would bias every rate when a busy QEMU answers late).
        taken = (started + self.clock()) / 2
        self._logged.discard('host')
        triples, found = [], {}
        for dom, record in records:
            try:
                uuid = dom.UUIDString()
                found[uuid] = self._instance(dom, uuid, record)
                triples.append((uuid, dom.name(), record))
                self._logged.discard(uuid)
            except (libvirt.libvirtError, ValueError) as exc:
                message = 'domain %s skipped: %s' % (
                    _safe_name(dom), _reason(exc))
                errors.append(message)
                self._log_once(_safe_uuid(dom), message)
        for uuid in set(self._xml_cache) - set(found):
            del self._xml_cache[uuid]
        snapshot = stats.snapshot(taken, triples)
        labels = {
            (uuid, disk.device): stats.DiskLabel(
                storage_domain=disk.storage_domain,
                instance_name=instance.name or instance.domain_name,
                flavor=instance.flavor)
            for uuid, instance in found.items() for disk in instance.disks}
        samples = tuple(
            sample for sample in stats.samples(previous, snapshot, labels)
            if (sample.instance_uuid, sample.device) in labels)
        return Collection(taken, samples, types.MappingProxyType(found),
                          snapshot, tuple(errors), self.clock() - started)

    def _instance(self, dom, uuid, record):
        """The domain's Instance, from the cache unless it may be stale."""
        dom_id = dom.ID()
        devices = frozenset(
            record.get('block.%d.name' % index)
            for index in range(int(record.get('block.count', 0))))
        cached = self._xml_cache.get(uuid)
        if cached is not None and cached[:2] == (dom_id, devices):
            return cached[2]
        instance = instances_mod.parse_instance(
            dom.XMLDesc(0), self.host, self.device_of)
        self._xml_cache[uuid] = (dom_id, devices, instance)
        return instance

    def _log_once(self, key, message):
        if key not in self._logged:
            self._logged.add(key)
            LOG.warning('%s', message)


def _reason(exc):
    if isinstance(exc, libvirt.libvirtError):
        return exc.get_error_message() or str(exc)
    return str(exc)


def _safe_uuid(dom):
    try:
        return dom.UUIDString()
    except libvirt.libvirtError:
        return repr(dom)


def _safe_name(dom):
    try:
        return dom.name()
    except libvirt.libvirtError:
        return _safe_uuid(dom)
