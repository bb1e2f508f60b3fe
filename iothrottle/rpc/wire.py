"""What crosses the message bus, as plain dicts (pure).

An agent casts one *report* per interval to the conductor::

    {'host': 'cmp-1', 'interval_s': 2.0,
     'samples': [{<every DiskSample field>}, ...],
     'caps': {'<uuid>/<device>': {'iops': 40.0, 'bytes_sec': 0.0}}}

Each sample carries its disk's storage domain key and its instance's
uuid, name and flavor; ``caps`` are the caps in force (its leases).  The
conductor casts back the decisions concerning the host, each with the
instance's guarantee (the agent clamps caps to its ``max_*``)::

    {'decisions': [{'instance_uuid': ..., 'device': ..., 'action': 'cap',
                    'reason': ..., 'cap': {...} or None, 'lease_s': 10.0,
                    'guarantee': {<every Guarantee field>}}]}

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

Decoding validates through the model's own constructors, so a malformed
message raises ValueError (or TypeError/KeyError) naming what is wrong.
"""

import dataclasses

from iothrottle.cinder import placement
from iothrottle.controller import model
from iothrottle.seekmodel import profile as profile_mod

SAMPLE_FIELDS = tuple(f.name for f in dataclasses.fields(model.DiskSample))
GUARANTEE_FIELDS = tuple(f.name for f in dataclasses.fields(model.Guarantee))
VOLUME_FIELDS = tuple(f.name for f in dataclasses.fields(placement.Volume))


def cap_to_dict(cap):
    if cap is None:
        return None
    return {'iops': float(cap.iops), 'bytes_sec': float(cap.bytes_sec)}


def cap_from_dict(data):
    if data is None:
        return None
    return model.Cap(iops=data['iops'], bytes_sec=data['bytes_sec'])


def sample_to_dict(sample):
    return {name: getattr(sample, name) for name in SAMPLE_FIELDS}


def sample_from_dict(data):
    return model.DiskSample(**{name: data[name] for name in SAMPLE_FIELDS
                               if name in data})


def guarantee_to_dict(guarantee):
    return {name: getattr(guarantee, name) for name in GUARANTEE_FIELDS}


def guarantee_from_dict(data):
    return model.Guarantee(**{name: data[name] for name in GUARANTEE_FIELDS
                              if name in data})


def report(host, interval_s, samples, caps):
    """An agent's report of one interval (``caps``: {disk_id: Cap})."""
    return {'host': host, 'interval_s': float(interval_s),
            'samples': [sample_to_dict(s) for s in samples],
            'caps': {disk_id: cap_to_dict(cap)
                     for disk_id, cap in sorted(caps.items())}}


@dataclasses.dataclass(frozen=True)
class Report:
    """A decoded report."""
    host: str
    interval_s: float
    samples: tuple
    caps: dict


def decode_report(data):
    host = data['host']
    if not isinstance(host, str) or not host:
        raise ValueError('report: host must be a non-empty string, got %r'
                         % (host,))
    return Report(host=host, interval_s=float(data['interval_s']),
                  samples=tuple(sample_from_dict(s)
                                for s in data['samples']),
                  caps={disk_id: cap_from_dict(cap)
                        for disk_id, cap in data['caps'].items()})


def decision_to_dict(decision, guarantee=model.NO_GUARANTEE):
    return {'instance_uuid': decision.instance_uuid,
            'device': decision.device, 'action': decision.action,
            'reason': decision.reason, 'cap': cap_to_dict(decision.cap),
            'lease_s': float(decision.lease_s),
            'guarantee': guarantee_to_dict(guarantee)}


def decision_from_dict(data):
    """``(Decision, Guarantee)`` from a decision dict."""
    if data['action'] not in (model.CAP, model.RELEASE):
        raise ValueError('decision: unknown action %r' % (data['action'],))
    decision = model.Decision(
        instance_uuid=data['instance_uuid'], device=data['device'],
        action=data['action'], reason=data.get('reason', ''),
        cap=cap_from_dict(data.get('cap')),
        lease_s=float(data.get('lease_s') or 0.0))
    return decision, guarantee_from_dict(data.get('guarantee') or {})


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
