"""What crosses the message bus, as plain dicts (pure).

An agent casts one *report* per interval to the conductor::

    {'host': 'cmp-1', 'interval_s': 2.0,
     'agent_id': '<uuid of the agent process>', 'seq': 42,
     'sent_at': 1795000000.0, 'decided_through': 1795000000.5,
     'samples': [{<every DiskSample field>}, ...],
     'caps': {'<uuid>/<device>': {'iops': 40.0, 'bytes_sec': 0.0}},
     'unreadable': False}

Each sample carries its disk's storage domain key and its instance's
uuid, name and flavor; ``caps`` are the caps in force (its leases), and
``decided_through`` the ``issued_at`` of the newest decisions the agent
had taken in (applied, or dropped as stale) when it read them: a disk
sampled without a cap after the agent took in the cap decided for it
has no cap in force, and the conductor ends its recorded cap at once
(0: an older agent, whose caps are taken to end at their lease).
``unreadable`` (absent: false) says the agent could not read its host
at all (libvirtd down or restarting): the report then carries no
sample, and its disks are unseen, not gone.  The
conductor casts back the decisions concerning the host, each with the
instance's guarantee (the agent clamps caps to its ``max_*``)::

    {'decisions': [{'instance_uuid': ..., 'device': ..., 'action': 'cap',
                    'reason': ..., 'cap': {...} or None, 'lease_s': 10.0,
                    'guarantee': {<every Guarantee field>},
                    'issued_at': 1795000000.5,
                    'owner': 'ctl-1-9f2c', 'epoch': 1795000000123}]}

and, in a cast of its own (compute RPC 1.1), the balloon floor of each
instance of the host whose guarantee it knows, in MiB (0: no floor set,
the agent's ``[balloon] floor_fraction``)::

    {'floors': {'<uuid>': 2048.0, ...}}

The floors are untrusted on arrival like everything else: finite, in
[0, 1e15] here, and no more than the instance's memory in the agent.

After the decisions, in a cast of its own (compute RPC 1.3), the
*watch* of each storage domain whose decision set or renewed a cap, as
the host's checks within the interval read it
(:mod:`iothrottle.controller.idle`): the domain's capacity, the host's
disks in it, and the rate, bytes and latency of each of them that did
I/O, all of the report ``seq`` of agent ``agent_id`` they were decided
from (the agent takes it only as the answer to its latest report)::

    {'agent_id': '<uuid>', 'seq': 42, 'owner': 'ctl-1-9f2c',
     'epoch': 1795000000123,
     'domains': [{'storage_domain': '8:0', 'capacity': {'max_iops': 95.0,
                  'max_bytes_sec': 9.7e7}, 'disks': ['<uuid>/vda', ...],
                  'served': [['<uuid>/vda', 25.0, 409600.0, 0.06], ...],
                  'floors_only': False, 'at_cap_fraction': 0.9,
                  'lease_s': 30.0}]}

Cinder's scheduler plugins *call* the conductor for the pools they
weigh (``pool_state``); the reply holds, for each pool that has a
profile, the profile document (``iothrottle.seekmodel.profile``), the
pool's I/O scheduler and the volumes placed there (every
``iothrottle.cinder.placement.Volume`` field: the seek model needs each
volume's size and position, not only the sum of their guarantees), and
every tier, so that the plugin resolves ``iothrottle:tier``::

    {'pools': {'host@backend#pool': {'profile': {...}, 'scheduler': 'bfq',
                                     'volumes': [{...}, ...]}},
     'tiers': {'gold': {<every Guarantee field>}},
     'error': None}

``error`` is a one-line reason when the conductor cannot answer (its
database is unreachable); the plugins then step aside.

The operator API *calls* a compute agent for its host's advice (compute
RPC 1.2, ``advise``): the findings of
:mod:`iothrottle.compute.advice` as plain dicts, bounded at decode like
everything else (:func:`decode_advice_reply`).

Decoding checks every field: strings are strings of bounded length,
numbers are real, finite and within physical bounds (``MAX_*`` below),
a cap names a disk of its own report.  A malformed envelope raises
ValueError naming the field; a malformed sample or cap is left out of
its report (``Report.rejected``), never the other hosts' samples.
Reports carry the agent's id, a sequence number and its send time;
decisions carry the conductor's issue time, so stale messages (queued
while a service was down, replayed) are dropped, and their owner and
epoch, so a deposed conductor's are ignored (several conductors).
"""

