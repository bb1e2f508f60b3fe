"""Policies of /instances."""

from iothrottle.api.policies import base

SHOW = 'iothrottle:instances:show'
SHOW_DETAILS = 'iothrottle:instances:show:details'

rules = [
    base.rule(SHOW, base.OWNER_READER,
              "Show an instance's throttle state and history: the live "
              'cap of each disk, its lease and why, in plain words.',
              'GET', '/instances/{uuid}'),
    base.rule(SHOW_DETAILS, base.OPERATOR_READER,
              "Also show the controller's own reasons (which name other "
              'instances and their numbers) and the storage domains; '
              'others get plain words only.', 'GET', '/instances/{uuid}'),
]


def list_rules():
    return rules
