"""``/storage_domains``: the sets of disks sharing one capacity.

A domain shows its capacity (declared by an operator, or learned from
the peak throughput it sustained), the learned peak, and the disks the
controller acted on there with their newest decision, those under a cap
whose lease runs counted as ``caps_in_force``.

Its load is the conductor's last stored round (``load_at``; all null
until one): total ``load_iops`` and ``load_bytes_sec``, ``load`` the
fraction of the capacity they took as the policy measures it (for
``guarantee``, against the capacity it learned from congestion and
completions: ``policy_max_iops`` and ``policy_max_bytes_sec``, null for
a policy that learns none), ``saturated`` whether the policy found it
saturated (``guarantee``: at its border or congested by latency; 1.0
for a policy without a border), ``load_disks`` and ``load_caps`` the
disks and the caps in force the conductor counted.  The conductor stores it
when it changed noticeably or every few minutes (see
:func:`iothrottle.db.api.record_domain_load`), so ``load_at`` may lag
a steady domain's last round by up to that heartbeat.

Admins declare a capacity (``PUT``) and forget a learned peak
(``DELETE .../learned_peak``, what ``iothrottle-manage domain
reset-capacity`` does: both call :func:`iothrottle.db.api.reset_peak`).

A key holds ``/`` and ``:`` (``rbd:ceph/volumes``); clients
percent-encode it in the path.

A running conductor takes a declared capacity at its next capacity
refresh only for a domain it has no declaration for yet, and at start
the capacities of its own configuration overwrite the database's.
"""

import datetime

from iothrottle.api.policies import storage_domain as domain_policies
from iothrottle.api import policy
from iothrottle.api import util
from iothrottle.api import validation
from iothrottle.db import api
from iothrottle import throttle_status


def _now():
    return datetime.datetime.now(datetime.timezone.utc)


def decision_dict(record):
    """A stored decision as the API shows it to operators."""
    return {
        'decided_at': util.timestamp(record.decided_at),
        'storage_domain': record.storage_domain,
        'instance_uuid': record.instance_uuid,
        'device': record.device,
        'action': record.action,
        'cap_iops': record.cap_iops,
        'cap_bytes_sec': record.cap_bytes_sec,
        'lease_expires_at': util.timestamp(record.lease_expires_at),
        'reason': record.reason,
        'policy': record.policy,
    }


def _disk(record, now):
    values = decision_dict(record)
    values['state'] = throttle_status.disk_status(record, now)
    return values


def domain_dict(domain, latest=None, now=None):
    """``domain`` (a StorageDomain); with ``latest`` (its newest
    decision per disk) its disks and caps in force too."""
    values = {
        'key': domain.key,
        'max_iops': domain.max_iops,
        'max_bytes_sec': domain.max_bytes_sec,
        'capacity_source': domain.capacity_source,
        'peak_iops': domain.peak_iops,
        'peak_bytes_sec': domain.peak_bytes_sec,
        'updated_at': util.timestamp(domain.updated_at),
        'load': domain.load_fraction,
        'saturated': domain.saturated,
        'load_iops': domain.load_iops,
        'load_bytes_sec': domain.load_bytes_sec,
        'load_disks': domain.load_disks,
        'load_caps': domain.load_caps,
        'load_at': util.timestamp(domain.load_at),
        'policy_max_iops': domain.policy_max_iops,
        'policy_max_bytes_sec': domain.policy_max_bytes_sec,
    }
    if latest is not None:
        disks = [_disk(record, now) for record in latest]
        values['disks'] = disks
        values['caps_in_force'] = sum(
            1 for disk in disks if disk['state'] == throttle_status.CAPPED)
    return values


def _engine(req):
    return req.environ['iothrottle.engine']


@util.Wsgify
def list_domains(req):
    policy.authorize(util.context(req), domain_policies.LIST, {})
    util.query(req, ())
    engine, now = _engine(req), _now()
    by_domain = {}
    for record in api.latest_decisions(engine):
        by_domain.setdefault(record.storage_domain, []).append(record)
    domains = []
    for domain in api.storage_domains(engine):
        values = domain_dict(domain)
        values['caps_in_force'] = sum(
            1 for record in by_domain.get(domain.key, ())
            if throttle_status.disk_status(record, now)
            == throttle_status.CAPPED)
        domains.append(values)
    return util.json_response(req, {'storage_domains': domains})


def _shown(req, domain):
    return util.json_response(req, {'storage_domain': domain_dict(
        domain, api.latest_decisions(_engine(req), domain.key), _now())})


@util.Wsgify
def show_domain(req):
    policy.authorize(util.context(req), domain_policies.SHOW, {})
    try:
        domain = api.get_storage_domain(_engine(req),
                                        util.route_arg(req, 'key'))
    except api.NotFound as exc:
        raise util.not_found(str(exc)) from None
    return _shown(req, domain)


@util.Wsgify
def declare_capacity(req):
    """Body ``{"max_iops": N, "max_bytes_sec": N}``, both > 0; creates
    the domain if it is not known yet."""
    policy.authorize(util.context(req), domain_policies.UPDATE, {})
    data = validation.fields(validation.json_body(req),
                             ('max_iops', 'max_bytes_sec'),
                             ('max_iops', 'max_bytes_sec'))
    values = validation.numbers(data, ('max_iops', 'max_bytes_sec'))
    for name, value in sorted(values.items()):
        if value <= 0:
            raise util.bad_request('%s: must be > 0, got %g'
                                   % (name, value))
    try:
        domain = api.declare_capacity(_engine(req),
                                      util.route_arg(req, 'key'),
                                      values['max_iops'],
                                      values['max_bytes_sec'])
    except ValueError as exc:
        raise util.bad_request(str(exc)) from None
    return _shown(req, domain)


@util.Wsgify
def reset_peak(req):
    policy.authorize(util.context(req), domain_policies.RESET_PEAK, {})
    try:
        domain = api.reset_peak(_engine(req), util.route_arg(req, 'key'))
    except api.NotFound as exc:
        raise util.not_found(str(exc)) from None
    return _shown(req, domain)
