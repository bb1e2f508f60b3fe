"""``/pools``: Cinder pools (``host@backend#pool``) for the seek-model
weigher and filter: each pool's device profile and I/O scheduler, and
the volumes recorded on it with their guarantees.  The same database
functions as ``iothrottle-manage pool`` (:func:`iothrottle.db.api.
set_pool_profile`, :func:`~iothrottle.db.api.place_volume`...).

A pool name holds ``#`` (and, for NFS shares, ``/``): clients
percent-encode it in the path.
"""

import dataclasses

from iothrottle.api.policies import pool as pool_policies
from iothrottle.api import policy
from iothrottle.api import util
from iothrottle.api import validation
from iothrottle.cinder import placement
from iothrottle.db import api
from iothrottle.db import models
from iothrottle.seekmodel import model as seek_model
from iothrottle.seekmodel import profile as profile_mod


def _engine(req):
    return req.environ['iothrottle.engine']


def pool_dict(record, full=False):
    iops, bytes_sec = placement.promised(record.volumes)
    values = {
        'pool': record.pool,
        'kind': record.profile.kind,
        'profile_name': record.profile.name,
        'scheduler': record.scheduler,
        'volume_count': len(record.volumes),
        'promised_iops': iops,
        'promised_bytes_sec': bytes_sec,
        'updated_at': util.timestamp(record.updated_at),
    }
    if full:
        values['profile'] = profile_mod.to_dict(record.profile)
        values['volumes'] = [dataclasses.asdict(volume)
                             for volume in record.volumes]
    return values


@util.Wsgify
def list_pools(req):
    policy.authorize(util.context(req), pool_policies.LIST, {})
    util.query(req, ())
    return util.json_response(req, {'pools': [
        pool_dict(record) for record in api.pool_profiles(_engine(req))]})


def _get(req):
    try:
        return api.get_pool(_engine(req), util.route_arg(req, 'pool'))
    except api.NotFound as exc:
        raise util.not_found(str(exc)) from None


@util.Wsgify
def show_pool(req):
    policy.authorize(util.context(req), pool_policies.SHOW, {})
    return util.json_response(req, {'pool': pool_dict(_get(req), True)})


@util.Wsgify
def set_profile(req):
    """Body ``{"profile": {...}, "scheduler": "bfq"}``: the profile
    document of ``iothrottle.seekmodel.profile`` (as the files in
    ``etc/iothrottle/profiles``), the scheduler optional (null:
    unknown)."""
    policy.authorize(util.context(req), pool_policies.UPDATE, {})
    data = validation.fields(validation.json_body(req),
                             ('profile', 'scheduler'), ('profile',))
    name = util.route_arg(req, 'pool')
    try:
        placement.check_pool_name(name)
    except ValueError as exc:
        raise util.bad_request(str(exc)) from None
    scheduler = None
    if 'scheduler' in data:
        scheduler = validation.string(data, 'scheduler', 16, nullable=True)
        if scheduler is not None and scheduler not in seek_model.SCHEDULERS:
            raise util.bad_request('scheduler: unknown scheduler %r (known: '
                                   '%s)' % (scheduler,
                                            ', '.join(seek_model.SCHEDULERS)))
    try:
        profile = profile_mod.from_dict(validation.obj(data, 'profile'))
    except ValueError as exc:
        raise util.bad_request('profile.%s' % exc) from None
    try:
        api.set_pool_profile(_engine(req), name, profile, scheduler)
    except ValueError as exc:
        raise util.bad_request(str(exc)) from None
    return util.json_response(req, {'pool': pool_dict(_get(req), True)})


@util.Wsgify
def delete_pool(req):
    policy.authorize(util.context(req), pool_policies.DELETE, {})
    try:
        api.delete_pool(_engine(req), util.route_arg(req, 'pool'))
    except api.NotFound as exc:
        raise util.not_found(str(exc)) from None
    return util.no_content(req)


@util.Wsgify
def add_volume(req):
    """Body ``{"volume_id": ..., "size_gib": N, "tier": ..., "min_iops":
    N, "min_bytes_sec": N, "offset_bytes": N, "read_fraction": N,
    "outstanding_requests": N}``: the pool must have a profile."""
    policy.authorize(util.context(req), pool_policies.ADD_VOLUME, {})
    data = validation.fields(
        validation.json_body(req), ('volume_id', 'tier') + api.VOLUME_KEYS,
        ('volume_id', 'size_gib'))
    volume_id = validation.string(data, 'volume_id', models.NAME_LENGTH)
    tier = (validation.string(data, 'tier', models.TIER_NAME_LENGTH,
                              nullable=True) if 'tier' in data else None)
    values = validation.numbers(data, api.VOLUME_KEYS)
    name = _get(req).pool
    try:
        volume = api.place_volume(_engine(req), name, volume_id, values,
                                  tier=tier)
    except api.Exists as exc:
        raise util.conflict(str(exc)) from None
    except ValueError as exc:
        raise util.bad_request(str(exc)) from None
    return util.json_response(req, {'volume': dataclasses.asdict(volume)},
                              201)


@util.Wsgify
def remove_volume(req):
    policy.authorize(util.context(req), pool_policies.REMOVE_VOLUME, {})
    record = _get(req)
    volume_id = util.route_arg(req, 'volume_id')
    if volume_id not in {volume.volume_id for volume in record.volumes}:
        raise util.not_found('no volume %r recorded on pool %r'
                             % (volume_id, record.pool))
    try:
        api.forget_pool_volume(_engine(req), volume_id)
    except api.NotFound as exc:
        raise util.not_found(str(exc)) from None
    return util.no_content(req)
