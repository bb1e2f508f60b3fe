"""``/instances/{uuid}``: "why is my VM slow?"

An instance's throttle state, from the stored decisions: per disk, its
state (``capped`` with a running lease, ``lapsed`` when the lease ran
out, ``released``), the live cap and when its lease ends, and why; then
the recent history, newest first (``?limit=N``, default 20).

A project's readers and members see their own instances only (the
owning project is the one Nova gave when the conductor last listed the
instance's host: :func:`iothrottle.db.api.record_instances`; an
instance it never listed is nobody's).  They read why in plain words
(:func:`iothrottle.throttle_status.plain_reason`): the controller's own
reasons name the other instances of the storage domain and their
numbers, which only ``iothrottle:instances:show:details`` (operators)
shows, with the storage domains.
"""

import datetime
import uuid as uuid_mod

from iothrottle.api.policies import instance as instance_policies
from iothrottle.api import policy
from iothrottle.api import util
from iothrottle.db import api
from iothrottle import throttle_status

DEFAULT_HISTORY = 20


def _entry(record, details):
    values = {
        'decided_at': util.timestamp(record.decided_at),
        'device': record.device,
        'action': record.action,
        'cap_iops': record.cap_iops,
        'cap_bytes_sec': record.cap_bytes_sec,
        'lease_expires_at': util.timestamp(record.lease_expires_at),
        'policy': record.policy,
        'reason': (record.reason if details
                   else throttle_status.plain_reason(record)),
    }
    if details:
        values['storage_domain'] = record.storage_domain
    return values


def state_dict(instance_uuid, owner, records, now, details):
    """The throttle state of ``instance_uuid`` from ``records`` (newest
    first); ``owner`` its InstanceRecord or None."""
    disks, seen = [], set()
    for record in records:
        if record.device in seen:
            continue
        seen.add(record.device)
        disk = _entry(record, details)
        disk['state'] = throttle_status.disk_status(record, now)
        disks.append(disk)
    return {
        'uuid': instance_uuid,
        'project_id': owner.project_id if owner else None,
        'tier': owner.tier if owner else None,
        'throttled': any(disk['state'] == throttle_status.CAPPED
                         for disk in disks),
        'disks': disks,
        'history': [_entry(record, details) for record in records],
    }


@util.Wsgify
def show_instance(req):
    ctx = util.context(req)
    engine = req.environ['iothrottle.engine']
    params = util.query(req, ('limit',))
    text = util.route_arg(req, 'uuid')
    try:
        instance_uuid = str(uuid_mod.UUID(text))
    except ValueError:
        raise util.bad_request('uuid: %r is not a UUID' % text[:40]) from None
    try:
        owner = api.get_instance(engine, instance_uuid)
    except api.NotFound:
        owner = None
    target = {'project_id': owner.project_id if owner else None}
    policy.authorize(ctx, instance_policies.SHOW, target)
    limit = util.limit_param(req, params, DEFAULT_HISTORY)
    records = api.decisions_for_instance(engine, instance_uuid, limit)
    if owner is None and not records:
        raise util.not_found('no instance %s known to iothrottle (never '
                             'listed by the conductor nor throttled)'
                             % instance_uuid)
    details = policy.authorize(ctx, instance_policies.SHOW_DETAILS, target,
                               do_raise=False)
    now = datetime.datetime.now(datetime.timezone.utc)
    return util.json_response(req, {'instance': state_dict(
        instance_uuid, owner, records, now, details)})