import dataclasses
import math

from iothrottle.cinder import placement
from iothrottle.compute import advice as advice_mod
from iothrottle.controller import idle
from iothrottle.controller import model
from iothrottle.seekmodel import profile as profile_mod
from iothrottle import tiers as tiers_mod

SAMPLE_FIELDS = tuple(f.name for f in dataclasses.fields(model.DiskSample))
GUARANTEE_FIELDS = tuple(f.name for f in dataclasses.fields(model.Guarantee))
VOLUME_FIELDS = tuple(f.name for f in dataclasses.fields(placement.Volume))

# Bounds of what a report may say (issue 9: every number crossing the bus
# is checked finite and in range).  They are physical, not policy: a value
# past them is a bug or a lie, and one such value poisoned a domain's
# learned capacity for good.
# No disk completes 10 million requests a second (the fastest NVMe
# devices do a few million).
MAX_IOPS = 1e7
# Nor moves 100 GB/s (a PCIe 5.0 x16 link carries ~64 GB/s).
MAX_BYTES_SEC = 1e11
# A mean latency over an hour is a hung disk, not a measurement.
MAX_LATENCY_S = 3600.0
# Agents report every few seconds; an hour-long interval is a broken clock.
MAX_INTERVAL_S = 3600.0
# A lease is renewed every interval; a day is far past any [agent]
# max_lease_s an operator would set (the agent bounds it further).
MAX_LEASE_S = 86400.0
# One compute host runs hundreds of disks, not ten thousand: a bigger
# report is a flood.
MAX_SAMPLES = 10000
# Names (hosts, uuids, devices, storage domain keys, flavors) fit in 255
# characters everywhere in Nova and libvirt; a reason is one log line.
MAX_NAME_CHARS = 255
MAX_REASON_CHARS = 1024
# A sequence number fits in a signed 64-bit integer.
MAX_SEQ = 2 ** 63 - 1
# A wall-clock time (seconds since the epoch) past the year 5000 is a
# broken clock, not a time.
MAX_EPOCH_S = 1e11

_SAMPLE_BOUNDS = {
    'interval_s': MAX_INTERVAL_S, 'read_iops': MAX_IOPS,
    'write_iops': MAX_IOPS, 'read_bytes_sec': MAX_BYTES_SEC,
    'write_bytes_sec': MAX_BYTES_SEC, 'latency_s': MAX_LATENCY_S,
}
_SAMPLE_TEXT = ('instance_uuid', 'device', 'storage_domain',
                'instance_name', 'flavor')
_REQUIRED_TEXT = ('instance_uuid', 'device', 'storage_domain')


def _shown(value, limit):
    """``value`` as printable ASCII text of at most ``limit`` characters,
    for a message about a field that may be malformed."""
    shown = value if isinstance(value, str) and value.isprintable() \
        else ascii(value)
    return shown[:limit]


def _mapping(owner, data):
    if not isinstance(data, dict):
        raise ValueError('%s must be a mapping, got %s'
                         % (owner, type(data).__name__))
    return data


def text(owner, name, value, limit=MAX_NAME_CHARS, required=False):
    """``value`` if it is a str of at most ``limit`` characters (and not
    empty when ``required``); else ValueError naming ``owner``/``name``."""
    if not isinstance(value, str):
        raise ValueError('%s: %s must be a string, got %s'
                         % (owner, name, type(value).__name__))
    if len(value) > limit:
        raise ValueError('%s: %s is longer than %d characters'
                         % (owner, name, limit))
    if not value.isprintable():
        raise ValueError('%s: %s has unprintable characters'
                         % (owner, name))
    if required and not value:
        raise ValueError('%s: %s must not be empty' % (owner, name))
    return value


