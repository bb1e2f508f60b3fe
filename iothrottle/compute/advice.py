"""Seed 002 as advice: what a compute host's block devices and its guests'
disk configuration say about their I/O (pure).

``iothrottle-compute --advise`` and ``openstack iothrottle host advise
HOST`` print what :func:`advise` finds in an :class:`Inventory`: the
host's block devices as sysfs shows them (active and offered I/O
scheduler, rotational, ``nr_requests``, the device's own queue depth,
its hardware queues, NVMe or not) and each running domain's disks as its
libvirt XML says (disk type and bus, the driver's ``cache``, ``io``,
``iothread``, ``queues`` and ``discard``, the domain's vCPUs, iothreads
and their pinning, its SCSI controllers).  The shell that reads them is
:mod:`iothrottle.compute.inventory`; this module reads no file and opens
no connection, so every rule runs on fixtures.

What is checked, and where each rule comes from.  Seed 002 (Mizuno and
Imada: NVMe SSDs under KVM, virtio-blk, fio 4 KB random O_DIRECT) is the
source of most rules; the host scheduler on a rotational disk is seed
001's.  A finding carries the seed, the section and the effect the seed
*reports* (numbers from ``SEEDS.md``, the paper's testbed, not ours);
``measured`` stays None: none of these effects has been measured on
iothrottle's testbed yet, and no output says otherwise.  A few rules
come from no seed (QEMU's own guidance); their ``seed`` is None and
they say so.

Host block devices:

* ``nvme-scheduler`` (warning): an NVMe device behind an I/O scheduler.
  Seed 002 section 2.1: NVMe's strength is many queues (a submission
  and completion pair per core, up to 65,536); section 4.1: bare metal
  reached ~438k read and ~90k write IOPS of the SSD's 450k/75k rating
  on Linux 4.2.3, whose NVMe path had no scheduler at all (blk-mq
  schedulers came in 4.11): the seed's figures are ``none``'s.  BFQ
  kept on purpose for ``<blkiotune>`` weights is the one exception the
  recommendation names.
* ``rotational-scheduler``: a rotational disk under ``none`` or
  ``kyber`` (warning) or ``mq-deadline`` (info) while ``bfq`` is
  offered.  Seed 001 section 3: the host scheduler ranked CFQ > AS >
  Deadline > NOOP for consolidated guests; section 4: NOOP switches
  between VM images most (long seeks); section 5: a longer CFQ slice
  gained +20 % (Xen) and +30 % (VMware Server).  BFQ is CFQ's
  successor.  A device that offers no other scheduler (device mapper,
  md: the choice is their members') is left alone.
* ``queue-depth`` (warning): a non-rotational device whose own queue
  depth is 1 (NCQ off): seed 002 section 2.1 (deep parallel queues are
  what an SSD's rating needs) and section 4.1 (16 concurrent fio
  processes to reach ~438k read IOPS).
* ``nr-requests`` (info): the block layer holds fewer requests
  (``nr_requests``) than the device takes (its queue depth): the same
  sections.
* ``spread-devices`` (info): two or more guest disks on one physical
  device while another device of the same kind (NVMe, SSD, HDD) holds
  none.  Seed 002 section 4.2 and tuning guideline (b): block devices
  spread over 2 SSDs gave ~689k read IOPS (1.57x) and ~247k write
  (2.75x).  Only when that other device is free: the host cannot tell
  (it may hold the root file system), so the finding asks.

Guests' disks (disks and LUNs only; read-only ones skip the cache and
discard rules):

* ``cache-mode``: ``cache`` unset (QEMU's default, writeback),
  ``writeback`` or ``writethrough`` (warning), ``unsafe`` (error: a host
  crash loses what the guest was told is written).  Seed 002 section
  3.2: every figure was measured with O_DIRECT, no page cache between
  the application and the SSD; a host page cache shared by all guests
  is also seed 004's cache pollution across VMs.  The seed has no
  figure for a cached configuration.
* ``io-mode`` (no seed): a file or block disk with an O_DIRECT cache
  mode and ``io`` unset or ``threads`` (info: ``native`` or
  ``io_uring`` submit without QEMU's thread pool), or ``io='native'``
  without O_DIRECT (warning: QEMU refuses it, or older QEMU falls back
  to threads).
* ``iothreads-missing`` (warning): a virtio-blk disk of a guest with 2
  or more vCPUs and no iothread at all.  Seed 002 section 4.3, and
  configuration guideline Fig. 9 (e), tuning guideline Fig. 10 (c, f):
  16 fio in one VM got 0.21x bare metal on reads (~92k IOPS) and 0.93x
  on writes; with iothreads ~342k and ~89k, as 16 one-fio VMs.  A
  1-vCPU guest is the seed's "1 fio/VM" case (0.79x reads, 1.0x writes
  without iothreads): no finding.
* ``iothread-unused`` (warning): the domain has iothreads but this
  virtio-blk disk is on none of them (the same section and figures).
* ``iothread-unpinned`` (info): vCPUs pinned, an iothread not: it floats
  over the pinned cores.  Seed 002 section 6 (Kim et al.: CPU affinity
  and vCPU-dedicated I/O threads improve I/O); the seed gives no figure.
* ``emulated-bus`` (warning): a disk on ``ide``, ``sata``, ``usb``,
  ``sd`` or ``fdc``, or on ``scsi`` behind a controller that is not
  virtio-scsi: no iothread, no multi-queue.  Seed 002 Table 1 and
  section 5.1 (Table 3, configuration 4): the iothread fix (~92k ->
  ~342k read IOPS) is virtio-blk's.
* ``virtio-scsi-iothread`` (info): a disk on a virtio-scsi controller
  without an iothread, guest of 2 or more vCPUs.  The seed measured
  iothreads with virtio-blk only and says they do not apply to
  virtio-scsi (Table 3); libvirt now takes ``<driver iothread='N'/>`` on
  the controller.
* ``virtio-blk-queues`` (info): ``queues`` set below the vCPU count.
  Seed 002 section 2.1 (virtio-blk multi-queue, ref. [8]) and section
  4.3, the seed's "multi-queue" option (~92k -> ~342k read IOPS).
* ``discard`` (info, no seed): a writable file or block disk without
  ``discard='unmap'``: the guest's TRIM never reaches the device.

Not checked, because an inventory cannot know them: whether a VM may
own its SSD (seed 002 Fig. 9 (d), 10 (a): passthrough equals bare
metal), whether an application scales out (Fig. 9 (a)); nor the tuning
guideline's run-time signs (device busy, %usr against %sys, Fig. 10
(d, e, g)), which need load, not configuration.

Domain XML is untrusted input (a guest cannot write it, but anything
with libvirt access can): :func:`parse_xml` refuses a DOCTYPE or an
entity declaration (libvirt never writes either; this is what
defusedxml refuses) and documents larger than ``MAX_XML_CHARS``; every
number read from XML or sysfs is checked to be a whole number in its
range, and a value that is not is left unknown (None) with a note in
``Inventory.errors`` rather than trusted.
"""

