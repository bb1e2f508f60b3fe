"""Policies of /tiers."""

from iothrottle.api.policies import base

PREFIX = 'iothrottle:tiers:%s'
LIST = PREFIX % 'list'
SHOW = PREFIX % 'show'
CREATE = PREFIX % 'create'
UPDATE = PREFIX % 'update'
DELETE = PREFIX % 'delete'

rules = [
    base.rule(LIST, base.ANY_READER, 'List the guarantee tiers.', 'GET',
              '/tiers'),
    base.rule(SHOW, base.ANY_READER, 'Show a guarantee tier.', 'GET',
              '/tiers/{name}'),
    base.rule(CREATE, base.ADMIN, 'Create a guarantee tier.', 'POST',
              '/tiers'),
    base.rule(UPDATE, base.ADMIN, "Change a tier's values.", 'PUT',
              '/tiers/{name}'),
    base.rule(DELETE, base.ADMIN, 'Delete a tier no flavor or instance '
              'uses (or any, with ?force=true).',
              'DELETE', '/tiers/{name}'),
]


def list_rules():
    return rules