def number(owner, name, value, maximum):
    """``value`` as a float if it is a real number (not a bool), finite,
    in [0, maximum]; else ValueError naming ``owner``/``name``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError('%s: %s must be a number, got %s'
                         % (owner, name, type(value).__name__))
    try:
        value = float(value)
    except OverflowError:
        value = math.inf
    if not 0 <= value <= maximum:    # NaN fails every comparison
        raise ValueError('%s: %s must be a finite number in [0, %g], got '
                         '%r' % (owner, name, maximum, value))
    return value


def cap_to_dict(cap):
    if cap is None:
        return None
    return {'iops': float(cap.iops), 'bytes_sec': float(cap.bytes_sec)}


def cap_from_dict(data, owner='cap'):
    if data is None:
        return None
    _mapping(owner, data)
    return model.Cap(iops=number(owner, 'iops', data.get('iops'), MAX_IOPS),
                     bytes_sec=number(owner, 'bytes_sec',
                                      data.get('bytes_sec'), MAX_BYTES_SEC))


def sample_to_dict(sample):
    return {name: getattr(sample, name) for name in SAMPLE_FIELDS}


def sample_from_dict(data):
    """A DiskSample of a sample dict; ValueError naming the field.
    Unknown keys are ignored (a newer agent); absent rates are 0."""
    _mapping('sample', data)
    owner = 'sample of %s/%s' % (_shown(data.get('instance_uuid'), 64),
                                 _shown(data.get('device'), 16))
    fields = {}
    for name in _SAMPLE_TEXT:
        if name in data or name in _REQUIRED_TEXT:
            fields[name] = text(owner, name, data.get(name),
                                required=name in _REQUIRED_TEXT)
    for name, maximum in _SAMPLE_BOUNDS.items():
        if name in data or name == 'interval_s':
            fields[name] = number(owner, name, data.get(name), maximum)
    return model.DiskSample(**fields)


def guarantee_to_dict(guarantee):
    return {name: getattr(guarantee, name) for name in GUARANTEE_FIELDS}


def guarantee_from_dict(data):
    """A Guarantee of a dict, with the tiers file's bounds (every value
    in [0, tiers.MAX_VALUE], a weight in [MIN_WEIGHT, MAX_WEIGHT])."""
    _mapping('guarantee', data)
    fields = {}
    for name in GUARANTEE_FIELDS:
        if name not in data:
            continue
        if name == 'tier':
            fields[name] = text('guarantee', name, data[name])
            continue
        value = data[name]
        if isinstance(value, str):
            raise ValueError('guarantee: %s must be a number, got a string'
                             % name)
        try:
            fields[name] = tiers_mod.parse_number(value)
            if name == 'weight':
                tiers_mod.check_weight(fields[name])
        except ValueError as exc:
            raise ValueError('guarantee: %s %s' % (name, exc)) from None
    return model.Guarantee(**fields)


def report(host, interval_s, samples, caps, agent_id='', seq=0,
           sent_at=0.0, decided_through=0.0, unreadable=False):
    """An agent's report of one interval (``caps``: {disk_id: Cap}).

    ``agent_id`` names the agent process (a uuid made at its start),
    ``seq`` counts its reports and ``sent_at`` is its wall clock (seconds
    since the epoch): the conductor drops replayed, reordered and stale
    reports with them (0 / '' when unknown: an older agent).
    ``decided_through`` is the conductor's ``issued_at`` of the newest
    decisions taken in before ``caps`` were read (0: none yet).
    ``unreadable``: the host could not be read this interval."""
    return {'host': host, 'interval_s': float(interval_s),
            'agent_id': agent_id, 'seq': int(seq),
            'sent_at': float(sent_at),
            'decided_through': float(decided_through),
            'samples': [sample_to_dict(s) for s in samples],
            'caps': {disk_id: cap_to_dict(cap)
                     for disk_id, cap in sorted(caps.items())},
            'unreadable': bool(unreadable)}


@dataclasses.dataclass(frozen=True)
class Report:
    """A decoded report.  ``rejected``: one line per sample or cap that
    was malformed and left out (the rest of the report is used)."""
    host: str
    interval_s: float
    samples: tuple
    caps: dict
    agent_id: str = ''
    seq: int = 0
    sent_at: float = 0.0
    rejected: tuple = ()
    decided_through: float = 0.0
    unreadable: bool = False


def decode_report(data):
    """A Report of a report dict.  The envelope (host, interval, counts)
    must be sound or the whole report is refused with ValueError; a
    malformed sample or cap is left out and named in ``rejected``."""
    _mapping('report', data)
    host = text('report', 'host', data.get('host'), required=True)
    owner = 'report of %s' % host
    interval_s = number(owner, 'interval_s', data.get('interval_s'),
                        MAX_INTERVAL_S)
    if interval_s <= 0:
        raise ValueError('%s: interval_s must be > 0' % owner)
    agent_id = text(owner, 'agent_id', data.get('agent_id', ''))
    seq = data.get('seq', 0)
    if isinstance(seq, bool) or not isinstance(seq, int) \
            or not 0 <= seq <= MAX_SEQ:
        raise ValueError('%s: seq must be an integer in [0, 2^63), got %r'
                         % (owner, seq))
    sent_at = number(owner, 'sent_at', data.get('sent_at', 0.0),
                     MAX_EPOCH_S)
    decided_through = number(owner, 'decided_through',
                             data.get('decided_through', 0.0), MAX_EPOCH_S)
    raw_samples = data.get('samples')
    raw_caps = data.get('caps', {})
    unreadable = data.get('unreadable', False)
    if not isinstance(unreadable, bool):
        raise ValueError('%s: unreadable must be true or false, got %s'
                         % (owner, _shown(unreadable, 40)))
    if not isinstance(raw_samples, list):
        raise ValueError('%s: samples must be a list' % owner)
    if unreadable and raw_samples:
        raise ValueError('%s: an unreadable host reports no samples, got '
                         '%d' % (owner, len(raw_samples)))
    _mapping(owner + ': caps', raw_caps)
    if len(raw_samples) > MAX_SAMPLES or len(raw_caps) > MAX_SAMPLES:
        raise ValueError('%s: more than %d samples or caps'
                         % (owner, MAX_SAMPLES))
    samples, rejected = [], []
    for raw in raw_samples:
        try:
            samples.append(sample_from_dict(raw))
        except (ValueError, TypeError) as exc:
            rejected.append('%s: %s' % (owner, exc))
    disk_ids = {sample.disk_id for sample in samples}
    caps = {}
    for disk_id, raw in raw_caps.items():
        try:
            if disk_id not in disk_ids:
                raise ValueError('cap of %s, a disk the report does not '
                                 'sample' % _shown(disk_id, 300))
            caps[disk_id] = cap_from_dict(raw, 'cap of %s' % disk_id)
        except (ValueError, TypeError) as exc:
            rejected.append('%s: %s' % (owner, exc))
    return Report(host=host, interval_s=interval_s, samples=tuple(samples),
                  caps=caps, agent_id=agent_id, seq=seq, sent_at=sent_at,
                  rejected=tuple(rejected), decided_through=decided_through,
                  unreadable=unreadable)


def decision_to_dict(decision, guarantee=model.NO_GUARANTEE, issued_at=0.0,
                     owner='', epoch=0):
    """A decision dict; ``issued_at`` is the conductor's wall clock
    (seconds since the epoch), by which an agent drops stale ones;
    ``owner`` and ``epoch`` name the conductor that decided and its
    ownership epoch (several conductors, :mod:`iothrottle.rpc.fence`;
    '' and 0 for a single one)."""
    return {'instance_uuid': decision.instance_uuid,
            'device': decision.device, 'action': decision.action,
            'reason': decision.reason, 'cap': cap_to_dict(decision.cap),
            'lease_s': float(decision.lease_s),
            'guarantee': guarantee_to_dict(guarantee),
            'issued_at': float(issued_at),
            'owner': owner, 'epoch': int(epoch)}


def decision_from_dict(data):
    """``(Decision, Guarantee)`` from a decision dict; ValueError naming
    the field.  A reason too long for one log line is cut, not refused."""
    _mapping('decision', data)
    action = data.get('action')
    if action not in (model.CAP, model.RELEASE):
        raise ValueError('decision: unknown action %s'
                         % _shown(action, 32))
    uuid = text('decision', 'instance_uuid', data.get('instance_uuid'),
                required=True)
    owner = 'decision on %s' % uuid
    device = text(owner, 'device', data.get('device'), required=True)
    reason = data.get('reason', '')
    if not isinstance(reason, str):
        raise ValueError('%s: reason must be a string' % owner)
    lease_s = number(owner, 'lease_s', data.get('lease_s') or 0.0,
                     MAX_LEASE_S)
    decision = model.Decision(
        instance_uuid=uuid, device=device, action=action,
        reason=_shown(reason, MAX_REASON_CHARS),
        cap=cap_from_dict(data.get('cap'), owner + ': cap'),
        lease_s=lease_s)
    return decision, guarantee_from_dict(data.get('guarantee') or {})


def fence_of(data, what='decision'):
    """``(owner, epoch)`` of a decision dict or another of ``what`` a
    conductor casts (``('', 0)`` when absent: a single or older
    conductor); ValueError naming the field."""
    owner = text(what, 'owner', data.get('owner', ''))
    epoch = data.get('epoch', 0)
    if isinstance(epoch, bool) or not isinstance(epoch, int) \
            or not 0 <= epoch <= MAX_SEQ:
        raise ValueError('%s: epoch must be an integer in [0, 2^63), got %s'
                         % (what, _shown(epoch, 32)))
    return owner, epoch


def issued_at(data):
    """The ``issued_at`` of a decision dict (0.0 when absent or
    malformed: an older conductor)."""
    try:
        return number('decision', 'issued_at', data.get('issued_at', 0.0),
                      MAX_EPOCH_S)
    except (ValueError, AttributeError):
        return 0.0


def memory_floors(floors):
    """The ``floors`` argument of the floors cast of ``floors``
    ({instance uuid: MiB})."""
    return {uuid: float(floor_mb)
            for uuid, floor_mb in sorted(floors.items())}


def decode_memory_floors(raw):
    """``({uuid: MiB}, rejected)`` of a floors cast's ``floors``.  It
    must be a mapping of at most MAX_SAMPLES entries (else ValueError);
    an entry whose uuid is not a name or whose floor is not a finite
    number in [0, tiers.MAX_VALUE] is left out and named in
    ``rejected``.  That a floor fits its instance's memory only the
    agent can tell."""
    _mapping('memory floors', raw)
    if len(raw) > MAX_SAMPLES:
        raise ValueError('memory floors: more than %d instances'
                         % MAX_SAMPLES)
    floors, rejected = {}, []
    for uuid, floor_mb in raw.items():
        try:
            text('memory floors', 'instance uuid', uuid, required=True)
            floors[uuid] = number('memory floor of %s' % uuid,
                                  'min_memory_mb', floor_mb,
                                  tiers_mod.MAX_VALUE)
        except ValueError as exc:
            rejected.append(str(exc))
    return floors, tuple(rejected)


# A fraction of a cap: a disk at none of it is not at it.
MIN_AT_CAP_FRACTION = 0.01


@dataclasses.dataclass(frozen=True)
class Watches:
    """A decoded watch cast: ``domains`` ``{storage domain:
    idle.HostWatch}``, decided from report ``seq`` of ``agent_id`` by
    conductor ``owner`` at ``epoch``; ``rejected``: one line per domain
    that was malformed and left out."""
    agent_id: str
    seq: int
    owner: str
    epoch: int
    domains: dict
    rejected: tuple = ()


def watches(agent_id, seq, host_watches, owner='', epoch=0):
    """The ``watch`` argument of the watch cast of ``host_watches``
    ``{storage domain: idle.HostWatch}``."""
    return {'agent_id': agent_id, 'seq': int(seq), 'owner': owner,
            'epoch': int(epoch),
            'domains': [_host_watch_to_dict(domain, host_watch)
                        for domain, host_watch
                        in sorted(host_watches.items())]}


def _host_watch_to_dict(domain, host_watch):
    watch = host_watch.watch
    return {'storage_domain': domain,
            'capacity': {'max_iops': float(host_watch.capacity.max_iops),
                         'max_bytes_sec':
                             float(host_watch.capacity.max_bytes_sec)},
            'disks': sorted(host_watch.disks),
            'served': [[disk_id, float(iops), float(bytes_sec),
                        float(latency_s)]
                       for disk_id, iops, bytes_sec, latency_s
                       in watch.served],
            'floors_only': bool(watch.floors_only),
            'at_cap_fraction': float(watch.at_cap_fraction),
            'lease_s': float(watch.lease_s)}


def decode_watches(data):
    """The Watches of a watch cast's ``watch``.  The envelope (agent,
    report, fence, at most MAX_SAMPLES domains) must be sound or the
    whole cast is refused with ValueError; a malformed domain is left
    out and named in ``rejected``."""
    _mapping('watch', data)
    agent_id = text('watch', 'agent_id', data.get('agent_id'),
                    required=True)
    seq = data.get('seq')
    if isinstance(seq, bool) or not isinstance(seq, int) \
            or not 0 <= seq <= MAX_SEQ:
        raise ValueError('watch: seq must be an integer in [0, 2^63), got '
                         '%s' % _shown(seq, 32))
    owner, epoch = fence_of(data, 'watch')
    raw_domains = data.get('domains')
    if not isinstance(raw_domains, list) or len(raw_domains) > MAX_SAMPLES:
        raise ValueError('watch: domains must be a list of at most %d'
                         % MAX_SAMPLES)
    domains, rejected = {}, []
    for raw in raw_domains:
        try:
            domain, host_watch = _host_watch_from_dict(raw)
            domains[domain] = host_watch
        except (ValueError, TypeError) as exc:
            rejected.append(str(exc))
    return Watches(agent_id, seq, owner, epoch, domains, tuple(rejected))


def _host_watch_from_dict(data):
    """``(storage domain, idle.HostWatch)`` of one domain of a watch
    cast; ValueError naming the field."""
    _mapping('watch of a domain', data)
    domain = text('watch', 'storage_domain', data.get('storage_domain'),
                  required=True)
    owner = 'watch of %s' % domain
    raw_capacity = _mapping(owner + ': capacity', data.get('capacity'))
    max_iops = number(owner, 'max_iops', raw_capacity.get('max_iops'),
                      MAX_IOPS)
    max_bytes_sec = number(owner, 'max_bytes_sec',
                           raw_capacity.get('max_bytes_sec'), MAX_BYTES_SEC)
    if not (max_iops > 0 and max_bytes_sec > 0):
        raise ValueError('%s: capacity must be > 0 on both axes' % owner)
    capacity = model.Capacity(max_iops, max_bytes_sec)
    disks, served = data.get('disks'), data.get('served')
    if not isinstance(disks, list) or not isinstance(served, list) \
            or len(disks) > MAX_SAMPLES or len(served) > len(disks):
        raise ValueError('%s: disks must be a list of at most %d, served '
                         'a list of no more' % (owner, MAX_SAMPLES))
    # A disk id is '<uuid>/<device>': two names and a slash.
    disk_ids = frozenset(text(owner, 'disk', disk_id,
                              limit=2 * MAX_NAME_CHARS + 1, required=True)
                         for disk_id in disks)
    entries = []
    for entry in served:
        if not isinstance(entry, list) or len(entry) != 4 \
                or entry[0] not in disk_ids:
            raise ValueError('%s: a served entry must be [disk, iops, '
                             'bytes_sec, latency_s] of one of its disks, '
                             'got %s' % (owner, _shown(entry, 80)))
        entries.append((entry[0],
                        number(owner, 'iops', entry[1], MAX_IOPS),
                        number(owner, 'bytes_sec', entry[2], MAX_BYTES_SEC),
                        number(owner, 'latency_s', entry[3],
                               MAX_LATENCY_S)))
    floors_only = data.get('floors_only')
    if not isinstance(floors_only, bool):
        raise ValueError('%s: floors_only must be true or false, got %s'
                         % (owner, _shown(floors_only, 40)))
    at_cap_fraction = number(owner, 'at_cap_fraction',
                             data.get('at_cap_fraction'), 1.0)
    if at_cap_fraction < MIN_AT_CAP_FRACTION:
        raise ValueError('%s: at_cap_fraction must be at least %g, got %g'
                         % (owner, MIN_AT_CAP_FRACTION, at_cap_fraction))
    return domain, idle.HostWatch(capacity, disk_ids, idle.Watch(
        served=tuple(entries), floors_only=floors_only,
        at_cap_fraction=at_cap_fraction,
        lease_s=number(owner, 'lease_s', data.get('lease_s'),
                       MAX_LEASE_S)))


def pool_state_reply(states=None, tiers=None, error=None):
    """The conductor's answer to ``pool_state``: ``states`` {pool:
    placement.PoolState}, ``tiers`` {name: Guarantee}, or ``error``."""
    return {
        'pools': {pool: {'profile': profile_mod.to_dict(state.profile),
                         'scheduler': state.scheduler,
                         'volumes': [{name: getattr(volume, name)
                                      for name in VOLUME_FIELDS}
                                     for volume in state.volumes]}
                  for pool, state in sorted((states or {}).items())},
        'tiers': {name: guarantee_to_dict(guarantee)
                  for name, guarantee in sorted((tiers or {}).items())},
        'error': error}


@dataclasses.dataclass(frozen=True)
class PoolStateReply:
    """A decoded ``pool_state`` reply."""
    pools: dict
    tiers: dict
    error: str = None


def decode_pool_state_reply(data):
    """PoolStateReply of a reply; ValueError naming the pool, profile
    field or volume that is malformed."""
    error = data.get('error')
    if error:
        return PoolStateReply(pools={}, tiers={}, error=str(error))
    pools = {}
    for pool, entry in data['pools'].items():
        try:
            pools[pool] = placement.PoolState(
                pool=pool, profile=profile_mod.from_dict(entry['profile']),
                volumes=tuple(placement.Volume(**{
                    name: volume[name] for name in VOLUME_FIELDS
                    if name in volume}) for volume in entry['volumes']),
                scheduler=entry.get('scheduler'))
        except (KeyError, TypeError) as exc:
            raise ValueError('pool %r: malformed: %r' % (pool, exc)) from None
        except ValueError as exc:
            raise ValueError('pool %r: %s' % (pool, exc)) from None
    return PoolStateReply(
        pools=pools,
        tiers={name: dataclasses.replace(guarantee_from_dict(g), tier=name)
               for name, g in data['tiers'].items()})


# Advice (compute RPC 1.2): a host of hundreds of disks and a dozen rules
# gives hundreds of findings; ten thousand is a flood, not advice.
MAX_FINDINGS = 10000
# Notes of what the inventory skipped: one per device or domain at most.
MAX_ADVICE_NOTES = 10000
# Devices and instances counted: a count past this is a lie.
MAX_ADVICE_COUNT = 1e6
_FINDING_TEXT = ('finding', 'recommendation', 'effect')
_FINDING_NAMES = ('subject', 'rule')
_FINDING_NULLABLE = ('seed', 'section', 'measured')


def advice_reply(host, findings=(), devices=0, instances=0, notes=(),
                 error=None):
    """The agent's answer to ``advise``: the findings of
    :func:`iothrottle.compute.advice.advise` on its host, how many
    devices and instances it inspected, what it skipped (``notes``), or
    ``error`` (one line) when it could not inspect at all::

        {'host': 'cmp-1', 'findings': [{<every Finding field>}, ...],
         'devices': 3, 'instances': 12, 'notes': [...], 'error': None}
    """
    return {'host': host,
            'findings': [{name: _clean(value, limit)
                          for name, value in advice_mod.to_dict(f).items()
                          for limit in [MAX_NAME_CHARS
                                        if name in _FINDING_NAMES
                                        else MAX_REASON_CHARS]}
                         for f in list(findings)[:MAX_FINDINGS]],
            'devices': int(devices), 'instances': int(instances),
            'notes': [_clean(note, MAX_REASON_CHARS)
                      for note in list(notes)[:MAX_ADVICE_NOTES]],
            'error': _clean(error, MAX_REASON_CHARS)}


def _clean(value, limit):
    """``value`` with unprintable characters as '?', at most ``limit``
    characters (a guest's name is anything Nova took); None stays."""
    if value is None:
        return None
    return ''.join(c if c.isprintable() else '?' for c in str(value))[:limit]


def _finding_from_dict(index, data):
    owner = 'finding %d' % index
    _mapping(owner, data)
    severity = data.get('severity')
    if severity not in advice_mod.SEVERITIES:
        raise ValueError('%s: severity must be one of %s, got %s'
                         % (owner, ', '.join(advice_mod.SEVERITIES),
                            _shown(severity, 16)))
    fields = {'severity': severity}
    for name in _FINDING_NAMES:
        fields[name] = text(owner, name, data.get(name), required=True)
    for name in _FINDING_TEXT:
        fields[name] = text(owner, name, data.get(name), MAX_REASON_CHARS)
    for name in _FINDING_NULLABLE:
        value = data.get(name)
        fields[name] = (None if value is None
                        else text(owner, name, value, MAX_REASON_CHARS))
    return advice_mod.Finding(**fields)


@dataclasses.dataclass(frozen=True)
class AdviceReply:
    """A decoded ``advise`` reply."""
    host: str
    findings: tuple
    devices: int
    instances: int
    notes: tuple
    error: str = None


def decode_advice_reply(data):
    """AdviceReply of an agent's reply; ValueError naming the field or
    finding that is malformed (the reply is untrusted like any message:
    strings bounded and printable, counts finite and in range)."""
    _mapping('advice reply', data)
    host = text('advice reply', 'host', data.get('host'), required=True)
    error = data.get('error')
    if error is not None:
        return AdviceReply(host, (), 0, 0, (), text(
            'advice reply', 'error', error, MAX_REASON_CHARS))
    findings, notes = data.get('findings'), data.get('notes', [])
    for name, value, limit in (('findings', findings, MAX_FINDINGS),
                               ('notes', notes, MAX_ADVICE_NOTES)):
        if not isinstance(value, list):
            raise ValueError('advice reply: %s must be a list, got %s'
                             % (name, type(value).__name__))
        if len(value) > limit:
            raise ValueError('advice reply: more than %d %s'
                             % (limit, name))
    counts = {name: number('advice reply', name, data.get(name),
                           MAX_ADVICE_COUNT)
              for name in ('devices', 'instances')}
    if any(value != int(value) for value in counts.values()):
        raise ValueError('advice reply: devices and instances must be '
                         'whole numbers')
    return AdviceReply(
        host=host,
        findings=tuple(_finding_from_dict(index, finding)
                       for index, finding in enumerate(findings)),
        devices=int(counts['devices']), instances=int(counts['instances']),
        notes=tuple(text('advice reply', 'note', note, MAX_REASON_CHARS)
                    for note in notes))