import dataclasses
import re
import xml.etree.ElementTree as ET
import xml.parsers.expat

ERROR = 'error'
WARNING = 'warning'
INFO = 'info'
# Most severe first: the order findings are printed in.
SEVERITIES = (ERROR, WARNING, INFO)

NOVA_NS = 'http://openstack.org/xmlns/libvirt/nova/1.1'
# A Nova domain XML is a few KB; 4 MiB is beyond any real one and small
# enough to parse without a second thought.
MAX_XML_CHARS = 4 * 1024 * 1024
# libvirt accepts at most 16,384 vCPUs (QEMU far fewer): more is a lie.
MAX_VCPUS = 16384
# blk-mq caps nr_requests per hardware queue far below this; a larger
# number in sysfs is not a number we trust.
MAX_NR_REQUESTS = 1 << 20
# NVMe queues hold up to 65,536 entries (seed 002 section 2.1), SCSI
# devices far fewer.
MAX_QUEUE_DEPTH = 1 << 16
# NVMe allows 65,535 I/O queues; blk-mq maps at most one per CPU.
MAX_HW_QUEUES = 1 << 16
# libvirt's iothread ids are positive ints; a domain with more than a
# few hundred is a misconfiguration, tens of thousands a lie.
MAX_IOTHREADS = 1 << 16
# Scheduler names the kernel offers: short lowercase words.
_SCHEDULER_RE = re.compile(r'^[a-z0-9_-]{1,32}$')
# Buses with no iothread and no multi-queue (emulated controllers).
EMULATED_BUSES = ('ide', 'sata', 'usb', 'sd', 'fdc')
# Cache modes that open the image with O_DIRECT (no host page cache).
DIRECT_CACHE_MODES = ('none', 'directsync')
# io modes that submit without QEMU's thread pool.
ASYNC_IO_MODES = ('native', 'io_uring')
VIRTIO_SCSI = 'virtio-scsi'


