"""``/tiers``: named guarantees that flavors refer to with
``iothrottle:tier``.  Admins create, change and delete them; any reader
lists them.  A delete is refused (409) while a flavor in Nova or an
instance the conductor recorded names the tier, 503 when Nova cannot
be asked; ``DELETE /tiers/{name}?force=true`` deletes it anyway
(:mod:`iothrottle.tier_use`)."""

import dataclasses

from oslo_log import log as logging

from iothrottle.api.policies import tier as tier_policies
from iothrottle.api import policy
from iothrottle.api import util
from iothrottle.api import validation
from iothrottle.db import api
from iothrottle import extra_specs
from iothrottle import tier_use
from iothrottle import tiers

LOG = logging.getLogger(__name__)


# How a refusal names the way past it, to API and OSC users alike.
_FORCE = 'force (?force=true, openstack iothrottle tier delete --force)'


def tier_dict(guarantee):
    values = dataclasses.asdict(guarantee)
    values['name'] = values.pop('tier')
    return values


def _engine(req):
    return req.environ['iothrottle.engine']


def _values(data):
    """The guarantee numbers of body ``data`` (JSON numbers only)."""
    return validation.numbers(data, tiers.GUARANTEE_KEYS)


def _guarantee(values, name):
    try:
        return tiers.parse_guarantee(values, tier=name)
    except ValueError as exc:
        raise util.bad_request(str(exc)) from None


@util.Wsgify
def list_tiers(req):
    policy.authorize(util.context(req), tier_policies.LIST, {})
    util.query(req, ())
    return util.json_response(req, {'tiers': [
        tier_dict(guarantee) for guarantee in api.list_tiers(
            _engine(req)).values()]})


def _get(req, name):
    try:
        return api.get_tier(_engine(req), name)
    except api.NotFound as exc:
        raise util.not_found(str(exc)) from None


@util.Wsgify
def show_tier(req):
    policy.authorize(util.context(req), tier_policies.SHOW, {})
    return util.json_response(
        req, {'tier': tier_dict(_get(req, util.route_arg(req, 'name')))})


@util.Wsgify
def create_tier(req):
    policy.authorize(util.context(req), tier_policies.CREATE, {})
    data = validation.fields(validation.json_body(req),
                             ('name',) + tiers.GUARANTEE_KEYS, ('name',))
    name = validation.string(data, 'name', 64)
    try:
        extra_specs.parse_tier_name(name)
    except ValueError as exc:
        raise util.bad_request('name: %s' % exc) from None
    guarantee = _guarantee(_values(data), name)
    try:
        api.create_tier(_engine(req), guarantee)
    except api.Exists as exc:
        raise util.conflict(str(exc)) from None
    response = util.json_response(req, {'tier': tier_dict(guarantee)}, 201)
    response.location = '%s/tiers/%s' % (req.script_name, name)
    return response


@util.Wsgify
def update_tier(req):
    """Change the fields given; the others keep their values."""
    policy.authorize(util.context(req), tier_policies.UPDATE, {})
    data = validation.fields(validation.json_body(req),
                             tiers.GUARANTEE_KEYS)
    current = _get(req, util.route_arg(req, 'name'))
    values = {key: getattr(current, key) for key in tiers.GUARANTEE_KEYS}
    values.update(_values(data))
    guarantee = _guarantee(values, current.tier)
    try:
        api.update_tier(_engine(req), guarantee)
    except api.NotFound as exc:
        raise util.not_found(str(exc)) from None
    return util.json_response(req, {'tier': tier_dict(guarantee)})


@util.Wsgify
def delete_tier(req):
    policy.authorize(util.context(req), tier_policies.DELETE, {})
    force = util.bool_param(util.query(req, ('force',)), 'force')
    try:
        warning = tier_use.delete_tier(
            _engine(req), util.route_arg(req, 'name'),
            req.environ['iothrottle.nova'], force)
    except api.NotFound as exc:
        raise util.not_found(str(exc)) from None
    except api.InUse as exc:
        raise util.conflict('%s; %s deletes it anyway' % (exc, _FORCE)
                            ) from None
    except tier_use.NovaUnavailable as exc:
        raise util.unavailable('%s; %s deletes it without the check'
                               % (exc, _FORCE)) from None
    if warning:
        LOG.warning(warning)
    return util.no_content(req)
