"""From libvirt's cumulative counters to per-interval disk rates.

libvirt reports, per disk, counters that only grow while a domain runs:
requests, bytes and nanoseconds spent, for reads, writes and flushes.
:func:`snapshot` freezes the records of one ``getAllDomainStats`` call
(block, balloon and state groups) into a :class:`HostSnapshot`;
:func:`samples` turns two snapshots into
:class:`~iothrottle.controller.model.DiskSample` rates.

A disk seen for the first time only sets a baseline.  A counter that went
down (the guest restarted, or the disk was replaced) gives no sample that
interval and becomes the new baseline.  Disks and domains that vanished
are dropped.  Everything here is pure.
"""

import dataclasses
import types

from iothrottle.controller import model

# libvirt reports request times in nanoseconds.
_NS_PER_S = 1e9
# Counters of one disk, as (attribute, libvirt suffix after block.N.).
_DISK_COUNTERS = (
    ('rd_reqs', 'rd.reqs'), ('rd_bytes', 'rd.bytes'),
    ('rd_times_ns', 'rd.times'),
    ('wr_reqs', 'wr.reqs'), ('wr_bytes', 'wr.bytes'),
    ('wr_times_ns', 'wr.times'),
    ('fl_reqs', 'fl.reqs'), ('fl_times_ns', 'fl.times'),
)
# Balloon statistics kept for the ballooning feature; libvirt uses KiB.
_BALLOON_KEYS = (
    ('current_kib', 'balloon.current'), ('maximum_kib', 'balloon.maximum'),
    ('rss_kib', 'balloon.rss'), ('usable_kib', 'balloon.usable'),
    ('available_kib', 'balloon.available'),
    ('unused_kib', 'balloon.unused'),
    ('disk_caches_kib', 'balloon.disk_caches'),
    ('swap_in_kib', 'balloon.swap_in'), ('swap_out_kib', 'balloon.swap_out'),
    ('major_faults', 'balloon.major_fault'),
    ('minor_faults', 'balloon.minor_fault'),
    ('last_update_s', 'balloon.last-update'),
)


@dataclasses.dataclass(frozen=True)
class DiskCounters:
    """Cumulative counters of one disk (libvirt ``block.N.*``)."""
    device: str
    path: str = ''
    rd_reqs: int = 0
    rd_bytes: int = 0
    rd_times_ns: int = 0
    wr_reqs: int = 0
    wr_bytes: int = 0
    wr_times_ns: int = 0
    fl_reqs: int = 0
    fl_times_ns: int = 0


@dataclasses.dataclass(frozen=True)
class BalloonStats:
    """Memory balloon statistics of a domain (None: not reported)."""
    current_kib: int = None
    maximum_kib: int = None
    rss_kib: int = None
    usable_kib: int = None
    available_kib: int = None
    unused_kib: int = None
    disk_caches_kib: int = None
    swap_in_kib: int = None
    swap_out_kib: int = None
    major_faults: int = None
    minor_faults: int = None
    last_update_s: int = None


@dataclasses.dataclass(frozen=True)
class DomainCounters:
    """One domain's record: state, disk counters and balloon stats."""
    uuid: str
    name: str
    state: int = 0
    disks: tuple = ()
    balloon: BalloonStats = BalloonStats()

    def disk(self, device):
        for disk in self.disks:
            if disk.device == device:
                return disk
        return None


@dataclasses.dataclass(frozen=True)
class HostSnapshot:
    """Every domain of a host at one instant (monotonic seconds)."""
    taken_at_s: float
    domains: types.MappingProxyType = dataclasses.field(
        default_factory=lambda: types.MappingProxyType({}))

    def __post_init__(self):
        if not isinstance(self.domains, types.MappingProxyType):
            object.__setattr__(self, 'domains',
                               types.MappingProxyType(dict(self.domains)))


@dataclasses.dataclass(frozen=True)
class DiskLabel:
    """What the collector knows about a disk beyond its counters."""
    storage_domain: str
    instance_name: str = ''
    flavor: str = ''


def domain_counters(uuid, name, record):
    """Freeze one ``getAllDomainStats`` record (a dict) of one domain.

    Disks without I/O counters (an empty cdrom drive) are left out.
    """
    disks = []
    for index in range(int(record.get('block.count', 0))):
        prefix = 'block.%d.' % index
        device = record.get(prefix + 'name')
        if not device or prefix + 'rd.reqs' not in record:
            continue
        counters = {attr: int(record.get(prefix + suffix, 0))
                    for attr, suffix in _DISK_COUNTERS}
        disks.append(DiskCounters(device=device,
                                  path=record.get(prefix + 'path', ''),
                                  **counters))
    balloon = BalloonStats(**{attr: int(record[key])
                              for attr, key in _BALLOON_KEYS
                              if key in record})
    return DomainCounters(uuid=uuid, name=name,
                          state=int(record.get('state.state', 0)),
                          disks=tuple(disks), balloon=balloon)


def snapshot(taken_at_s, records):
    """A :class:`HostSnapshot` from ``(uuid, name, record)`` triples."""
    return HostSnapshot(taken_at_s, {
        uuid: domain_counters(uuid, name, record)
        for uuid, name, record in records})


def disk_rates(uuid, before, after, interval_s, label=None):
    """A DiskSample for one disk between two counter sets.

    Returns None when a counter went down (a reset: no sample).
    """
    deltas = {}
    for attr, _suffix in _DISK_COUNTERS:
        delta = getattr(after, attr) - getattr(before, attr)
        if delta < 0:
            return None
        deltas[attr] = delta
    reqs = deltas['rd_reqs'] + deltas['wr_reqs']
    busy_ns = deltas['rd_times_ns'] + deltas['wr_times_ns']
    label = label or DiskLabel(storage_domain='')
    return model.DiskSample(
        instance_uuid=uuid, device=after.device,
        storage_domain=label.storage_domain, interval_s=interval_s,
        read_iops=deltas['rd_reqs'] / interval_s,
        write_iops=deltas['wr_reqs'] / interval_s,
        read_bytes_sec=deltas['rd_bytes'] / interval_s,
        write_bytes_sec=deltas['wr_bytes'] / interval_s,
        latency_s=busy_ns / _NS_PER_S / reqs if reqs else 0.0,
        instance_name=label.instance_name, flavor=label.flavor)


def samples(before, after, labels=None):
    """DiskSamples of every disk present in both snapshots.

    ``labels`` maps ``(uuid, device)`` to a :class:`DiskLabel`; disks it
    does not know get an empty storage domain.  Returns an empty tuple if
    no time passed between the snapshots.
    """
    if before is None:
        return ()
    interval_s = after.taken_at_s - before.taken_at_s
    if interval_s <= 0:
        return ()
    labels = labels or {}
    result = []
    for uuid, domain in after.domains.items():
        old = before.domains.get(uuid)
        if old is None:
            continue
        for disk in domain.disks:
            old_disk = old.disk(disk.device)
            if old_disk is None:
                continue
            sample = disk_rates(uuid, old_disk, disk, interval_s,
                                labels.get((uuid, disk.device)))
            if sample is not None:
                result.append(sample)
    return tuple(result)