@dataclasses.dataclass(frozen=True)
class Citation:
    """Where a rule comes from: ``seed`` ('002'; None: no seed),
    ``section`` of its paper and the ``effect`` it reports."""
    seed: str
    section: str
    effect: str


NOT_MEASURED_HERE = None

CITATIONS = {
    'nvme-scheduler': Citation(
        '002', '2.1, 3.2, 4.1',
        'bare metal reached ~438k read / ~90k write IOPS (4 KB random) of '
        "the SSD's 450k/75k rating on Linux 4.2.3, whose NVMe path had no "
        'I/O scheduler: the seed\'s figures are figures of "none"'),
    'rotational-scheduler': Citation(
        '001', '3, 4, 5',
        'host scheduler ranking for consolidated guests CFQ > AS > '
        'Deadline > NOOP; NOOP switches between VM images most; a longer '
        'CFQ slice gained +20 % (Xen) and +30 % (VMware Server); BFQ is '
        "CFQ's successor"),
    'queue-depth': Citation(
        '002', '2.1, 4.1',
        "an SSD's rating needs many requests in flight: 16 concurrent fio "
        'processes reached ~438k read IOPS on bare metal'),
    'nr-requests': Citation(
        '002', '2.1, 4.1',
        "an SSD's rating needs many requests in flight: 16 concurrent fio "
        'processes reached ~438k read IOPS on bare metal'),
    'spread-devices': Citation(
        '002', '4.2, Fig. 10 (b)',
        'block devices spread over 2 SSDs: ~689k read IOPS (1.57x), '
        '~247k write IOPS (2.75x)'),
    'cache-mode': Citation(
        '002', '3.2',
        'every figure was measured with O_DIRECT (no page cache); the '
        'seed has none for a cached configuration, and a host page cache '
        "shared by guests is seed 004's cache pollution across VMs"),
    'io-mode': Citation(
        None, None, "QEMU's guidance: aio=native or io_uring submit "
        "without QEMU's thread pool and need cache.direct=on; no seed "
        'figure'),
    'iothreads-missing': Citation(
        '002', '4.3, Fig. 9 (e), Fig. 10 (c, f)',
        '16 fio in one VM: reads 0.21x bare metal (~92k IOPS), writes '
        '0.93x; with iothreads ~342k read / ~89k write IOPS, like 16 '
        'one-fio VMs'),
    'iothread-unused': Citation(
        '002', '4.3, Fig. 10 (f)',
        '16 fio in one VM: reads 0.21x bare metal (~92k IOPS); with '
        'iothreads ~342k read IOPS'),
    'iothread-unpinned': Citation(
        '002', '6',
        'related work (Kim et al.): CPU affinity and vCPU-dedicated I/O '
        'threads improve virtualized I/O; the seed gives no figure'),
    'emulated-bus': Citation(
        '002', 'Table 1, 5.1 (Table 3), Fig. 9 (e)',
        'iothreads, the fix for several applications in one VM (~92k -> '
        '~342k read IOPS), exist for virtio-blk only in the seed'),
    'virtio-scsi-iothread': Citation(
        '002', '5.1 (Table 3)',
        'the seed measured iothreads with virtio-blk only (~92k -> ~342k '
        'read IOPS) and says they do not apply to virtio-scsi'),
    'virtio-blk-queues': Citation(
        '002', '2.1, 4.3',
        "virtio-blk's multi-queue option: 16 fio in one VM went from "
        '~92k to ~342k read IOPS'),
    'discard': Citation(
        None, None, "without it the guest's TRIM never reaches the "
        'device; no seed figure'),
}


