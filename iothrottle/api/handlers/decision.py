"""``/decisions``: the controller's recent decisions, newest first,
filtered by ``storage_domain``, ``instance_uuid`` and ``since`` (ISO
8601), at most ``limit`` (default 100, at most [api] max_limit)."""

import uuid as uuid_mod

from iothrottle.api.handlers import storage_domain
from iothrottle.api.policies import decision as decision_policies
from iothrottle.api import policy
from iothrottle.api import util
from iothrottle.db import api

DEFAULT_LIMIT = 100
PARAMS = ('storage_domain', 'instance_uuid', 'since', 'limit')


@util.Wsgify
def list_decisions(req):
    policy.authorize(util.context(req), decision_policies.LIST, {})
    params = util.query(req, PARAMS)
    instance_uuid = params.get('instance_uuid')
    if instance_uuid is not None:
        try:
            instance_uuid = str(uuid_mod.UUID(instance_uuid))
        except ValueError:
            raise util.bad_request('instance_uuid: %r is not a UUID'
                                   % instance_uuid[:40]) from None
    records = api.list_decisions(
        req.environ['iothrottle.engine'],
        storage_domain=params.get('storage_domain'),
        instance_uuid=instance_uuid,
        since=util.time_param(params, 'since'),
        limit=util.limit_param(req, params, DEFAULT_LIMIT))
    return util.json_response(req, {'decisions': [
        storage_domain.decision_dict(record) for record in records]})
