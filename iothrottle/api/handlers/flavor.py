"""``/flavors/{flavor}/guarantee``: the guarantee a Nova flavor's
``iothrottle:`` extra specs resolve to, with the tiers of the database,
exactly as the conductor resolves an instance's (the same
:func:`iothrottle.extra_specs.guarantee_from_extra_specs`).  The flavor
is read from Nova with the ``[nova]`` credentials, by id, else by name.
"""

import dataclasses

from iothrottle.api.policies import flavor as flavor_policies
from iothrottle.api import policy
from iothrottle.api import util
from iothrottle.db import api
from iothrottle import extra_specs


def _nova_failed(exc):
    return util.unavailable('cannot read the flavor from Nova: %s'
                            % (str(exc).splitlines()
                               or [type(exc).__name__])[0][:200])


def find_flavor(client, flavor):
    """The novaclient Flavor of id or name ``flavor``; None if Nova has
    neither."""
    from novaclient import exceptions as nova_exceptions
    try:
        return client.flavors.get(flavor)
    except nova_exceptions.NotFound:
        pass
    for candidate in client.flavors.list(is_public=None):
        if candidate.name == flavor:
            return candidate
    return None


@util.Wsgify
def show_guarantee(req):
    policy.authorize(util.context(req), flavor_policies.GUARANTEE, {})
    name = util.route_arg(req, 'flavor')
    nova = req.environ['iothrottle.nova']
    if nova is None:
        raise util.unavailable('cannot read the flavor from Nova: no '
                               '[nova] credentials in the API\'s '
                               'configuration')
    try:
        client = nova()
        flavor = find_flavor(client, name)
        specs = flavor.get_keys() if flavor is not None else None
    except Exception as exc:
        raise _nova_failed(exc) from None
    if flavor is None:
        raise util.not_found('no flavor %r in Nova' % name)
    own = extra_specs.own_specs(specs or {})
    body = {'id': flavor.id, 'name': flavor.name, 'extra_specs': own,
            'guarantee': None, 'error': None}
    try:
        guarantee = extra_specs.guarantee_from_extra_specs(
            own, api.list_tiers(req.environ['iothrottle.engine']))
        body['guarantee'] = dataclasses.asdict(guarantee)
    except extra_specs.ExtraSpecError as exc:
        body['error'] = str(exc)
    return util.json_response(req, {'flavor': body})