@dataclasses.dataclass(frozen=True)
class BlockDevice:
    """One whole block device of the host, as sysfs shows it; None:
    unknown (the file is absent, or held no number we trust)."""
    name: str
    scheduler: str = None        # active; None: bio-based, no file
    schedulers: tuple = ()       # offered
    rotational: bool = None
    nr_requests: int = None
    queue_depth: int = None      # the device's own (SCSI/SATA)
    hw_queues: int = None        # entries of mq/
    nvme: bool = False
    virtual: bool = False        # loop, zram, dm, md: no hardware


@dataclasses.dataclass(frozen=True)
class DiskConfig:
    """One disk of a domain; None: not set in the XML."""
    target: str
    bus: str = None
    disk_type: str = None        # file, block, network, volume
    device: str = 'disk'         # disk, cdrom, lun, floppy
    cache: str = None
    io: str = None
    iothread: int = None
    queues: int = None
    discard: str = None
    read_only: bool = False
    source: str = ''
    controller: int = 0          # SCSI controller index (bus scsi)
    host_device: str = None      # the host block device holding it


@dataclasses.dataclass(frozen=True)
class Controller:
    """A SCSI controller of a domain."""
    index: int
    model: str = None
    iothread: int = None


@dataclasses.dataclass(frozen=True)
class InstanceConfig:
    """A running domain's I/O configuration."""
    uuid: str
    name: str
    vcpus: int = None
    iothreads: tuple = ()        # iothread ids
    pinned_iothreads: frozenset = frozenset()
    vcpus_pinned: bool = False
    disks: tuple = ()
    controllers: tuple = ()

    def controller(self, index):
        for controller in self.controllers:
            if controller.index == index:
                return controller
        return None


@dataclasses.dataclass(frozen=True)
class Inventory:
    """What the shell found on one host; ``errors`` say what it had to
    skip (a device or domain that vanished, a value not trusted)."""
    host: str
    devices: tuple = ()
    instances: tuple = ()
    errors: tuple = ()


@dataclasses.dataclass(frozen=True)
class Finding:
    """One piece of advice.  ``subject`` is a device name or
    ``<instance>/<disk target>``; ``measured`` is what this project
    measured of the effect on its testbed (None: nothing yet, the
    effect is the seed's)."""
    severity: str
    subject: str
    rule: str
    finding: str
    recommendation: str
    seed: str
    section: str
    effect: str
    measured: str = NOT_MEASURED_HERE


FINDING_FIELDS = tuple(f.name for f in dataclasses.fields(Finding))


def _finding(severity, subject, rule, finding, recommendation):
    citation = CITATIONS[rule]
    return Finding(severity, subject, rule, finding, recommendation,
                   citation.seed, citation.section, citation.effect)


# ---------------------------------------------------------------------------
# Reading: sysfs text and domain XML into the inventory's records.

def parse_whole(text, name, minimum, maximum):
    """``text`` (a sysfs or XML value) as an int in [minimum, maximum];
    ValueError naming ``name`` otherwise."""
    value = text.strip() if isinstance(text, str) else text
    if not (isinstance(value, str) and value.isascii()
            and value.isdigit() and len(value) <= 12):
        raise ValueError('%s: not a whole number: %r' % (name, str(text)[:40]))
    number = int(value)
    if not minimum <= number <= maximum:
        raise ValueError('%s: %d out of [%d, %d]' % (name, number, minimum,
                                                     maximum))
    return number


