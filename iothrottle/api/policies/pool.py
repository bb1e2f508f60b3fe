"""Policies of /pools."""

from iothrottle.api.policies import base

PREFIX = 'iothrottle:pools:%s'
LIST = PREFIX % 'list'
SHOW = PREFIX % 'show'
UPDATE = PREFIX % 'update'
DELETE = PREFIX % 'delete'
ADD_VOLUME = PREFIX % 'volumes:create'
REMOVE_VOLUME = PREFIX % 'volumes:delete'

rules = [
    base.rule(LIST, base.OPERATOR_READER,
              'List Cinder pools with a device profile.', 'GET', '/pools'),
    base.rule(SHOW, base.OPERATOR_READER,
              "Show a pool's profile and placed volumes.", 'GET',
              '/pools/{pool}'),
    base.rule(UPDATE, base.ADMIN, "Set a pool's device profile.", 'PUT',
              '/pools/{pool}'),
    base.rule(DELETE, base.ADMIN,
              'Forget a pool: its profile and recorded volumes.', 'DELETE',
              '/pools/{pool}'),
    base.rule(ADD_VOLUME, base.ADMIN, 'Record a volume placed on a pool.',
              'POST', '/pools/{pool}/volumes'),
    base.rule(REMOVE_VOLUME, base.ADMIN, 'Forget a recorded volume.',
              'DELETE', '/pools/{pool}/volumes/{volume_id}'),
]


def list_rules():
    return rules