def parse_scheduler(text):
    """``(active, offered)`` of ``queue/scheduler`` text such as
    ``none [mq-deadline] kyber bfq``; a single unbracketed name is the
    active one.  ValueError for anything else."""
    words = text.split()
    if not words or len(words) > 16:
        raise ValueError('scheduler: unreadable %r' % text[:80])
    offered, active = [], None
    for word in words:
        bracketed = word.startswith('[') and word.endswith(']')
        name = word[1:-1] if bracketed else word
        if not _SCHEDULER_RE.match(name):
            raise ValueError('scheduler: unreadable %r' % text[:80])
        if bracketed:
            if active is not None:
                raise ValueError('scheduler: two active in %r' % text[:80])
            active = name
        offered.append(name)
    if active is None:
        if len(offered) != 1:
            raise ValueError('scheduler: none active in %r' % text[:80])
        active = offered[0]
    return active, tuple(offered)


def parse_rotational(text):
    value = text.strip()
    if value not in ('0', '1'):
        raise ValueError('rotational: not 0 or 1: %r' % text[:40])
    return value == '1'


def _refuse_declaration(*_args):
    raise ValueError('domain XML with a DOCTYPE or entity declaration '
                     'refused (libvirt writes neither)')


def parse_xml(text):
    """The root Element of ``text``, parsed safely: no DOCTYPE, no
    entity declarations, at most MAX_XML_CHARS; ValueError otherwise."""
    if not isinstance(text, str):
        raise ValueError('domain XML must be text, got %s'
                         % type(text).__name__)
    if len(text) > MAX_XML_CHARS:
        raise ValueError('domain XML larger than %d characters refused'
                         % MAX_XML_CHARS)
    probe = xml.parsers.expat.ParserCreate()
    probe.StartDoctypeDeclHandler = _refuse_declaration
    probe.EntityDeclHandler = _refuse_declaration
    probe.ExternalEntityRefHandler = _refuse_declaration
    try:
        probe.Parse(text, True)
        return ET.fromstring(text)
    except (xml.parsers.expat.ExpatError, ET.ParseError) as exc:
        raise ValueError('malformed domain XML: %s' % exc) from None


def _int_attr(element, name, what, maximum, notes, minimum=1):
    """Attribute ``name`` of ``element`` as a checked int; None if
    absent or untrusted (then a note)."""
    if element is None or element.get(name) is None:
        return None
    try:
        return parse_whole(element.get(name), what, minimum, maximum)
    except ValueError as exc:
        notes.append(str(exc))
        return None


def _disk(element, device_of, notes, owner):
    target = element.find('target')
    driver = element.find('driver')
    source = element.find('source')
    name = target.get('dev') if target is not None else None
    if not name:
        raise ValueError('%s: a disk without a target' % owner)
    what = '%s/%s' % (owner, name)
    disk_type = element.get('type')
    path = ''
    if source is not None:
        path = (source.get('file') or source.get('dev')
                or source.get('name') or source.get('volume') or '')
    host_device = None
    if device_of is not None and disk_type in ('file', 'block') and path:
        host_device = device_of(path)
    address = element.find('address')
    controller = 0
    if address is not None and address.get('type') == 'drive':
        controller = _int_attr(address, 'controller', what + ' controller',
                               MAX_IOTHREADS, notes, minimum=0) or 0
    return DiskConfig(
        target=name, bus=target.get('bus'), disk_type=disk_type,
        device=element.get('device') or 'disk',
        cache=driver.get('cache') if driver is not None else None,
        io=driver.get('io') if driver is not None else None,
        iothread=_int_attr(driver, 'iothread', what + ' iothread',
                           MAX_IOTHREADS, notes),
        queues=_int_attr(driver, 'queues', what + ' queues', MAX_VCPUS,
                         notes),
        discard=driver.get('discard') if driver is not None else None,
        read_only=element.find('readonly') is not None,
        source=path, controller=controller, host_device=host_device)


def parse_domain(xml_text, device_of=None, notes=None):
    """An :class:`InstanceConfig` of a domain XML.  ``device_of(path)``
    names the host block device holding a file or device (None: not
    resolved); ``notes`` (a list) receives what was not trusted.
    ValueError for XML that is malformed or not a domain."""
    notes = notes if notes is not None else []
    root = parse_xml(xml_text)
    if root.tag != 'domain':
        raise ValueError('not a domain XML: root element %r' % root.tag[:40])
    uuid = (root.findtext('uuid') or '').strip()
    nova_name = root.findtext('metadata/{%s}instance/{%s}name'
                              % (NOVA_NS, NOVA_NS))
    name = (nova_name or root.findtext('name') or uuid).strip()
    owner = name or '?'
    vcpus = None
    if root.findtext('vcpu') is not None:
        try:
            vcpus = parse_whole(root.findtext('vcpu'), owner + ' vcpu', 1,
                                MAX_VCPUS)
        except ValueError as exc:
            notes.append(str(exc))
    iothreads = set()
    if root.findtext('iothreads') is not None:
        try:
            iothreads.update(range(1, parse_whole(
                root.findtext('iothreads'), owner + ' iothreads', 0,
                MAX_IOTHREADS) + 1))
        except ValueError as exc:
            notes.append(str(exc))
    for element in root.findall('iothreadids/iothread'):
        iothread = _int_attr(element, 'id', owner + ' iothread id',
                             MAX_IOTHREADS, notes)
        if iothread is not None:
            iothreads.add(iothread)
    pinned = set()
    for element in root.findall('cputune/iothreadpin'):
        iothread = _int_attr(element, 'iothread', owner + ' iothreadpin',
                             MAX_IOTHREADS, notes)
        if iothread is not None:
            pinned.add(iothread)
    controllers = tuple(
        Controller(index=_int_attr(element, 'index', owner + ' controller',
                                   MAX_IOTHREADS, notes, minimum=0) or 0,
                   model=element.get('model'),
                   iothread=_int_attr(element.find('driver'), 'iothread',
                                      owner + ' controller iothread',
                                      MAX_IOTHREADS, notes))
        for element in root.findall('devices/controller')
        if element.get('type') == 'scsi')
    disks = tuple(_disk(element, device_of, notes, owner)
                  for element in root.findall('devices/disk'))
    return InstanceConfig(
        uuid=uuid, name=name, vcpus=vcpus, iothreads=tuple(sorted(iothreads)),
        pinned_iothreads=frozenset(pinned),
        vcpus_pinned=root.find('cputune/vcpupin') is not None,
        disks=disks, controllers=controllers)


# ---------------------------------------------------------------------------
# The rules.

def _device_rules(device):
    sysfs = '/sys/block/%s/queue' % device.name
    found = []
    offered = set(device.schedulers)
    if (device.nvme and device.scheduler not in (None, 'none')
            and 'none' in offered):
        found.append(_finding(
            WARNING, device.name, 'nvme-scheduler',
            'NVMe device under the %s I/O scheduler' % device.scheduler,
            'echo none > %s/scheduler, kept by a udev rule (ACTION=="add|'
            'change", KERNEL=="%s", ATTR{queue/scheduler}="none"); keep '
            "bfq only if you rely on its weights (libvirt's <blkiotune>)"
            % (sysfs, device.name)))
    if device.rotational and device.scheduler is not None and not \
            device.nvme and 'bfq' in offered:
        if device.scheduler in ('none', 'kyber'):
            found.append(_finding(
                WARNING, device.name, 'rotational-scheduler',
                'rotational disk under the %s I/O scheduler: guests\' '
                'requests interleave and the head moves between their '
                'images' % device.scheduler,
                'echo bfq > %s/scheduler (or mq-deadline), kept by a udev '
                'rule' % sysfs))
        elif device.scheduler == 'mq-deadline':
            found.append(_finding(
                INFO, device.name, 'rotational-scheduler',
                'rotational disk under mq-deadline; bfq (CFQ\'s successor) '
                'is offered',
                'consider echo bfq > %s/scheduler, and a larger '
                'iosched/slice_idle if guests run sequential streams'
                % sysfs))
    if device.rotational is False and device.queue_depth == 1:
        found.append(_finding(
            WARNING, device.name, 'queue-depth',
            'SSD served one request at a time (device queue depth 1: NCQ '
            'off?)',
            'echo 32 > /sys/block/%s/device/queue_depth (NCQ\'s maximum), '
            'and check the controller runs in AHCI mode' % device.name))
    if (device.queue_depth is not None and device.nr_requests is not None
            and device.nr_requests < device.queue_depth):
        found.append(_finding(
            INFO, device.name, 'nr-requests',
            'the block layer queues at most %d requests, the device takes '
            '%d' % (device.nr_requests, device.queue_depth),
            'echo %d > %s/nr_requests' % (device.queue_depth, sysfs)))
    return found


def _kind(device):
    if device.nvme:
        return 'NVMe'
    if device.rotational is None:
        return None
    return 'HDD' if device.rotational else 'SSD'


def _spread_rules(devices, instances):
    """Guest disks crowding one physical device while another of its
    kind holds none."""
    physical = [device for device in devices
                if not device.virtual and _kind(device) is not None]
    by_name = {device.name: device for device in physical}
    users = {}
    for instance in instances:
        for disk in instance.disks:
            if disk.host_device in by_name and disk.device != 'cdrom':
                users.setdefault(disk.host_device, []).append(
                    '%s/%s' % (instance.name, disk.target))
    found = []
    for name, disks in sorted(users.items()):
        if len(disks) < 2:
            continue
        kind = _kind(by_name[name])
        idle = sorted(device.name for device in physical
                      if device.name not in users
                      and _kind(device) == kind)
        if idle:
            found.append(_finding(
                INFO, name, 'spread-devices',
                '%d guest disks on %s (%s), none on %s of the same kind'
                % (len(disks), name, ', '.join(disks[:4])
                   + (', ...' if len(disks) > 4 else ''), ', '.join(idle)),
                'if %s is free, move some of these disks there'
                % ' or '.join(idle)))
    return found


def _disk_rules(instance, disk):
    subject = '%s/%s' % (instance.name, disk.target)
    found = []
    if disk.device not in ('disk', 'lun'):
        return found
    writable = not disk.read_only
    vcpus = instance.vcpus or 1
    if writable:
        if disk.cache == 'unsafe':
            found.append(_finding(
                ERROR, subject, 'cache-mode',
                "cache='unsafe': flushes are ignored, a host crash loses "
                'data the guest was told is on disk',
                "<driver cache='none'/> (O_DIRECT, no host page cache)"))
        elif disk.cache not in DIRECT_CACHE_MODES:
            found.append(_finding(
                WARNING, subject, 'cache-mode',
                ("no cache mode (QEMU's default, writeback)"
                 if disk.cache is None else "cache='%s'" % disk.cache)
                + ': I/O goes through the host page cache',
                "<driver cache='none'/> (O_DIRECT, no host page cache)"))
    if disk.disk_type in ('file', 'block'):
        if disk.cache in DIRECT_CACHE_MODES and \
                disk.io not in ASYNC_IO_MODES:
            found.append(_finding(
                INFO, subject, 'io-mode',
                ("no io mode (QEMU's default, threads)" if disk.io is None
                 else "io='%s'" % disk.io)
                + ": every request goes through QEMU's thread pool",
                "<driver io='native'/> (or io='io_uring')"))
        elif disk.io == 'native' and disk.cache not in DIRECT_CACHE_MODES:
            found.append(_finding(
                WARNING, subject, 'io-mode',
                "io='native' without O_DIRECT (cache=%s): QEMU refuses it "
                'or falls back to threads' % (disk.cache or 'default'),
                "<driver cache='none' io='native'/>"))
    if disk.bus in EMULATED_BUSES:
        found.append(_finding(
            WARNING, subject, 'emulated-bus',
            "disk on the emulated %s bus: no iothread, no multi-queue"
            % disk.bus,
            "<target bus='virtio'/> (virtio-blk; the guest needs its "
            'driver)'))
    elif disk.bus == 'scsi':
        controller = instance.controller(disk.controller)
        model = controller.model if controller is not None else None
        if model != VIRTIO_SCSI:
            found.append(_finding(
                WARNING, subject, 'emulated-bus',
                'disk on an emulated SCSI controller (%s)'
                % (model or 'default model'),
                "<target bus='virtio'/>, or a controller "
                "model='virtio-scsi'"))
        elif vcpus >= 2 and controller.iothread is None:
            found.append(_finding(
                INFO, subject, 'virtio-scsi-iothread',
                'virtio-scsi controller %d without an iothread (%d vCPUs)'
                % (disk.controller, vcpus),
                "<iothreads>1</iothreads> and <driver iothread='1'/> on "
                "the controller, or <target bus='virtio'/>"))
    elif disk.bus == 'virtio':
        if vcpus >= 2 and disk.iothread is None:
            if not instance.iothreads:
                found.append(_finding(
                    WARNING, subject, 'iothreads-missing',
                    'virtio-blk disk of a %d-vCPU guest without an '
                    "iothread: its I/O runs in QEMU's main loop" % vcpus,
                    "<iothreads>1</iothreads> in the domain and <driver "
                    "iothread='1'/> on the disk"))
            else:
                found.append(_finding(
                    WARNING, subject, 'iothread-unused',
                    'the domain has iothread(s) %s, this disk is on none'
                    % ','.join(str(i) for i in instance.iothreads),
                    "<driver iothread='%d'/> on the disk"
                    % instance.iothreads[0]))
        if (disk.queues is not None and vcpus >= 2
                and disk.queues < vcpus):
            found.append(_finding(
                INFO, subject, 'virtio-blk-queues',
                'virtio-blk with %d queue(s) for %d vCPUs'
                % (disk.queues, vcpus),
                "<driver queues='%d'/>, or drop queues (machine types of "
                'QEMU 5.2 and later give one per vCPU)' % vcpus))
    if (writable and disk.disk_type in ('file', 'block')
            and disk.discard != 'unmap'):
        found.append(_finding(
            INFO, subject, 'discard',
            "no discard='unmap': the guest's TRIM stops at QEMU",
            "<driver discard='unmap'/>"))
    return found


def _instance_rules(instance):
    found = []
    for disk in instance.disks:
        found.extend(_disk_rules(instance, disk))
    unpinned = sorted(set(instance.iothreads) - instance.pinned_iothreads)
    if instance.vcpus_pinned and unpinned:
        found.append(_finding(
            INFO, instance.name, 'iothread-unpinned',
            'vCPUs pinned, iothread(s) %s not: they float over the '
            "vCPUs' cores" % ','.join(str(i) for i in unpinned),
            "<iothreadpin iothread='%d' cpuset='...'/> in <cputune>, on "
            'cores the vCPUs do not use' % unpinned[0]))
    return found


def advise(inventory):
    """The findings of ``inventory``, most severe first, then by
    subject and rule."""
    found = []
    for device in inventory.devices:
        found.extend(_device_rules(device))
    found.extend(_spread_rules(inventory.devices, inventory.instances))
    for instance in inventory.instances:
        found.extend(_instance_rules(instance))
    return sorted(found, key=lambda f: (SEVERITIES.index(f.severity),
                                        f.subject, f.rule))


def to_dict(finding):
    return dataclasses.asdict(finding)
